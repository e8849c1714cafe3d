"""core.conversation: Claude and Codex transcripts (built, parsed by the providers' own full
parse) become entries in order, folded where they should be, sanitized, and searchable."""

from __future__ import annotations

import orjson
import pytest

from gobtui.adapters.providers.registry import build_conversation as build
from gobtui.adapters.providers.registry import parse_data
from gobtui.core.conversation import (
    BODY_MAX_CHARS,
    Entry,
    EntryKind,
    Part,
    counts,
    first_match_from,
    input_body,
    search,
    step_match,
)
from gobtui.core.model import Provider
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession, uuid7_like
from tests.builders.common import stable_uuid
from tests.builders.hostile import FORBIDDEN, PAYLOAD


def entries_of(provider: Provider, text: str) -> list[Entry]:
    """The entries of a transcript's text: its items from the provider's parse, each with
    the record on its line."""
    data = text.encode("utf-8")
    transcript = parse_data(provider, "/t.jsonl", data, 0, part=False)
    assert transcript is not None
    records = [orjson.loads(line) for line in data.splitlines()]
    return build(provider, ((item, records[item.line_index]) for item in transcript.items))


def claude_session() -> ClaudeSession:
    s = ClaudeSession(stable_uuid("conversation", "claude"))
    s.prompt("Why does the ledger test fail?")
    s.respond({"type": "thinking", "thinking": "The lock is taken late.\nCheck the order."})
    s.say("Let me run it.")
    s.tool("Bash", {"command": "pytest -q tests/ledger", "description": "run"}, "F.\n1 failed")
    s.tool("Read", {"file_path": "/src/ledger.py"}, "     1→import os\n     2→", is_error=True)
    s.say("Fixed: the lock is taken first now.", final=True)
    return s


def kinds(entries: list[Entry]) -> list[EntryKind]:
    return [entry.kind for entry in entries]


def test_claude_session_in_order_with_tools_and_thinking_folded() -> None:
    entries = entries_of(Provider.CLAUDE, claude_session().text())
    assert kinds(entries) == [
        EntryKind.USER,
        EntryKind.THINKING,
        EntryKind.ASSISTANT,
        EntryKind.TOOL_CALL,
        EntryKind.TOOL_RESULT,
        EntryKind.TOOL_CALL,
        EntryKind.TOOL_RESULT,
        EntryKind.ASSISTANT,
    ]
    user, thinking, answer, call, result, read, failed, last = entries
    assert user.body == "Why does the ledger test fail?" and not user.foldable
    assert answer.is_message and not answer.foldable
    assert thinking.foldable and thinking.header == "thinking · The lock is taken late."
    assert thinking.body == "The lock is taken late.\nCheck the order."
    assert call.foldable and call.header == "Bash(pytest -q tests/ledger)"
    assert call.body == "command: pytest -q tests/ledger\ndescription: run"
    assert result.header == "Bash ⇒ 2 lines · F." and not result.error
    assert result.body == "F.\n1 failed"
    assert read.header == "Read(/src/ledger.py)"
    # a failed call is marked, and the Read's line number is left out of the header
    assert failed.error and failed.header == "Read ✗ 2 lines · import os"
    assert last.body == "Fixed: the lock is taken first now."
    assert counts(entries).messages == 3 and counts(entries).tool_calls == 2
    assert [e.line_index for e in entries] == sorted(e.line_index for e in entries)


def test_claude_compaction_and_meta_are_notices_and_context() -> None:
    s = ClaudeSession(stable_uuid("conversation", "compact"))
    s.prompt("first")
    s.say("ok")
    s.compact("We fixed the ledger.\nNext: the invoices.")
    record = s._envelope(
        "user",
        message={"role": "user", "content": "<system-reminder>be brief</system-reminder>"},
        isMeta=True,
        uuid=s._next("meta"),
    )
    s._add(record)
    s.prompt("go on")
    entries = entries_of(Provider.CLAUDE, s.text())
    assert kinds(entries) == [
        EntryKind.USER,
        EntryKind.ASSISTANT,
        EntryKind.NOTICE,
        EntryKind.CONTEXT,
        EntryKind.CONTEXT,
        EntryKind.USER,
    ]
    boundary, summary, meta = entries[2:5]
    assert boundary.header.startswith("compacted · auto · ") and "tokens before" in boundary.header
    assert not boundary.foldable  # a notice without text is one line
    assert summary.foldable and summary.header.startswith("compaction summary · This session")
    assert "Next: the invoices." in summary.body
    assert meta.foldable and meta.header.startswith("meta · <system-reminder>")
    assert counts(entries).messages == 3


def codex_session() -> CodexSession:
    s = CodexSession(uuid7_like("conversation:codex"))
    s.meta()
    s.turn("<environment_context>\n  <cwd>/srv/api</cwd>\n</environment_context>")
    s.turn("Make the health check pass")
    s.reason("**Reading the check**\nIt pings the db.")
    s.shell("curl -s localhost:8080/health", "ok\ndb: up")
    s.shell("pytest -q", "1 failed", exit_code=1)
    s.patch("api/health.py", "-return False\n+return True")
    s.answer("The health check passes now.")
    s.compact("Health check fixed.", kept_prompts=("Make the health check pass",))
    return s


