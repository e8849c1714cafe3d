"""A FIFO where a transcript or a fork should be never hangs a command: a plain open() of a
FIFO waits in the kernel for a writer that never comes. Each command runs as a user runs it
(a subprocess) under a bounded wait; a hang fails the test by its timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.sessions import claude_work_session

GOBTUI = Path(sys.executable).with_name("gobtui")
WAIT_SECS = 90
"""Far past what any of these commands takes; only a hang reaches it."""
LOW = ["--trigger", "20000", "--floor", "5000"]
IDLE_SINCE = 1_700_000_000

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.claude = root / "claude"
        self.path = claude_work_session(60_000, "fifo").write(self.claude / "projects")
        os.utime(self.path, (IDLE_SINCE, IDLE_SINCE))
        (root / "codex").mkdir()
        (root / "config.toml").write_text("")

    def run(self, *args: str, data: str = "data") -> subprocess.CompletedProcess[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CLAUDE_"))}
        env.update(
            GOBTUI_DATA_DIR=str(self.root / data), GOBTUI_CACHE_DIR=str(self.root / "cache"),
            GOBTUI_CONFIG=str(self.root / "config.toml"), HOME=str(self.root),
        )  # fmt: skip
        return subprocess.run(
            [str(GOBTUI), "--claude-home", str(self.claude), "--codex-home",
             str(self.root / "codex"), *args],
            env=env, capture_output=True, timeout=WAIT_SECS, stdin=subprocess.DEVNULL,
        )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path)


def commands(path: Path) -> list[list[str]]:
    return [
        ["plan", str(path), "--strategy", "elide", *LOW],
        ["apply", str(path), "--strategy", "elide", *LOW, "--yes"],
        ["verify", str(path)],
        ["snapshot", str(path)],
        ["detect", "--json", "--all"],
        ["watch", "--once", "--all"],
    ]


def test_a_transcript_that_is_a_fifo_is_refused_at_once(home: Home) -> None:
    pipe = home.path.with_name("pipe")
    os.mkfifo(pipe)
    home.path.unlink()
    home.path.symlink_to(pipe.name)  # (a symlink inside the home: the walk follows it)
    for argv in commands(home.path):
        done = home.run(*argv)
        err = done.stderr.decode(errors="replace")
        assert "Traceback" not in err, (argv, err)
        if argv[0] in ("detect", "watch"):
            assert done.returncode == 0, (argv, err)  # the others are still shown / watched
        else:
            assert done.returncode != 0, argv
            assert len(err.strip().splitlines()) == 1 and "not a regular file" in err, (argv, err)


@pytest.fixture
def swapping(home: Home) -> Iterator[None]:
    """The transcript's name swapped by rename, over and over, between the real file and a
    symlink to a FIFO, while commands read it."""
    real = home.path.with_name("real.jsonl")
    link = home.path.with_name("link.jsonl")
    after = home.path.with_name("next.jsonl")
    os.mkfifo(home.path.with_name("pipe"))
    link.symlink_to("pipe")
    os.link(home.path, real)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(link, home.path)  # (the real file stays linked as real.jsonl)
            link.symlink_to("pipe")
            os.link(real, after)
            os.rename(after, home.path)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


@pytest.mark.timeout(600)
@pytest.mark.usefixtures("swapping")
def test_a_transcript_swapped_with_a_fifo_while_read_never_hangs(home: Home) -> None:
    for _round in range(3):
        for argv in commands(home.path):
            done = home.run(*argv)
            err = done.stderr.decode(errors="replace")
            assert "Traceback" not in err, (argv, err)
            assert done.returncode in (0, 1, 2, 3), (argv, done.returncode, err)  # 3: I/O


def test_a_fifo_at_the_forks_name_is_refused_not_waited_on(home: Home) -> None:
    first = home.run("apply", str(home.path), "--strategy", "elide", *LOW, "--yes", "--json")
    assert first.returncode == 0, first.stderr
    fork = Path(json.loads(first.stdout)["path"])
    fork.unlink()
    os.mkfifo(fork)  # the name the same apply gives its fork, whatever data dir runs it
    again = home.run(
        "apply", str(home.path), "--strategy", "elide", *LOW, "--yes", data="other-data"
    )
    err = again.stderr.decode(errors="replace")
    assert again.returncode != 0 and "Traceback" not in err
    assert "already exists" in err, err
    assert fork.exists() and not fork.is_file()  # left as it was
