"""Preserved thinking in a Claude fork's records (the rule: core.thinking).

From the first API message a rewrite changes on, a fork holds no `thinking` or
`redacted_thinking` block: a record of thinking only is left out (b"", its children hung off
its parent: Claude Code rebuilds the conversation by parentUuid), a record holding other
blocks too loses its thinking blocks. Records before that message stay byte-identical. The
real Claude Code 2.1.328 resumes such a fork and sends no thinking after the change
(tests/e2e/test_claude_thinking.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ....core.model import ItemKind
from ...files.jsonl import Record, decode_line
from ..rewrite_records import encode_line, kept_ancestor, line_ending
from .items import THINKING_TYPES

LEFT_OUT_KINDS = frozenset({ItemKind.REASONING})
"""Items a plan elides by leaving their record out, not by a stub."""
_THINKING_MARK = re.compile(rb'"type"\s*:\s*"(?:redacted_)?thinking"')
_PARENT_FIELD = re.compile(rb'"(?:parentUuid|leafUuid)"\s*:\s*"([^"\\]*)"')


def _message_id(record: Record) -> str | None:
    message = record.get("message")
    msg_id = message.get("id") if type(message) is dict else None
    return msg_id if type(msg_id) is str and msg_id else None


def change_start(lines: Sequence[bytes], first: int) -> int:
    """The first line of the API message holding line `first`: an assistant response is
    written one content block a record, all of one message.id."""
    record = decode_line(lines[first].strip())
    msg_id = _message_id(record) if isinstance(record, dict) else None
    start = first
    if msg_id is None:
        return start
    for index in range(first - 1, -1, -1):
        record = decode_line(lines[index].strip())
        if not isinstance(record, dict) or record.get("type") != "assistant":
            break
        if _message_id(record) != msg_id:
            break
        start = index
    return start


def _without_thinking(record: Record) -> list[Any] | None:
    """The record's content blocks but its thinking; None when it holds none."""
    if record.get("type") != "assistant":
        return None
    message = record.get("message")
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list:
        return None
    kept = [b for b in content if not (type(b) is dict and b.get("type") in THINKING_TYPES)]
    return kept if len(kept) < len(content) else None


def prefix_safe(
    lines: Sequence[bytes], first: int, marked: Sequence[int] | None = None
) -> tuple[dict[int, bytes], dict[str, str | None]]:
    """The lines to replace (b"" for a record left out) so that no thinking stands at or
    after the message holding line `first`, the first line a rewrite changed; `lines` are
    the candidate's, with the rewrite's lines in place (stubs: they add no thinking), and
    `marked` thinking_lines() of its source when the caller keeps it. Also each left-out
    uuid's parent."""
    start = change_start(lines, first)
    updates: dict[int, bytes] = {}
    parents: dict[str, str | None] = {}
    suspects = range(start, len(lines)) if marked is None else [i for i in marked if i >= start]
    for index in suspects:
        line = lines[index]
        if not _THINKING_MARK.search(line):
            continue
        record = decode_line(line.strip())
        if not isinstance(record, dict):
            continue
        kept = _without_thinking(record)
        if kept is None:
            continue
        if not kept:
            uuid, parent = record.get("uuid"), record.get("parentUuid")
            if type(uuid) is str:
                parents[uuid] = parent if type(parent) is str else None
            updates[index] = b""
        else:
            record["message"]["content"] = kept
            updates[index] = encode_line(record, line_ending(line))
    if parents:
        for index in range(start, len(lines)):
            line = updates.get(index, lines[index])
            if line and _names_any(line, parents):
                relinked = decode_line(line.strip())
                if isinstance(relinked, dict):
                    for key in ("parentUuid", "leafUuid"):
                        value = relinked.get(key)
                        if type(value) is str and value in parents:
                            relinked[key] = kept_ancestor(parents, value)
                    updates[index] = encode_line(relinked, line_ending(line))
    return updates, parents


def _names_any(line: bytes, parents: dict[str, str | None]) -> bool:
    return any(
        match.group(1).decode("utf-8", "replace") in parents
        for match in _PARENT_FIELD.finditer(line)
    )


def _seen(line: bytes) -> tuple[bytes, str | None, bool] | None:
    """What the model sees of a line (its role and content, serialised), its message.id and
    whether it holds thinking; None for a record the client does not send."""
    record = decode_line(line.strip()) if line else None
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
        return None
    message = record.get("message")
    if type(message) is not dict:
        return None
    content = message.get("content")
    try:
        key = encode_line({"t": record.get("type"), "c": content}, b"")
    except (TypeError, ValueError):  # too deep to write: compared as changed
        key = b""
    thinking = type(content) is list and any(
        type(b) is dict and b.get("type") in THINKING_TYPES for b in content
    )
    return key, _message_id(record), thinking


def thinking_lines(lines: Sequence[bytes]) -> list[int]:
    """The lines that may hold thinking (a thinking block's type field), in order: what
    thinking_after_change reads of a source, found once a source."""
    return [index for index, line in enumerate(lines) if _THINKING_MARK.search(line)]


def thinking_after_change(
    lines: Sequence[bytes],
    replaced: Mapping[int, bytes],
    appended: Sequence[bytes],
    marked: Sequence[int] | None = None,
) -> int | None:
    """The first line (a source line index; len(lines) + k for the k-th appended line) of
    a fork, given as its source's `lines` with `replaced` ones (b"": left out) and `appended`
    ones, that holds thinking at or after the first message the model sees changed; None
    when there is none (verify's thinking_after_change). `marked`: thinking_lines(lines),
    when the caller keeps it."""
    changed = (i for i in sorted(replaced) if _seen(replaced[i]) != _seen(lines[i]))
    first = next(changed, None)
    if first is None:  # the appended card: nothing is sent after it yet
        return None
    origin = _seen(lines[first])
    start = first
    msg_id = origin[1] if origin is not None else None
    while msg_id is not None and start > 0:
        earlier = _seen(replaced.get(start - 1, lines[start - 1]))
        if earlier is None or earlier[1] != msg_id:
            break
        start -= 1
    source = thinking_lines(lines) if marked is None else marked
    suspects = sorted({*(i for i in source if i >= start), *(i for i in replaced if i >= start)})
    for index in suspects:
        line = replaced.get(index, lines[index])
        if _THINKING_MARK.search(line) and (seen := _seen(line)) is not None and seen[2]:
            return index
    for k, line in enumerate(appended):
        if _THINKING_MARK.search(line) and (seen := _seen(line)) is not None and seen[2]:
            return len(lines) + k
    return None
