"""The Claude Code half of adapters.rewrite.apply: tool_result elision, the state card, sessionId.

Elision touches only the `content` of the `tool_result` blocks in a user record's
`message.content`, or the content an edit tool's input carries in an assistant record's
`tool_use` blocks (adapters.providers.claude.inputs); the blocks themselves (their ids, the
file paths) stay, so every tool call still has its answer. The card is a `user` record hung off the live leaf, followed by the
`last-prompt` / `mode` tail the reference writes: without it `claude --resume` does not see
the conversation. When the branch ends on tool calls that got no result (an interrupted
session), the card answers them first, as the client would on resume: Claude Code drops a
call the next user record does not answer.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from typing import Any

from ....core.limits import LAST_PROMPT_MAX_CHARS
from ....core.model import BadLine, Transcript
from ...files.jsonl import Record, decode_line
from ..interface import CardScanner, ForkUsage, RewriteCode, RewriteError, StubMaker
from ..rewrite_records import derived_uuid, encode_line, line_ending, stub_output, text_positions
from .inputs import stub_content
from .media import stub_media
from .state import ClaudeState, usage_of, usage_total
from .thinking import (
    LEFT_OUT_KINDS as LEFT_OUT_KINDS,  # the half's, as the next two
)
from .thinking import prefix_safe as prefix_safe
from .thinking import thinking_after_change as thinking_after_change
from .thinking import thinking_lines as thinking_lines

TEXT_TYPES = frozenset({"text"})
INTERRUPTED_RESULT = (
    "[tool call interrupted: the session ended before its result was recorded; check "
    "whether it took effect before relying on it or running it again]"
)
"""What the card answers an unanswered call of the branch's end with."""
DEFAULT_MODE = "normal"
"""The value real `mode` records hold, used when the file has none to copy."""
_HEAD_KEYS = ("isSidechain", "agentId", "userType", "entrypoint", "cwd")
_TAIL_KEYS = ("version", "gitBranch", "slug")
_PROMPT_KEYS = ("permissionMode", "promptSource")
"""Context fields the card copies from the live branch (where present), in Claude's order."""


def _results(record: Record) -> list[dict[str, Any]] | None:
    """The tool_result blocks of a user record, or None when it is not such a record."""
    if record.get("type") != "user":
        return None
    message = record.get("message")
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list:
        return None
    blocks = [b for b in content if type(b) is dict and b.get("type") == "tool_result"]
    return blocks or None


def _has_image(block: dict[str, Any]) -> bool:
    inner = block.get("content")
    return type(inner) is list and any(
        type(sub) is dict and sub.get("type") == "image" for sub in inner
    )


def has_image_output(record: Record) -> bool:
    return any(_has_image(block) for block in _results(record) or ())


def _stub_edit_inputs(record: Record) -> int:
    """The content of the edit calls of an assistant record stubbed; how many. (The client
    writes one tool_use a record, so the calls stubbed are the one the parse counted.)"""
    message = record.get("message")
    content = message.get("content") if type(message) is dict else None
    stubbed = 0
    for block in content if type(content) is list else ():
        if type(block) is dict and block.get("type") == "tool_use":
            name = block.get("name")
            stubbed += type(name) is str and stub_content(name, block.get("input"))
    return stubbed


def elide_record(record: Record, stub: StubMaker) -> int:
    if record.get("type") == "assistant":
        return _stub_edit_inputs(record)
    results = _results(record)
    if results is None:
        message = record.get("message")
        content = message.get("content") if type(message) is dict else None
        if record.get("type") == "user" and type(content) is list:  # a prompt's pictures
            return stub_media(content)
        raise RewriteError(RewriteCode.UNSUPPORTED_SHAPE, "not a user record with tool results")
    stubbed = 0
    for block in results:
        inner = block.get("content")
        replaced = stub_output(inner, stub, TEXT_TYPES)
        content = inner if replaced is None else replaced
        pictures = stub_media(content) if type(content) is list else 0  # after: text is kept
        block["content"] = content
        stubbed += pictures + (replaced is not None)
    return stubbed


