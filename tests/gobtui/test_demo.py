"""The demo home: deterministic, shaped like real transcripts, and growing when ticked."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.providers.reader import open_cursor
from gobtui.adapters.providers.registry import state_class
from gobtui.core.limits import DEFAULT_MAX_AGE_SECS, DEFAULT_TRIGGER_TOKENS
from gobtui.core.model import Provider, SessionSummary
from gobtui.demo.home import DemoHome, build_demo_home, default_demo_root
from gobtui.demo.live import DemoAppender

NOW = 1_795_000_000.0


def _files(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*.jsonl"))
    }


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _summary(path: Path, provider: Provider) -> SessionSummary:
    state = state_class(provider)
    return open_cursor(str(path), provider, state, full=True).summary()


def _provider(home: DemoHome, path: Path) -> Provider:
    return Provider.CLAUDE if path.is_relative_to(home.claude_home) else Provider.CODEX


@pytest.fixture
def home(tmp_path: Path) -> DemoHome:
    return build_demo_home(tmp_path / "demo", seed=7, now=NOW)


def test_same_seed_and_now_give_identical_bytes(tmp_path: Path) -> None:
    first = build_demo_home(tmp_path / "a", seed=7, now=NOW)
    second = build_demo_home(tmp_path / "b", seed=7, now=NOW)
    assert _files(first.root) == _files(second.root)
    for a, b in zip(first.live_paths, second.live_paths, strict=True):
        assert a.relative_to(first.root) == b.relative_to(second.root)
    DemoAppender(first, 7).tick(NOW + 1)
    DemoAppender(second, 7).tick(NOW + 1)
    assert {k: v[0] for k, v in _files(first.root).items()} == {
        k: v[0] for k, v in _files(second.root).items()
    }


def test_seed_and_now_change_the_output(tmp_path: Path) -> None:
    base = _files(build_demo_home(tmp_path / "a", seed=7, now=NOW).root)
    other_seed = _files(build_demo_home(tmp_path / "b", seed=8, now=NOW).root)
    later = build_demo_home(tmp_path / "c", seed=7, now=NOW + 86_400)
    assert set(base) != set(other_seed)
    assert max(p.stat().st_mtime for p in later.sessions) == pytest.approx(NOW + 86_400, abs=60)


def test_layout_counts_and_ages(home: DemoHome) -> None:
    claude = sorted((home.claude_home / "projects").glob("*/*.jsonl"))
    codex = sorted((home.codex_home / "sessions").glob("*/*/*/rollout-*.jsonl"))
    assert len(claude) == 7 and len(codex) == 4
    assert sorted(home.sessions) == sorted(claude + codex)
    for path in claude:
        assert path.parent.name.startswith("-home-dev-src-")
    ages = {p: NOW - p.stat().st_mtime for p in home.sessions}
    assert all(0 <= age < DEFAULT_MAX_AGE_SECS for age in ages.values())
    live = sorted(p for p, age in ages.items() if age < 60)
    assert live == sorted(home.live_paths)
    assert [_provider(home, p) for p in home.live_paths] == [Provider.CLAUDE, Provider.CODEX]
    assert sum(age > 3600 for age in ages.values()) >= 4  # idle for hours or days
    assert any(age > 2 * 86_400 for age in ages.values())


def test_records_look_like_claude_code(home: DemoHome) -> None:
    for path in (home.claude_home / "projects").glob("*/*.jsonl"):
        records = _records(path)
        chained = [r for r in records if "uuid" in r]
        uuids = {r["uuid"] for r in chained}
        assert records[0]["parentUuid"] is None
        assert all(r["parentUuid"] in uuids for r in chained if r["parentUuid"] is not None)
        assert {r["sessionId"] for r in chained} == {path.stem}
        kinds = {str(r["type"]) for r in records}
        assert {"user", "assistant", "file-history-snapshot", "last-prompt"} <= kinds
        results = [r for r in records if r["type"] == "user" and "toolUseResult" in r]
        assert results and all("sourceToolAssistantUUID" in r for r in results)
        assert records[-1]["type"] == "last-prompt"


def test_subagent_files(home: DemoHome) -> None:
    agents = sorted((home.claude_home / "projects").glob("*/*/subagents/agent-*.jsonl"))
    assert len(agents) == 2
    parent_id = agents[0].parent.parent.name
    assert (agents[0].parent.parent.parent / f"{parent_id}.jsonl").is_file()
    for path in agents:
        records = _records(path)
        assert records[0]["parentUuid"] is None
        assert all(r["isSidechain"] is True for r in records)
        assert {r["agentId"] for r in records} == {path.stem.removeprefix("agent-")}
        assert {r["sessionId"] for r in records} == {parent_id}
        summary = _summary(path, Provider.CLAUDE)
        assert summary.agent_id == path.stem.removeprefix("agent-")


def test_compaction_markers(home: DemoHome) -> None:
    boundaries = []
    for path in (home.claude_home / "projects").glob("*/*.jsonl"):
        records = _records(path)
        for i, rec in enumerate(records):
            if rec.get("subtype") == "compact_boundary":
                boundaries.append(rec)
                nxt = records[i + 1]
                assert rec["parentUuid"] is None and rec["logicalParentUuid"]
                assert nxt["isCompactSummary"] is True and nxt["parentUuid"] == rec["uuid"]
                assert nxt["message"]["content"].startswith("This session is being continued")
    assert len(boundaries) == 1
    meta = boundaries[0]["compactMetadata"]
    assert meta["trigger"] == "auto" and 150_000 < meta["preTokens"] < 170_000
    compacted = []
    for path in (home.codex_home / "sessions").rglob("*.jsonl"):
        records = _records(path)
        for i, rec in enumerate(records):
            if rec["type"] == "compacted":
                compacted.append(path)
                assert records[i + 1]["payload"] == {"type": "context_compacted"}
    assert len(compacted) == 1
    assert len(_summary(compacted[0], Provider.CODEX).compactions) == 1


def test_codex_token_counts_come_in_pairs(home: DemoHome) -> None:
    for path in (home.codex_home / "sessions").rglob("*.jsonl"):
        records = _records(path)
        assert records[0]["type"] == "session_meta"
        meta = records[0]["payload"]
        assert isinstance(meta, dict) and meta["id"] in path.name
        assert {"cwd", "cli_version", "originator"} <= set(meta)
        counts = [r for r in records if r["payload"].get("type") == "token_count"]
        with_info = [r for r in counts if r["payload"]["info"]]
        twins = sum(a == b for a, b in pairwise(with_info))
        assert twins >= len(with_info) // 2 - 2


def test_summaries_read_by_the_adapters(home: DemoHome) -> None:
    summaries = [_summary(p, _provider(home, p)) for p in home.sessions]
    over = [s for s in summaries if (s.context_tokens or 0) > DEFAULT_TRIGGER_TOKENS]
    assert len(over) == 1
    assert over[0].context_window == 1_000_000 and over[0].model == "claude-opus-4-6[1m]"
    models = {s.model for s in summaries}
    assert {"claude-opus-4-6", "gpt-5.3-codex", "gpt-5.5"} <= models
    for s in summaries:
        assert s.title and s.cwd and s.cwd.startswith("/home/dev/src/")
        assert s.bad_lines == 0 and not s.torn_tail
        assert len(s.usage_history) >= 3
    assert max(s.records for s in summaries) >= 500  # a couple of medium sessions


def test_usage_grows_within_each_segment(home: DemoHome) -> None:
    for path in home.sessions:
        summary = _summary(path, _provider(home, path))
        values = [u.context_tokens for u in summary.usage_history]
        drops = sum(b < a for a, b in pairwise(values))
        assert drops <= len(summary.compactions)
        assert values[-1] > values[0] or summary.compactions


def test_appender_grows_live_sessions_with_whole_lines(home: DemoHome) -> None:
    appender = DemoAppender(home, seed=7)
    provider = {p: _provider(home, p) for p in home.live_paths}
    before = {p: _summary(p, provider[p]).context_tokens or 0 for p in home.live_paths}
    for tick in range(4):
        sizes = {p: p.stat().st_size for p in home.live_paths}
        written = appender.tick(NOW + 1 + tick)
        assert sorted(written) == sorted(home.live_paths)
        for path in home.live_paths:
            data = path.read_bytes()
            added = data[sizes[path] :]
            assert added.endswith(b"\n") and len(added) > 200
            for line in added.splitlines():
                assert isinstance(json.loads(line), dict)
            after = _summary(path, provider[path]).context_tokens or 0
            assert 600 < after - before[path] < 5_000
            before[path] = after


def test_appender_chains_claude_records(home: DemoHome) -> None:
    claude = home.live_paths[0]
    leaf = [r for r in _records(claude) if "uuid" in r][-1]["uuid"]
    DemoAppender(home, seed=3).tick(NOW + 2)
    new = [r for r in _records(claude) if "uuid" in r]
    uuids = [r["uuid"] for r in new]
    start = uuids.index(leaf) + 1
    assert new[start]["parentUuid"] == leaf
    assert all(new[i]["parentUuid"] == uuids[i - 1] for i in range(start + 1, len(new)))


def test_appender_survives_a_compaction(home: DemoHome) -> None:
    """Growing far enough compacts (as the CLIs do) and growth continues afterwards."""
    appender = DemoAppender(home, seed=7)
    for tick in range(70):  # both live sessions compact by then, within the kept history
        appender.tick(NOW + tick)
    for path in home.live_paths:
        summary = _summary(path, _provider(home, path))
        assert summary.bad_lines == 0 and not summary.torn_tail
        assert len(summary.compactions) >= 1
        values = [u.context_tokens for u in summary.usage_history]
        drop = next(i for i in range(1, len(values)) if values[i] < values[i - 1] - 50_000)
        assert values[drop:] == sorted(values[drop:])  # growing again after the compaction
        assert values[-1] > values[drop]


def test_default_demo_root_is_fresh() -> None:
    root = default_demo_root()
    try:
        assert root.is_dir() and root.name.startswith("gobtui-demo-") and not os.listdir(root)
    finally:
        root.rmdir()


def test_cli_demo_keeps_applied_data_inside_its_home_and_removes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`gobtui --demo`: whatever is applied to demo sessions (vault, receipts, events) goes
    under the demo's own folder, never the user's data directory, and the folder is gone when
    the app ends (however it ends)."""
    from gobtui.app import GobtuiApp
    from gobtui.cli.dispatch import main

    user_data = os.environ["GOBTUI_DATA_DIR"]
    seen: dict[str, Path] = {}

    def run_and_fail(app: GobtuiApp) -> None:  # the real factory built it; its loop is not run
        assert app.demo_home is not None
        seen["root"] = app.demo_home.root
        seen["data"] = Path(os.environ["GOBTUI_DATA_DIR"])
        assert seen["root"].is_dir() and any(seen["root"].iterdir())
        raise KeyboardInterrupt  # an app ended by ctrl+c still cleans up

    monkeypatch.setattr(GobtuiApp, "run", run_and_fail)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["--demo", "--no-watch"]) == 130
    assert seen["data"] == seen["root"] / "data" and str(seen["data"]) != user_data
    assert seen["root"].parent == tmp_path and not seen["root"].exists()


