"""A fork's latest usage (adapters.providers.claude.rewrite / rewrite_codex): what the real clients
decide on resume whether to compact from, restated to the fork's own projected context."""

from __future__ import annotations

from typing import Any

import orjson

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.providers.claude.rewrite import (
    INTERRUPTED_RESULT,
    CardScan,
    card_records,
    restate,
)
from gobtui.adapters.providers.claude.rewrite import fork_usage as claude_fork_usage
from gobtui.adapters.providers.codex.rewrite import CardScan as CodexScan
from gobtui.adapters.providers.codex.rewrite import fork_usage as codex_fork_usage
from gobtui.adapters.providers.rewrite_records import split_lines
from gobtui.core.model import Provider, Transcript
from tests.builders.sessions import claude_interrupted, claude_work_session, codex_work_session


def test_the_cache_read_takes_the_difference() -> None:
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 500,
             "cache_read_input_tokens": 150_000, "output_tokens": 40,
             "cache_creation": {"ephemeral_1h_input_tokens": 500}}  # fmt: skip
    assert restate(usage, 60_000)
    assert usage["cache_read_input_tokens"] == 60_000 - 543
    assert usage["cache_creation"] == {"ephemeral_1h_input_tokens": 500}
    assert not restate(usage, 60_000)  # says so already


def test_all_parts_shrink_when_the_others_alone_exceed_the_target() -> None:
    usage: dict[str, Any] = {"input_tokens": 8_000, "cache_creation_input_tokens": 4_000,
             "cache_read_input_tokens": 0, "output_tokens": 0,
             "cache_creation": {"ephemeral_5m_input_tokens": 1_000,
                                "ephemeral_1h_input_tokens": 3_000}}  # fmt: skip
    assert restate(usage, 6_000)
    parts = (
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    )
    assert sum(usage[k] for k in parts) == 6_000
    assert sum(usage["cache_creation"].values()) == usage["cache_creation_input_tokens"]
    assert not restate({"service_tier": "standard"}, 10)  # no parts: nothing to restate


def _scan(lines: list[bytes]) -> CardScan:
    return CardScan.of(lines, "/x.jsonl")


def test_claude_restates_every_record_of_the_newest_live_response() -> None:
    session = claude_work_session(40_000, "usage")
    lines = split_lines(session.text().encode())
    scan = _scan(lines)
    newest = scan.newest_response()
    records = [decode_line(lines[i]) for i in newest]
    assert newest and all(isinstance(r, dict) and r["type"] == "assistant" for r in records)
    replaced, appended = claude_fork_usage(scan, lines, (30_000, 1_000), 0)
    assert not appended and set(replaced) == set(newest)
    for index, line in replaced.items():
        before, after = orjson.loads(lines[index]), orjson.loads(line)
        usage = after["message"].pop("usage")
        before["message"].pop("usage")
        assert before == after  # the usage alone changed
        assert sum(usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                      "cache_read_input_tokens", "output_tokens")) == 29_000  # fmt: skip


def test_codex_appends_a_token_count_after_everything() -> None:
    session = codex_work_session(60_000, "usage")
    lines = split_lines(session.text().encode())
    scan = CodexScan("/x.jsonl")
    for index, line in enumerate(lines):
        scan.feed(index, orjson.loads(line))
    replaced, (record,) = codex_fork_usage(scan, lines, (25_000, 3_000), 1)
    assert not replaced
    assert record["type"] == "event_msg" and record["payload"]["type"] == "token_count"
    last = record["payload"]["info"]["last_token_usage"]
    assert last["input_tokens"] + last["output_tokens"] == last["total_tokens"] == 25_000
    newest = scan.token_count
    assert newest is not None  # the cumulative total and the window are the newest count's
    assert record["payload"]["info"]["total_token_usage"] == newest["info"]["total_token_usage"]
    assert record["payload"]["info"]["model_context_window"] == 258_400
    # each count is written twice: one usage point per request
    assert len(scan.usage) == len({total for _line, total in scan.usage})


def test_the_card_answers_the_calls_an_interrupted_session_left_open() -> None:
    session = claude_interrupted()
    lines = split_lines(session.text().encode())
    transcript = Transcript(Provider.CLAUDE, session.session_id, "/x.jsonl")
    open_call = session.records[-2]["message"]["content"][0]["id"]
    assert _scan(lines).open_calls() == [open_call]
    user, _last_prompt, _mode = card_records(
        lines, transcript, "[gobtui state card]\n(covers 1 earlier records)", b"s"
    )
    *results, text = user["message"]["content"]
    assert results == [{"type": "tool_result", "tool_use_id": open_call,
                        "content": INTERRUPTED_RESULT, "is_error": True}]  # fmt: skip
    assert text["text"].startswith("[gobtui state card]")
    # a session whose calls were all answered gets the card as plain text
    done = split_lines(claude_work_session(30_000, "done").text().encode())
    assert _scan(done).open_calls() == []
    plain, _, _ = card_records(done, transcript, "card", b"s")
    assert plain["message"]["content"] == "card"
