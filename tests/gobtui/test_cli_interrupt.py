"""ctrl+c during a real `gobtui plan` (the console script, as a shell runs it): whatever the
moment (the start-up imports, the parser, the planning, the way out), the run ends with exit
130 and the one line `gobtui: interrupted`, never a traceback.

The moments are counted from when the process has mapped orjson's library: that is gobtui's
start-up under way (dispatch's imports). Before it lies the interpreter's own start-up (its
init, `site`), which runs no code of gobtui's; see entry.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders.sessions import claude_work_session

GOBTUI = Path(sys.executable).with_name("gobtui")
LINE = "gobtui: interrupted"
STEP_SECS = 0.05
MAX_SECS = 1.0
RUN_TIMEOUT = 60

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc/<pid>/maps"),
]


def _start(path: Path) -> tuple[subprocess.Popen[bytes], float]:
    """The run, and when (monotonic) its start-up reached gobtui's own imports."""
    proc = subprocess.Popen(
        [str(GOBTUI), "plan", str(path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        try:
            maps = Path(f"/proc/{proc.pid}/maps").read_text()
        except OSError:  # gone already (an error we will see) or between reads
            maps = ""
        if "orjson" in maps or proc.poll() is not None:
            return proc, time.monotonic()
        time.sleep(0.0005)
    proc.kill()
    raise AssertionError("the run never reached its imports")


@pytest.fixture
def transcript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    path = claude_work_session(2_000_000, "interrupt").write(home / "projects")
    old = time.time() - 3600  # not live: the plan does the whole work
    os.utime(path, (old, old))
    return path


def test_ctrl_c_at_any_moment_exits_130_with_one_line(transcript: Path) -> None:
    run_secs = MAX_SECS * 10
    for _ in range(2):  # the second run is the quicker (its summary cache is warm)
        proc, anchor = _start(transcript)
        _, err = proc.communicate(timeout=RUN_TIMEOUT)
        run_secs = min(run_secs, time.monotonic() - anchor)
        assert proc.returncode == 0, err.decode(errors="replace")
    # every step lands while the run is still going (a margin for a slower run)
    last = min(MAX_SECS, run_secs * 0.6)
    delays = [k * STEP_SECS for k in range(int(last / STEP_SECS) + 1)]
    assert len(delays) >= 5, f"the run took {run_secs:.2f} s: too short to interrupt in steps"
    outcomes = []
    for delay in delays:
        proc, anchor = _start(transcript)
        time.sleep(max(0.0, anchor + delay - time.monotonic()))
        proc.send_signal(signal.SIGINT)
        _, raw = proc.communicate(timeout=RUN_TIMEOUT)
        outcomes.append((delay, proc.returncode, raw.decode(errors="replace")))
    bad = [o for o in outcomes if o[1] != 130 or o[2] != LINE + "\n"]
    assert bad == [], "\n".join(f"{d:.2f} s: exit {rc}\n{e}" for d, rc, e in bad)


def test_the_entry_says_the_exit_table_s_code() -> None:
    from gobtui.cli.exits import Exit
    from gobtui.cli.interrupted import INTERRUPTED

    assert INTERRUPTED == Exit.INTERRUPTED
