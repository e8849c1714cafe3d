"""`adaptive = true` for real: plan, apply (and its event), watch, the board (detect),
policy-check (CLI and MCP) and the preview all decide from the tuner's trigger and floor, and
say why in words; `tune` states what they use. A 54k-token Claude session in a 200k window:
the configured trigger (250k, lowered to 150,300 before the client's own compaction) is far
off, the tuner's (a quarter of the window, 50k) is passed."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gobtui.adapters.config.paths import config_path, data_dir
from gobtui.adapters.planning.load import load_session
from gobtui.cli.dispatch import main
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.services.planning_state import PreviewPlanner
from tests.builders.sessions import claude_work_session

IDLE_SINCE = 1_700_000_000
CAPPED = "trigger capped to 25% of the context window"


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    path = claude_work_session(60_000, "adaptive").write(home / "projects")
    os.utime(path, (IDLE_SINCE, IDLE_SINCE))
    return path


def configure(text: str) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(text)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    code = main([*argv, "--json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return orjson.loads(out.out)


def test_plan_apply_and_their_event_use_the_tuners_trigger(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure('[policy]\nstrategy = "elide"\n')
    off = run_json(capsys, "plan", str(session))
    assert off["reason_code"] == "below_trigger" and "adaptive" not in off
    configure('[policy]\nstrategy = "elide"\nadaptive = true\n')
    on = run_json(capsys, "plan", str(session))
    assert on["strategy"] == "elide" and on["adaptive"]["trigger_tokens"] == 50_000
    assert CAPPED in on["adaptive"]["reasons_words"]
    assert main(["plan", str(session)]) == 0
    assert f"adaptive: trigger 50,000, floor 25,000 (configured 150,300 / 40,000): {CAPPED}" in (
        capsys.readouterr().out
    )
    assert main(["apply", str(session), "--yes"]) == 0
    capsys.readouterr()
    (event,) = [orjson.loads(line) for line in (data_dir() / "events.jsonl").read_bytes().split()]
    assert event["outcome"] == "applied" and event["trigger_tokens"] == 50_000
    assert event["tune_reasons"] == [
        "trigger_capped_to_window_fraction",
        "floor_capped_to_trigger_half",
    ]


def test_the_board_watch_and_tune_agree(session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure('[policy]\nstrategy = "elide"\n')
    (row,) = run_json(capsys, "detect", "--all")
    assert row["trigger_tokens"] == 150_300 and not row["over_trigger"]
    tuned = run_json(capsys, "tune", str(session))
    assert tuned["adaptive"] is False and tuned["trigger_tokens"] == 150_300
    assert tuned["tuned"]["trigger_tokens"] == 50_000
    assert main(["tune", str(session)]) == 0
    out = capsys.readouterr().out
    assert "adaptive is off: plan, apply, watch and the board use trigger 150k" in out
    assert "with adaptive = true they would use trigger 50k, floor 25k" in out

    configure('[policy]\nstrategy = "elide"\nadaptive = true\n')
    (row,) = run_json(capsys, "detect", "--all")
    assert row["trigger_tokens"] == 50_000 and row["over_trigger"]
    tuned = run_json(capsys, "tune", str(session))
    assert tuned["adaptive"] is True and tuned["trigger_tokens"] == row["trigger_tokens"]
    capsys.readouterr()
    assert main(["watch", "--once", "--json", "--all", "--dry-run"]) == 0
    (decision,) = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert decision["decision"] == "would_publish" and decision["trigger_tokens"] == 50_000
    assert "trigger_capped_to_window_fraction" in decision["tune_reasons"]


def test_policy_check_decides_from_the_tuner(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ask = (
        "policy-check",
        "--provider",
        "claude",
        "--context-tokens",
        "60000",
        "--window",
        "200000",
    )
    configure("[policy]\n")
    assert run_json(capsys, *ask)["action"] == "none"
    configure("[policy]\nadaptive = true\n")
    decided = run_json(capsys, *ask)
    assert decided["action"] == "transcript_compact"
    assert decided["effective_trigger_tokens"] == 50_000
    assert "trigger_capped_to_window_fraction" in decided["tune_reasons"]
    assert main(list(ask)) == 0
    assert f"adaptive: {CAPPED}" in capsys.readouterr().out


async def test_the_mcp_policy_check_decides_from_the_tuner(session: Path) -> None:
    configure("[policy]\nadaptive = true\n")
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "gobtui.cli", "mcp"], env=dict(os.environ)
    )
    async with Client(server) as client:
        result = await client.call_tool(
            "policy_check",
            {"provider": "claude_code", "context_tokens": 60_000, "window": 200_000},
        )
    assert not result.is_error, result.content
    found = result.structured_content
    found = found.get("result", found)
    assert (found["action"], found["effective_trigger_tokens"]) == ("transcript_compact", 50_000)
    assert "trigger_capped_to_window_fraction" in found["tune_reasons"]


def test_the_preview_plans_with_the_tuner_and_says_why(session: Path) -> None:
    configure("[policy]\nadaptive = true\n")
    loaded = load_session(session, Provider.CLAUDE)
    base = PolicyConfig(trigger_tokens=150_300, adaptive=True)
    figures = PreviewPlanner(loaded).preview("elide", base, False).figures
    assert figures.no_plan_reason is None and figures.effective_trigger == 50_000
    assert figures.adaptive is not None and CAPPED in figures.adaptive
    off = PreviewPlanner(loaded).preview("elide", PolicyConfig(trigger_tokens=150_300), False)
    assert off.figures.no_plan_reason == "below_trigger" and off.figures.adaptive is None
