"""Hostile transcripts: what a malicious or broken session can hold, for the tests that run
every command and the app on it. Escapes that clear the screen, retitle the tmux pane and
write the clipboard; colours; C1 controls; bidi overrides; lone surrogates; ids shaped to
break out of a TOML snippet; records nested deeper than any writer can write; huge lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession, uuid7_like
from tests.builders.common import dumps, stable_uuid
from tests.builders.text import log_lines

CLEAR = "\x1b[2J"
RETITLE = "\x1b]0;PWNED-TITLE\x07"
CLIPBOARD = "\x1b]52;c;UFdORUQ=\x07"
COLOUR = "\x1b[31mRED"
C1_CSI = "\x9b31m"
BIDI = "\u202egnp.exe\u202c \u2066iso\u2069"
PAYLOAD = f"look {CLEAR}{RETITLE}{CLIPBOARD}{COLOUR}{C1_CSI} {BIDI} \u200b[bold]markup[/]"
"""What a hostile title, cwd, model or output holds."""
TOML_BREAKER = (
    'x"]\n[presets.evil]\ncommand = ["sh", "-c", "echo pwned"]\ntrusted_legacy_command = true\n#'
)

FORBIDDEN = (
    b"\x1b",  # ESC: every escape sequence starts with it
    "\x9b".encode(),  # C1 CSI (U+009B as UTF-8)
    "\u202e".encode(), "\u202c".encode(), "\u2066".encode(), "\u2069".encode(),
    "\u200b".encode(),
)  # fmt: skip
"""Bytes that must never reach a terminal from a transcript."""


def found_forbidden(output: bytes) -> list[bytes]:
    return [needle for needle in FORBIDDEN if needle in output]


def claude_hostile(projects: Path) -> Path:
    session = ClaudeSession(stable_uuid("claude", "hostile"), cwd=f"/home/dev/{PAYLOAD}")
    session.model = f"claude-{PAYLOAD}"
    session.prompt(f"Deploy {PAYLOAD} now")
    for step in range(14):
        session.tool(
            "Bash",
            {"command": f"cat notes_{step}.txt"},
            f"{PAYLOAD}\nerror: {PAYLOAD} failed\n" + log_lines(f"h{step}", 40),
        )
    session.say(f"Decision: we will use {PAYLOAD}.", final=True)
    session.last_prompt()
    path = session.write(projects, slug="-home-dev-hostile")
    with path.open("a", encoding="utf-8") as out:  # a lone surrogate, and a 300-deep record
        out.write('{"type":"system","subtype":"informational","content":"\\ud800 half"}\n')
        deep: object = {"leaf": PAYLOAD}
        for _ in range(300):
            deep = {"a": deep}
        out.write(dumps({"type": "attachment", "attachment": deep}) + "\n")
    return path


def codex_hostile(sessions: Path) -> Path:
    session = CodexSession(uuid7_like("codex:hostile"), cwd=f"/srv/{PAYLOAD}")
    session.model = f"gpt-{PAYLOAD}"
    session.meta()
    session.turn(f"Fix {PAYLOAD} please")
    for step in range(14):
        session.shell(f"cat {PAYLOAD}_{step}", f"{PAYLOAD}\n" + log_lines(f"c{step}", 40))
    session.answer(f"Decision: {PAYLOAD}")
    path = session.write(sessions)
    with path.open("a", encoding="utf-8") as out:
        out.write(
            json.dumps(
                {
                    "timestamp": "x",
                    "type": "event_msg",
                    "payload": {"type": "agent_message", "message": "x" * 2_000_000},
                }
            )
            + "\n"
        )
    return path
