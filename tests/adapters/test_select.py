"""Session selection: id prefixes, exact ids, subagents, paths, and checked selectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gobtui.adapters.config.paths import Homes, cache_dir
from gobtui.adapters.sessions.select import (
    SelectError,
    SelectErrorCode,
    check_selector,
    load_summaries,
    own_id,
    select_session,
)
from gobtui.core.limits import SELECT_LIST_MAX, SELECTOR_MAX_CHARS
from gobtui.core.model import Provider, SessionSummary

SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"
CODEX_IDS = [
    "019c8a4d-8f45-7010-8b5d-7fad920aa6f9",
    "019c8a59-e9dd-71f0-9ae3-4079fe9726a9",
    "019c8a70-dda7-7f33-98ea-f30553347322",
]
SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"


def build_homes(fixtures: Path, root: Path) -> Homes:
    """Real transcripts in the providers' own layouts (a Claude session with two subagents)."""
    project = root / "claude" / "projects" / "-work-p"
    subagents = project / SPOTTER / "subagents"
    subagents.mkdir(parents=True)
    claude = fixtures / "claude"
    shutil.copyfile(claude / f"marot__spotter__{SPOTTER}.jsonl", project / f"{SPOTTER}.jsonl")
    for agent in (claude / f"marot__spotter__{SPOTTER}" / "subagents").iterdir():
        shutil.copyfile(agent, subagents / agent.name)
    shutil.copyfile(claude / "marot__spotter__short.jsonl", project / "short.jsonl")
    day = root / "codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    for rollout in (fixtures / "codex").glob("madshn__localpush__rollout-*.jsonl"):
        shutil.copyfile(rollout, day / rollout.name.removeprefix("madshn__localpush__"))
    return Homes(claude=root / "claude", codex=root / "codex")