def compacted_lines(
    _lines: Sequence[bytes], _elided: Sequence[int], _card: str, _seed: bytes
) -> dict[int, bytes]:
    """Claude has no compaction record a client rebuilds its history from."""
    raise RewriteError(
        RewriteCode.COMPACTED_UNSAFE, "a compacted record is a Codex rollout's, not Claude's"
    )


def payload_text(record: Record) -> str | None:
    texts: list[str] = []
    for block in _results(record) or ():
        inner = block.get("content")
        if type(inner) is str:
            texts.append(inner)
        elif type(inner) is list:
            texts.append("".join(inner[i]["text"] for i in text_positions(inner, TEXT_TYPES)))
    return "\n".join(text for text in texts if text) or None


def record_id(record: Record) -> str | None:
    """The record's own id, which a fork keeps (its uuid)."""
    uuid = record.get("uuid")
    return uuid if type(uuid) is str and uuid else None


def rewrite_identity_record(record: Record, new_id: str) -> bool:
    if "sessionId" not in record or record["sessionId"] == new_id:
        return False
    record["sessionId"] = new_id
    return True


_SESSION_ID_FIELD = re.compile(rb'("sessionId"\s*:\s*)"[^"\\]*"')


def rewrite_identity_bytes(line: bytes, new_id: str) -> bytes:
    """The line with every `"sessionId": "..."` saying `new_id`, every other byte kept."""
    return _SESSION_ID_FIELD.sub(lambda m: m.group(1) + b'"' + new_id.encode() + b'"', line)


