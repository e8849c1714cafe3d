"""Preserved thinking in Claude forks (core.thinking, adapters.providers.claude.thinking), on
the driven sessions the real Claude Code wrote against the signing model server
(tests/corpus/driven): no thinking at or after the first changed message, the thinking
before it byte-identical, the plan counting what the rule leaves out, and a fork that
breaks the rule refused."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.planning.load import load_session
from gobtui.adapters.providers.claude.thinking import prefix_safe, thinking_after_change
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.providers.rewrite_records import split_lines
from gobtui.adapters.rewrite.apply import apply_plan
from gobtui.core.admission import AdmissionCode, admit
from gobtui.core.edits import CompactionPlan, ElideEdit
from gobtui.core.model import ItemKind, Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies import get, plan_for
from tests.builders.claude import assistant, user
from tests.builders.common import write_jsonl

DRIVEN = Path(__file__).resolve().parents[1] / "corpus" / "driven"
SESSIONS = sorted(DRIVEN.glob("*.jsonl"))
POLICY = PolicyConfig(trigger_tokens=1, floor_tokens=0, min_savings_tokens=0)
THINK = {"thinking", "redacted_thinking"}


def _thinking(line: bytes) -> bool:
    record = decode_line(line.strip())
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(b.get("type") in THINK for b in content)


def _by_uuid(lines: list[bytes]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for line in lines:
        record = decode_line(line.strip())
        if isinstance(record, dict) and isinstance(record.get("uuid"), str):
            found[record["uuid"]] = line
    return found


def test_the_corpus_holds_three_driven_thinking_sessions() -> None:
    assert len(SESSIONS) >= 3
    for path in SESSIONS:
        assert sum(_thinking(line) for line in split_lines(path.read_bytes())) >= 10, path.name


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
@pytest.mark.parametrize("strategy", ["compacted", "cache_aware", "middle", "scored"])
def test_a_fork_holds_no_thinking_after_its_first_change(
    tmp_path: Path, path: Path, strategy: str
) -> None:
    data = path.read_bytes()
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    plan = plan_for(strategy, transcript, POLICY)
    assert isinstance(plan, CompactionPlan), strategy
    assert admit(plan, transcript, POLICY).admitted
    raw = get(strategy).evaluate(transcript, POLICY)
    assert raw is not None
    elided = set(plan.elided_lines)
    kinds = {item.line_index: item.kind for item in transcript.items}
    added = elided - set(raw.elided_lines)
    assert added and all(kinds[line] is ItemKind.REASONING for line in added)
    assert plan.context_tokens_after < raw.context_tokens_after  # the thinking counts
    assert plan.digest is not None and plan.digest.covers_items == len(elided)

    out = apply_plan(data, Provider.CLAUDE, plan, transcript)
    src, dst = split_lines(data), split_lines(out)
    source = _by_uuid(src)
    first = min(elided)
    before = [line for line in src[:first] if _thinking(line)]
    assert before == [line for line in dst[:first] if _thinking(line)]  # byte-identical
    assert not any(_thinking(line) for line in dst[first:])
    assert (
        len(dst)
        == len(src)
        - len(added)
        - sum(1 for line in raw.elided_lines if kinds[line] is ItemKind.REASONING)
        + 3
    )  # the card's records
    for line in dst:  # every parent is a record the fork holds (or the chain's head)
        record = decode_line(line.strip())
        parent = record.get("parentUuid") if isinstance(record, dict) else None
        assert parent is None or parent in source or parent in _by_uuid(dst), line[:80]
    fork = tmp_path / "fork.jsonl"
    fork.write_bytes(out)
    after = parse_transcript(Provider.CLAUDE, str(fork))
    assert after.summary is not None and transcript.summary is not None
    before_tokens, after_tokens = transcript.summary.context_tokens, after.summary.context_tokens
    assert before_tokens is not None and after_tokens is not None and after_tokens < before_tokens
    assert not [i for i in after.items if i.kind is ItemKind.REASONING and i.line_index >= first]


@pytest.mark.parametrize("path", SESSIONS[:1], ids=lambda p: p.stem)
def test_a_fork_that_keeps_a_later_thinking_block_is_refused(path: Path) -> None:
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    plan = plan_for("compacted", transcript, POLICY)
    assert isinstance(plan, CompactionPlan)
    session = load_session(path, Provider.CLAUDE)
    overlay = session.rewriter.overlay(plan)
    assert session.rewriter.thinking_violation(overlay) is None
    left_out = sorted(i for i, line in overlay.replaced.items() if line == b"")
    assert left_out
    broken = dict(overlay.replaced)
    del broken[left_out[-1]]  # one thinking record put back
    assert thinking_after_change(session.rewriter.lines, broken, overlay.appended) == left_out[-1]

    kept = [line for line in plan.elided_lines if line != left_out[-1]]
    edits = [
        e.model_copy(update={"line_indexes": kept}) if isinstance(e, ElideEdit) else e
        for e in plan.edits
    ]
    verdict = admit(plan.model_copy(update={"edits": edits}), transcript, POLICY)
    assert verdict.code is AdmissionCode.THINKING_AFTER_CHANGE


def test_thinking_of_finished_turns_is_a_candidate_by_policy() -> None:
    path = DRIVEN / "three-prompts.jsonl"
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    # Every tool output protected: only thinking is left to cut.
    keep_all = POLICY.model_copy(update={"keep_recent_tool_outputs": 100})
    plan = plan_for("compacted", transcript, keep_all)
    assert isinstance(plan, CompactionPlan)
    kinds = {item.line_index: item.kind for item in transcript.items}
    assert {kinds[line] for line in plan.elided_lines} == {ItemKind.REASONING}
    prompts = [i.line_index for i in transcript.items if i.kind is ItemKind.USER and i.active]
    assert min(plan.elided_lines) < prompts[-1]  # a finished turn's thinking went first
    off = keep_all.model_copy(update={"drop_old_thinking": False})
    assert not isinstance(plan_for("compacted", transcript, off), CompactionPlan)


def test_a_mixed_record_after_the_change_loses_its_thinking_blocks() -> None:
    def line(record: dict[str, object]) -> bytes:
        return orjson.dumps(record) + b"\n"

    think = {"type": "thinking", "thinking": "", "signature": "c2ln"}
    lines = [
        line({"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "hi"}}),
        line(
            {
                "type": "assistant",
                "uuid": "a1",
                "parentUuid": "u1",
                "message": {"id": "m1", "content": [think]},
            }
        ),
        line(
            {
                "type": "assistant",
                "uuid": "a2",
                "parentUuid": "a1",
                "message": {"id": "m1", "content": [think, {"type": "text", "text": "ok"}]},
            }
        ),
        line({"type": "user", "uuid": "u2", "parentUuid": "a2", "message": {"content": "go"}}),
    ]
    updates, parents = prefix_safe(lines, 2)  # line 2 changed: its message starts at line 1
    assert updates[1] == b"" and parents == {"a1": "u1"}
    record = orjson.loads(updates[2])
    assert record["parentUuid"] == "u1"
    assert record["message"]["content"] == [{"type": "text", "text": "ok"}]
    assert 0 not in updates and 3 not in updates


def test_an_old_prompts_screenshot_goes_and_the_newest_prompts_stays(tmp_path: Path) -> None:
    shot = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" + "A" * 4000}

    def prompt(uuid: str, parent: str | None, text: str) -> dict[str, object]:
        return user(
            uuid, parent, [{"type": "text", "text": text}, {"type": "image", "source": shot}]
        )

    def answer(uuid: str, parent: str, n: int) -> dict[str, object]:
        usage = {"input_tokens": 10, "cache_read_input_tokens": 3000 * n, "output_tokens": 5}
        return assistant(uuid, parent, [{"type": "text", "text": "ok"}], f"m{n}", usage=usage)

    records = [
        prompt("u1", None, "look"),
        answer("a1", "u1", 1),
        prompt("u2", "a1", "again"),
        answer("a2", "u2", 2),
    ]
    path = tmp_path / "s.jsonl"
    write_jsonl(path, records)
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    policy = PolicyConfig(
        trigger_tokens=1, floor_tokens=0, min_savings_tokens=0, keep_recent_tool_outputs=0
    )
    plan = plan_for("compacted", transcript, policy)
    assert isinstance(plan, CompactionPlan) and plan.elided_lines == [0]
    out = split_lines(apply_plan(path.read_bytes(), Provider.CLAUDE, plan, transcript))
    first = orjson.loads(out[0])["message"]["content"]
    assert first[0] == {"type": "text", "text": "look"}
    assert first[1]["text"].startswith("[image removed by gobtui: image/png, 2.9 KB")
    assert out[2] == path.read_bytes().split(b"\n")[2] + b"\n"  # the newest prompt's picture stays
    off = policy.model_copy(update={"drop_old_images": False})
    assert not isinstance(plan_for("compacted", transcript, off), CompactionPlan)
