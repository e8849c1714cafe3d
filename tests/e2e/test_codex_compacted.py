"""`apply --experimental-compacted`, resumed by the real Codex CLI (issue 31, item 6).

Each Codex case is published twice from the same source: the portable card fork (strategy
compacted) and the synthetic compacted-record fork. The original and both forks are resumed
with `codex exec resume` against the checking model server (tool calls and outputs paired, no
forged compaction item: tests/e2e/model_server.py). The compacted-record fork must load,
send a history smaller than the original's, carry the state card (and on the corpus sessions
the error, the open task and the decision), lose no tool output to Codex's own repair (an
output Codex does not find becomes "aborted"), and leave the source as it was. Each row of
the table records the original's request as `original_*`, the compacted-record fork's as
`fork_*`; its outcome names the portable fork's figures beside them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders.sessions import CRITICAL_ERROR, DECISION
from tests.e2e.cases import Case, cases
from tests.e2e.clients import Clients
from tests.e2e.harness import (
    GobtuiRefused,
    Home,
    history_blocks,
    history_bytes,
    history_tokens,
    resume_codex,
)
from tests.e2e.model_server import Request
from tests.e2e.suite import CARD_MARKER, FLOOR_SHARE, POLICY, Row, recorded, session_of

VARIANT = "compacted --experimental-compacted"
OPEN_TASK = "TODO: update the coupon tests after the rounding change."
ABORTED = "aborted"
"""What Codex sends for a call whose output it cannot find in the history it rebuilt."""


def _apply(home: Home, path: Path, context: int, *flags: str) -> dict[str, Any]:
    floor = max(1_000, int(context * FLOOR_SHARE))
    limits = ("--trigger", str(floor + 1), "--floor", str(floor))
    try:
        return dict(
            home.gobtui("apply", str(path), "--strategy", "compacted", *limits, "--yes", *flags)
        )
    except GobtuiRefused as refused:
        if "nothing to apply: no plan" in refused.message:
            pytest.skip("compacted makes no plan here")
        raise


def _count(request: Request, kind: str) -> int:
    body = request.body if isinstance(request.body, dict) else {}
    return sum(1 for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == kind)


def _aborted(request: Request) -> int:
    body = request.body if isinstance(request.body, dict) else {}
    return sum(
        1
        for item in body.get("input", [])
        if isinstance(item, dict)
        and str(item.get("type")).endswith("_output")
        and item.get("output") == ABORTED
    )


def _compacted_records(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        if record.get("type") == "compacted":
            found.append(record["payload"])
    return found


@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", cases("codex"), ids=str)
def test_codex_resumes_the_compacted_record_fork(
    clients: Clients, case: Case, tmp_path: Path
) -> None:
    row = Row("codex", case.name, VARIANT)
    with recorded(row):
        original_home = Home(tmp_path / "original")
        source = case.place(original_home)
        row.before_tokens = session_of(original_home, source)["context_tokens"] or 0
        source_bytes = source.read_bytes()  # (a resume appends to the file it resumes)
        source_size = len(source_bytes)
        original = resume_codex(
            clients, original_home, source_id(original_home, source), case.model
        )
        assert original.loaded and not original.rejected, original.finished.first_error()

        portable_home, record_home = Home(tmp_path / "portable"), Home(tmp_path / "record")
        forks = []
        for home, flags in ((portable_home, ()), (record_home, ("--experimental-compacted",))):
            (home.root / "gobtui.toml").write_text(POLICY)
            path = case.place(home)
            source_sha = hashlib.sha256(path.read_bytes()).hexdigest()
            forks.append(_apply(home, path, row.before_tokens, *flags))
            assert hashlib.sha256(path.read_bytes()).hexdigest() == source_sha, "source changed"
        portable, fork = forks
        fork_path = Path(fork["path"])
        records = _compacted_records(fork_path)
        newest = records[-1]
        assert newest["replacement_history"][-1]["content"][0]["text"].startswith(CARD_MARKER)
        carded = [r for r in records if CARD_MARKER in json.dumps(r["replacement_history"])]
        assert carded == [newest], "the card is not in exactly the newest compacted record"
        sizes = fork_path.stat().st_size, Path(portable["path"]).stat().st_size
        assert sizes[0] < sizes[1] < source_size

        resumed = resume_codex(clients, record_home, fork["session_id"], case.model)
        other = resume_codex(clients, portable_home, portable["session_id"], case.model)
        row.loaded = resumed.loaded
        assert not resumed.rejected, f"the server answered 400: {resumed.rejected[0]}"
        assert resumed.loaded, f"codex did not load the fork: {resumed.finished.first_error()}"
        row.original_compacted, row.fork_compacted = original.compacted, resumed.compacted
        before, after = original.history_request, resumed.history_request
        row.original_bytes, row.fork_bytes = history_bytes(before), history_bytes(after)
        row.original_history_tokens = history_tokens(before)
        row.fork_history_tokens = history_tokens(after)
        row.predicted_after = (fork.get("projection") or {}).get("context_tokens_after")
        assert not resumed.compacted or original.compacted, "codex compacted the fork again"
        assert row.fork_bytes < row.original_bytes, (
            f"the fork's request ({row.fork_bytes:,} bytes) is not smaller than the "
            f"original's ({row.original_bytes:,})"
        )
        assert _aborted(after) <= _aborted(before), "codex lost a tool output of the fork"
        assert _count(after, "compaction") <= _count(before, "compaction"), "a forged item"
        if not resumed.compacted:  # (else the client's own summary replaced the history)
            sent = "\n".join(history_blocks(resumed.answered_from))
            assert CARD_MARKER in sent, "the state card is not in the request"
            for fact in (CRITICAL_ERROR, DECISION, OPEN_TASK):
                if fact.encode() in source_bytes:
                    assert json.dumps(fact)[1:-1] in sent, f"the request lost {fact!r}"
        row.outcome = (
            f"ok: request {row.original_bytes:,} -> {row.fork_bytes:,} bytes "
            f"({len(before.body['input'])} -> {len(after.body['input'])} items); portable "
            f"fork {history_bytes(other.history_request):,} bytes; files "
            f"{source_size:,} -> {sizes[0]:,} bytes (portable {sizes[1]:,})"
        )


def source_id(home: Home, path: Path) -> str:
    return str(session_of(home, path)["session_id"])
