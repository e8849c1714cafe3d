"""What every case of the real-client suite checks, and the figures it records.

For one session and one variant (a file strategy, a plain fork, an undo): gobtui publishes a
fork as a user would (`plan`, then `apply --yes`), the real client resumes it, and the fork
is judged against the original resumed the same way:
- the client loads the fork (exit 0, a request arrives);
- it asks for no compaction of its own when gobtui projected the fork under the client's
  threshold (and does when gobtui said it would);
- the request it answers from carries less history than the original's;
- the state card is in it, when the plan has one;
- every record gobtui did not touch arrives as the original's did;
- for a session whose thinking blocks the server signed (a case in "reject" mode): the
  original and the fork resume with no HTTP 400, and the fork's request keeps no thinking
  block after the first block that differs from the original's (the provider would drop it
  or refuse the request).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import VARIANTS, Case, cases
from tests.e2e.clients import Clients
from tests.e2e.harness import (
    GobtuiRefused,
    Home,
    Resumed,
    history_blocks,
    history_bytes,
    history_tokens,
    prefix_change,
    resume_claude,
    resume_codex,
    stable_blocks,
    untouched_missing,
)
from tests.e2e.report import RESULTS_DIR

CARD_MARKER = "[gobtui state card]"
POLICY = """\
[policy]
keep_recent_tool_outputs = 2
min_savings_tokens = 256
"""
FLOOR_SHARE = 0.4
"""Plans cut toward 40 % of the session's context."""
THRESHOLD_MARGIN = 0.03
"""A fork projected within 3 % of the client's threshold is not held to the prediction."""


@dataclass
class Row:
    """One line of the suite's table (printed at the end of the run, for the notes)."""

    provider: str
    session: str
    variant: str
    loaded: bool = False
    original_compacted: bool = False
    fork_compacted: bool = False
    predicted_compacts: bool | None = None
    original_bytes: int = 0
    fork_bytes: int = 0
    original_history_tokens: int = 0
    fork_history_tokens: int = 0
    before_tokens: int = 0
    predicted_after: int | None = None
    measured_after: int | None = None
    first_changed_message: int | None = None
    """The first message of the fork's request that differs from the original's."""
    thinking_before_change: int = 0
    thinking_after_change: int = 0
    original_rejections: int = 0
    rejections: int = 0
    """HTTP 400s the checking server answered the fork's resume (a thinking block failed)."""
    seconds: float = 0.0
    outcome: str = ""


