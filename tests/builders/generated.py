"""Generated Claude / Codex transcript files, for the property tests of the rewrite and the
readers: what real files hold (uuid chains with dead branches and progress noise, parallel
tool results, block-list outputs with images, Codex compactions), in compact or spaced JSON,
with LF or CRLF endings, with or without a final newline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson
from hypothesis import strategies as st

from tests.builders.claude import envelope as claude_envelope
from tests.builders.codex import record as codex_record
from tests.builders.common import Record

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
        return claude_envelope(
            kind,
            parent,
            session,
            "/home/u/proj",
            message=message,
            uuid=f"u{counter[0]:04d}",
            timestamp=_ts(counter[0]),
            **extra,
        )

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
        n = len(records)
        records.append(codex_record(kind, payload, _ts(n), n if ordinals else None))

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
