"""`gobtui mcp` against what a hostile or careless client sends (issue 34, item 11): a policy
that would run a command, paths outside the provider homes, card fields that are tool output,
and lines that are not JSON-RPC requests. The real server in a subprocess, the SDK's client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client

from gobtui.adapters.config.paths import config_path
from tests.gobtui.corpus_home import SESSION, source
from tests.gobtui.test_mcp_server import error_text, server

__all__ = ["source"]  # a fixture, used by name

pytestmark = pytest.mark.timeout(120)

MARKER_SCRIPT = """\
import json, pathlib, sys
sys.stdin.read()
pathlib.Path(sys.argv[1]).write_text("ran")
sys.stdout.write(json.dumps({"edits": []}))
"""


async def test_a_policy_that_runs_a_command_is_refused_before_it_runs(
    source: Path, tmp_path: Path
) -> None:
    script, marker = tmp_path / "compactor.py", tmp_path / "ran"
    script.write_text(MARKER_SCRIPT)
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(
        "[presets.runner]\n"
        f"command = [{str(sys.executable)!r}, {str(script)!r}, {str(marker)!r}]\n"
        "trusted_legacy_command = true\n"
        f'[sessions."{SESSION}"]\n'
        'preset = "runner"\n'
        "trigger_tokens = 20000\n"
        "floor_tokens = 5000\n"
    )
    async with Client(server()) as client:
        planned = await client.call_tool("plan", {"session": SESSION})
        trigger = await client.call_tool("plan", {"session": SESSION[:8], "trigger": 20_000})
        elided = await client.call_tool("plan", {"session": SESSION, "strategy": "elide"})
    assert "not offered over MCP" in error_text(planned)
    assert "not offered over MCP" in error_text(trigger)
    assert not marker.exists()  # refused from the policy: the command never ran
    assert not elided.is_error  # a built-in strategy named explicitly still plans
