"""The synthetic Codex compacted record (adapters.providers.codex.compacted, issue 31 item 6):
what the fork holds, that its tool pairs are whole, that gobtui's verifier accepts it, that it
is smaller than the portable card fork, and that publishing it leaves the source as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from gobtui.adapters.planning.load import LoadedSession, load_session, plan_session
from gobtui.adapters.providers.interface import RewriteCode, RewriteError
from gobtui.adapters.providers.registry import parse_transcript, verify_checks
from gobtui.adapters.publish.publisher import Publisher
from gobtui.adapters.rewrite.lines import SourceRewriter
from gobtui.adapters.vault.vault import Vault
from gobtui.core.edits import CompactionPlan, DigestBlock, ElideEdit, InjectDigestEdit
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.verify import accepts, verify
from tests.builders import sessions
from tests.builders.codex import call, item, message, output, record
from tests.builders.common import as_jsonl, write_jsonl

POLICY = PolicyConfig(trigger_tokens=30_000, floor_tokens=12_000, keep_recent_tool_outputs=2)
CARD = "[gobtui state card]"


def _records(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _placed(tmp_path: Path, session: Any) -> Path:
    path: Path = session.write(tmp_path / "codex" / "sessions")
    return path


def _planned(path: Path) -> tuple[LoadedSession, CompactionPlan]:
    session = load_session(path, Provider.CODEX)
    outcome = plan_session(session, "compacted", POLICY)
    assert outcome.plan is not None, outcome.result
    return session, outcome.plan


def _fork(session: LoadedSession, plan: CompactionPlan, compacted: bool) -> bytes:
    overlay = session.rewriter.overlay(plan, compacted=compacted)
    return session.whole(session.rewriter.materialize(overlay))


def _pairs_whole(history: list[dict[str, Any]]) -> bool:
    calls = [i["call_id"] for i in history if i.get("type", "").endswith("call")]
    outputs = [i["call_id"] for i in history if i.get("type", "").endswith("call_output")]
    return sorted(calls) == sorted(outputs)


@pytest.mark.parametrize(
    "build",
    [lambda: sessions.codex_work_session(60_000), sessions.codex_compacted],
    ids=["work", "compacted-before"],
)
def test_the_prefix_becomes_one_compacted_record_the_verifier_accepts(
    tmp_path: Path, build: Any
) -> None:
    path = _placed(tmp_path, build())
    source = path.read_bytes()
    session, plan = _planned(path)
    fork = _fork(session, plan, compacted=True)
    portable = _fork(session, plan, compacted=False)
    assert len(fork) < len(portable) < len(source)
    assert path.read_bytes() == source

    records = _records(fork)
    compacted = [i for i, r in enumerate(records) if r["type"] == "compacted"]
    at = compacted[-1]
    payload = records[at]["payload"]
    history = payload["replacement_history"]
    assert plan.digest is not None
    assert history[-1] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": plan.digest.render()}],
    }
    assert payload["message"].startswith(CARD)
    assert _pairs_whole(history)
    # the first user prompt and the decision are in the history the resume rebuilds
    text = orjson.dumps(history).decode()
    assert sessions.TASK in text and sessions.DECISION in text
    # nothing of the prefix's model history is left before the record (of the live part)
    head = session.live.head.count(b"\n")  # the session_meta the live part starts with
    live_start = len(_records(session.source_bytes)) - len(_records(session.data)) + head
    assert not [r for r in records[live_start:at] if r["type"] == "response_item"]
    # the tail after it is the source's own lines, byte for byte (less the appended usage)
    tail = fork.splitlines()[at + 1 : -1]
    assert tail and bytes(b"\n".join(tail)) in source
    if len(compacted) > 1 or b'"compacted"' in session.data:
        assert payload["window_number"] >= 1 and payload["previous_window_id"]
    else:
        assert payload["window_number"] == 1
        assert payload["previous_window_id"] == payload["first_window_id"]
    assert payload["window_id"] != payload["first_window_id"]

    report = verify(fork, verify_checks(Provider.CODEX))
    assert accepts(report, verify(source, verify_checks(Provider.CODEX))), report.findings
    assert not [f for f in report.findings if f.severity.value == "error"]
    parsed = parse_transcript(Provider.CODEX, _written(tmp_path, fork))
    assert not [item for item in parsed.items if item.active and item.line_index < at]
    assert _fork(session, plan, compacted=True) == fork  # the same plan, the same bytes


def _written(tmp_path: Path, data: bytes) -> str:
    target = tmp_path / "fork.jsonl"
    target.write_bytes(data)
    return str(target)


# -- pair-aware cut, on a rollout made by hand ------------------------------------------------


STAMP = "2026-01-01T00:00:00.000Z"


def _call(call_id: str) -> dict[str, Any]:
    return item(call(call_id), timestamp=STAMP)


def _output(call_id: str, size: int = 4_000) -> dict[str, Any]:
    return item(output(call_id, "x" * size), timestamp=STAMP)


def _user(text: str) -> dict[str, Any]:
    return item(message("user", text), timestamp=STAMP)


META = record("session_meta", {"id": "019a0000-0000-7000-8000-000000000001", "cwd": "/w"}, STAMP)


def _session(tmp_path: Path, records: list[dict[str, Any]]) -> LoadedSession:
    path = tmp_path / "rollout-2026-01-01T00-00-00-019a0000-0000-7000-8000-000000000001.jsonl"
    write_jsonl(path, records)
    return load_session(path, Provider.CODEX)


def _plan(lines: list[int]) -> CompactionPlan:
    return CompactionPlan(
        strategy="compacted",
        rationale="test",
        edits=[
            ElideEdit(line_indexes=lines, stub_template="[elided]"),
            InjectDigestEdit(digest=DigestBlock(goal="ship it", covers_items=len(lines))),
        ],
        context_tokens_before=10_000,
        context_tokens_after=1_000,
    )


def test_parallel_calls_answered_after_the_cut_stay_with_their_outputs(tmp_path: Path) -> None:
    # 1 user, 2 call a, 3 call b, 4 output b (elided), 5 output a, 6 user: the cut after line 4
    # would leave call a in the history and its output in the tail.
    records = [META, _user("go"), _call("a"), _call("b"), _output("b"), _output("a"), _user("on")]
    session = _session(tmp_path, records)
    fork = _records(_fork(session, _plan([4]), compacted=True))
    kinds = [(r["type"], r["payload"].get("type")) for r in fork]
    at = kinds.index(("compacted", None))
    history = fork[at]["payload"]["replacement_history"]
    assert [i.get("type") for i in history] == ["message", "message"]  # the prompt, the card
    after = [r["payload"].get("call_id") for r in fork[at + 1 :] if r["type"] == "response_item"]
    assert after == ["a", "b", "b", "a", None]
    assert fork[at + 3]["payload"]["output"] == "[elided]"  # b's output, elided in the tail
    assert not verify(as_jsonl(*fork), verify_checks(Provider.CODEX)).findings


def test_a_prefix_whose_every_call_is_answered_after_it_is_refused(tmp_path: Path) -> None:
    records = [META, _call("a"), _call("b"), _output("b"), _output("a"), _user("on")]
    session = _session(tmp_path, records)
    with pytest.raises(RewriteError) as refused:
        session.rewriter.overlay(_plan([3]), compacted=True)
    assert refused.value.code is RewriteCode.COMPACTED_UNSAFE


def test_a_plan_without_a_card_is_refused(tmp_path: Path) -> None:
    session = _session(tmp_path, [META, _user("go"), _call("a"), _output("a"), _user("on")])
    plan = _plan([3]).model_copy(update={"edits": [_plan([3]).edits[0]]})
    with pytest.raises(RewriteError) as refused:
        SourceRewriter(session.data, Provider.CODEX, session.transcript).overlay(
            plan, compacted=True
        )
    assert refused.value.code is RewriteCode.COMPACTED_UNSAFE


def test_publishing_it_verifies_and_leaves_the_source(tmp_path: Path) -> None:
    path = _placed(tmp_path, sessions.codex_work_session(60_000))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    session, plan = _planned(path)
    vault = Vault(tmp_path / "data" / "vault")
    publisher = Publisher(vault, root=tmp_path / "data", clock=lambda: 1_764_400_000.0)
    receipt = publisher.apply(session, plan, POLICY, compacted=True)
    portable = publisher.apply(session, plan, POLICY)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    fork, other = Path(receipt.path), Path(portable.path)
    assert fork != other and fork.stat().st_size < other.stat().st_size < path.stat().st_size
    assert b'"type":"compacted"' in fork.read_bytes()
    assert b'"type":"compacted"' not in other.read_bytes()
    assert publisher.published(session, plan, compacted=True) == receipt
    assert publisher.apply(session, plan, POLICY, compacted=True).path == receipt.path