def record(row: Row) -> None:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(RESULTS_DIR / f"{worker}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(asdict(row)) + "\n")


def resume(clients: Clients, case: Case, home: Home, session_id: str) -> Resumed:
    if case.provider == "claude":
        return resume_claude(clients, home, session_id, case.server_mode)
    return resume_codex(clients, home, session_id, case.model)


def session_of(home: Home, path: Path) -> dict[str, Any]:
    for row in home.gobtui("detect", "--all"):
        if Path(row["path"]) == path:
            return dict(row)
    raise AssertionError(f"gobtui detect does not list {path}")


def changed_tool_ids(source: Path, fork: Path) -> set[str]:
    """Tool ids of the records only one of the two files holds (outputs the fork elided,
    calls its card answers); a record whose usage alone was restated changed no content."""
    old = _records(source)
    new = _records(fork)
    ids: set[str] = set()
    for record in _content_keys(old) ^ _content_keys(new):
        _collect_ids(json.loads(record), ids)
    return ids


def _records(path: Path) -> list[Any]:
    records = []
    for line in path.read_bytes().split(b"\n"):
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def _content_keys(records: list[Any]) -> set[str]:
    """Each record as JSON, its usage, session id and (Codex) token counts left out."""
    keys = set()
    for record in records:
        if isinstance(record, dict):
            record = {k: v for k, v in record.items() if k != "sessionId"}
            message = record.get("message")
            if isinstance(message, dict):
                record["message"] = {k: v for k, v in message.items() if k != "usage"}
            payload = record.get("payload")
            if isinstance(payload, dict) and payload.get("type") == "token_count":
                continue
        keys.add(json.dumps(record, sort_keys=True))
    return keys


def _collect_ids(value: Any, into: set[str]) -> None:
    """What names a changed record in a request: an output's tool_use_id or call_id, a
    call's id (an edit's input may be stubbed), a reasoning item's encrypted content."""
    if isinstance(value, dict):
        for key in ("tool_use_id", "call_id"):
            if isinstance(value.get(key), str):
                into.add(value[key])
        if value.get("type") == "tool_use" and isinstance(value.get("id"), str):
            into.add(value["id"])
        if value.get("type") == "reasoning" and isinstance(value.get("encrypted_content"), str):
            into.add(value["encrypted_content"])  # a reasoning record the fork left out
        for inner in value.values():
            _collect_ids(inner, into)
    elif isinstance(value, list):
        for inner in value:
            _collect_ids(inner, into)


def publish(home: Home, path: Path, variant: str, context: int) -> dict[str, Any]:
    """The receipt of the variant's publication (skips when the strategy has no plan)."""
    floor = max(1_000, int(context * FLOOR_SHARE))
    limits = ["--trigger", str(floor + 1), "--floor", str(floor)]
    if variant == "fork":
        return dict(home.gobtui("fork", str(path), "--yes"))
    if variant == "undo":
        home.gobtui("snapshot", str(path))
        return dict(home.gobtui("undo", str(path), "--yes"))
    try:
        return dict(home.gobtui("apply", str(path), "--strategy", variant, *limits, "--yes"))
    except GobtuiRefused as refused:
        if "nothing to apply: no plan" in refused.message:
            pytest.skip(f"{variant} makes no plan here ({refused.message.split('(')[1][:40]})")
        raise


def check(
    clients: Clients, case: Case, variant: str, root: Path, originals: dict[str, Resumed]
) -> None:
    row = Row(case.provider, case.name, variant)
    with recorded(row):
        _check(clients, case, variant, root, originals, row)


@contextmanager
def recorded(row: Row) -> Iterator[None]:
    """The row, timed, with its outcome ("ok" unless the body set one), recorded however
    the body ends; gobtui's refusal fails the test with its message."""
    started = time.monotonic()
    try:
        yield
        row.outcome = row.outcome or "ok"
    except pytest.skip.Exception as skipped:
        row.outcome = f"skipped: {skipped.msg}"
        raise
    except GobtuiRefused as refused:
        row.outcome = f"gobtui refused: {refused.message[:160]}"
        raise AssertionError(str(refused)) from None
    except AssertionError as failed:
        row.outcome = f"FAILED: {str(failed).splitlines()[0][:160]}"
        raise
    finally:
        row.seconds = round(time.monotonic() - started, 2)
        record(row)


def _original(
    clients: Clients, case: Case, root: Path, originals: dict[str, Resumed]
) -> tuple[Resumed, dict[str, Any]]:
    """The session resumed as it is, and its detect row (once per case and worker)."""
    if case.name not in originals:
        home = Home(root / "original")
        path = case.place(home)
        session = session_of(home, path)
        originals[case.name] = resume(clients, case, home, session["session_id"])
        originals[case.name].detected = session
    return originals[case.name], originals[case.name].detected


def _check(
    clients: Clients, case: Case, variant: str, root: Path, originals: dict[str, Resumed],
    row: Row,
) -> None:  # fmt: skip
    original, session = _original(clients, case, root, originals)
    row.original_rejections = len(original.rejected)
    assert not original.rejected, f"the original got a 400: {original.rejected[0]}"
    assert original.loaded, f"the original does not load: {original.finished.first_error()}"
    home = Home(root / "fork")
    (home.root / "gobtui.toml").write_text(POLICY)
    path = case.place(home)
    row.before_tokens = session["context_tokens"] or 0
    receipt = publish(home, path, variant, row.before_tokens)
    fork_path = Path(receipt["path"])
    assert fork_path.parent == path.parent and fork_path != path
    resumed = resume(clients, case, home, receipt["session_id"])
    row.loaded = resumed.loaded
    row.rejections = len(resumed.rejected)
    not_loaded = (
        f"the client did not load the fork (exit {resumed.finished.returncode}, "
        f"{len(resumed.requests)} requests): {resumed.finished.first_error()}"
    )
    assert resumed.requests, not_loaded
    before, after = original.history_request, resumed.history_request
    row.original_compacted, row.fork_compacted = original.compacted, resumed.compacted
    row.original_bytes, row.fork_bytes = history_bytes(before), history_bytes(after)
    row.original_history_tokens, row.fork_history_tokens = (
        history_tokens(before),
        history_tokens(after),
    )
    change = prefix_change(before, after)
    row.first_changed_message = change.message
    row.thinking_before_change = change.thinking_before
    row.thinking_after_change = change.thinking_after
    projection = receipt.get("projection") or {}
    row.predicted_after = projection.get("context_tokens_after")
    row.predicted_compacts = projection.get("client_compacts")
    slope = projection.get("calibration", {}).get("slope")
    if slope:
        row.before_tokens = projection["context_tokens_before"]
        row.measured_after = round(
            row.before_tokens - slope * (row.original_history_tokens - row.fork_history_tokens)
        )
    if case.server_mode == "reject" or case.provider == "codex":  # Codex: every request
        assert not resumed.rejected, (
            f"the checking server answered {len(resumed.rejected)} 400s: {resumed.rejected[0]}"
        )
        assert row.thinking_after_change == 0, (
            f"the fork keeps {row.thinking_after_change} thinking blocks after its first "
            f"changed message ({row.first_changed_message})"
        )
    assert resumed.loaded, not_loaded
    if variant in ("fork", "undo"):
        assert not resumed.compacted or original.compacted, "the client compacted a plain copy"
        assert stable_blocks(after) == stable_blocks(before) or resumed.compacted, (
            "a plain copy sent another history than its source"
        )
        return
    threshold = projection.get("client_threshold_tokens")
    near = (
        threshold is not None and row.predicted_after is not None
        and abs(row.predicted_after - threshold) <= THRESHOLD_MARGIN * threshold
    )  # fmt: skip
    assert row.predicted_compacts is not None, (
        "the receipt does not say whether the client compacts"
    )
    if not near:
        assert resumed.compacted == row.predicted_compacts, (
            f"gobtui projected {row.predicted_after} tokens (client threshold {threshold}), "
            f"predicting compaction={row.predicted_compacts}; the client "
            f"{'compacted' if resumed.compacted else 'did not compact'}"
        )
    if resumed.compacted:
        return  # the client's own summary replaced the history: nothing more to compare
    assert row.fork_history_tokens < row.original_history_tokens, (
        f"the fork's history ({row.fork_history_tokens} tokens) is not smaller than the "
        f"original's ({row.original_history_tokens})"
    )
    has_card = CARD_MARKER.encode() in fork_path.read_bytes()
    if has_card:
        assert any(CARD_MARKER in block for block in history_blocks(resumed.answered_from)), (
            "the state card is not in the request the client answered from"
        )
    if not original.compacted:
        changed = changed_tool_ids(path, fork_path)
        missing = untouched_missing(before, after, changed)
        assert not missing, f"{len(missing)} untouched records changed, e.g. {missing[0]}"


def resume_test(provider: str) -> Any:
    """The parametrized test of one provider's cases (one module each: pytest-xdist's
    loadfile gives each module to a worker, so both clients run at once)."""

    @pytest.mark.parametrize("variant", VARIANTS)
    @pytest.mark.parametrize("case", cases(provider), ids=str)
    def test(
        clients: Clients, case: Case, variant: str, tmp_path: Path, originals: dict[str, Resumed]
    ) -> None:
        check(clients, case, variant, tmp_path, originals)

    return test
