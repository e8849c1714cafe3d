"""`plan` and `apply --experimental-compacted` through the installed CLI (issue 31 item 6):
Codex only, the fork's prefix one synthetic compacted record, one line and exit 2 on Claude,
one line and exit 1 when the plan cannot be folded."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.builders import sessions

GOBTUI = Path(sys.executable).with_name("gobtui")
IDLE = 1_790_000_000.0
LIMITS = ("--trigger", "30001", "--floor", "12000")
FLAG = "--experimental-compacted"


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CLAUDE_"))}
    env.update(
        GOBTUI_DATA_DIR=str(home / "data"),
        GOBTUI_CACHE_DIR=str(home / "cache"),
        GOBTUI_CONFIG=str(home / "gobtui.toml"),
        HOME=str(home / "home"),
    )
    (home / "gobtui.toml").write_text("[policy]\nkeep_recent_tool_outputs = 2\n")
    for folder in ("claude", "codex"):
        (home / folder).mkdir(exist_ok=True)
    return subprocess.run(
        [str(GOBTUI), "--claude-home", str(home / "claude"), "--codex-home", str(home / "codex"),
         *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def codex_source(tmp_path: Path) -> Path:
    path: Path = sessions.codex_work_session(60_000).write(tmp_path / "codex" / "sessions")
    os.utime(path, (IDLE, IDLE))
    return path


def test_plan_previews_the_record_and_apply_publishes_it(
    tmp_path: Path, codex_source: Path
) -> None:
    digest = hashlib.sha256(codex_source.read_bytes()).hexdigest()
    shown = _run(tmp_path, "plan", str(codex_source), FLAG, *LIMITS)
    assert shown.returncode == 0, shown.stderr
    assert "compacted: " in shown.stdout  # the flag picks the compacted strategy
    assert "as one synthetic compacted record (experimental)" in shown.stdout
    data = orjson.loads(_run(tmp_path, "plan", str(codex_source), FLAG, *LIMITS, "--json").stdout)
    built = data["experimental_compacted"]
    assert built["bytes_after"] < built["bytes_before"] == codex_source.stat().st_size

    done = _run(tmp_path, "apply", str(codex_source), FLAG, *LIMITS, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    receipt = orjson.loads(done.stdout)
    assert receipt["form"] == "compacted_record"  # the receipt says which form it is
    fork = Path(receipt["path"])
    assert fork.parent == codex_source.parent and fork != codex_source
    assert receipt["bytes_after"] == fork.stat().st_size == built["bytes_after"]
    assert hashlib.sha256(codex_source.read_bytes()).hexdigest() == digest
    records = [orjson.loads(line) for line in fork.read_bytes().splitlines()]
    compacted = [r for r in records if r["type"] == "compacted"]
    assert len(compacted) == 1
    assert len(compacted[0]["payload"]["replacement_history"]) == built["history_items"]
    assert _run(tmp_path, "verify", str(fork)).returncode == 0

    # the portable fork of the same plan is another operation, another file
    portable = _run(tmp_path, "apply", str(codex_source), "--strategy", "compacted", *LIMITS,
                    "--yes", "--json")  # fmt: skip
    assert portable.returncode == 0, portable.stderr
    assert Path(orjson.loads(portable.stdout)["path"]) != fork
    assert orjson.loads(portable.stdout)["form"] == "portable"


def test_claude_is_refused_in_one_line(tmp_path: Path) -> None:
    path = sessions.claude_work_session(60_000).write(tmp_path / "claude" / "projects")
    os.utime(path, (IDLE, IDLE))
    for command in ("plan", "apply"):
        yes = ["--yes"] if command == "apply" else []
        done = _run(tmp_path, command, str(path), FLAG, *LIMITS, *yes)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and FLAG in done.stderr and "claude" in done.stderr
        assert "Traceback" not in done.stderr
    assert not list((tmp_path / "claude" / "projects").rglob("*.jsonl"))[1:]


def test_a_plan_without_a_card_is_refused_in_one_line(tmp_path: Path, codex_source: Path) -> None:
    before = sorted(codex_source.parent.iterdir())
    for command in ("plan", "apply"):
        done = _run(tmp_path, command, str(codex_source), FLAG, "--strategy", "elide", *LIMITS,
                    *(["--yes"] if command == "apply" else []))  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert done.stderr.count("\n") == 1 and "compacted_unsafe" in done.stderr
    assert sorted(codex_source.parent.iterdir()) == before
