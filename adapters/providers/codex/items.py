"""Codex rollout lines to TranscriptItems (reference §4): kinds, estimates, elidable outputs.

Only `response_item` and `compacted` records become items. Everything here runs once per line
of a full parse (adapters/providers/codex/parse.py), so the common shapes take the shortest path. Kept
apart from adapters/providers/codex/state.py so the running summary state stays small.
"""

from __future__ import annotations

import hashlib
import re
from contextlib import suppress
from typing import Any

import orjson

from ....core.limits import (
    CODEX_SENT_OUTPUT_MAX_BYTES,
    ELIDABLE_MIN_BYTES,
    LABEL_MAX_CHARS,
    SUMMARY_MAX_CHARS,
)
from ....core.model import ItemKind, TranscriptItem
from ....core.paths import call_paths, is_file_view
from ....core.text import collapse, utf8_len
from ....core.tokens import estimate_tokens
from ...files.jsonl import serialized_len
from .inputs import patch_applied, patch_bytes, patch_files, patched_paths

ARGS_MAX_CHARS = 80
OUTPUT_TAIL_CHARS = 180
TEXT_SUMMARY_MAX_CHARS = 200

CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
TEXT_BLOCK_TYPES = frozenset({"input_text", "output_text", "text"})
SUMMARY_BLOCK_TYPES = frozenset({"summary_text"})
ROLE_KINDS = {"user": ItemKind.USER, "assistant": ItemKind.ASSISTANT}


class Calls:
    """What a parse remembers of the calls seen so far, for their outputs."""

    __slots__ = ("named", "patches")

    def __init__(self) -> None:
        self.named: dict[str, tuple[str, tuple[str, ...], bool]] = {}
        """call_id -> ("name(args)", the paths its arguments name, whether it only shows
        files), to name their outputs."""
        self.patches: dict[str, tuple[TranscriptItem, int]] = {}
        """call_id -> (the call's item, its patch body's bytes) of patch calls not answered
        yet: once the patch applied, the body is elidable."""


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
        return collapse(words[0], LABEL_MAX_CHARS)
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
    return collapse(args, ARGS_MAX_CHARS) if type(args) is str else ""


_EXIT = re.compile(r"(?:Exit code: |Process exited with code |exit code: )(-?\d+)")
_FAILED_OUTPUTS = ("apply_patch verification failed", "error: ", "failed in sandbox")
"""How Codex words a call that did not run or did not apply, at the start of its output."""


def call_failed(output: Any, text: str | None) -> bool:
    """Whether a call's output says it failed: a non-zero exit code (in the JSON metadata or
    the `Exit code: N` / `Process exited with code N` head the client writes), or an output
    that opens by saying the call could not run or apply."""
    if type(output) is str and output.startswith('{"output":'):
        try:
            metadata = orjson.loads(output).get("metadata")
        except (orjson.JSONDecodeError, AttributeError):
            metadata = None
        code = metadata.get("exit_code") if type(metadata) is dict else None
        if type(code) is int:
            return code != 0
    head = (text or "")[:400]
    found = _EXIT.search(head)
    if found is not None:
        return int(found.group(1)) != 0
    return head.lstrip().startswith(_FAILED_OUTPUTS)


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


def _arguments(payload: dict[str, Any]) -> Any:
    """A call's arguments: a function call's JSON arguments (decoded), a custom tool's input
    (apply_patch: the patch), a local shell call's command."""
    args = payload.get("arguments")
    if type(args) is str and args.startswith("{"):
        with suppress(orjson.JSONDecodeError):
            args = orjson.loads(args)
    if args is None:
        args = payload.get("input")
    if args is None:
        action = payload.get("action")
        args = action.get("command") if type(action) is dict else payload.get("command")
    return args


def note_call(
    payload: dict[str, Any], calls: Calls
) -> tuple[str | None, str, str, tuple[str, ...]]:
    """A call's id, tool name, `name(args)` and named paths, remembered in `calls` for its
    output's item."""
    cid = call_id_of(payload)
    name = tool_name(payload)
    files = patch_files(payload)
    shown = collapse("; ".join(files), ARGS_MAX_CHARS) if files else call_args(payload)
    head = f"{name}({shown})"  # at most 80 + 82 chars: no cut needed
    args = _arguments(payload)
    paths = call_paths(args, patched_paths)
    if cid:
        calls.named[cid] = (head, paths, is_file_view(name, args, paths))
    return cid, name, head, paths


