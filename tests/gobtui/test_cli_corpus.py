"""`gobtui eval --corpus DIR`: every strategy over every transcript under a folder, on real
files the project's corpus builds (Claude and Codex, a non-transcript and a symlink beside)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from gobtui.cli.dispatch import main
from gobtui.core.strategies import STRATEGIES
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession
from tests.builders.common import stable_uuid

LOW = ["--trigger", "30000", "--floor", "20000"]
LOG = "\n".join(f"12:{i % 60:02d} worker {i}: step ok" for i in range(500))


def _corpus(root: Path) -> Path:
    claude = ClaudeSession(stable_uuid("corpus", "claude"))
    for turn in range(14):
        claude.prompt(f"turn {turn}: run the build")
        claude.tool("Bash", {"command": f"make build-{turn}"}, LOG)
        claude.say(f"turn {turn}: green.", final=True)
    claude.write(root / "claude")
    codex = CodexSession(stable_uuid("corpus", "codex"))
    codex.meta()
    for turn in range(14):
        codex.turn(f"turn {turn}: tail the log")
        codex.shell(f"tail -n 500 /var/log/app-{turn}.log", LOG)
        codex.answer("clean")
    codex.write(root / "codex")
    (root / "notes.jsonl").write_text('{"note": "not a transcript"}\n')
    (root / "elsewhere.jsonl").symlink_to(next((root / "claude").rglob("*.jsonl")))
    return root


def test_the_corpus_figures_per_strategy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _corpus(tmp_path / "corpus")
    assert main(["eval", "--corpus", str(root), "--json", *LOW]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["sessions"] == 2 and data["failed"] == []  # the note and the symlink are not
    figures = {f["strategy"]: f for f in data["strategies"]}
    assert set(figures) == set(STRATEGIES)
    compacted = figures["compacted"]
    assert compacted["planned"] == 2 and 0.2 < compacted["median_cut"] < 1
    assert 0 < compacted["worst_retention"] <= compacted["median_retention"] <= 1
    assert figures["sawtooth"]["planned"] == 0  # a provider compaction: no probe can tell

    assert main(["eval", "--corpus", str(root), "--strategy", "compacted", *LOW]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"2 sessions under {root}"
    assert lines[2].split()[:2] == ["compacted", "2"] and len(lines) == 3


def test_bad_corpus_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--corpus", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip().endswith("is not a folder")
    (tmp_path / "empty").mkdir()
    assert main(["eval", "--corpus", str(tmp_path / "empty")]) == 2
    assert "no Claude Code or Codex transcript" in capsys.readouterr().err
    assert main(["eval"]) == 2
    assert "a session or --corpus DIR" in capsys.readouterr().err


def test_a_hostile_file_name_never_reaches_the_terminal_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _corpus(tmp_path / "corpus")
    for provider in ("claude", "codex"):  # whichever is the worst session is named
        source = next((root / provider).rglob("*.jsonl"))
        source.rename(source.with_name(f"evil\x1b[2J\u202e{provider}.jsonl"))
    assert main(["eval", "--corpus", str(root), "--strategy", "compacted", *LOW]) == 0
    captured = capsys.readouterr()
    assert "evil␛[2J" in captured.out  # shown, made visible
    assert "\x1b" not in captured.out + captured.err and "\u202e" not in captured.out
