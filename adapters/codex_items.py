"""Codex rollout lines to TranscriptItems (reference §4): kinds, estimates, elidable outputs;
and the full parse.

Only `response_item` and `compacted` records become items. Everything here runs once per line
of a full parse, so the common shapes take the shortest path. Kept apart from
adapters/codex.py so the running summary state stays small: `parse_file` reads every line,
feeding each record to the state and building its item.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from adapters.full_parse import (
    HelperAnswer,
    ItemRow,
    Span,
    Tally,
    full_parse,
    item_rows,
    items_of,
    read_chunks,
    split_pass,
)
from adapters.jsonl import LineCursor, Record, feed_bytes, torn_tail
from core.limits import (
    ELIDABLE_MIN_BYTES,
    LABEL_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    WEIGH_LATER_MIN_BYTES,
)
from core.model import ItemKind, Provider, Transcript, TranscriptItem
from core.tokens import estimate_tokens

if TYPE_CHECKING:
    from adapters.codex import CodexState

ARGS_MAX_CHARS = 80
OUTPUT_TAIL_CHARS = 180
TEXT_SUMMARY_MAX_CHARS = 200

CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
TEXT_BLOCK_TYPES = frozenset({"input_text", "output_text", "text"})
SUMMARY_BLOCK_TYPES = frozenset({"summary_text"})
ROLE_KINDS = {"user": ItemKind.USER, "assistant": ItemKind.ASSISTANT}

Calls = dict[str, str]
"""call_id -> "name(args)" of the calls seen so far, to name their outputs."""


def cut(text: str, limit: int) -> str:
    """Whitespace collapsed, at most `limit` characters (an ellipsis marks a cut)."""
    quick = limit + limit // 2
    if len(text) > quick:
        # The collapse of a prefix is a prefix of the collapse of the whole (a word it cuts
        # short is a prefix of that word): once longer than `limit` it decides the cut.
        head = " ".join(text[:quick].split())
        if len(head) > limit:
            return head[: limit - 1] + "…"
    flat = " ".join((text if len(text) <= 4 * limit else text[: 4 * limit]).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def content_text(content: Any, types: frozenset[str] = TEXT_BLOCK_TYPES) -> str:
    """The text of a message `content`: a string, or the text of its text blocks."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    parts = []
    for block in content:
        if type(block) is dict and block.get("type") in types:
            text = block.get("text")
            if type(text) is str:
                parts.append(text)
    return parts[0] if len(parts) == 1 else " ".join(parts)


def output_text(output: Any) -> str | None:
    """The elidable text of a tool `output`, or None when it may not be elided at all.

    A string counts whole (a JSON-encoded string too); a block list counts its text blocks,
    and any image block makes the whole output not elidable (the stub would drop the image).
    """
    if type(output) is str:
        return output
    if type(output) is not list:
        return None
    texts: list[str] = []
    for block in output:
        if type(block) is not dict:
            continue
        btype = block.get("type")
        if type(btype) is str and "image" in btype:
            return None
        if btype in TEXT_BLOCK_TYPES:
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
    return "".join(texts)


def call_id_of(payload: dict[str, Any]) -> str | None:
    """Call identity: the first of call_id, tool_call_id, id."""
    value = payload.get("call_id")
    if type(value) is str and value:
        return value
    for key in ("tool_call_id", "id"):
        value = payload.get(key)
        if type(value) is str and value:
            return value
    return None


def tool_name(payload: dict[str, Any]) -> str:
    """The tool name; for local_shell_call the program it runs (never its arguments)."""
    name = payload.get("name")
    if type(name) is str and name:
        return name if len(name) <= LABEL_MAX_CHARS else name[:LABEL_MAX_CHARS]
    action = payload.get("action")
    command = action.get("command") if type(action) is dict else payload.get("command")
    if type(command) is list and command:
        command = command[0]
    words = command.split() if type(command) is str else ()
    if words:
        return cut(words[0], LABEL_MAX_CHARS)
    ptype = payload.get("type")
    return ptype[:LABEL_MAX_CHARS] if type(ptype) is str else ""


def call_args(payload: dict[str, Any]) -> str:
    args = payload.get("arguments")
    if args is None:
        args = payload.get("input")
    if args is None:
        action = payload.get("action")
        args = action.get("command") if type(action) is dict else payload.get("command")
    if type(args) is list:
        args = " ".join(str(a) for a in args)
    return cut(args, ARGS_MAX_CHARS) if type(args) is str else ""


