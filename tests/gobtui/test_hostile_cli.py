"""Every command on hostile transcripts (tests/builders/hostile.py), run as a user runs them:
nothing a transcript holds reaches the terminal raw (no escape, C1 or bidi byte), no
command tracebacks, and --json stays exact JSON (the payload comes back as it was)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders.hostile import (
    PAYLOAD,
    TOML_BREAKER,
    claude_hostile,
    codex_hostile,
    found_forbidden,
)

GOBTUI = Path(sys.executable).with_name("gobtui")


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.claude = root / "claude"
        self.codex = root / "codex"
        self.claude_path = claude_hostile(self.claude / "projects")
        self.codex_path = codex_hostile(self.codex / "sessions")
        old = 1_790_000_000
        for path in (self.claude_path, self.codex_path):
            os.utime(path, (old, old))
        (root / "config.toml").write_text("[policy]\nkeep_recent_tool_outputs = 1\n")

    def run(self, *args: str) -> tuple[int, bytes, bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CLAUDE_"))}
        env.update(
            GOBTUI_DATA_DIR=str(self.root / "data"), GOBTUI_CACHE_DIR=str(self.root / "cache"),
            GOBTUI_CONFIG=str(self.root / "config.toml"), HOME=str(self.root),
        )  # fmt: skip
        done = subprocess.run(
            [str(GOBTUI), "--claude-home", str(self.claude), "--codex-home", str(self.codex),
             *args],
            env=env, capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    return Home(tmp_path_factory.mktemp("hostile"))


def clean_run(home: Home, *args: str) -> bytes:
    code, out, err = home.run(*args)
    assert b"Traceback" not in err, err.decode(errors="replace")[-2000:]
    assert code in (0, 1, 2), (code, err[-500:])
    leaked = found_forbidden(out + err)
    assert not leaked, f"{args[0]} printed {leaked}: {(out + err)[:300]!r}"
    return out


LOW = ("--trigger", "2", "--floor", "1")


def test_reading_commands_show_nothing_raw(home: Home) -> None:
    for path in (home.claude_path, home.codex_path):
        clean_run(home, "plan", str(path), *LOW)  # the card preview quotes the outputs
        clean_run(home, "plan", str(path), "--strategy", "compacted", *LOW)
        clean_run(home, "eval", str(path), *LOW)
        clean_run(home, "verify", str(path))
        clean_run(home, "tune", str(path))
    assert b"Deploy" in clean_run(home, "detect", "--all")
    clean_run(home, "explain")
    clean_run(home, "presets")


def test_publishing_and_the_vault_show_nothing_raw(home: Home) -> None:
    for path in (home.claude_path, home.codex_path):
        clean_run(home, "apply", str(path), "--strategy", "compacted", *LOW, "--yes")
        clean_run(home, "fork", str(path), "--yes")
        clean_run(home, "snapshot", str(path))
        clean_run(home, "undo", str(path), "--yes")
        clean_run(home, "history", str(path))
    listing = json.loads(home.run("vault", "--json")[1])
    shas = [entry["sha256"] for entry in listing]
    clean_run(home, "vault")
    clean_run(home, "vault", "--stats")
    clean_run(home, "show", shas[0])
    clean_run(home, "diff", shas[0], shas[-1])
    clean_run(home, "recall", "--query", "look")
    clean_run(home, "search-snapshot", shas[0], "--query", "look")
    for record in range(3):
        clean_run(home, "read-snapshot", shas[0], "--record", str(record))


def test_a_hostile_selector_is_refused_on_one_clean_line(home: Home) -> None:
    for selector in (PAYLOAD, "x" * 5000, "a\u202eb"):
        out = clean_run(home, "plan", selector)
        code, _, err = home.run("plan", selector)
        assert code == 2 and err.count(b"\n") == 1 and len(err) < 600, err[:200]
        assert not out


def test_json_stays_exact(home: Home) -> None:
    code, out, _ = home.run("detect", "--all", "--json")
    assert code == 0
    assert not found_forbidden(out)  # what a terminal acts on is written as \\u escapes
    rows = json.loads(out)
    assert any(PAYLOAD in (row["title"] or "") for row in rows)  # exact, escapes and all
    for args in (("verify", str(home.claude_path)), ("plan", str(home.codex_path), *LOW)):
        code, out, _ = home.run(*args, "--json")
        assert code in (0, 1) and not found_forbidden(out), args
        json.loads(out)


def test_tune_prints_toml_that_stays_one_session_key(home: Home, tmp_path: Path) -> None:
    import tomllib

    # a Codex rollout whose session id is made to break out of the snippet
    text = home.codex_path.read_text(encoding="utf-8").splitlines()
    meta = json.loads(text[0])
    meta["payload"]["id"] = TOML_BREAKER
    odd = home.codex_path.with_name("rollout-2026-09-21T14-13-20-odd.jsonl")
    odd.write_text("\n".join([json.dumps(meta), *text[1:]]) + "\n", encoding="utf-8")
    out = clean_run(home, "tune", str(odd)).decode()
    snippet = out[out.index("[sessions.") :]
    parsed = tomllib.loads(snippet)
    assert list(parsed) == ["sessions"] and list(parsed["sessions"]) == [TOML_BREAKER]
    odd.unlink()
