"""Codex reasoning of earlier turns as elision candidates, where the policy says so
(drop_old_reasoning): the provider counts only its summary as context, but the client sends
its encrypted content back on every request and adds an estimate of it to its compaction
decision. A fork turns an elided reasoning record into the `agent_reasoning` event Codex
writes beside one; the newest turns' reasoning stays.
Real files, the real parse, plan and rewrite, the fork verified and re-parsed."""

from __future__ import annotations

import json
from pathlib import Path

from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.adapters.providers.registry import parse_transcript, verify_checks
from gobtui.adapters.rewrite.apply import apply_plan
from gobtui.core.admission import AdmissionCode, admit
from gobtui.core.model import ItemKind, Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.projection import codex_reasoning_tokens
from gobtui.core.verify import verify
from tests.builders.codex import CodexSession
from tests.builders.sessions import codex_reasoning_heavy

POLICY = PolicyConfig(
    trigger_tokens=20_000, floor_tokens=2_000, keep_recent_tool_outputs=2, drop_old_reasoning=True
)


def _session(tmp_path: Path) -> Path:
    return codex_reasoning_heavy().write(tmp_path / "sessions")


def test_old_reasoning_leaves_a_fork_as_its_event_and_the_newest_stays(tmp_path: Path) -> None:
    path = _session(tmp_path)
    transcript = parse_transcript(Provider.CODEX, str(path))
    reasoning = [item for item in transcript.items if item.kind is ItemKind.REASONING]
    assert reasoning and all(item.elidable and not item.elides_output for item in reasoning)
    # what the provider counts of one is its summary, not the encrypted content
    assert all(item.est_tokens * 4 < item.hidden_bytes for item in reasoning)
    plan = plan_session(load_session(path, Provider.CODEX), "compacted", POLICY).plan
    assert plan is not None and plan.projection is not None
    elided = set(plan.elided_lines)
    dropped = [item for item in reasoning if item.line_index in elided]
    assert dropped and reasoning[-1].line_index not in elided  # in the protected tail
    # the client's own estimate no longer carries what the fork left out
    everything = codex_reasoning_tokens(transcript.items, True)
    assert codex_reasoning_tokens(transcript.items, True, elided) < everything
    source = path.read_bytes()
    fork = apply_plan(source, Provider.CODEX, plan, transcript)
    lines = fork.split(b"\n")
    assert len(lines) > len(source.split(b"\n"))  # every line kept, the card appended
    first = json.loads(lines[dropped[0].line_index])
    assert first["type"] == "event_msg"
    assert first["payload"] == {"type": "agent_reasoning", "text": "**Planning step 0**"}
    assert b'"encrypted_content"' in lines[reasoning[-1].line_index]
    assert verify(fork, verify_checks(Provider.CODEX)).ok
    forked = tmp_path / "fork.jsonl"
    forked.write_bytes(fork)
    again = parse_transcript(Provider.CODEX, str(forked))
    left = [item for item in again.items if item.kind is ItemKind.REASONING]
    assert len(left) == len(reasoning) - len(dropped)


def test_by_default_reasoning_stays_and_a_plan_eliding_it_is_refused(tmp_path: Path) -> None:
    path = _session(tmp_path)
    default = POLICY.model_copy(update={"drop_old_reasoning": False})
    session = load_session(path, Provider.CODEX)
    plan = plan_session(session, "compacted", default).plan
    assert plan is not None
    transcript = parse_transcript(Provider.CODEX, str(path))
    reasoning = {i.line_index for i in transcript.items if i.kind is ItemKind.REASONING}
    assert not reasoning & set(plan.elided_lines)
    wider = plan_session(session, "compacted", POLICY).plan
    assert wider is not None and reasoning & set(wider.elided_lines)
    refused = admit(wider, transcript, default)
    assert AdmissionCode.LINE_NOT_ELIDABLE in refused.codes


def test_reasoning_without_encrypted_content_is_no_candidate(tmp_path: Path) -> None:
    session = CodexSession("019a0000-0000-7000-8000-00000000000a")
    session.meta()
    session.turn("go")
    session.reason("**Short**", encrypted_bytes=0)
    session.answer("done")
    transcript = parse_transcript(Provider.CODEX, str(session.write(tmp_path / "sessions")))
    reasoning = [item for item in transcript.items if item.kind is ItemKind.REASONING]
    assert reasoning and not any(item.elidable for item in reasoning)
