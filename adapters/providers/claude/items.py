"""Claude Code records to TranscriptItems (the full parse), and the live-branch marking.

Kept apart from adapters/providers/claude/state.py so the running summary state stays small; the full parse
itself (every line to the state and to an `ItemBuilder`) is adapters/providers/claude/parse.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from ....core.limits import (
    CHARS_PER_TOKEN,
    ELIDABLE_MIN_BYTES,
    LABEL_MAX_CHARS,
    SUMMARY_MAX_CHARS,
)
from ....core.model import ItemKind, TranscriptItem
from ....core.paths import call_paths, is_file_view
from ....core.text import collapse, cut, utf8_len
from ...files.jsonl import serialized_len
from .inputs import EDIT_CONTENT, content_bytes

PROMPT_SUMMARY_CHARS = 200
TOOL_INPUT_CHARS = 80
TOOL_OUTPUT_TAIL_CHARS = 120
ITEM_KINDS = frozenset({"user", "assistant", "system", "attachment", "tool_use", "tool_result"})
"""Record types that become an item each (see ItemBuilder.add)."""
DEAD_SUFFIX = " (dead branch)"
_UNKNOWN_TOOL: tuple[str, str, tuple[str, ...], bool] = ("tool", "", (), False)
SIDECHAIN_SUFFIX = " (sidechain)"
MEDIA_TYPES = frozenset({"image", "document"})
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
"""Content blocks of the model's reasoning (kept by the provider, checked by preserved
thinking: core.thinking)."""


def _collapsed_tail(text: str, limit: int) -> str:
    """Whitespace collapsed, its last `limit` characters; "…" first when there was more."""
    quick = limit + limit // 2
    if len(text) > quick:
        # as in collapse(): the collapse of a suffix is a suffix of the collapse of the whole
        end = " ".join(text[-quick:].split())
        if len(end) > limit:
            return "…" + end[-limit:]
    tail = " ".join(text.split())
    return tail if len(tail) <= limit else "…" + tail[-limit:]


def user_text(content: Any) -> str | None:
    """A user message's own text: a string content, or its `text` blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def media_bytes(block: Any) -> int:
    """Bytes of an image or document block's data (its base64), 0 for any other block."""
    if type(block) is not dict or block.get("type") not in MEDIA_TYPES:
        return 0
    source = block.get("source")
    data = source.get("data") if type(source) is dict else None
    return len(data) if type(data) is str else 1


def _result_texts(inner: Any) -> tuple[list[str], int]:
    """The texts of a tool_result block's (non-string) content, and the bytes of its images
    and documents (media_bytes)."""
    texts: list[str] = []
    media = 0
    if isinstance(inner, list):
        for sub in inner:
            if not isinstance(sub, dict):
                continue
            kind = sub.get("type")
            if kind == "text" and isinstance(sub.get("text"), str):
                texts.append(sub["text"])
            elif kind in MEDIA_TYPES:
                media += media_bytes(sub)
    return texts, media