def test_codex_session_in_order_with_calls_outputs_and_reasoning() -> None:
    entries = entries_of(Provider.CODEX, codex_session().text())
    assert kinds(entries) == [
        EntryKind.CONTEXT,
        EntryKind.USER,
        EntryKind.THINKING,
        EntryKind.TOOL_CALL,
        EntryKind.TOOL_RESULT,
        EntryKind.TOOL_CALL,
        EntryKind.TOOL_RESULT,
        EntryKind.TOOL_CALL,
        EntryKind.TOOL_RESULT,
        EntryKind.ASSISTANT,
        EntryKind.NOTICE,
    ]
    context, prompt, reasoning, curl, curl_out, pytest_call, failed, patch, patched = entries[:9]
    assert context.foldable and context.header == "context · <environment_context>"
    assert prompt.body == "Make the health check pass"
    assert reasoning.header == "reasoning · Reading the check"
    assert curl.header == "shell_command(curl -s localhost:8080/health)"
    assert curl.body.startswith("command: curl -s localhost:8080/health\nworkdir: ")
    # the header skips the exit code / wall time preamble; the body keeps it
    assert curl_out.header == "shell_command ⇒ 5 lines · ok" and not curl_out.error
    assert curl_out.body.startswith("Exit code: 0\n")
    assert pytest_call.header == "shell_command(pytest -q)"
    assert failed.error and failed.header.startswith("shell_command ✗ ")
    assert patch.header == "apply_patch(api/health.py)"
    assert "+return True" in patch.body
    assert patched.header.startswith("apply_patch ⇒ ") and "Success." in patched.body
    assert entries[9].body == "The health check passes now."
    assert entries[10].header == "compacted"


def test_escapes_in_a_transcript_never_reach_an_entry() -> None:
    s = ClaudeSession(stable_uuid("conversation", "hostile"))
    s.prompt(f"Deploy {PAYLOAD}\nnow")
    s.tool("Bash", {"command": f"echo {PAYLOAD}"}, f"{PAYLOAD}\nerror: {PAYLOAD}\r\n")
    s.respond({"type": "thinking", "thinking": PAYLOAD})
    entries = entries_of(Provider.CLAUDE, s.text())
    assert len(entries) == 4
    for entry in entries:
        for text in (entry.header, entry.body):
            encoded = text.encode("utf-8")
            assert not [needle for needle in FORBIDDEN if needle in encoded], text
            assert "\r" not in text
        assert "\n" not in entry.header and "\t" not in entry.header
    assert "␛[2J" in entries[0].body and "␛]0;PWNED-TITLE␇" in entries[2].body
    assert "[bold]markup[/]" in entries[0].body  # kept as text: it is never parsed


def test_a_huge_output_is_cut_and_counted() -> None:
    s = ClaudeSession(stable_uuid("conversation", "huge"))
    s.tool("Bash", {"command": "cat big.log"}, "x" * (BODY_MAX_CHARS + 5_000))
    result = entries_of(Provider.CLAUDE, s.text())[-1]
    assert result.body.startswith("x" * 100)
    assert result.body.endswith("… 5,000 more characters not shown")
    assert len(result.body) < BODY_MAX_CHARS + 100


def test_input_body_puts_multiline_text_below_its_key() -> None:
    body = input_body({"file_path": "a.py", "old_string": "x = 1\ny = 2", "replace_all": False})
    assert body == "file_path: a.py\nold_string:\nx = 1\ny = 2\nreplace_all: false"
    assert input_body("raw patch") == "raw patch"
    assert input_body(None) == ""


def entry(kind: EntryKind, header: str, body: str, line: int = 0) -> Entry:
    return Entry(kind, header, body, line)


def test_search_counts_text_once_with_smart_case() -> None:
    entries = [
        entry(EntryKind.USER, "Fix the Lock", "Fix the Lock\nthe lock again"),
        entry(EntryKind.TOOL_CALL, "Bash(grep lock)", "command: grep lock"),
        entry(EntryKind.NOTICE, "compacted · lock held", ""),
        entry(EntryKind.ASSISTANT, "done", "done"),
    ]
    result = search(entries, "lock")
    # the call's header summarises its body: its match is counted once, in the body; a
    # notice without text is searched by its header
    assert [(m.entry, m.part, m.start) for m in result.matches] == [
        (0, Part.BODY, 8),
        (0, Part.BODY, 17),
        (1, Part.BODY, 14),
        (2, Part.HEADER, 12),
    ]
    assert len(search(entries, "Lock").matches) == 1  # a capital letter: case matters
    assert search(entries, "").matches == []
    assert search(entries, "nowhere").matches == []
    assert search(entries, "a.b").matches == []  # literal, not a pattern


def test_search_stops_at_its_limit() -> None:
    entries = [entry(EntryKind.USER, "a", "a" * 50)]
    result = search(entries, "a", limit=10)
    assert len(result.matches) == 10 and result.truncated
    assert not search(entries, "a", limit=100).truncated


@pytest.mark.parametrize(
    ("count", "current", "step", "expected"),
    [
        (5, None, 1, 0),
        (5, None, -1, 4),
        (5, 3, 1, 4),
        (5, 4, 1, 0),
        (5, 0, -1, 4),
        (0, None, 1, None),
    ],
)
def test_step_match_wraps(count: int, current: int | None, step: int, expected: int | None) -> None:
    assert step_match(count, current, step) == expected


def test_first_match_from_the_cursor() -> None:
    entries = [entry(EntryKind.USER, "x", "x") for _ in range(6)]
    matches = search(entries, "x").matches
    assert first_match_from(matches, 3) == 3
    assert first_match_from(matches[:2], 4) == 0  # none after it: the first
    assert first_match_from([], 0) is None
