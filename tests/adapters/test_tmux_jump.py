"""Jumping to a session's tmux pane, against a private tmux server and real processes.

Each test starts its own server on a socket in a short temporary folder (`tmux -S`, no config),
runs real processes in its panes (a Python holding a transcript open, a `claude` that is a copy
of sleep) and reads back from tmux which window and pane are active.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gobtui.adapters.terminal.processes import (
    ancestors,
    client_of,
    client_processes,
    parent_pid,
)
from gobtui.adapters.terminal.tmux import (
    JumpFailure,
    JumpResult,
    display_message,
    jump_to_session,
    list_panes,
    tmux_literal,
    tmux_socket,
)
from gobtui.core.model import Provider
from tests.tmux_server import Server, tmux_server, wait_for  # noqa: F401 (a fixture)

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    path.write_text('{"type":"session_meta"}\n')
    return path


def test_jump_selects_the_window_and_pane_of_the_process_holding_the_transcript(
    server: Server, transcript: Path
) -> None:
    command, ready = server.holder(transcript)
    server.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", *command)
    target = server.tmux("display-message", "-p", "-t", "t:0", "#{pane_id}")
    server.tmux("split-window", "-t", "t:0", "sleep", "60")  # window 0's active pane moves
    server.tmux("new-window", "-t", "t:", "sleep", "60")  # and window 1 comes to the front
    wait_for(ready.exists, "the holder opening the transcript")
    assert server.active() != f"0 {target}"

    result = jump_to_session(transcript, None, env=server.env)

    assert result.ok, result.sentence
    assert result.reason is None
    assert result.pane is not None
    assert result.pane.pane_id == target
    assert (result.pane.session, result.pane.window, result.pane.index) == ("t", 0, 0)
    assert result.sentence == "jumped to pane t:0.0"
    assert server.active() == f"0 {target}"


def test_a_claude_in_the_sessions_cwd_is_found_by_its_program_name(
    server: Server, tmp_path: Path
) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    claude = server.folder / "bin" / "claude"
    claude.parent.mkdir()
    shutil.copy(sleep, claude)
    project = tmp_path / "project"
    project.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(project)  # the session may record its cwd through a link
    server.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sleep", "60")
    server.tmux("new-window", "-t", "t:", "-c", str(project), str(claude), "60")
    target = server.tmux("display-message", "-p", "-t", "t:1", "#{pane_id}")
    pid = int(server.tmux("display-message", "-p", "-t", "t:1", "#{pane_pid}"))
    wait_for(
        lambda: Path(f"/proc/{pid}/cmdline").read_bytes().startswith(bytes(claude)),
        "the claude process starting",
    )
    server.tmux("select-window", "-t", "t:0")
    nobody = tmp_path / "0199aaaa-0000-7000-8000-000000000000.jsonl"  # Claude keeps no fd

    assert client_processes(nobody, str(linked), Provider.CLAUDE) == [pid]
    assert client_processes(nobody, str(linked), Provider.CODEX) == []
    result = jump_to_session(nobody, str(linked), provider=Provider.CLAUDE, env=server.env)

    assert result.pane is not None and result.pane.pane_id == target, result.sentence
    assert server.active() == f"1 {target}"
    other = jump_to_session(nobody, str(linked), provider=Provider.CODEX, env=server.env)
    assert other.reason is JumpFailure.NO_PROCESS


def test_outside_tmux_there_is_no_jump(transcript: Path) -> None:
    result = jump_to_session(transcript, None, env={})

    assert result == JumpResult(None, JumpFailure.NOT_IN_TMUX)
    assert result.sentence == "gobtui is not running inside tmux"
    assert tmux_socket({}) is None
    assert tmux_socket({"TMUX": "/tmp/tmux-0/my,odd,sock,4242,3"}) == "/tmp/tmux-0/my,odd,sock"


def test_a_session_nobody_has_open_is_no_process(
    server: Server, transcript: Path, tmp_path: Path
) -> None:
    server.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sleep", "60")
    empty = tmp_path / "nobody-works-here"
    empty.mkdir()

    result = jump_to_session(transcript, str(empty), env=server.env)

    assert result == JumpResult(None, JumpFailure.NO_PROCESS)
    assert result.sentence == "no running claude or codex process has this session open"


def test_a_process_outside_this_server_is_not_in_a_pane(server: Server, transcript: Path) -> None:
    server.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sleep", "60")
    command, ready = server.holder(transcript)
    holder = subprocess.Popen(command)  # our child, in no pane of this server
    try:
        wait_for(ready.exists, "the holder opening the transcript")
        result = jump_to_session(transcript, None, env=server.env)
    finally:
        holder.terminate()
        holder.wait(timeout=10)

    assert result == JumpResult(None, JumpFailure.NOT_IN_A_PANE)
    assert "does not run in a pane of this tmux server" in result.sentence


def test_a_missing_tmux_and_a_dead_server_are_reasons_not_exceptions(
    server: Server, transcript: Path, tmp_path: Path
) -> None:
    no_programs = tmp_path / "empty-bin"
    no_programs.mkdir()
    missing = {**server.env, "PATH": str(no_programs)}

    assert jump_to_session(transcript, None, env=missing).reason is JumpFailure.NO_TMUX
    assert display_message("hello", env=missing) is False

    dead = jump_to_session(transcript, None, env=server.env)  # no server started on it
    assert dead.reason is JumpFailure.TMUX_FAILED
    assert dead.detail and dead.sentence == f"tmux refused: {dead.detail}"
    assert "\n" not in dead.detail
    assert display_message("hello", env=server.env) is False


def test_display_message_shows_the_text_literally(server: Server) -> None:
    server.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sleep", "60")
    text = "-n gobtui: #{pane_id} is 95% full ## #x"

    assert tmux_literal("a#b##") == "a##b####"
    # What tmux makes of the escaped text is the text itself, formats and all.
    assert server.tmux("display-message", "-p", "--", tmux_literal(text)) == text
    assert display_message(text, env=server.env) is True
    assert display_message("hello", env={}) is False


def test_list_panes_reads_session_names_with_spaces(server: Server) -> None:
    server.tmux("new-session", "-d", "-s", "my work 2", "-x", "80", "-y", "24", "sleep", "60")
    server.tmux("split-window", "-t", "my work 2:0", "sleep", "60")
    pids = server.tmux("list-panes", "-t", "my work 2:0", "-F", "#{pane_pid}").split()

    panes = list_panes(server.socket)

    assert [(p.session, p.window, p.index) for p in panes] == [
        ("my work 2", 0, 0),
        ("my work 2", 0, 1),
    ]
    assert [str(p.pid) for p in panes] == pids
    assert all(p.pane_id.startswith("%") for p in panes)


def test_parent_pid_of_a_real_process_named_with_parentheses(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    odd = tmp_path / "a) (b c"
    shutil.copy(sleep, odd)
    child = subprocess.Popen([str(odd), "30"])
    try:
        wait_for(
            lambda: Path(f"/proc/{child.pid}/comm").read_text().strip() == "a) (b c",
            "the oddly named process starting",
        )
        assert parent_pid(child.pid) == os.getpid()
        assert ancestors(child.pid)[:2] == [os.getpid(), os.getppid()]
    finally:
        child.terminate()
        child.wait(timeout=10)
    assert ancestors(os.getpid())[-1] == 1
    assert parent_pid(child.pid) is None  # gone


def test_client_of_knows_the_programs_and_their_runtimes() -> None:
    assert client_of(["claude", "--resume", "abc"]) is Provider.CLAUDE
    assert client_of(["/home/me/.local/bin/codex", "resume"]) is Provider.CODEX
    node_claude = [
        "node",
        "--no-warnings",
        "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
    ]
    assert client_of(node_claude) is Provider.CLAUDE
    assert client_of(["node", "/usr/local/bin/codex"]) is Provider.CODEX
    assert client_of(["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"]) is (
        Provider.CODEX
    )
    assert client_of(["node", "server.js"]) is None
    assert client_of(["vim", "claude"]) is None
    assert client_of([]) is None
