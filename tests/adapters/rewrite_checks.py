"""The checks every rewritten transcript passes (apply_plan's promises, line by line), and the
raw reads they rest on: tool links and card records, straight from the records."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.providers.rewrite_records import line_ending, split_lines
from gobtui.adapters.rewrite.apply import fork_usage_target
from gobtui.core.edits import CompactionPlan, DigestBlock
from gobtui.core.model import ItemKind, Provider, Transcript

Record = dict[str, Any]


def tool_links(data: bytes, provider: Provider) -> tuple[set[str], list[tuple[int, str]]]:
    """(ids of tool calls, (line, id) of every tool answer), read from the raw records."""
    calls: set[str] = set()
    answers: list[tuple[int, str]] = []
    for index, line in enumerate(split_lines(data)):
        record = decode_line(line.strip())
        if not isinstance(record, dict):
            continue
        if provider is Provider.CLAUDE:
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    calls.add(block["id"])
                if block.get("type") == "tool_result":
                    answers.append((index, str(block.get("tool_use_id"))))
        else:
            payload = record.get("payload")
            if record.get("type") != "response_item" or not isinstance(payload, dict):
                continue
            if payload.get("type") in {"function_call", "custom_tool_call", "local_shell_call"}:
                calls.add(str(payload.get("call_id")))
            if payload.get("type") in {"function_call_output", "custom_tool_call_output"}:
                answers.append((index, str(payload.get("call_id"))))
    return calls, answers


def card_of(record: Record, provider: Provider) -> str | None:
    """The state-card text an appended record carries, if it is the card record."""
    if provider is Provider.CLAUDE:
        message = record.get("message")
        if record.get("type") == "user" and isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, list):  # tool results for interrupted calls, then the card
                content = next((b["text"] for b in content if b.get("type") == "text"), None)
            return content if isinstance(content, str) else None
        return None
    payload = record.get("payload")
    if record.get("type") == "response_item" and isinstance(payload, dict):
        content = payload.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict):
            text = content[0].get("text")
            return text if isinstance(text, str) else None
    return None


def check_rewritten(
    data: bytes,
    out: bytes,
    provider: Provider,
    plan: CompactionPlan,
    before: Transcript,
    out_path: Path,
    untouchable: AbstractSet[int] = frozenset(),
) -> Transcript:
    """Every promise of apply_plan on one result; returns the result's parse.

    Lines other than the elided ones are the source's, but for the fork's latest usage: on
    Claude the newest live response's records, whose usage (only) says the target; on Codex
    a token_count appended after everything else."""
    assert len(out) <= len(data)
    assert out.endswith(b"\n") == data.endswith(b"\n")
    src, dst = split_lines(data), split_lines(out)
    elided = set(plan.elided_lines)
    assert not elided & untouchable
    target = fork_usage_target(plan, before)
    n = len(src)
    kinds = {item.line_index: item.kind for item in before.items}
    # Preserved thinking (core.thinking): a Claude fork leaves out each thinking record of
    # the plan, and holds no thinking from the first changed message on.
    left_out = {i for i in elided if provider is Provider.CLAUDE and kinds[i] is ItemKind.REASONING}
    gone = _uuids(src, left_out)
    kept = [index for index in range(n) if index not in left_out]
    where = {index: position for position, index in enumerate(kept)}
    first = min(elided, default=n)
    restated = 0
    for position, index in enumerate(kept):
        a, b = src[index], dst[position]
        if index >= first and provider is Provider.CLAUDE:
            assert not _thinking(decode_line(b.strip())), index
        if index in elided:
            assert len(b.rstrip(b"\r\n")) < len(a.rstrip(b"\r\n")), index
            assert line_ending(b) == line_ending(a) or index == n - 1
            assert decode_line(b.strip()) != decode_line(a.strip())
        elif (
            index == n - 1
            and not line_ending(a)
            and len(dst) > len(kept)
            and b.rstrip(b"\r\n") == a
        ):
            pass  # the unterminated last line, now terminated
        elif a != b:
            assert provider is Provider.CLAUDE, index
            old, new = decode_line(a.strip()), decode_line(b.strip())
            assert isinstance(old, dict) and isinstance(new, dict)
            if old.get("parentUuid") in gone:  # hung off the nearest record kept
                assert new.get("parentUuid") not in gone, index
                old["parentUuid"] = new.get("parentUuid")
            if index >= first and _thinking(old):
                content = old["message"]["content"]
                old["message"]["content"] = [b for b in content if b.get("type") not in _THINK]
            if old != new:
                assert target is not None, index
                usage = new["message"].pop("usage")
                old["message"].pop("usage")
                assert old == new, index
                assert sum(usage.get(k) or 0 for k in _USAGE_PARTS) == max(1, target[0] - target[1])
                restated += 1
    appended: list[Record] = []
    for raw in dst[len(kept) :]:
        record = decode_line(raw.strip())
        assert isinstance(record, dict)
        appended.append(record)
    assert not any(record.get("parentUuid") in gone for record in appended)
    digest = plan.digest
    if provider is Provider.CODEX and target is not None and appended:
        last = appended[-1]
        if last.get("type") == "event_msg":
            usage = last["payload"]["info"]["last_token_usage"]
            assert usage["input_tokens"] + usage["output_tokens"] == target[0]
            assert usage["total_tokens"] == target[0]
            appended.pop()
            restated += 1
    if digest is None:
        assert not appended
    else:
        assert len(appended) == (3 if provider is Provider.CLAUDE else 1)
        card = card_of(appended[0], provider)
        assert card is not None
        assert DigestBlock.parse(card) == digest

    out_path.write_bytes(out)
    after = parse_transcript(provider, str(out_path))
    assert before.summary is not None and after.summary is not None
    assert after.summary.bad_lines == before.summary.bad_lines
    if restated and target is not None:  # the fork's usage describes the fork
        expected = target[0] if provider is Provider.CODEX else max(1, target[0] - target[1])
        assert after.summary.context_tokens == expected
    else:
        assert after.summary.context_tokens == before.summary.context_tokens
    old_items = {item.line_index: item for item in before.items if item.line_index not in left_out}
    new_items = {item.line_index: item for item in after.items}
    for line, item in old_items.items():
        new_item = new_items[where[line]]
        assert new_item.active == item.active, line
        assert new_item.tool_use_ids == item.tool_use_ids, line
        if line in elided:
            assert new_item.est_tokens < item.est_tokens
    extra = [item for item in after.items if item.line_index >= len(kept)]
    assert len(extra) == (1 if digest is not None else 0)  # (an event_msg is no item)
    assert all(item.active for item in extra)

    calls_before, answers_before = tool_links(data, provider)
    calls_after, answers_after = tool_links(out, provider)
    assert calls_after == calls_before
    assert answers_after == [(where[line], tid) for line, tid in answers_before]
    return after


_THINK = frozenset({"thinking", "redacted_thinking"})


def _thinking(record: Any) -> bool:
    """Whether a decoded record holds a thinking block."""
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in _THINK for b in content
    )


def _uuids(lines: list[bytes], indexes: set[int]) -> set[str]:
    found = (decode_line(lines[i].strip()) for i in sorted(indexes))
    return {r["uuid"] for r in found if isinstance(r, dict) and isinstance(r.get("uuid"), str)}


_USAGE_PARTS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
