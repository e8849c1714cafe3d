"""The read form of a vault record (gobtui.view_models.vault_text): texts with their newlines, every
other value once as a field, pages cut between words, previews on one safe line."""

from __future__ import annotations

import orjson
from rich.style import Style

from gobtui.core.vault.records import count_string_matches
from gobtui.view_models.vault_text import (
    PREVIEW_MAX_CHARS,
    Entry,
    PageStyles,
    entries,
    pages,
    preview,
    render_page,
    split_text,
)

STYLES = PageStyles(Style(bold=True), Style(dim=True), Style(reverse=True))


def line(record: object) -> bytes:
    return orjson.dumps(record)


CLAUDE_TOOL_USE = line(
    {
        "type": "assistant",
        "uuid": "u-1",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running the tests.\nThen the linter."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make test"}},
            ],
        },
    }
)


def test_texts_keep_their_newlines_and_come_before_the_fields() -> None:
    read = entries(CLAUDE_TOOL_USE)
    texts = [(e.label, e.value) for e in read if e.kind == "text"]
    assert texts == [
        ("assistant", "Running the tests.\nThen the linter."),
        ("tool Bash", "command: make test"),
    ]
    kinds = [e.kind for e in read]
    assert kinds == sorted(kinds, key=lambda kind: kind != "text")  # texts, then fields
    fields = {e.label: e.value for e in read if e.kind == "field"}
    assert fields["uuid"] == "u-1" and fields["message.content[1].name"] == "Bash"


def test_codex_records_are_headed_by_what_they_are() -> None:
    call = line(
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"cargo test","workdir":"/src"}',
            },
        }
    )
    assert [(e.label, e.value) for e in entries(call) if e.kind == "text"] == [
        ("tool exec_command", "cmd: cargo test\nworkdir: /src")
    ]
    message = line(
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hi"}],
            },
        }
    )
    assert [(e.label, e.value) for e in entries(message) if e.kind == "text"] == [("user", "hi")]
    result = line(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "content": [{"type": "text", "text": "ok\ndone"}]}
                ],
            },
        }
    )
    assert [e.label for e in entries(result) if e.kind == "text"] == ["tool result"]


def test_every_string_value_is_shown_once_so_hits_match_the_search() -> None:
    record = {
        "type": "assistant",
        "sessionId": "Bash-session",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Bash, then Bash again"},
                {"type": "tool_use", "name": "Bash", "input": {"command": "echo Bash"}},
            ],
        },
    }
    (page,) = pages(entries(line(record)))
    text, hits = render_page(page, "Bash", STYLES)
    assert hits == count_string_matches(record, "Bash") == 5
    marked = [text.plain[span.start : span.end] for span in text.spans if span.style == STYLES.hit]
    assert marked == ["Bash"] * 5  # never in a heading ("tool Bash") or a path


def test_hostile_text_is_made_visible_and_never_markup() -> None:
    record = {
        "type": "user",
        "message": {"role": "user", "content": "\x1b[2J\x1b]0;pwned\x07 [bold red]x[/] \u202e"},
        "\x1b[31mkey": "\x9bvalue",
    }
    (page,) = pages(entries(line(record)))
    text, _ = render_page(page, None, STYLES)
    assert "\x1b" not in text.plain and "\x07" not in text.plain and "\x9b" not in text.plain
    assert "\u202e" not in text.plain
    assert "␛[2J" in text.plain and "[bold red]x[/]" in text.plain
    shown = preview(line(record))
    assert "\x1b" not in shown and "␛[2J" in shown and "\n" not in shown


def test_a_long_text_is_paged_between_words() -> None:
    words = [f"word{i:05d}" for i in range(4000)]  # 40,000 characters, no newline
    record = {"type": "user", "message": {"role": "user", "content": " ".join(words)}}
    laid_out = pages(entries(line(record)), budget=16_000)
    assert len(laid_out) >= 3
    pieces = [e.value for page in laid_out for e in page if e.kind == "text"]
    assert "".join(pieces) == " ".join(words)  # nothing lost or repeated
    for piece in pieces[:-1]:
        assert piece.endswith(" ")  # each page ends between two words
    assert all(len(e.label) + len(e.value) <= 16_000 for page in laid_out for e in page)
    continued = [e.continued for page in laid_out for e in page if e.kind == "text"]
    assert continued == [False] + [True] * (len(pieces) - 1)


def test_split_text_prefers_a_line_break_then_a_space() -> None:
    assert split_text("aaaa bbbb\ncccc dddd", 16) == ("aaaa bbbb\n", "cccc dddd")
    assert split_text("aaaa bbbb cccc", 12) == ("aaaa bbbb ", "cccc")
    assert split_text("x" * 30, 10) == ("x" * 10, "x" * 20)  # one word longer than a page
    assert split_text("short", 10) == ("short", "")


def test_previews_are_one_bounded_line() -> None:
    assert preview(CLAUDE_TOOL_USE) == "assistant: Running the tests. Then the linter."
    assert preview(line({"type": "system", "subtype": "turn_duration", "durationMs": 5})) == (
        "durationMs=5"
    )
    long = line({"type": "user", "message": {"role": "user", "content": "z " * 5000}})
    assert len(preview(long)) <= PREVIEW_MAX_CHARS
    assert preview(b"not json \x1b[2J") == "not json ␛[2J"


def test_odd_records_do_not_break_the_layout() -> None:
    nested = b'{"a":' * 500 + b'"deep"' + b"}" * 500  # deeper than orjson.dumps goes
    read = entries(nested)
    assert read and all(isinstance(e, Entry) for e in read)
    assert entries(b"\xff\xfe not json")[0].label == "not JSON"
    assert [e.value for e in entries(line([1, "two", None]))] == ["1", "two", "null"]
    assert pages([]) == [[]]


def test_each_record_reads_by_its_own_providers_rules() -> None:
    """A short `summary` is a Claude summary record's text, but the setting of a Codex
    turn_context: which fields are text is the record's provider's (registry.record_text)."""
    claude = line({"type": "summary", "summary": "Bookkeeping.", "leafUuid": "u-1"})
    assert entries(claude)[0].kind == "text" and entries(claude)[0].label == "summary"
    assert preview(claude) == "summary: Bookkeeping."
    codex = line({"type": "turn_context", "payload": {"summary": "auto", "cwd": "/src"}})
    assert {e.label: e.kind for e in entries(codex)}["payload.summary"] == "field"
    assert preview(codex) == "summary=auto"  # (cwd is quiet: every record repeats it)
