"""The spec's sample config.toml through the real CLI: it loads as written, its Devin policy
answers with Devin's own /compact, its legacy string command runs only when trusted, and a
bad preset fails the commands that name it and no other."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import config_path
from gobtui.cli.dispatch import main
from tests.corpus.spec_config import SPEC_CONFIG
from tests.gobtui.corpus_home import LOW, SESSION, source

__all__ = ["source"]  # a fixture, used by name

COMPACTOR = """\
import json, pathlib, sys
sys.stdin.read()
pathlib.Path(__file__).with_name("ran").write_text("yes")
sys.stdout.write(json.dumps({"edits": []}))
"""
"""The legacy script: it leaves a marker next to itself and proposes nothing."""


@pytest.fixture
def spec_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample config in place, a HOME with ~/bin/my_compactor.py, and `python3` on PATH
    meaning this interpreter (the command runs with PATH only)."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "my_compactor.py").write_text(COMPACTOR)
    monkeypatch.setenv("HOME", str(home))
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_bytes(SPEC_CONFIG.read_bytes())
    return home / "bin" / "ran"


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["policy-check", *argv, "--json"]) == 0
    answer = orjson.loads(capsys.readouterr().out)
    assert isinstance(answer, dict)
    return answer


def test_devin_policy_check_answers_with_its_own_compact(
    spec_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    over = check(capsys, "--provider", "devin", "--context-tokens", "200000")
    assert (over["action"], over["control"]) == ("provider_compact", "/compact")
    assert over["effective_trigger_tokens"] == 200_000  # [provider.devin]
    live = check(capsys, "--provider", "devin", "--context-tokens", "300000", "--session-active")
    assert (live["action"], live["control"]) == ("provider_compact", "/compact")
    under = check(capsys, "--provider", "devin", "--context-tokens", "199999")
    assert (under["action"], under["control"]) == ("none", None)
    # Claude's policy is [policy]'s, spelled either way; an idle one gets a strategy.
    claude = check(capsys, "--provider", "claude_code", "--context-tokens", "260000")
    assert (claude["action"], claude["strategy"], claude["effective_trigger_tokens"]) == (
        "transcript_compact",
        "auto",
        250_000,
    )
    assert main(["policy-check", "--provider", "devin", "--context-tokens", "210000"]) == 0
    assert capsys.readouterr().out.startswith("provider_compact /compact  (context 210,000")


def test_the_legacy_string_command_runs_when_trusted(
    spec_config: Path, source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", SESSION, "--preset", "custom-script", *LOW, "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["reason_code"] == "empty_external_edits"  # the script answered, with nothing
    assert spec_config.read_text() == "yes"


def test_the_legacy_string_command_is_refused_without_trust(
    spec_config: Path, source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SPEC_CONFIG.read_text().replace("trusted_legacy_command = true\n", "")
    config_path().write_text(text)
    assert main(["plan", SESSION, "--preset", "custom-script", *LOW]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "presets.custom-script.command (line 23)" in err
    assert "trusted_legacy_command = true" in err
    assert not spec_config.exists()  # nothing ran
    # The commands that do not name it still work, from the same file.
    assert main(["plan", SESSION, "--preset", "deep-work", *LOW, "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["strategy"] == "elide"
    check(capsys, "--provider", "devin", "--context-tokens", "1")


def test_a_bad_preset_fails_only_the_commands_that_name_it(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(
        "[policy]\ntrigger_tokens = 20000\nfloor_tokens = 5000\n\n"
        "[presets.broken]\nstrategy = 'elide'\nkeep_recent = 3\n"
    )
    assert main(["plan", SESSION, "--preset", "broken"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "presets.broken.keep_recent (line 7)" in err
    assert main(["plan", SESSION, "--strategy", "elide", "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["strategy"] == "elide"
    assert main(["detect", "--json", "--all"]) == 0
    assert SESSION in capsys.readouterr().out
    check(capsys, "--provider", "codex", "--context-tokens", "1")
    # `presets` names every preset: it lists the good ones and says which one does not load.
    assert main(["presets", "--json"]) == 2
    rows = orjson.loads(capsys.readouterr().out)
    assert "deep-work" in {row["name"] for row in rows if "error" not in row}
    broken = [row for row in rows if "error" in row]
    assert [row["name"] for row in broken] == ["broken"]
    assert "presets.broken.keep_recent (line 7)" in broken[0]["error"]
    assert main(["presets"]) == 2
    captured = capsys.readouterr()
    assert "deep-work" in captured.out and "presets.broken.keep_recent" in captured.err
