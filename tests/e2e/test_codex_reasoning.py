"""What leaving the encrypted reasoning of earlier turns out of a Codex fork changes, measured
with the real Codex CLI (issue 19, item 4).

Codex does not count the `encrypted_content` of earlier reasoning as context, yet it sends it
back on every request and adds an estimate of it to its own compaction decision. With
`drop_old_reasoning = true` a fork turns the reasoning records it elides into the
`agent_reasoning` events Codex writes beside them (adapters.providers.codex.rewrite). The
session is published into two homes, compacted with the suite's policy, the second with the
switch on; both forks are resumed; each row of the table records the first as `original_*`
and the second as `fork_*`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import Case, cases
from tests.e2e.clients import Clients
from tests.e2e.harness import (
    GobtuiRefused,
    Home,
    history_bytes,
    history_tokens,
    resume_codex,
)
from tests.e2e.model_server import Request
from tests.e2e.suite import FLOOR_SHARE, POLICY, Row, recorded, session_of

VARIANT = "compacted, drop_old_reasoning off vs on"
MEASURED = ("corpus-codex-reasoning-heavy", "genuine-codex-shannon", "genuine-codex-openprintkit")
SWITCH = "drop_old_reasoning = true\n"


def _reasoning_items(request: Request) -> int:
    body = request.body if isinstance(request.body, dict) else {}
    return sum(
        1 for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "reasoning"
    )


def _publish(home: Home, path: Path, context: int, policy: str) -> dict[str, Any]:
    """The compacted fork, or a plain one where compacted makes no plan."""
    (home.root / "gobtui.toml").write_text(policy)
    floor = max(1_000, int(context * FLOOR_SHARE))
    try:
        return dict(
            home.gobtui(
                "apply", str(path), "--strategy", "compacted", "--trigger", str(floor + 1),
                "--floor", str(floor), "--yes",
            )
        )  # fmt: skip
    except GobtuiRefused as refused:
        if "nothing to apply: no plan" not in refused.message:
            raise
        return dict(home.gobtui("fork", str(path), "--yes"))


@pytest.mark.parametrize(
    "case", [case for case in cases("codex") if case.name in MEASURED], ids=str
)
def test_dropping_old_reasoning_from_a_codex_fork(
    clients: Clients, case: Case, tmp_path: Path
) -> None:
    row = Row("codex", case.name, VARIANT)
    with recorded(row):
        kept, dropped = Home(tmp_path / "kept"), Home(tmp_path / "dropped")
        forks = []
        for home, policy in ((kept, POLICY), (dropped, POLICY + SWITCH)):
            source = case.place(home)
            row.before_tokens = session_of(home, source)["context_tokens"] or 0
            forks.append(_publish(home, source, row.before_tokens, policy))
        taken = Path(forks[1]["path"]).read_bytes().count(b'"type":"agent_reasoning"') - Path(
            forks[0]["path"]
        ).read_bytes().count(b'"type":"agent_reasoning"')
        assert taken > 0, "the fork with the switch on leaves no reasoning out"
        first = resume_codex(clients, kept, forks[0]["session_id"], case.model)
        second = resume_codex(clients, dropped, forks[1]["session_id"], case.model)
        row.loaded = second.loaded
        assert first.loaded and second.loaded, second.finished.first_error()
        before, after = first.history_request, second.history_request
        row.original_compacted, row.fork_compacted = first.compacted, second.compacted
        row.original_bytes, row.fork_bytes = history_bytes(before), history_bytes(after)
        row.original_history_tokens = history_tokens(before)
        row.fork_history_tokens = history_tokens(after)
        assert _reasoning_items(after) < _reasoning_items(before)
        assert row.fork_bytes < row.original_bytes
        row.outcome = (
            f"ok: {taken} reasoning records left out, request {row.original_bytes:,} -> "
            f"{row.fork_bytes:,} bytes"
        )
