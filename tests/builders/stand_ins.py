"""Stand-ins for the genuine transcripts most tests copy, built by the project, for a clone
without ../shared/fixtures: the same file name and session id, shapes of the same kind (a
short session with two tool calls; a tool-heavy one whose outputs are worth cutting). A test
asserting a genuine file's own figures reads fixtures_dir instead, and skips without it."""

from __future__ import annotations

from collections.abc import Callable

from tests.builders.claude import ClaudeSession
from tests.builders.text import log_lines


def _short() -> str:
    """15 records, 4 of them user records and one file-history-snapshot, as the genuine one."""
    session = ClaudeSession("55604662-cf2a-4331-851a-ec234028f8ca", cwd="/home/dev/spotter")
    session.prompt("mix phx.server doesnt seem to start")
    session.say("Let me look at the server logs first.")
    session.tool("Bash", {"command": "mix phx.server"}, "** (Mix) Could not start application")
    session.tool("Read", {"file_path": "config/dev.exs"}, "import Config\nconfig :spotter")
    session.tool("Bash", {"command": "lsof -i :4000"}, "beam.smp 4242 dev 20u IPv4 TCP *:4000")
    session.say("Port 4000 is held by an earlier server.")
    session.say("Stop it and start the server again.", final=True)
    session.last_prompt()
    return session.text()


def _tool_heavy() -> str:
    session = ClaudeSession("d6e0bada-1959-4eec-a9d2-0bfade768d8f", cwd="/home/dev/spotter")
    session.prompt("find why the importer drops rows")
    for step in range(12):
        session.tool(
            "Bash",
            {"command": f"grep -n importer lib/spotter/import_{step}.ex"},
            log_lines(f"heavy{step}", 30),
        )
    session.say("Decision: validate rows before the insert, not after.", final=True)
    session.last_prompt()
    return session.text()


STAND_INS: dict[str, Callable[[], str]] = {
    "claude/marot__spotter__short.jsonl": _short,
    "claude/marot__spotter__tool_heavy.jsonl": _tool_heavy,
}
"""Relative fixture path -> the text of its stand-in."""