def _result_summary(head: str, text: str | None, output: Any) -> str:
    """`name(args) => …tail of the output`."""
    if type(output) is str and output.startswith('{"output":'):
        # custom_tool_call_output wraps its text in JSON; show the text, not the metadata
        try:
            inner = orjson.loads(output).get("output")
        except (orjson.JSONDecodeError, AttributeError):
            inner = None
        if type(inner) is str:
            text = inner
    if text is None:
        text = content_text(output)
    tail = " ".join(text[-OUTPUT_TAIL_CHARS:].split())
    line = f"{head} => …{tail}" if len(text) > OUTPUT_TAIL_CHARS else f"{head} => {tail}"
    return line if len(line) <= SUMMARY_MAX_CHARS else line[: SUMMARY_MAX_CHARS - 1] + "…"


def note_call(payload: dict[str, Any], calls: Calls) -> tuple[str | None, str, str]:
    """A call's id, tool name and `name(args)`, remembered in `calls` for its output's item."""
    cid = call_id_of(payload)
    name = tool_name(payload)
    head = f"{name}({call_args(payload)})"  # at most 80 + 82 chars: no cut needed
    if cid:
        calls[cid] = head
    return cid, name, head


def response_item(
    index: int, payload: dict[str, Any], calls: Calls, weigh: bool = True
) -> TranscriptItem:
    """One response_item line to an item (still active; compaction is applied afterwards).
    Not `weigh`: no est_tokens (0) nor payload_sha256 yet (see weigh())."""
    ptype = payload.get("type")
    est = estimate_tokens(len(orjson.dumps(payload))) if weigh else 0
    if ptype == "message":
        role = payload.get("role")
        if type(role) is not str:
            role = ""
        return TranscriptItem(
            index,
            ROLE_KINDS.get(role, ItemKind.SYSTEM),
            est,
            label=role,
            summary=cut(content_text(payload.get("content")), TEXT_SUMMARY_MAX_CHARS) or None,
        )
    if ptype in OUTPUT_TYPES:
        cid = call_id_of(payload)
        head = calls.get(cid) if cid else None
        output = payload.get("output")
        text = output_text(output)
        n_bytes = utf8_len(text) if text is not None else 0
        big = n_bytes > ELIDABLE_MIN_BYTES
        return TranscriptItem(
            index,
            ItemKind.TOOL_RESULT,
            est,
            elidable_bytes=n_bytes if big else None,
            elidable_parts=1 if big else 0,
            label=head.partition("(")[0] if head else "",
            summary=_result_summary(head or "?", text, output),
            tool_use_ids=(cid,) if cid else (),
            payload_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest()
            if big and text and weigh
            else None,
        )
    if ptype in CALL_TYPES:
        cid, name, head = note_call(payload, calls)
        return TranscriptItem(
            index,
            ItemKind.TOOL_CALL,
            est,
            label=name,
            summary=head,
            tool_use_ids=(cid,) if cid else (),
        )
    if ptype == "reasoning":
        steps = content_text(payload.get("summary"), SUMMARY_BLOCK_TYPES)
        return TranscriptItem(
            index,
            ItemKind.REASONING,
            est,
            label="reasoning",
            summary=cut(steps, TEXT_SUMMARY_MAX_CHARS) or None,
        )
    if ptype == "agent_message":
        message = payload.get("message", payload.get("content"))
        return TranscriptItem(
            index,
            ItemKind.ASSISTANT,
            est,
            label="assistant",
            summary=cut(content_text(message), TEXT_SUMMARY_MAX_CHARS) or None,
        )
    label = ptype[:LABEL_MAX_CHARS] if type(ptype) is str else ""
    return TranscriptItem(index, ItemKind.META, est, label=label)


