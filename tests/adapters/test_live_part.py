"""A plan reads the live part: the newest compaction and what follows, on real files.

Each case compares the live-part load with a whole-file load of the same file (the finder
switched off): the same context, the same live items, the same plans, and a fork whose
history before the compaction is the source's own bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.planning import load
from gobtui.adapters.planning.load import LoadedSession, candidate_bytes, load_session, plan_session
from gobtui.adapters.providers.live_part import WHOLE, find_live_part
from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.verify import accepts, verify
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession
from tests.builders.common import stable_uuid

POLICY = PolicyConfig(trigger_tokens=30_000, floor_tokens=20_000)
LOG = "\n".join(
    f"2026-09-21 12:{i % 60:02d} worker {i}: build step ok, cache warm" for i in range(400)
)


def _claude_history(session: ClaudeSession, turns: int, tag: str) -> None:
    for turn in range(turns):
        session.prompt(f"{tag} turn {turn}: run the build and tell me what broke")
        session.tool("Bash", {"command": f"make build-{tag}-{turn}"}, LOG)
        session.say(f"{tag} {turn}: the build is green.", final=True)


def _claude(tmp_path: Path, *, branch_back: bool = False) -> tuple[Path, int]:
    """A session with two compactions; the path and the newest boundary's byte offset."""
    session = ClaudeSession(stable_uuid("live-part", branch_back))
    _claude_history(session, 6, "first")
    session.compact("We fixed the first build.")
    _claude_history(session, 6, "second")
    before_boundary = session.parent
    start = len(session.text().encode())  # where the newest boundary's line will start
    session.compact("We fixed the second build.")
    _claude_history(session, 14, "live")
    if branch_back:  # a rewind: the newest turn continues from before the compaction
        session.parent = before_boundary
        _claude_history(session, 1, "rewound")
    return session.write(tmp_path / "projects"), start


def _whole(path: Path, provider: Provider, monkeypatch: pytest.MonkeyPatch) -> LoadedSession:
    with monkeypatch.context() as patch:
        patch.setattr(load, "find_live_part", lambda _source, _provider: WHOLE)
        return load_session(path, provider)


def _active(session: LoadedSession) -> list[tuple[str, int, int]]:
    return [
        (item.label, item.est_tokens, len(item.tool_use_ids))
        for item in session.transcript.items
        if item.active
    ]


def test_a_claude_plan_reads_from_the_newest_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, start = _claude(tmp_path)
    source = path.read_bytes()
    live = load_session(path, Provider.CLAUDE)
    whole = _whole(path, Provider.CLAUDE, monkeypatch)

    assert live.live.start == start and live.data == source[start:]
    assert b'"compact_boundary"' in live.data.splitlines()[0]
    assert live.source_bytes == source and live.source_sha256 == whole.source_sha256
    assert live.session_id == whole.session_id
    assert (
        live.transcript.context_tokens()
        == whole.transcript.context_tokens()
        > POLICY.trigger_tokens
    )
    # Only the live items were built; they are the whole parse's live items.
    assert len(live.transcript.items) < len(whole.transcript.items)
    assert _active(live) == _active(whole)

    for strategy in ("elide", "compacted"):
        ours, theirs = (
            plan_session(live, strategy, POLICY).plan,
            plan_session(whole, strategy, POLICY).plan,
        )
        assert ours is not None and theirs is not None
        assert (ours.est_savings, len(ours.elided_lines)) == (
            theirs.est_savings,
            len(theirs.elided_lines),
        )
        fork = live.whole(candidate_bytes(live, ours))
        assert fork[:start] == source[:start]  # the history, byte for byte
        assert len(fork) == live.whole_size(len(candidate_bytes(live, ours)))
        assert len(fork) == len(candidate_bytes(whole, theirs)) < len(source)
        assert accepts(
            verify(fork, verify_checks(Provider.CLAUDE)),
            verify(source, verify_checks(Provider.CLAUDE)),
        )


def test_a_branch_that_reaches_back_before_the_boundary_reads_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _start = _claude(tmp_path, branch_back=True)
    live = load_session(path, Provider.CLAUDE)
    assert live.live == WHOLE and live.data == path.read_bytes()
    assert _active(live) == _active(_whole(path, Provider.CLAUDE, monkeypatch))
    assert any("rewound" in (item.summary or "") for item in live.transcript.items if item.active)