def response_item(index: int, payload: dict[str, Any], calls: Calls) -> TranscriptItem:
    """One response_item line to an item (still active; compaction is applied afterwards)."""
    ptype = payload.get("type")
    written = serialized_len(payload)
    size = written or 0
    est = estimate_tokens(size) if written is not None else 0  # (too deep to write: left as is)
    if ptype == "message":
        role = payload.get("role")
        if type(role) is not str:
            role = ""
        return TranscriptItem(
            index,
            ROLE_KINDS.get(role, ItemKind.SYSTEM),
            est,
            label=role,
            summary=collapse(content_text(payload.get("content")), TEXT_SUMMARY_MAX_CHARS) or None,
        )
    if ptype in OUTPUT_TYPES:
        cid = call_id_of(payload)
        head, paths, view = calls.named.get(cid, _NO_CALL) if cid else _NO_CALL
        output = payload.get("output")
        text = output_text(output)
        if cid in calls.patches:
            _patch_done(calls.patches.pop(cid), text)
        n_bytes = utf8_len(text) if text is not None else 0
        big = n_bytes > ELIDABLE_MIN_BYTES
        if n_bytes > CODEX_SENT_OUTPUT_MAX_BYTES:  # the client sends only so much
            est = estimate_tokens(size - (n_bytes - CODEX_SENT_OUTPUT_MAX_BYTES))
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
            if big and text
            else None,
            paths=paths,
            file_view=view,
            failed=call_failed(output, text),
        )
    if ptype in CALL_TYPES:
        cid, name, head, paths = note_call(payload, calls)
        item = TranscriptItem(
            index,
            ItemKind.TOOL_CALL,
            est,
            label=name,
            summary=head,
            tool_use_ids=(cid,) if cid else (),
            paths=paths,
        )
        body = patch_bytes(payload) if cid else 0
        if body > ELIDABLE_MIN_BYTES and cid:
            calls.patches[cid] = (item, body)
        return item
    if ptype == "reasoning":
        steps = content_text(payload.get("summary"), SUMMARY_BLOCK_TYPES)
        hidden = payload.get("encrypted_content")
        hidden_bytes = len(hidden) if type(hidden) is str else 0
        if hidden_bytes:  # not counted as context by the provider
            est = estimate_tokens(size - hidden_bytes)
        # A fork may leave encrypted reasoning out of the history (adapters.providers.codex.
        # rewrite): it frees what the provider counts of it (est), and what the client sends.
        big = hidden_bytes > ELIDABLE_MIN_BYTES
        return TranscriptItem(
            index,
            ItemKind.REASONING,
            est,
            elidable_bytes=hidden_bytes if big else None,
            elidable_parts=1 if big else 0,
            label="reasoning",
            summary=collapse(steps, TEXT_SUMMARY_MAX_CHARS) or None,
            hidden_bytes=hidden_bytes,
        )
    if ptype == "agent_message":
        message = payload.get("message", payload.get("content"))
        return TranscriptItem(
            index,
            ItemKind.ASSISTANT,
            est,
            label="assistant",
            summary=collapse(content_text(message), TEXT_SUMMARY_MAX_CHARS) or None,
        )
    label = ptype[:LABEL_MAX_CHARS] if type(ptype) is str else ""
    return TranscriptItem(index, ItemKind.META, est, label=label)


_NO_CALL: tuple[None, tuple[str, ...], bool] = (None, (), False)


def _patch_done(call: tuple[TranscriptItem, int], output: str | None) -> None:
    """A patch call answered: when the patch applied, its body is elidable (the files hold
    it now); a failed one's is not."""
    item, body = call
    if output is not None and patch_applied(output):
        item.elidable_bytes = body
        item.elidable_parts = 1


def compacted_item(index: int, payload: dict[str, Any]) -> TranscriptItem:
    """A `compacted` line: one ToolResult whose elidable parts are its big history outputs."""
    history = payload.get("replacement_history")
    whole = history if isinstance(history, list) else payload
    written = serialized_len(whole)
    est = estimate_tokens(written) if written is not None else 0
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
        summary=collapse(message, TEXT_SUMMARY_MAX_CHARS)
        if isinstance(message, str) and message
        else None,
        payload_sha256=hashlib.sha256("".join(texts).encode("utf-8")).hexdigest()
        if texts
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
