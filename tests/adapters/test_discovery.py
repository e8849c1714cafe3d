"""Discovery (layouts, content sniffing, bounds, symlinks, age) and where things live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobtui.adapters.config.paths import (
    HomeError,
    Homes,
    cache_dir,
    config_path,
    data_dir,
    resolve_homes,
)
from gobtui.adapters.sessions.discovery import (
    EMPTY,
    Found,
    any_transcript,
    discover,
    discover_path,
    scan_homes,
    sniff_bytes,
    sniff_file,
)
from gobtui.core.limits import CLAUDE_MAX_DEPTH, SNIFF_BYTES
from gobtui.core.model import Provider

NOW = 1_800_000_000.0
CLAUDE = (
    b'{"type":"user","sessionId":"s1","uuid":"u1","parentUuid":null,"message":{"content":"hi"}}\n'
)
CODEX = b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"c1"}}\n'
NOT_TRANSCRIPT = b'{"level":"info","msg":"hello"}\n{"level":"warn","msg":"x"}\n'

needs_non_root = pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads everything"
)


def write(path: Path, data: bytes = CLAUDE, mtime: float = NOW) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def homes(tmp_path: Path) -> Homes:
    return Homes(claude=tmp_path / "claude", codex=tmp_path / "codex")


def paths_of(found: list[Found]) -> list[str]:
    return [f.path for f in found]


def test_any_transcript_is_judged_by_content_and_ignores_age(homes: Homes) -> None:
    """--auto-demo's question: a log that is not a transcript does not count; a year-old
    Codex rollout does."""
    assert homes.claude is not None and homes.codex is not None
    assert not any_transcript(homes)  # the homes do not even exist
    write(homes.claude / "projects" / "p" / "log.jsonl", NOT_TRANSCRIPT)
    assert not any_transcript(homes)
    write(homes.codex / "sessions" / "2025" / "01" / "01" / "r.jsonl", CODEX, NOW - 365 * 86400)
    assert any_transcript(homes)


def test_claude_and_codex_layouts(homes: Homes) -> None:
    assert homes.claude is not None and homes.codex is not None
    proj = homes.claude / "projects" / "-tmp-proj"
    main = write(proj / "s1.jsonl")
    sub = write(proj / "s1" / "subagents" / "agent-a1.jsonl")
    old = write(proj / "agent-old.jsonl")
    rollout = write(homes.codex / "sessions" / "2026" / "01" / "02" / "rollout-x.jsonl", CODEX)
    archived = write(homes.codex / "archived_sessions" / "rollout-y.jsonl", CODEX)
    write(homes.claude / "history.jsonl")  # outside projects: not a session
    found = {f.path: f for f in discover(homes, now=NOW, max_age_secs=None)}
    assert sorted(found) == sorted(map(str, [main, sub, old, rollout, archived]))
    assert list(found) == sorted(found)
    assert found[str(main)] == Found(
        Provider.CLAUDE,
        str(main),
        len(CLAUDE),
        NOW,
        main.stat().st_ino,
        False,
        None,
        main.stat().st_mtime_ns,
    )
    assert found[str(sub)].is_subagent and found[str(sub)].parent_path == str(main)
    assert found[str(old)].is_subagent and found[str(old)].parent_path is None
    assert found[str(rollout)].provider is Provider.CODEX
    assert found[str(archived)].provider is Provider.CODEX


def test_content_decides_not_the_name(homes: Homes) -> None:
    assert homes.claude is not None and homes.codex is not None
    proj = homes.claude / "projects" / "p"
    write(proj / "11111111-2222-3333-4444-555555555555.jsonl", NOT_TRANSCRIPT)
    renamed = write(proj / "my-notes.jsonl", CLAUDE)
    codex_in_claude = write(proj / "moved.jsonl", CODEX)
    write(proj / "s1.json", CLAUDE)  # not .jsonl
    write(homes.codex / "sessions" / "rollout-2026-01-01-abc.jsonl", b"garbage\n\x00\xff\n")
    report = scan_homes(homes, now=NOW, max_age_secs=None)
    by_path = {f.path: f.provider for f in report.found}
    assert by_path == {str(renamed): Provider.CLAUDE, str(codex_in_claude): Provider.CODEX}
    assert report.not_transcripts == 2


def test_empty_file_in_expected_layout_is_a_new_session(homes: Homes) -> None:
    assert homes.claude is not None and homes.codex is not None
    fresh = write(homes.claude / "projects" / "p" / "new.jsonl", b"")
    blank = write(homes.codex / "sessions" / "2026" / "rollout-new.jsonl", b"\n  \n")
    write(homes.claude / "projects" / "stray.jsonl", b"")  # not a project dir
    write(homes.claude / "projects" / "p" / "a" / "b" / "c.jsonl", b"")
    found = {f.path: f.provider for f in discover(homes, now=NOW, max_age_secs=None)}
    assert found == {str(fresh): Provider.CLAUDE, str(blank): Provider.CODEX}


def test_first_line_longer_than_the_sniff_window(homes: Homes) -> None:
    assert homes.claude is not None and homes.codex is not None
    big = b"x" * (SNIFF_BYTES * 2)
    codex = b'{"type":"session_meta","payload":{"id":"c","text":"' + big + b'"}}\n'
    claude = b'{"parentUuid":null,"sessionId":"s","message":{"content":"' + big + b'"}}\n'
    escaped = b'{"message":"\\"sessionId\\": ' + big + b'"}\n'
    a = write(homes.codex / "sessions" / "big.jsonl", codex)
    b = write(homes.claude / "projects" / "p" / "big.jsonl", claude)
    write(homes.claude / "projects" / "p" / "escaped.jsonl", escaped)
    found = {f.path: f.provider for f in discover(homes, now=NOW, max_age_secs=None)}
    assert found == {str(a): Provider.CODEX, str(b): Provider.CLAUDE}


def test_sniff_verdicts() -> None:
    assert sniff_bytes(CLAUDE, at_eof=True) is Provider.CLAUDE
    assert sniff_bytes(CODEX, at_eof=True) is Provider.CODEX
    assert sniff_bytes(b"", at_eof=True) == EMPTY
    assert sniff_bytes(b"\n\n", at_eof=True) == EMPTY
    assert sniff_bytes(b"", at_eof=False) is None  # need more bytes
    assert sniff_bytes(b'{"sessionId":"s"', at_eof=False) is None
    assert sniff_bytes(CLAUDE.rstrip(), at_eof=True) is Provider.CLAUDE  # no final newline
    # A first line still being written still tells who writes it.
    assert sniff_bytes(b'{"type":"session_meta","payload":{"id"', at_eof=True) is Provider.CODEX
    assert sniff_bytes(b"not json\n" + CODEX, at_eof=True) is Provider.CODEX
    assert sniff_bytes(NOT_TRANSCRIPT, at_eof=True) == "not"


@given(st.binary(max_size=512), st.booleans())
def test_sniff_never_raises(data: bytes, at_eof: bool) -> None:
    verdict = sniff_bytes(data, at_eof=at_eof)
    assert verdict is None or verdict in (Provider.CLAUDE, Provider.CODEX, EMPTY, "not")


def test_sniff_file_reads_past_the_first_block(tmp_path: Path) -> None:
    head = b'{"level":"x","pad":"' + b"p" * 8000 + b'"}\n'
    path = write(tmp_path / "f.jsonl", head + CODEX)
    assert sniff_file(str(path)) is Provider.CODEX
    assert sniff_file(str(write(tmp_path / "g.jsonl", NOT_TRANSCRIPT))) is None


def test_depth_bound(homes: Homes) -> None:
    assert homes.claude is not None
    # projects is depth 1, so files at depth CLAUDE_MAX_DEPTH are the deepest visited.
    ok = homes.claude / "projects" / "p" / "s" / "subagents" / "agent-1.jsonl"
    assert len(ok.relative_to(homes.claude).parts) == CLAUDE_MAX_DEPTH
    write(ok)
    write(homes.claude / "projects" / "p" / "s" / "subagents" / "deeper" / "agent-2.jsonl")
    assert paths_of(discover(homes, now=NOW, max_age_secs=None)) == [str(ok)]


def test_entry_bound_truncates_deterministically(homes: Homes) -> None:
    assert homes.claude is not None
    for p in range(5):
        for s in range(10):
            write(homes.claude / "projects" / f"p{p}" / f"s{s}.jsonl")
    full = scan_homes(homes, now=NOW, max_age_secs=None)
    assert len(full.found) == 50 and not full.truncated and full.entries == 55
    first = scan_homes(homes, now=NOW, max_age_secs=None, max_entries=20)
    again = scan_homes(homes, now=NOW, max_age_secs=None, max_entries=20)
    assert first.truncated and first.entries == 20
    assert len(first.found) == 15  # 5 project dirs, then p0's 10 files and 5 of p1's
    assert first.found == again.found
    assert paths_of(first.found) == paths_of(full.found)[: len(first.found)]


def test_symlinks_out_of_the_home_are_not_followed(homes: Homes, tmp_path: Path) -> None:
    assert homes.claude is not None
    outside = tmp_path / "elsewhere"
    write(outside / "proj" / "s.jsonl")
    write(outside / "loose.jsonl")
    projects = homes.claude / "projects"
    real = write(projects / "p" / "s.jsonl")
    (projects / "linked-dir").symlink_to(outside / "proj")
    (projects / "p" / "linked.jsonl").symlink_to(outside / "loose.jsonl")
    (projects / "inside").symlink_to(projects / "p")  # inside the home: followed, once
    (projects / "p" / "loop").symlink_to(projects)  # a loop back to the root
    report = scan_homes(homes, now=NOW, max_age_secs=None)
    assert paths_of(report.found) == [str(projects / "inside" / "s.jsonl")]
    assert report.found[0].inode == real.stat().st_ino
    # linked-dir, p/linked.jsonl, and that same link again through `inside`.
    assert report.not_followed == 3


def test_symlinked_root_is_followed(homes: Homes, tmp_path: Path) -> None:
    assert homes.codex is not None
    disk = tmp_path / "other-disk" / "sessions"
    rollout = write(disk / "2026" / "r.jsonl", CODEX)
    homes.codex.mkdir(parents=True)
    (homes.codex / "sessions").symlink_to(disk)
    expected = homes.codex / "sessions" / "2026" / "r.jsonl"
    assert paths_of(discover(homes, now=NOW, max_age_secs=None)) == [str(expected)]
    found = discover_path(homes, str(rollout), now=NOW, max_age_secs=None)
    assert found is not None and found.path == str(expected)  # re-spelled under the root


def test_age_filter(homes: Homes) -> None:
    assert homes.claude is not None
    fresh = write(homes.claude / "projects" / "p" / "new.jsonl", mtime=NOW - 60)
    old = write(homes.claude / "projects" / "p" / "old.jsonl", mtime=NOW - 10 * 86400)
    report = scan_homes(homes, now=NOW, max_age_secs=7 * 86400)
    assert paths_of(report.found) == [str(fresh)]
    assert report.too_old == 1
    assert paths_of(discover(homes, now=NOW, max_age_secs=None)) == [str(fresh), str(old)]


def test_missing_homes_are_empty(tmp_path: Path) -> None:
    homes = Homes(claude=tmp_path / "nope", codex=None)
    report = scan_homes(homes, now=NOW, max_age_secs=None)
    assert report.found == [] and report.skipped == []


@needs_non_root
def test_unreadable_dir_and_file_are_skipped_and_counted(homes: Homes) -> None:
    assert homes.claude is not None
    projects = homes.claude / "projects"
    good = write(projects / "p" / "s.jsonl")
    locked_dir = projects / "locked"
    write(locked_dir / "s.jsonl")
    locked_file = write(projects / "p" / "t.jsonl")
    locked_dir.chmod(0)
    locked_file.chmod(0)
    try:
        report = scan_homes(homes, now=NOW, max_age_secs=None)
    finally:
        locked_dir.chmod(0o755)
        locked_file.chmod(0o644)
    assert paths_of(report.found) == [str(good)]
    assert sorted(report.skipped) == sorted([str(locked_dir), str(locked_file)])


def test_discover_path_rules(homes: Homes, tmp_path: Path) -> None:
    assert homes.claude is not None
    proj = homes.claude / "projects" / "p"
    main = write(proj / "s.jsonl")
    sub = write(proj / "s" / "subagents" / "agent-x.jsonl")
    found = discover_path(homes, str(sub), now=NOW, max_age_secs=None)
    assert found is not None and found.parent_path == str(main) and found.is_subagent
    assert (
        discover_path(homes, str(write(tmp_path / "out.jsonl")), now=NOW, max_age_secs=None) is None
    )
    too_deep = write(proj / "a" / "b" / "c" / "d.jsonl")
    assert discover_path(homes, str(too_deep), now=NOW, max_age_secs=None) is None
    junk = write(proj / "junk.jsonl", NOT_TRANSCRIPT)
    assert discover_path(homes, str(junk), now=NOW, max_age_secs=None) is None
    assert discover_path(homes, str(proj / "s.txt"), now=NOW, max_age_secs=None) is None
    with pytest.raises(FileNotFoundError):
        discover_path(homes, str(proj / "gone.jsonl"), now=NOW, max_age_secs=None)
    # A known provider skips the sniff entirely (the store passes what it already knows).
    known = discover_path(
        homes, str(junk), now=NOW, max_age_secs=None, known=lambda p, i: Provider.CLAUDE
    )
    assert known is not None and known.provider is Provider.CLAUDE


# -- paths ---------------------------------------------------------------------------------


def test_resolve_homes_order(tmp_path: Path) -> None:
    flag_dir = tmp_path / "flag"
    flag_dir.mkdir()
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "env-claude")}
    homes = resolve_homes(str(flag_dir), None, env)
    assert homes.claude == flag_dir and homes.claude_explicit and homes.claude_source == "flag"
    assert homes.codex == tmp_path / "home" / ".codex" and not homes.codex_explicit
    homes = resolve_homes(None, None, env | {"CODEX_HOME": str(tmp_path / "env-codex")})
    assert homes.claude == tmp_path / "env-claude" and homes.claude_source == "env"
    assert homes.codex == tmp_path / "env-codex" and homes.codex_source == "env"
    homes = resolve_homes(None, None, {"HOME": str(tmp_path / "home"), "CODEX_HOME": ""})
    assert homes.claude == tmp_path / "home" / ".claude" and homes.claude_source == "default"
    assert homes.codex == tmp_path / "home" / ".codex"


def test_resolve_homes_tilde(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    assert resolve_homes("~/x", None, {"HOME": str(tmp_path)}).claude == tmp_path / "x"


def test_missing_explicit_home_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HomeError, match=r"^claude home .*nope does not exist$"):
        resolve_homes(str(tmp_path / "nope"), None, {"HOME": str(tmp_path)})
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(HomeError, match=r"codex home .* is not a directory"):
        resolve_homes(None, str(a_file), {"HOME": str(tmp_path)})
    # Missing env or default homes are simply empty.
    homes = resolve_homes(None, None, {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "n")})
    assert discover(homes, now=NOW, max_age_secs=None) == []


def test_own_dirs_follow_the_environment(tmp_path: Path) -> None:
    env = {
        "GOBTUI_DATA_DIR": str(tmp_path / "d"),
        "GOBTUI_CACHE_DIR": str(tmp_path / "c"),
        "GOBTUI_CONFIG": str(tmp_path / "g.toml"),
    }
    assert data_dir(env) == tmp_path / "d"
    assert cache_dir(env) == tmp_path / "c"
    assert config_path(env) == tmp_path / "g.toml"
    assert config_path({"HOME": str(tmp_path)}) == tmp_path / ".config" / "gobtui" / "config.toml"
    assert "gobtui" in str(data_dir({})) and "gobtui" in str(cache_dir({}))
    # The autouse fixture isolates the real process environment too.
    assert cache_dir() == Path(os.environ["GOBTUI_CACHE_DIR"])


def test_prefetch_is_told_every_path_to_judge_first(homes: Homes) -> None:
    assert homes.claude is not None and homes.codex is not None
    fresh = write(homes.claude / "projects" / "p" / "a.jsonl", CLAUDE, mtime=NOW)
    old = write(homes.codex / "sessions" / "2026" / "b.jsonl", CODEX, mtime=NOW - 9_999)
    late = write(homes.codex / "sessions" / "2026" / "c.jsonl", CODEX, mtime=NOW)
    prefetched: list[list[str]] = []
    asked: list[tuple[str, int]] = []  # (path, prefetch calls so far)

    def known(path: str, inode: int) -> Provider | None:
        asked.append((path, len(prefetched)))
        return None

    report = scan_homes(homes, now=NOW, max_age_secs=100, known=known, prefetch=prefetched.append)
    assert [sorted(paths) for paths in prefetched] == [sorted([str(fresh), str(late)])]
    assert sorted(asked) == sorted([(str(fresh), 1), (str(late), 1)])  # after the prefetch
    assert [f.path for f in report.found] == sorted([str(fresh), str(late)])
    assert report.too_old == 1 and str(old) not in report.skipped