def compacted_item(index: int, payload: dict[str, Any], weigh: bool = True) -> TranscriptItem:
    """A `compacted` line: one ToolResult whose elidable parts are its big history outputs.
    Not `weigh`: as for response_item."""
    history = payload.get("replacement_history")
    whole = history if isinstance(history, list) else payload
    est = estimate_tokens(len(orjson.dumps(whole))) if weigh else 0
    total = 0
    texts: list[str] = []
    for entry in history if isinstance(history, list) else ():
        if not isinstance(entry, dict) or "output" not in entry:
            continue
        text = output_text(entry["output"])
        if text is None:
            continue
        n_bytes = utf8_len(text)
        if n_bytes > ELIDABLE_MIN_BYTES:
            total += n_bytes
            texts.append(text)
    message = payload.get("message")
    return TranscriptItem(
        index,
        ItemKind.TOOL_RESULT,
        est,
        elidable_bytes=total or None,
        elidable_parts=len(texts),
        label="compacted",
        summary=cut(message, TEXT_SUMMARY_MAX_CHARS)
        if isinstance(message, str) and message
        else None,
        payload_sha256=hashlib.sha256("".join(texts).encode("utf-8")).hexdigest()
        if texts and weigh
        else None,
    )


def deactivate(items: list[TranscriptItem], before_line: int) -> None:
    """Everything before the newest compaction is out of the model's context."""
    for item in items:
        if item.line_index >= before_line:
            break
        item.active = False
        item.est_tokens = 0
        item.elidable_bytes = None
        item.elidable_parts = 0
        item.payload_sha256 = None


def parse_file(path: str, new_state: Callable[[str], CodexState]) -> Transcript:
    """Every line of a rollout: its items, and a state fed the same records (for a big file
    a Helper feeds the state and builds the items of its last eighth: see
    adapters.full_parse)."""
    got = full_parse(
        Provider.CODEX, path, new_state, _helper_pass, _items_pass, _finish, weigh, ITEMS_HEAD_SHARE
    )
    if got is None:  # changed in place: read again, every item weighed as it is built
        eager = partial(_items_pass, later=False)
        got = full_parse(Provider.CODEX, path, new_state, _helper_pass, eager, _finish, weigh, 1.0)
    assert got is not None  # (nothing is left to weigh later)
    return got


def weigh(item: TranscriptItem, record: Record) -> bool:
    """full_parse.Weigh for an item built with weigh=False."""
    rtype = record.get("type")
    payload = record.get("payload")
    if type(payload) is not dict:
        return False
    if rtype == "response_item":
        again = response_item(item.line_index, payload, {})
    elif rtype == "compacted":
        again = compacted_item(item.line_index, payload)
    else:
        return False
    if (again.kind, again.elidable_bytes, again.elidable_parts) != (
        item.kind,
        item.elidable_bytes,
        item.elidable_parts,
    ):
        return False
    item.est_tokens = again.est_tokens
    item.payload_sha256 = again.payload_sha256
    return True


def _weighs_later(fd: int) -> bool:
    return os.fstat(fd).st_size >= WEIGH_LATER_MIN_BYTES


ITEMS_HEAD_SHARE = 0.88
"""The share of a big rollout whose items this process builds while a Helper feeds the state
(and builds the rest's items): about where the two finish together (bench row d2). Counted
instructions put it at 0.91 (this side: 1.19 G per 30 MB, the state 1.05 G, the tail's items
0.35 G); this side also unpickles and joins the tail's items."""
CodexTail = tuple[list[ItemRow], int, list[Span]]
"""The tail's items (as rows), the line of its newest compaction (-1: none), and its items'
lines when they were not weighed (else [])."""
Built = tuple[list[TranscriptItem], list[Span]]
"""Items, and their lines when they were not weighed (else [])."""


def _helper_pass(fd: int, size: int, path: str, split: int) -> HelperAnswer[CodexState, CodexTail]:
    """A full parse's other side, in a Helper: a state fed every record of the file's first
    `size` bytes, and the items from `split` on (see adapters.full_parse). A module-level
    function: a spawned Helper imports it by module and name."""
    from adapters.codex import CodexState  # (adapters.codex imports this module)

    state = CodexState(path)
    feed = state.feed_parts
    calls: Calls = {}
    items: list[TranscriptItem] = []
    spans: list[Span] = []
    compactions: list[int] = []
    later = _weighs_later(fd)
    lines = LineCursor(offset=split)  # the tail's, for where its lines start

    def head(index: int, _length: int, record: Record) -> None:
        rtype = record.get("type")
        payload = record.get("payload")
        feed(record, rtype, payload)
        # the calls the tail's outputs are labelled with
        if (
            isinstance(payload, dict)
            and rtype == "response_item"
            and payload.get("type") in CALL_TYPES
        ):
            note_call(payload, calls)

    def tail(index: int, length: int, record: Record) -> None:
        rtype = record.get("type")
        payload = record.get("payload")
        feed(record, rtype, payload)
        if type(payload) is dict:
            if rtype == "response_item":
                items.append(response_item(index, payload, calls, not later))
            elif rtype == "compacted":
                items.append(compacted_item(index, payload, not later))
                compactions.append(index)
            else:
                return
            if later:
                spans.append((lines.line_start(length), length))

    first, whole = split_pass(head, tail, fd, size, split, lines)
    newest = compactions[-1] if compactions else -1
    rest = (item_rows(items), newest, spans) if split < size else None
    return state, rest, first, whole


