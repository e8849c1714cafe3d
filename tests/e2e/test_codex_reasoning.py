"""What dropping the encrypted reasoning of finished turns from a Codex fork changes, measured
with the real Codex CLI (issue 19, item 4).

Codex does not count the `encrypted_content` of earlier reasoning as context, yet it sends it
back on every request and adds an estimate of it to its own compaction decision. The same
compacted fork is published into two homes; in the second, the reasoning records before the
newest turn are taken out (the only form the Responses API takes for sure: reasoning items
are optional input, and a reasoning item with its encrypted content altered or removed may be
refused when nothing is stored). Both are resumed; each row of the table records the first as
`original_*` and the second as `fork_*`. gobtui does not write such forks yet: this measures
what it would gain, and that the client takes them (it loads them and does not compact).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import Case, cases
from tests.e2e.clients import Clients
from tests.e2e.harness import (
    GobtuiRefused,
    Home,
    Request,
    history_bytes,
    history_tokens,
    resume_codex,
)
from tests.e2e.suite import FLOOR_SHARE, POLICY, Row, record, session_of

VARIANT = "compacted-without-old-reasoning"
MEASURED = ("corpus-codex-reasoning-heavy", "genuine-codex-shannon", "genuine-codex-localpush")


def _without_finished_reasoning(path: Path) -> int:
    """The reasoning response_items before the newest user message taken out of the file;
    how many."""
    lines = path.read_bytes().split(b"\n")
    records: list[Any] = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append(None)
    newest_turn = max(
        (i for i, r in enumerate(records) if _payload_type(r) == ("message", "user")),
        default=0,
    )
    keep = [
        line
        for i, (line, r) in enumerate(zip(lines, records, strict=True))
        if not (i < newest_turn and _payload_type(r)[0] == "reasoning")
    ]
    path.write_bytes(b"\n".join(keep))
    return len(lines) - len(keep)


def _payload_type(record: Any) -> tuple[Any, Any]:
    if not isinstance(record, dict) or record.get("type") != "response_item":
        return None, None
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return None, None
    return payload.get("type"), payload.get("role")


def _reasoning_items(request: Request) -> int:
    body = request.body if isinstance(request.body, dict) else {}
    return sum(
        1 for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "reasoning"
    )


def _publish(home: Home, path: Path, context: int) -> dict[str, Any]:
    """The compacted fork, or a plain one where compacted makes no plan."""
    (home.root / "gobtui.toml").write_text(POLICY)
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
        return dict(home.gobtui("fork", str(path)))


@pytest.mark.parametrize(
    "case", [case for case in cases("codex") if case.name in MEASURED], ids=str
)
def test_dropping_old_reasoning_from_a_codex_fork(
    clients: Clients, case: Case, tmp_path: Path
) -> None:
    started = time.monotonic()
    row = Row("codex", case.name, VARIANT)
    try:
        kept, dropped = Home(tmp_path / "kept"), Home(tmp_path / "dropped")
        forks = []
        for home in (kept, dropped):
            path = case.place(home)
            row.before_tokens = session_of(home, path)["context_tokens"] or 0
            forks.append(_publish(home, path, row.before_tokens))
        taken = _without_finished_reasoning(Path(forks[1]["path"]))
        assert taken > 0, "the fork holds no reasoning of a finished turn"
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
            f"ok: {taken} reasoning records out, request {row.original_bytes:,} -> "
            f"{row.fork_bytes:,} bytes"
        )
    except AssertionError as failed:
        row.outcome = f"FAILED: {str(failed).splitlines()[0][:160]}"
        raise
    finally:
        row.seconds = round(time.monotonic() - started, 2)
        record(row)