@pytest.fixture(scope="module")
def summaries(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[SessionSummary]:
    homes = build_homes(fixtures_dir, tmp_path_factory.mktemp("homes"))
    # Module scope runs outside the per-test isolated cache directory: no cache here.
    return load_summaries(homes, all_sessions=True, use_cache=False)


def fake(session_id: str, *, mtime: float = 0.0, agent_id: str | None = None) -> SessionSummary:
    return SessionSummary(
        provider=Provider.CODEX,
        session_id=session_id,
        path=f"/sessions/{session_id}/{agent_id or 'main'}.jsonl",
        mtime=mtime,
        agent_id=agent_id,
    )


def select_error(selector: str, summaries: list[SessionSummary]) -> SelectError:
    with pytest.raises(SelectError) as caught:
        select_session(selector, summaries)
    assert "\n" not in str(caught.value)
    return caught.value


def test_load_summaries_lists_every_file_subagents_included(
    summaries: list[SessionSummary],
) -> None:
    ids = sorted(own_id(s) for s in summaries)
    assert ids == sorted([SPOTTER, "a2898e3", "acompact-e1f845", SHORT, *CODEX_IDS])
    parent = next(s for s in summaries if own_id(s) == SPOTTER)
    assert len(parent.subagents) == 2


def test_load_summaries_uses_the_cache_dir(fixtures_dir: Path, tmp_path: Path) -> None:
    homes = build_homes(fixtures_dir, tmp_path)
    first = load_summaries(homes, all_sessions=True)
    assert (cache_dir() / "cursors").is_dir()
    assert load_summaries(homes, all_sessions=True) == first
    # Without --all the seven-day window applies: these fixtures are older than that.
    assert load_summaries(homes, all_sessions=False, now=4_000_000_000.0) == []


def test_full_id_and_unique_prefix(summaries: list[SessionSummary]) -> None:
    chosen = select_session(SPOTTER, summaries)
    assert chosen.summary is not None and chosen.summary.agent_id is None
    assert chosen.provider is Provider.CLAUDE and chosen.path.endswith(f"{SPOTTER}.jsonl")
    assert select_session("5560", summaries).session_id == SHORT
    assert select_session("019c8a59", summaries).provider is Provider.CODEX


def test_subagents_by_their_own_id(summaries: list[SessionSummary]) -> None:
    chosen = select_session("a2898e3", summaries)
    assert chosen.summary is not None and chosen.summary.agent_id == "a2898e3"
    assert chosen.path.endswith("subagents/agent-a2898e3.jsonl")
    assert select_session("acomp", summaries).session_id == "acompact-e1f845"


def test_ambiguous_prefix_lists_the_matches(summaries: list[SessionSummary]) -> None:
    error = select_error("019c8a", summaries)
    assert error.code is SelectErrorCode.AMBIGUOUS
    assert str(error).startswith("'019c8a' matches 3 sessions: ")
    for session_id in CODEX_IDS:
        assert session_id in str(error)
    assert "rollout-" in str(error)  # paths are listed beside the ids
    assert "…" not in str(error)


def test_long_ambiguous_listing_is_cut(summaries: list[SessionSummary]) -> None:
    many = [fake(f"dup{i}", mtime=float(i)) for i in range(SELECT_LIST_MAX + 2)]
    error = select_error("dup", many)
    assert f"matches {SELECT_LIST_MAX + 2} sessions" in str(error)
    assert str(error).endswith(", …")
    assert "dup6" in str(error) and "dup0" not in str(error)  # newest first


def test_exact_id_wins_over_prefixes() -> None:
    found = [fake("abc"), fake("abcd"), fake("abce")]
    assert select_session("abc", found).session_id == "abc"
    assert select_error("abcx", found).code is SelectErrorCode.NO_MATCH


def test_exact_id_shared_by_two_files_is_ambiguous() -> None:
    twins = [fake("same"), fake("other", agent_id="same")]
    assert select_error("same", twins).code is SelectErrorCode.AMBIGUOUS


def test_no_match(summaries: list[SessionSummary]) -> None:
    error = select_error("ffff", summaries)
    assert error.code is SelectErrorCode.NO_MATCH
    assert str(error) == "no session matches 'ffff'"


def test_path_of_a_known_session(summaries: list[SessionSummary]) -> None:
    known = next(s for s in summaries if own_id(s) == CODEX_IDS[0])
    chosen = select_session(known.path, summaries)
    assert chosen.summary == known and chosen.provider is Provider.CODEX


def test_path_outside_the_homes_is_sniffed(
    fixture_copy: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert callable(fixture_copy)
    codex = fixture_copy("codex/kvsankar__agent-history__session-01.jsonl", "a.jsonl")
    claude = fixture_copy("claude/jazzyalex__agent-sessions__small.jsonl", "b.txt")
    chosen = select_session(str(codex), [])
    assert (chosen.provider, chosen.path, chosen.summary) == (Provider.CODEX, str(codex), None)
    # A bare file name in the current directory, with no id matching it.
    monkeypatch.chdir(claude.parent)
    assert select_session("b.txt", []).provider is Provider.CLAUDE
    assert select_session("./a.jsonl", []).path == str(codex)


def test_bad_paths(tmp_path: Path) -> None:
    assert select_error(str(tmp_path), []).code is SelectErrorCode.NOT_A_FILE
    assert select_error(str(tmp_path / "gone.jsonl"), []).code is SelectErrorCode.NOT_FOUND
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": "world"}\n')
    assert select_error(str(other), []).code is SelectErrorCode.NOT_A_TRANSCRIPT
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    error = select_error(str(empty), [])
    assert error.code is SelectErrorCode.NOT_A_TRANSCRIPT and "is empty" in str(error)


@pytest.mark.parametrize("selector", ["ab\x00", "ab\ncd", "\x1b[31m", "a\tb", "x\x7f", "y\x85"])
def test_control_characters_are_refused_and_not_echoed(selector: str) -> None:
    error = select_error(selector, [fake("ab")])
    assert error.code is SelectErrorCode.CONTROL_CHARS
    assert not any(ch in str(error) for ch in "\x00\n\x1b\t\x7f\x85")


def test_empty_and_too_long() -> None:
    assert select_error("", []).code is SelectErrorCode.EMPTY
    assert select_error("   ", []).code is SelectErrorCode.EMPTY
    assert select_error("a" * (SELECTOR_MAX_CHARS + 1), []).code is SelectErrorCode.TOO_LONG
    assert check_selector("a" * SELECTOR_MAX_CHARS) == "a" * SELECTOR_MAX_CHARS


_IDS = st.text(alphabet="0123456789abcdef-", min_size=1, max_size=12)


@settings(max_examples=50, deadline=None)
@given(ids=st.lists(_IDS, min_size=1, max_size=8, unique=True), selector=_IDS)
def test_selection_property(ids: list[str], selector: str) -> None:
    """A selection is an exact id, or the only id the selector begins; otherwise an error."""
    found = [fake(i) for i in ids]
    exact = [i for i in ids if i == selector]
    prefixed = [i for i in ids if i.startswith(selector)]
    try:
        chosen = select_session(selector, found)
    except SelectError as error:
        assert not exact
        expected = SelectErrorCode.AMBIGUOUS if prefixed else SelectErrorCode.NO_MATCH
        assert error.code is expected
        return
    assert chosen.session_id in (exact or prefixed)
    assert exact or len(prefixed) == 1