def _finish(
    built: Built, tail: CodexTail | None, state: CodexState
) -> tuple[list[TranscriptItem], list[Span], CodexState]:
    items, spans = built
    if tail is not None:
        rows, newest_compaction, tail_spans = tail
        if spans or tail_spans:  # (-1, 0): weighed already
            spans = (spans or [(-1, 0)] * len(items)) + (tail_spans or [(-1, 0)] * len(rows))
        items.extend(items_of(rows))
        if newest_compaction >= 0:
            deactivate(items, newest_compaction)
    return items, spans, state


_LEADING_TYPE = re.compile(rb'\{"timestamp":"[^"\\]*","type":"([a-z_]+)"')
"""A rollout line's first two members as Codex writes them. Only a string without quotes or
backslashes fits between those quotes, so a match is the record's own top-level type (its
first: a parser keeps the last of a repeated key, see items_loads)."""
_ITEM_TYPES = frozenset({b"response_item", b"compacted"})
_ITEM_TYPE_VALUES = (b'"type":"response_item"', b'"type":"compacted"')


def items_loads(line: bytes) -> Any:
    """orjson.loads for an items pass that a Helper's state pass backs: a line whose own type
    makes no item (event_msg, turn_context: over half of a rollout's bytes) stands in as just
    that type, undecoded. A damaged one then counts as a record here but as a bad line in
    the Helper, so full_parse sees the tallies differ and parses again, decoding everything."""
    found = _LEADING_TYPE.match(line)
    if found is not None and found[1] not in _ITEM_TYPES:
        end = found.end()
        # a repeated "type" key naming an item type (never written by Codex; orjson would
        # keep it) sends the line to the real parser
        if all(line.find(value, end) < 0 for value in _ITEM_TYPE_VALUES):
            return {"type": found[1].decode()}
    return orjson.loads(line)


def _items_pass(
    fd: int, size: int, state: CodexState | None, later: bool | None = None
) -> tuple[Built, Tally]:
    """Items of every record (and `state` fed them, unless None), the newest compaction applied.
    Without a state, lines that make no item are not decoded (see items_loads). The items of a
    big file (or any, when `later`) are not weighed yet: their lines are said."""
    feed = state.feed_parts if state is not None else None
    loads = orjson.loads if state is not None else items_loads
    weigh = not (_weighs_later(fd) if later is None else later)
    lines = LineCursor()
    items: list[TranscriptItem] = []
    spans: list[Span] = []
    append = items.append
    calls: Calls = {}
    tally = Tally()
    bad = tally.bad
    records = 0
    last_compaction = -1
    for chunk in read_chunks(fd, size):
        tally.size += len(chunk)
        for index, length, record in feed_bytes(lines, chunk, not chunk, loads):
            if not isinstance(record, dict):  # (isinstance of an Enum class is slower)
                bad[record.value] += 1
                continue
            records += 1
            rtype = record.get("type")
            payload = record.get("payload")
            if feed is not None:
                feed(record, rtype, payload)
            if type(payload) is dict:
                if rtype == "response_item":
                    append(response_item(index, payload, calls, weigh))
                elif rtype == "compacted":
                    append(compacted_item(index, payload, weigh))
                    last_compaction = index
                else:
                    continue
                if not weigh:
                    spans.append((lines.line_start(length), length))
    if last_compaction >= 0:
        deactivate(items, last_compaction)
    tally.records = records
    tally.torn = torn_tail(lines)
    return (items, spans), tally
