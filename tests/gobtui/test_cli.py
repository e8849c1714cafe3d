"""The CLI end to end: detect on real fixtures in temporary homes, and the error exits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from gobtui.cli.dispatch import main

SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"


@pytest.fixture
def homes(tmp_path: Path, fixtures_dir: Path) -> tuple[Path, Path]:
    claude = tmp_path / "claude"
    codex = tmp_path / "codex"
    project = claude / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    shutil.copyfile(
        fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}.jsonl", project / f"{SPOTTER}.jsonl"
    )
    shutil.copytree(fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}", project / SPOTTER)
    shutil.copyfile(
        fixtures_dir / "claude" / "daaain__claude-code-log__edge_cases.jsonl",
        project / "edge.jsonl",
    )
    day = codex / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    name = "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
    shutil.copyfile(fixtures_dir / "codex" / f"madshn__localpush__{name}", day / name)
    return claude, codex


def detect_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["detect", "--json", *args]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert isinstance(data, list)
    return data


def test_detect_json_rows(homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    claude, codex = homes
    rows = detect_json(capsys, "--all", "--claude-home", str(claude), "--codex-home", str(codex))
    by_id = {r["session_id"]: r for r in rows}
    # Three top-level sessions: the subagent files are nested under the spotter session.
    assert len(rows) == 3
    spotter = by_id[SPOTTER]
    assert spotter["provider"] == "claude"
    # last live assistant (line 1506): 1 + 7,330 + 98,729 + 1 (see tests/adapters/test_claude.py)
    assert spotter["context_tokens"] == 106_061 and spotter["context_window"] == 200_000
    assert spotter["occupancy"] == pytest.approx(0.5303, abs=1e-4)
    assert spotter["context_state"] == "reported"
    subagents = spotter["subagents"]
    assert isinstance(subagents, list)
    assert sorted(a["agent_id"] for a in subagents) == ["a2898e3", "acompact-e1f845"]
    codex_row = by_id["019c8a4d-8f45-7010-8b5d-7fad920aa6f9"]
    # newest token_count (line 415): 108,869 input + 6,189 output, window 258,400
    assert codex_row["provider"] == "codex" and codex_row["context_tokens"] == 115_058
    assert codex_row["context_window"] == 258_400
    edge = next(r for r in rows if str(r["path"]).endswith("edge.jsonl"))
    assert edge["bad_lines"] == 3  # a string, a number and a list, each a line of its own
    expected = {
        "provider", "session_id", "path", "cwd", "model", "title", "context_tokens",
        "context_window", "occupancy", "context_state", "live", "age_secs", "bytes",
        "records", "bad_lines", "subagents",
    }  # fmt: skip
    for row in rows:
        assert expected <= set(row)
        assert row["live"] is True  # copied a moment ago: written within the last 180 s


def test_detect_age_filter_and_all(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    claude, codex = homes
    old = time.time() - 30 * 86_400
    for path in [*claude.rglob("*.jsonl"), *codex.rglob("*.jsonl")]:
        os.utime(path, (old, old))
    args = ["--claude-home", str(claude), "--codex-home", str(codex)]
    assert detect_json(capsys, *args) == []
    assert len(detect_json(capsys, "--all", *args)) == 3


def test_detect_plain_output(homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    claude, codex = homes
    assert main(["detect", "--all", "--claude-home", str(claude), "--codex-home", str(codex)]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.split() == [
        "prov", "session", "used/window", "occ", "age", "lifetime", "size", "title"
    ]  # fmt: skip
    assert len(lines) == 3
    spotter = next(line for line in lines if SPOTTER[:8] in line)
    assert "106k/200k" in spotter and "53%" in spotter
    assert "≥132k" in spotter  # lifetime of the head and tail read (the file is 3 MB)


def test_missing_named_home_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["detect", "--claude-home", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"gobtui: error: claude home {missing} does not exist"
    assert main(["--codex-home", str(missing)]) == 2
    assert "codex home" in capsys.readouterr().err


def test_missing_default_homes_are_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "absent-claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "absent-codex"))
    assert detect_json(capsys) == []
    assert main(["detect"]) == 0
    assert "no sessions found" in capsys.readouterr().out


def test_environment_homes_are_used(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = homes
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    assert len(detect_json(capsys, "--all")) == 3


def test_unknown_theme_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c").mkdir()
    code = main(
        [
            "--theme",
            "no-such-theme",
            "--claude-home",
            str(tmp_path / "c"),
            "--codex-home",
            str(tmp_path / "c"),
        ]
    )
    assert code == 2
    assert "unknown theme 'no-such-theme'" in capsys.readouterr().err


def test_console_script_runs_without_a_traceback(tmp_path: Path) -> None:
    """The installed entry point, in a fresh process, on a bad home: one line, exit 2."""
    result = subprocess.run(
        [sys.executable, "-m", "gobtui.cli", "detect", "--codex-home", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_warm_detect_equals_a_cold_one(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    claude, codex = homes
    args = ["--all", "--claude-home", str(claude), "--codex-home", str(codex)]
    cold = detect_json(capsys, *args)
    warm = detect_json(capsys, *args)

    def strip(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in r.items() if k != "age_secs"} for r in rows]

    assert strip(warm) == strip(cold)
    fresh = detect_json(capsys, "--no-cache", *args)
    assert strip(fresh) == strip(cold)


def test_live_window_is_configurable(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    claude, codex = homes
    recent = time.time() - 600
    for path in [*claude.rglob("*.jsonl"), *codex.rglob("*.jsonl")]:
        os.utime(path, (recent, recent))
    args = ["--all", "--claude-home", str(claude), "--codex-home", str(codex)]
    assert not any(r["live"] for r in detect_json(capsys, *args))
    assert all(r["live"] for r in detect_json(capsys, "--live-secs", "900", *args))


@pytest.mark.parametrize("value", ["-5", "0", "86401"])
def test_bad_live_window_is_a_usage_error(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["detect", "--live-secs", value])
    assert exit_info.value.code == 2
    # The range the message states is the one enforced: 0 itself is refused.
    assert f"must be more than 0 and at most 86,400 seconds, got {value}" in capsys.readouterr().err


def test_a_closed_pipe_is_not_an_error(homes: tuple[Path, Path]) -> None:
    claude, codex = homes
    args = ["detect", "--all", "--claude-home", str(claude), "--codex-home", str(codex)]
    producer = subprocess.Popen(
        [sys.executable, "-m", "gobtui.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert producer.stdout is not None and producer.stderr is not None
    producer.stdout.close()  # like `| head -0`: nobody reads
    err = producer.stderr.read().decode()
    assert producer.wait() == 0 and err == ""


def test_a_bad_config_stops_the_dashboard_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[policy]\ntrigger_tokens = 100000\nfloor_tokens = -3\n")
    monkeypatch.setenv("GOBTUI_CONFIG", str(config))
    assert main(["--no-watch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "policy.floor_tokens" in err and "line 3" in err


def test_config_layers_set_each_sessions_trigger_on_the_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gobtui.core.board import BoardPolicy, build_row
    from gobtui.core.model import Provider, SessionSummary
    from gobtui.services import policies

    config = tmp_path / "config.toml"
    config.write_text(
        "[policy]\ntrigger_tokens = 120000\nfloor_tokens = 10000\n\n"
        "[provider.codex]\ntrigger_tokens = 90000\n\n"
        '[sessions."s-pinned"]\ntrigger_tokens = 60000\n'
    )
    monkeypatch.setenv("GOBTUI_CONFIG", str(config))
    board = BoardPolicy(session_trigger=policies.current().trigger)

    def trigger(provider: Provider, session_id: str) -> int:
        summary = SessionSummary(
            provider=provider, session_id=session_id, path=f"/x/{session_id}.jsonl",
            context_tokens=50_000, context_window=1_000_000,
        )  # fmt: skip
        return build_row(summary, board, now=0.0).trigger_tokens

    assert trigger(Provider.CLAUDE, "s-other") == 120_000
    assert trigger(Provider.CODEX, "s-other") == 90_000
    assert trigger(Provider.CLAUDE, "s-pinned") == 60_000