class CardScan:
    """What the card needs from the file: the live leaf (as the parser finds it), the links,
    the newest timestamp and mode, the session id. Fed every record in file order (`feed`),
    then read after `finish`.

    An elide changes only tool_result contents, none of what the scan reads, so the scan of a
    source serves every plan applied to it (adapters.rewrite.lines relies on that).
    """

    def __init__(self, path: str, parsed: Transcript | None = None) -> None:
        # The parse of these lines found the leaf already, unless it skipped a line this scan
        # reads (one too long to parse) or found no leaf: then a state is fed as it did.
        self._parsed = parsed if _leaf_known(parsed) else None
        self._state = ClaudeState(path) if self._parsed is None else None
        self.parents: dict[str, str | None] = {}
        self.where: dict[str, tuple[Any, int]] = {}
        """uuid -> (record type, line)."""
        self.timestamp: str | None = None
        self.mode: str | None = None
        self.leaf: str | None = None
        self.session_id: str | None = None
        self.usage: list[tuple[int, str | None, str, int]] = []
        """Assistant records with usage: (line, uuid, response key, context)."""
        self.tools: dict[str, tuple[bool, tuple[str, ...]]] = {}
        """uuid -> (a user prompt, the tool ids it calls or answers) of user/assistant records."""
        self.answered: set[str] = set()
        """Every tool_use id some user record of the file answers."""

    @classmethod
    def of(cls, lines: Sequence[bytes], path: str) -> CardScan:
        scan = cls(path)
        for index, line in enumerate(lines):
            record = decode_line(line.strip())
            if isinstance(record, dict):
                scan.feed(index, record)
        scan.finish()
        return scan

    def feed(self, index: int, record: Record) -> None:
        kind = record.get("type")
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        if self._state is not None:
            self._state.feed_parts(record, kind, uuid, parent)
        if type(uuid) is str:
            self.parents[uuid] = parent if type(parent) is str else None
            self.where[uuid] = (kind, index)
        stamp = record.get("timestamp")
        if type(stamp) is str and stamp:
            self.timestamp = stamp
        mode = record.get("mode")
        if kind == "mode" and type(mode) is str and mode:
            self.mode = mode
        if (kind == "assistant" or kind == "user") and type(uuid) is str:
            self._tools(kind, uuid, record.get("message"))
        if kind == "assistant":
            message = record.get("message")
            usage = usage_of(message) if type(message) is dict else None
            if usage is not None:
                msg_id = message.get("id") if type(message) is dict else None
                key = msg_id if type(msg_id) is str and msg_id else f"#{index}"
                self.usage.append(
                    (index, uuid if type(uuid) is str else None, key, usage_total(usage))
                )

    def _tools(self, kind: str, uuid: str, message: Any) -> None:
        content = message.get("content") if type(message) is dict else None
        block_type, key = (
            ("tool_use", "id") if kind == "assistant" else ("tool_result", "tool_use_id")
        )
        ids: list[str] = []
        prompt = kind == "user" and type(content) is str
        for block in content if type(content) is list else ():
            if type(block) is not dict:
                continue
            if block.get("type") == block_type and type(block.get(key)) is str:
                ids.append(block[key])
            elif kind == "user" and block.get("type") == "text":
                prompt = True
        if ids or prompt:
            self.tools[uuid] = (prompt and not ids, tuple(ids))
        if kind == "user":
            self.answered.update(ids)

    def open_calls(self) -> list[str]:
        """Tool calls since the live branch's last prompt that no record of the file answers
        (a result may hang off a sibling of the walk: parallel calls)."""
        calls: list[str] = []
        node = self.leaf
        for _ in range(len(self.parents) + 1):  # the step bound is the cycle guard
            if node is None:
                break
            prompt, ids = self.tools.get(node, (False, ()))
            if prompt:
                break
            if self.where.get(node, (None, 0))[0] == "assistant":
                calls[:0] = [tool_id for tool_id in ids if tool_id not in self.answered]
            node = self.parents.get(node)
        return list(dict.fromkeys(calls))

    def finish(self) -> None:
        if self._parsed is not None:
            self.leaf = self._parsed.leaf_uuid
            self.session_id = self._parsed.session_id  # what the card falls back to anyway
        elif self._state is not None:
            self.leaf = self._state.leaf(self.parents)
            self.session_id = self._state.session_id

    def newest_user(self) -> int | None:
        """The line of the newest user record on the live branch."""
        node = self.leaf
        for _ in range(len(self.parents) + 1):  # the step bound is the cycle guard
            if node is None or node not in self.where:
                return None
            kind, line = self.where[node]
            if kind == "user":
                return line
            node = self.parents.get(node)
        return None

    def leaf_line(self) -> int | None:
        return self.where[self.leaf][1] if self.leaf in self.where else None

    def usage_points(self, live: Container[int]) -> list[tuple[int, int]]:
        """(line, reported context) of each response on the live lines: the last record of a
        streaming-split response stands for it."""
        newest: dict[str, tuple[int, int]] = {}
        for line, _uuid, key, total in self.usage:
            if line in live:
                newest[key] = (line, total)
        return sorted(newest.values())

    def newest_response(self) -> list[int]:
        """The lines of the live branch's newest response with usage (all its records)."""
        by_uuid = {uuid: key for _line, uuid, key, _total in self.usage if uuid is not None}
        node = self.leaf
        for _ in range(len(self.parents) + 1):  # the step bound is the cycle guard
            if node is None:
                return []
            key = by_uuid.get(node)
            if key is not None:
                return [line for line, _uuid, k, _total in self.usage if k == key]
            node = self.parents.get(node)
        return []


def _leaf_known(parsed: Transcript | None) -> bool:
    if parsed is None or parsed.leaf_uuid is None or parsed.summary is None:
        return False
    return parsed.summary.bad_reasons.get(BadLine.TOO_LONG.value, 0) == 0


def card_records(
    lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
) -> list[Record]:
    """A user record holding `card` (its parent the live leaf), then last-prompt and mode."""
    return card_records_scanned(CardScan.of(lines, transcript.path), lines, transcript, card, seed)


def _own(scan: CardScanner) -> CardScan:
    """`scan` as this half's CardScan; TypeError for another provider's."""
    if not isinstance(scan, CardScan):
        raise TypeError(f"not a Claude CardScan: {type(scan).__name__}")
    return scan