def test_a_marker_inside_another_record_is_not_a_boundary(tmp_path: Path) -> None:
    """The marker's bytes can sit in a nested object (a tool's structured result): the line is
    decoded and its own type decides."""
    path, start = _claude(tmp_path)
    decoy = (
        b'{"type":"user","uuid":"decoy","parentUuid":null,"sessionId":"s",'
        b'"toolUseResult":{"type":"system","subtype":"compact_boundary"}}\n'
    )
    source = path.read_bytes()
    assert find_live_part(source + decoy, Provider.CLAUDE).start == start
    assert find_live_part(decoy + decoy, Provider.CLAUDE) == WHOLE
    # A boundary on the first line leaves nothing before it: the whole file is the live part.
    assert find_live_part(source[start:], Provider.CLAUDE) == WHOLE


def test_a_codex_plan_reads_session_meta_and_the_newest_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = CodexSession(stable_uuid("live-part", "codex"))
    session.meta()
    for turn in range(8):
        session.turn(f"turn {turn}: check the logs")
        session.shell(f"tail -n 400 /var/log/app-{turn}.log", LOG)
        session.answer(f"turn {turn}: the logs are clean.")
    session.compact("We read eight logs.", kept_prompts=("check the logs",))
    for turn in range(14):
        session.turn(f"live {turn}: check the logs again")
        session.shell(f"tail -n 400 /var/log/live-{turn}.log", LOG)
        session.answer(f"live {turn}: still clean.")
    path = session.write(tmp_path / "sessions")
    source = path.read_bytes()
    live = load_session(path, Provider.CODEX)
    whole = _whole(path, Provider.CODEX, monkeypatch)

    head = source.splitlines(True)[0]
    assert b'"session_meta"' in head and live.live.head == head
    assert live.data == head + source[live.live.start :]
    assert (
        source[live.live.start :].startswith(b'{"timestamp"')
        and b'"compacted"' in live.data.splitlines()[1]
    )
    assert live.session_id == whole.session_id == session.session_id
    assert live.transcript.context_tokens() == whole.transcript.context_tokens()
    assert _active(live) == _active(whole)
    ours, theirs = (
        plan_session(live, "elide", POLICY).plan,
        plan_session(whole, "elide", POLICY).plan,
    )
    assert ours is not None and theirs is not None and ours.est_savings == theirs.est_savings
    fork = live.whole(candidate_bytes(live, ours))
    assert fork[: live.live.start] == source[: live.live.start]
    assert len(fork) == len(candidate_bytes(whole, theirs)) < len(source)
    assert accepts(
        verify(fork, verify_checks(Provider.CODEX)), verify(source, verify_checks(Provider.CODEX))
    )


@pytest.mark.parametrize("provider", [Provider.CLAUDE, Provider.CODEX])
def test_record_numbers_are_the_files_own(tmp_path: Path, provider: Provider) -> None:
    """A plan reads the live part, but every line it shows is numbered as the file's own
    record (1-based, as verify and the vault number them): each line of the text planned is
    the file's line of that number, and the live part starts where the header says."""
    if provider is Provider.CLAUDE:
        path, start = _claude(tmp_path)
    else:
        codex = CodexSession(stable_uuid("numbers", "codex"))
        codex.meta()
        for turn in range(3):
            codex.turn(f"turn {turn}: check the logs")
            codex.shell(f"tail /var/log/app-{turn}.log", LOG)
        codex.compact("We read three logs.", kept_prompts=("check the logs",))
        codex.turn("live: check again")
        path = codex.write(tmp_path / "sessions")
        start = path.read_bytes().index(b'"type":"compacted"')
        start = path.read_bytes().rfind(b"\n", 0, start) + 1
    session = load_session(path, provider)
    file_lines = path.read_bytes().splitlines()
    assert session.live.start == start > 0
    first = session.live_first_record
    assert first == path.read_bytes().count(b"\n", 0, start) + 1 > 1
    for index, line in enumerate(session.data.splitlines()):
        assert file_lines[session.record_number(index) - 1] == line
    assert session.record_number(len(session.live.head.splitlines())) == first