@pytest.mark.parametrize("name", ["SIGHUP", "SIGTERM"])
def test_a_demo_ended_by_a_signal_still_removes_its_folder(name: str, tmp_path: Path) -> None:
    """A closed tmux pane (SIGHUP) or a kill (SIGTERM): the real dashboard, on a terminal,
    exits as `q` does and its demo folder goes."""
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = dict(os.environ, TMPDIR=str(tmp_path), TERM="xterm-256color")
    child = subprocess.Popen(
        [sys.executable, "-m", "gobtui.cli", "--demo", "--no-watch"],
        stdin=child_fd,
        stdout=child_fd,
        stderr=child_fd,
        env=env,
        start_new_session=True,
    )
    os.close(child_fd)
    shown = b""

    def drain(seconds: float) -> None:  # the app blocks if nobody reads its terminal
        nonlocal shown
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main_fd], [], [], 0.1)
            if ready:
                try:
                    shown += os.read(main_fd, 65536)
                except OSError:  # the terminal's other end closed
                    return

    try:
        deadline = time.monotonic() + 30
        while b"DEMO" not in shown and time.monotonic() < deadline:
            drain(0.2)
        assert b"DEMO" in shown, "the dashboard never drew"
        assert [p.name[:12] for p in tmp_path.iterdir()] == ["gobtui-demo-"]
        child.send_signal(getattr(signal, name))
        deadline = time.monotonic() + 20
        while child.poll() is None and time.monotonic() < deadline:
            drain(0.2)
        assert child.poll() is not None, "still running after the signal"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(main_fd)
    assert list(tmp_path.iterdir()) == []