def estimate(record: dict[str, Any]) -> int:
    """An item's est_tokens: its message (else the record) serialised, a token per 4 bytes;
    0 for a record nested too deep to serialise: it is left as it is, never elided."""
    size = serialized_len(record.get("message", record))
    # estimate_tokens() of a length that is never 0: a serialisation has a byte at least
    return -(-size // CHARS_PER_TOKEN) if size is not None else 0


def _shown_input(value: Any) -> str:
    """A tool input as JSON, cut to TOOL_INPUT_CHARS; only a bounded prefix is decoded."""
    try:
        data = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: odd values are shown as nothing
        return ""
    # 4 bytes a character at most: this prefix holds more than TOOL_INPUT_CHARS characters
    # whenever the whole does not fit (a character torn at its end is dropped).
    return cut(data[: 4 * TOOL_INPUT_CHARS + 4].decode("utf-8", "ignore"), TOOL_INPUT_CHARS)


@dataclass(slots=True)
class Siblings:
    """What branch marking reads besides the parent links (rescue_siblings), in
    parallel lists, in file order: no tuple an entry (a big file has a hundred thousand to
    make and free)."""

    msg_uuids: list[str | None] = field(default_factory=list)
    """The assistant items with a message.id (streaming-split siblings share one) ..."""
    msg_keys: list[str] = field(default_factory=list)
    """... and that id."""
    call_uuids: list[str | None] = field(default_factory=list)
    """The assistant items calling tools ..."""
    call_ids: list[tuple[str, ...]] = field(default_factory=list)
    """... and the tool_use ids."""
    answer_uuids: list[str | None] = field(default_factory=list)
    """The items whose tool_result blocks answer tool_use ids ..."""
    answer_parents: list[str | None] = field(default_factory=list)
    """... their parentUuid ..."""
    answer_ids: list[tuple[str, ...]] = field(default_factory=list)
    """... and those ids."""

    def copy(self) -> Siblings:
        return Siblings(
            list(self.msg_uuids), list(self.msg_keys), list(self.call_uuids),
            list(self.call_ids), list(self.answer_uuids), list(self.answer_parents),
            list(self.answer_ids),
        )  # fmt: skip


class ItemBuilder:
    """Builds one item per conversation line; remembers what branch marking needs."""

    __slots__ = ("inputs", "items", "labels", "siblings", "sidechain", "tools", "uuids")

    # Branch marking reads what it needs from these lists, not from the items: they were
    # allocated across the whole parse, and touching each again costs a cache miss.
    def __init__(self) -> None:
        self.items: list[TranscriptItem] = []
        self.labels: dict[str, str] = {}
        self.uuids: list[str | None] = []  # the items' uuids
        self.tools: dict[str, tuple[str, str, tuple[str, ...], bool]] = {}
        """tool_use id -> (name, input cut to TOOL_INPUT_CHARS, the paths it names, whether
        it only shows files)."""
        self.inputs: dict[str, tuple[int, int]] = {}
        """tool_use id -> (item position, content bytes) of the edit calls not answered yet."""
        self.siblings = Siblings()
        self.sidechain: set[int] = set()
        """item positions of sidechain records in a main file."""

    def add(
        self,
        index: int,
        record: dict[str, Any],
        kind: Any,
        uuid: Any,
        parent: Any,
    ) -> None:
        """One record, given its type, uuid and parentUuid (in file order): an item when its
        type is one of ITEM_KINDS."""
        uuid = uuid if type(uuid) is str else None
        parent = parent if type(parent) is str else None
        if kind == "assistant":
            item = self._assistant(index, record, uuid)
        elif kind == "user":
            item = self._user(index, record, uuid, parent)
        elif kind == "system":
            subtype = record.get("subtype")
            label = f"system:{subtype}" if isinstance(subtype, str) else "system"
            content = record.get("content")
            summary = collapse(content, PROMPT_SUMMARY_CHARS) if isinstance(content, str) else None
            item = TranscriptItem(
                index, ItemKind.SYSTEM, self._estimate(record), label=label, summary=summary
            )
        elif kind == "attachment":
            item = TranscriptItem(index, ItemKind.META, self._estimate(record), label="meta")
        elif kind == "tool_use":
            item = self._drift_call(index, record)
        elif kind == "tool_result":
            name = record.get("name")
            label = name if isinstance(name, str) and name else "tool_result"
            item = TranscriptItem(index, ItemKind.TOOL_RESULT, self._estimate(record), label=label)
        else:  # not in ITEM_KINDS
            return  # bookkeeping (progress, summary, last-prompt, snapshots, ...)
        item.uuid = uuid
        item.parent_uuid = parent
        label = item.label
        if len(label) > LABEL_MAX_CHARS:
            label = cut(label, LABEL_MAX_CHARS)
        # One string a label (a handful of tool names), not one a record.
        item.label = self.labels.setdefault(label, label)
        if record.get("isSidechain") is True:
            self.sidechain.add(len(self.items))
        self.items.append(item)
        self.uuids.append(uuid)

    def _estimate(self, record: dict[str, Any]) -> int:
        return estimate(record)

    def _tool(self, block: dict[str, Any]) -> tuple[str, str, str, tuple[str, ...]]:
        """Remember a tool_use block: (id or "", name, input cut to TOOL_INPUT_CHARS, the
        paths its input names)."""
        tid = block.get("id")
        name = block.get("name")
        name = name if isinstance(name, str) and name else "tool"
        tool_input = block.get("input")
        content = EDIT_CONTENT.get(name)
        if content is not None and type(tool_input) is dict:  # shown by its path, not its text
            shown = _shown_input({k: v for k, v in tool_input.items() if k not in content})
        else:
            shown = _shown_input(tool_input)
        paths = call_paths(tool_input)
        if not isinstance(tid, str):
            return "", name, shown, paths
        self.tools[tid] = (name, shown, paths, is_file_view(name, tool_input, paths))
        return tid, name, shown, paths

    def _assistant(self, index: int, record: dict[str, Any], uuid: str | None) -> TranscriptItem:
        message = record.get("message")
        content = message.get("content") if type(message) is dict else None
        text: str | None = content if type(content) is str else None
        names: list[str] = []
        ids: list[str] = []
        calls: list[str] = []
        paths: list[str] = []
        thinking = others = 0
        if type(content) is list:
            for block in content:
                if type(block) is not dict:
                    continue
                btype = block.get("type")
                if btype in THINKING_TYPES:
                    thinking += 1
                    continue
                others += 1
                if btype == "text":
                    if not text:
                        value = block.get("text")
                        if type(value) is str:
                            text = value.strip()
                elif btype == "tool_use":
                    tid, name, shown, named = self._tool(block)
                    paths.extend(p for p in named if p not in paths)
                    if tid and name in EDIT_CONTENT:
                        size = content_bytes(name, block.get("input"))
                        if size > ELIDABLE_MIN_BYTES:  # this item's, once the edit is made
                            self.inputs[tid] = (len(self.items), size)
                    if tid:
                        ids.append(tid)
                    if name not in names:
                        names.append(name)
                        calls.append(f"{name}({shown})")
        if text and not text.isspace():
            summary: str | None = collapse(text, SUMMARY_MAX_CHARS)
        else:
            summary = cut("; ".join(calls), SUMMARY_MAX_CHARS) if calls else None
        est = self._estimate(record)
        if thinking and not others:
            # A record of thinking only (the streaming split writes one a block): a fork may
            # leave the whole record out (core.thinking), so all of it is what it frees.
            item = TranscriptItem(
                index,
                ItemKind.REASONING,
                est,
                elidable_bytes=est * CHARS_PER_TOKEN,
                elidable_parts=1,
                label="thinking",
            )
        else:
            item = TranscriptItem(
                index,
                ItemKind.ASSISTANT,
                est,
                label="+".join(names) or "assistant",
                summary=summary,
                tool_use_ids=tuple(ids),
                paths=tuple(paths),
            )
        siblings = self.siblings
        if type(message) is dict:
            msg_id = message.get("id")
            if type(msg_id) is str:
                siblings.msg_uuids.append(uuid)
                siblings.msg_keys.append(msg_id)
        if ids:
            siblings.call_uuids.append(uuid)
            siblings.call_ids.append(item.tool_use_ids)
        return item

    def _user(
        self, index: int, record: dict[str, Any], uuid: str | None, parent: str | None
    ) -> TranscriptItem:
        # First: serialising leaves non-ASCII strings their UTF-8, which encode() then reuses.
        est = self._estimate(record)
        message = record.get("message")
        content = message.get("content") if type(message) is dict else None
        results = (
            [b for b in content if type(b) is dict and b.get("type") == "tool_result"]
            if type(content) is list
            else None
        )
        if not results:
            text = user_text(content)
            summary = collapse(text, PROMPT_SUMMARY_CHARS) if text else None
            media = sum(map(media_bytes, content)) if type(content) is list else 0
            big = media > ELIDABLE_MIN_BYTES  # a pasted screenshot: its picture may go
            return TranscriptItem(
                index,
                ItemKind.USER,
                est,
                elidable_bytes=media if big else None,
                elidable_parts=1 if big else 0,
                label="user",
                summary=summary,
                image_bytes=media,
            )
        total = parts = 0
        media_total = 0
        payload: list[str | bytes] = []
        ids: list[str] = []
        names: list[str] = []
        shown: list[str] = []
        paths: list[str] = []
        views: list[bool] = []
        failed = False
        tools = self.tools
        window = TOOL_OUTPUT_TAIL_CHARS * 4  # enough to survive whitespace collapsing
        for block in results:
            tid = block.get("tool_use_id")
            failed = failed or block.get("is_error") is True
            if type(tid) is str:
                if tid in self.inputs:
                    self._edit_done(tid, block.get("is_error") is True)
                name, given, named, view = tools.get(tid, _UNKNOWN_TOOL)
                paths.extend(p for p in named if p not in paths)
                ids.append(tid)
            else:
                name, given, _named, view = _UNKNOWN_TOOL
            views.append(view)
            if name not in names:
                names.append(name)
            inner = block.get("content")
            if type(inner) is str:  # the common shape, without the lists
                if inner.isascii():
                    size = len(inner)
                    if size:
                        payload.append(inner)
                else:  # encoded once, for its size and its fingerprint
                    data = inner.encode("utf-8", "surrogatepass")
                    size = len(data)
                    payload.append(data)
                if size:
                    parts += 1
                    total += size
                output = inner[-window:]
            else:
                texts, media = _result_texts(inner)
                media_total += media
                size = sum(utf8_len(t) for t in texts)
                if size:
                    parts += 1
                    total += size
                    payload.extend(texts)
                last = texts[-1] if texts else ""
                output = last[-window:] if len(last) >= window else "".join(texts)[-window:]
            shown.append(f"{name}({given}) => {_collapsed_tail(output, TOOL_OUTPUT_TAIL_CHARS)}")
        # An image or document goes as a text stub naming it (adapters.providers.claude.media).
        elidable = total + media_total > ELIDABLE_MIN_BYTES
        total += media_total
        answered = tuple(ids)
        if ids:
            siblings = self.siblings
            siblings.answer_uuids.append(uuid)
            siblings.answer_parents.append(parent)
            siblings.answer_ids.append(answered)
        return TranscriptItem(
            index,
            ItemKind.TOOL_RESULT if total > ELIDABLE_MIN_BYTES else ItemKind.USER,
            est,
            elidable_bytes=total if elidable else None,
            elidable_parts=parts if elidable else 0,
            label="+".join(names),
            summary=cut("; ".join(shown), SUMMARY_MAX_CHARS),
            tool_use_ids=answered,
            payload_sha256=_sha256(payload) if elidable else None,
            paths=tuple(paths),
            file_view=all(views),
            image_bytes=media_total,
            failed=failed,
        )

    def _edit_done(self, tid: str, failed: bool) -> None:
        """An edit call answered: when it was made, its input's content is elidable (the file
        holds it now); a failed one's is not (no file holds it)."""
        position, size = self.inputs.pop(tid)
        if failed:
            return
        item = self.items[position]
        item.elidable_bytes = (item.elidable_bytes or 0) + size
        item.elidable_parts += 1

    def _drift_call(self, index: int, record: dict[str, Any]) -> TranscriptItem:
        """A top-level `tool_use` record (schema drift): the record is the call."""
        tid, name, shown, paths = self._tool(record)
        return TranscriptItem(
            index,
            ItemKind.TOOL_CALL,
            self._estimate(record),
            label=name,
            summary=cut(f"{name}({shown})", SUMMARY_MAX_CHARS),
            tool_use_ids=(tid,) if tid else (),
            paths=paths,
        )

    def mark_branch(self, parents: dict[str, str | None], leaf: str | None, subagent: bool) -> None:
        """Deactivate records off the live branch (and sidechains of a main file)."""
        live = walk(parents, leaf)
        rescue_siblings(live, self.siblings)
        items = self.items
        sidechain = () if subagent else self.sidechain
        # Most items of a long session are dead (every compaction starts a new chain), and
        # their labels repeat: each dead label is worked out once.
        dead_labels: dict[str, str] = {}
        for pos, uuid in enumerate(self.uuids):
            if pos in sidechain:
                deactivate(items[pos], SIDECHAIN_SUFFIX)
            elif uuid is not None and uuid not in live:
                item = items[pos]
                label = item.label
                dead = dead_labels.get(label)
                if dead is None:
                    dead = dead_labels[label] = _suffixed(label, DEAD_SUFFIX)
                # deactivate, inline, setting only what is set (few are elidable)
                item.active = False
                item.label = dead
                if item.est_tokens:
                    item.est_tokens = 0
                if item.elidable_bytes is not None:
                    item.elidable_bytes = None
                    item.elidable_parts = 0
                    item.payload_sha256 = None


def rescue_siblings(live: set[str], sib: Siblings) -> None:
    """Bring back records the parent walk misses although they are in the live context (the
    items' branch marking and verify's pairing both read the live branch so).

    Claude Code chains the streaming-split records of one API response (one per content
    block), and each tool_result hangs off the record holding its tool_use; the next turn
    continues from one of them only. The API needs every tool_use answered, so the
    siblings are context: an assistant record sharing a live message.id, and a tool_result
    (child of a live record) answering a live tool_use that nothing live answers yet.
    A real dead branch (a rewind) answers an already answered tool_use, or hangs off a
    dead record, so it stays dead.
    """
    msgs = sib.msg_uuids, sib.msg_keys
    live_msgs = {msg for uuid, msg in zip(*msgs, strict=True) if uuid in live}
    for uuid, msg in zip(*msgs, strict=True):
        if uuid is not None and uuid not in live and msg in live_msgs:
            live.add(uuid)
    open_calls: set[str] = set()
    for uuid, ids in zip(sib.call_uuids, sib.call_ids, strict=True):
        if uuid in live:
            open_calls.update(ids)
    for uuid, ids in zip(sib.answer_uuids, sib.answer_ids, strict=True):
        if uuid in live:
            open_calls.difference_update(ids)
    answers = sib.answer_uuids, sib.answer_parents, sib.answer_ids
    for uuid, parent, ids in zip(*answers, strict=True):
        if (
            uuid is not None
            and uuid not in live
            and parent in live
            and all(i in open_calls for i in ids)
        ):
            live.add(uuid)
            open_calls.difference_update(ids)


def walk(parents: dict[str, str | None], leaf: str | None) -> set[str]:
    """uuids from `leaf` back to its root; the step bound is the cycle guard."""
    seen: set[str] = set()
    node = leaf
    for _ in range(len(parents) + 1):
        if node is None or node in seen or node not in parents:
            break
        seen.add(node)
        node = parents[node]
    return seen


def deactivate(item: TranscriptItem, suffix: str) -> None:
    """Out of the live context, its label saying why."""
    item.active = False
    item.est_tokens = 0
    item.elidable_bytes = None
    item.elidable_parts = 0
    item.payload_sha256 = None
    item.label = _suffixed(item.label, suffix)


def _suffixed(label: str, suffix: str) -> str:
    return cut(label, LABEL_MAX_CHARS - len(suffix)) + suffix


def _sha256(texts: list[str | bytes]) -> str:
    """The SHA-256 of the texts' UTF-8 (some given already encoded), one after another."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()
