"""Generated Claude / Codex transcript files, and the checks every rewritten transcript passes.

The generators write what real files hold (uuid chains with dead branches and progress noise,
parallel tool results, block-list outputs with images, Codex compactions), in compact or
spaced JSON, with LF or CRLF endings, with or without a final newline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.providers.rewrite_records import line_ending, split_lines
from gobtui.adapters.rewrite.apply import fork_usage_target
from gobtui.core.edits import CompactionPlan, DigestBlock
from gobtui.core.model import ItemKind, Provider, Transcript

Record = dict[str, Any]

_CHUNKS = ["log line ", "é", "€", "\n", '"', "\\", "path/to/file.py ", "\t", "💡", "ok "]


@st.composite
def payload_texts(draw: st.DrawFn, min_size: int = 0, max_size: int = 3000) -> str:
    """Text of roughly the drawn size, built from a few chunks (fast, yet escapes and UTF-8)."""
    size = draw(st.integers(min_size, max_size))
    chunk = draw(st.sampled_from(_CHUNKS))
    head = draw(st.text(max_size=12))
    text = head + chunk * (size // max(1, len(chunk.encode())) + 1)
    return text[: max(size, len(head))] if size else head


@st.composite
def claude_outputs(draw: st.DrawFn, big: bool = False) -> Any:
    """A tool_result `content`: a string, or a list of text (and sometimes image) blocks."""
    low = 300 if big else 0
    shape = draw(
        st.sampled_from(["string", "blocks", "image"] if not big else ["string", "blocks"])
    )
    if shape == "string":
        return draw(payload_texts(low))
    blocks: list[Record] = [
        {"type": "text", "text": draw(payload_texts(low if i == 0 else 0, 1500))}
        for i in range(draw(st.integers(1, 3)))
    ]
    if shape == "image":
        blocks.insert(
            draw(st.integers(0, len(blocks))),
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"},
            },
        )
    return blocks


@dataclass
class Style:
    """How a generated file is written."""

    ending: bytes = b"\n"
    final_newline: bool = True
    spaced: bool = False

    def dump(self, records: list[Record]) -> bytes:
        lines = [
            json.dumps(r, ensure_ascii=False).encode() if self.spaced else orjson.dumps(r)
            for r in records
        ]
        data = self.ending.join(lines)
        return data + self.ending if self.final_newline and lines else data


styles = st.builds(
    Style,
    ending=st.sampled_from([b"\n", b"\n", b"\r\n"]),
    final_newline=st.booleans() | st.just(True),
    spaced=st.booleans(),
)


def _ts(n: int) -> str:
    return f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"


@st.composite
def claude_files(draw: st.DrawFn) -> bytes:
    """A Claude session: prompts, tool calls with (parallel) results, dead branches, noise."""
    session = draw(st.sampled_from(["sess-a", "0b5e0d2a-1c2b-4e8f-9d3a-6f1e2d3c4b5a"]))
    records: list[Record] = []
    counter = [0]

    def new_uuid() -> str:
        counter[0] += 1
        return f"u{counter[0]:04d}"

    def envelope(kind: str, parent: str | None, message: Record, **extra: Any) -> Record:
        counter[0] += 1
        record: Record = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/u/proj",
            "sessionId": session,
            "version": "2.1.39",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": f"u{counter[0]:04d}",
            "timestamp": _ts(counter[0]),
        }
        record.update(extra)
        return record

    if draw(st.booleans()):
        records.append({"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}})
    parent: str | None = None
    call_no = 0
    forced_big = 3  # enough big outputs that a low-trigger elide always finds work
    for turn in range(draw(st.integers(1, 6))):
        prompt = envelope(
            "user",
            parent,
            {"role": "user", "content": draw(payload_texts(1, 80))},
            permissionMode="default",
            promptId=f"p{turn}",
        )
        records.append(prompt)
        parent = prompt["uuid"]
        n_calls = max(1 if forced_big else 0, draw(st.integers(0, 3)))
        ids = [f"toolu_{call_no + i}" for i in range(n_calls)]
        call_no += n_calls
        assistant = envelope(
            "assistant",
            parent,
            {
                "model": "claude-opus-4-6",
                "id": f"msg_{turn}",
                "role": "assistant",
                "content": [{"type": "text", "text": "Let me look."}]
                + [
                    {
                        "type": "tool_use",
                        "id": i,
                        "name": draw(st.sampled_from(["Bash", "Read"])),
                        "input": {"q": i},
                    }
                    for i in ids
                ],
                "usage": {
                    "input_tokens": 10,
                    "cache_read_input_tokens": 1000 * (turn + 1),
                    "output_tokens": 5,
                },
            },
        )
        records.append(assistant)
        parent = assistant["uuid"]
        if draw(st.booleans()) and ids:
            records.append(
                {
                    "parentUuid": parent,
                    "type": "progress",
                    "data": {"type": "bash_progress"},
                    "uuid": new_uuid(),
                    "sessionId": session,
                }
            )
        if draw(st.integers(0, 4)) == 0 and ids:  # a rewind: an answer on a branch left behind
            dead = envelope(
                "user",
                parent,
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": ids[0], "content": "x" * 400}
                    ],
                },
            )
            records.append(dead)
            records.append(
                envelope("assistant", dead["uuid"], {"role": "assistant", "content": "dead"})
            )
        parallel = draw(st.booleans())
        groups = [[i] for i in ids] if parallel else ([ids] if ids else [])
        for group in groups:
            blocks = []
            for i in group:
                big = forced_big > 0
                forced_big -= 1 if big else 0
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": i,
                        "content": draw(claude_outputs(big=big)),
                        "is_error": False,
                    }
                )
            answer = envelope(
                "user",
                assistant["uuid"] if parallel else parent,
                {"role": "user", "content": blocks},
                toolUseResult={"stdout": "copy"},
                sourceToolAssistantUUID=assistant["uuid"],
            )
            records.append(answer)
            parent = answer["uuid"]
        if draw(st.integers(0, 3)) == 0:
            records.append({"type": "system", "subtype": "turn_duration", "durationMs": 5})
    closing = envelope(
        "assistant",
        parent,
        {
            "model": "claude-opus-4-6",
            "id": "msg_end",
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 9000, "output_tokens": 9},
        },
    )
    records.append(closing)
    if draw(st.booleans()):
        records.append(
            {
                "type": "last-prompt",
                "lastPrompt": "go",
                "leafUuid": closing["uuid"],
                "sessionId": session,
            }
        )
    if draw(st.booleans()):
        records.append({"type": "mode", "mode": "normal", "sessionId": session})
    return draw(styles).dump(records)


@st.composite
def codex_outputs(draw: st.DrawFn, big: bool = False) -> tuple[str, Any]:
    """(payload type, output): a function string, or a custom block list (maybe an image)."""
    low = 300 if big else 0
    if draw(st.booleans()):
        return "function_call_output", draw(payload_texts(low))
    blocks: list[Record] = [
        {"type": "input_text", "text": draw(payload_texts(low if i == 0 else 0, 1500))}
        for i in range(draw(st.integers(1, 2)))
    ]
    if not big and draw(st.integers(0, 3)) == 0:
        blocks.append({"type": "input_image", "image_url": "data:image/png;base64,iVBOR"})
    return "custom_tool_call_output", blocks


@st.composite
def codex_files(draw: st.DrawFn) -> bytes:
    """A Codex rollout: meta, turns of calls and outputs, token counts, maybe a compaction."""
    ordinals = draw(st.booleans())
    records: list[Record] = []

    def add(kind: str, payload: Record) -> None:
        record: Record = {"timestamp": _ts(len(records))}
        if ordinals:
            record["ordinal"] = len(records)
        record["type"] = kind
        record["payload"] = payload
        records.append(record)

    meta_key = draw(st.sampled_from(["id", "session_id"]))
    add("session_meta", {meta_key: "019a0000-0000-7000-8000-000000000001", "cwd": "/w"})
    add("turn_context", {"cwd": "/w", "model": "gpt-5.1-codex-max"})
    forced_big = 3
    n_turns = draw(st.integers(1, 6))
    compact_at = draw(st.integers(0, n_turns)) if draw(st.booleans()) else -1
    for turn in range(n_turns):
        if turn == compact_at:
            ptype, output = draw(codex_outputs(big=True))
            history: list[Record] = [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "kept"}],
                },
                {"type": "function_call", "call_id": "kept_1", "name": "shell", "arguments": "{}"},
                {"type": ptype, "call_id": "kept_1", "output": output},
            ]
            add("compacted", {"message": "", "replacement_history": history})
        add(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"step {turn}"}],
            },
        )
        add(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "think"}],
                "encrypted_content": "opaque",
            },
        )
        for call in range(max(1 if forced_big else 0, draw(st.integers(0, 3)))):
            big = forced_big > 0
            forced_big -= 1 if big else 0
            ptype, output = draw(codex_outputs(big=big))
            call_id = f"call_{turn}_{call}"
            call_type = "function_call" if ptype == "function_call_output" else "custom_tool_call"
            add(
                "response_item",
                {
                    "type": call_type,
                    "name": "shell",
                    "arguments": '{"cmd":"ls"}',
                    "call_id": call_id,
                },
            )
            add("response_item", {"type": ptype, "call_id": call_id, "output": output})
        add(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "last_token_usage": {"input_tokens": 5000 * (turn + 1), "output_tokens": 50},
                    "model_context_window": 258400,
                },
            },
        )
    return draw(styles).dump(records)


# -- checks ------------------------------------------------------------------------------------


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
    untouchable: set[int] = frozenset(),  # type: ignore[assignment]
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
    appended = [decode_line(line.strip()) for line in dst[len(kept) :]]
    assert all(isinstance(record, dict) for record in appended)
    assert not any(record.get("parentUuid") in gone for record in appended)  # type: ignore[union-attr]
    digest = plan.digest
    if provider is Provider.CODEX and target is not None and appended:
        last = appended[-1]
        assert isinstance(last, dict)
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
        card = card_of(appended[0], provider)  # type: ignore[arg-type]
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
        new = new_items[where[line]]
        assert new.active == item.active, line
        assert new.tool_use_ids == item.tool_use_ids, line
        if line in elided:
            assert new.est_tokens < item.est_tokens
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
_REDACTED = re.compile(rb'"\[REDACTED_OUTPUT len=(\d+) sha=([0-9a-f]+)\]"')


def rehydrate(data: bytes) -> bytes:
    """A sanitized rollout's `[REDACTED_OUTPUT len=N sha=S]` outputs back to N bytes of text."""

    def fill(match: re.Match[bytes]) -> bytes:
        size = int(match.group(1))
        line = f"output {match.group(2).decode()} line\n"
        return orjson.dumps((line * (size // len(line) + 1))[:size])

    return _REDACTED.sub(fill, data)