def card_records_scanned(
    any_scan: CardScanner, lines: Sequence[bytes], transcript: Transcript, card: str, seed: bytes
) -> list[Record]:
    """card_records() with the scan of `lines` already made."""
    scan = _own(any_scan)
    # Context fields come from the newest live user record, else from the leaf.
    sources: list[Record] = []
    for line in (scan.newest_user(), scan.leaf_line()):
        if line is not None:
            record = decode_line(lines[line].strip())
            if isinstance(record, dict):
                sources.append(record)

    def copy(keys: tuple[str, ...], into: Record) -> None:
        for key in keys:
            for source in sources:
                if key in source:
                    into[key] = source[key]
                    break

    session_id = scan.session_id or transcript.session_id
    card_uuid = derived_uuid(seed, "claude-card")
    user: Record = {"parentUuid": scan.leaf}
    copy(_HEAD_KEYS, user)
    user["sessionId"] = session_id
    copy(_TAIL_KEYS, user)
    user["type"] = "user"
    unanswered = scan.open_calls()
    content: str | list[Record] = card
    if unanswered:
        content = [
            {
                "type": "tool_result",
                "tool_use_id": tool_id,
                "content": INTERRUPTED_RESULT,
                "is_error": True,
            }
            for tool_id in unanswered
        ] + [{"type": "text", "text": card}]
    user["message"] = {"role": "user", "content": content}
    user["uuid"] = card_uuid
    if scan.timestamp is not None:
        user["timestamp"] = scan.timestamp
    if any("promptId" in source for source in sources):
        user["promptId"] = derived_uuid(seed, "claude-prompt")
    copy(_PROMPT_KEYS, user)
    last_prompt: Record = {
        "type": "last-prompt",
        "lastPrompt": card[:LAST_PROMPT_MAX_CHARS],
        "leafUuid": card_uuid,
        "sessionId": session_id,
    }
    mode: Record = {"type": "mode", "mode": scan.mode or DEFAULT_MODE, "sessionId": session_id}
    return [user, last_prompt, mode]


def fork_usage(
    any_scan: CardScanner, lines: Sequence[bytes], target: ForkUsage, appended: int
) -> tuple[dict[int, bytes], list[Record]]:
    """The fork's latest usage: the lines of the live branch's newest response with their
    `usage` restated to the fork's context less what follows it (Claude Code decides on
    resume whether to compact from that usage plus its estimate of what follows). Nothing
    is appended."""
    scan = _own(any_scan)
    context, following = target
    restated = max(1, context - following)
    replaced: dict[int, bytes] = {}
    for index in scan.newest_response():
        record = decode_line(lines[index].strip())
        message = record.get("message") if isinstance(record, dict) else None
        usage = message.get("usage") if type(message) is dict else None
        if type(usage) is dict and restate(usage, restated):
            replaced[index] = encode_line(record, line_ending(lines[index]))  # type: ignore[arg-type]
    return replaced, []


_PARTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def restate(usage: dict[str, Any], target: int) -> bool:
    """`usage` changed in place so that its four context parts add up to `target`: the cache
    read (the bulk of a long session's context) takes the difference; when the others alone
    exceed it, all four shrink in proportion. False when it already does, or holds no parts."""
    values = {key: usage[key] for key in _PARTS if type(usage.get(key)) is int}
    if not values or sum(values.values()) == target:
        return False
    read_key = _PARTS[2]
    others = sum(v for k, v in values.items() if k != read_key)
    if others <= target:
        values[read_key] = target - others
    else:
        scale = target / max(1, sum(values.values()))
        values = {key: int(value * scale) for key, value in values.items()}
        values[max(values, key=lambda k: values[k])] += target - sum(values.values())
    creation = values.get(_PARTS[1])
    nested = usage.get("cache_creation")
    if creation is not None and creation != usage.get(_PARTS[1]) and type(nested) is dict:
        _rescale(nested, creation)
    usage.update(values)
    return True


def _rescale(parts: dict[str, Any], total: int) -> None:
    """Integer entries of `parts` scaled to add up to `total`."""
    keys = [key for key, value in parts.items() if type(value) is int]
    old = sum(parts[key] for key in keys)
    if not keys:
        return
    for key in keys:
        parts[key] = parts[key] * total // old if old else 0
    biggest = max(keys, key=lambda key: parts[key])
    parts[biggest] += total - sum(parts[key] for key in keys)
