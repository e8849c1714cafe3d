"""Claude Code checks of `verify`: uuid linkage, the chain head, tool pairing on the live branch.

The live branch follows the rules of the transcript parser (adapters/claude.py and
adapters/claude_items.py), reimplemented here because core does not import adapters:

- the leaf is the leafUuid of the last `last-prompt` record when it names a known record and
  no user/assistant/attachment record with a uuid follows it, else the newest such record;
  sidechain records of a main file (a subagent file is all sidechain) are never the leaf;
- the branch is the parentUuid walk from the leaf (a uuid seen twice stops it: cycle guard);
- streaming-split siblings are rescued onto it: an assistant record sharing a live
  message.id, and a tool_result hanging off a live record that answers a live tool_use nothing
  live answers yet;
- a record without a uuid stays live; a sidechain record of a main file is never live.
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from core.verify_findings import FindingCode, FindingSink

Record = dict[str, Any]

ID_MAX_BYTES = 256
LEAF_TYPES = frozenset({"user", "assistant", "attachment"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Unicode Cc, what the reference's char::is_control refuses in an id."""


def valid_id(value: Any) -> TypeGuard[str]:
    """A nonempty string of at most ID_MAX_BYTES UTF-8 bytes without control characters."""
    if type(value) is not str or not value or len(value) > ID_MAX_BYTES:
        return False
    if value.isascii():  # the common case: printable ASCII is exactly "no control character"
        return value.isprintable()
    if len(value.encode("utf-8", "surrogatepass")) > ID_MAX_BYTES:
        return False
    return _CONTROL.search(value) is None


class _Branch:
    """What the live-branch walk needs, gathered in file order (see the module docstring)."""

    __slots__ = ("answers", "calls", "msg_ids", "newest_leaf", "parents", "prompt_leaf", "subagent")

    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.subagent: bool | None = None
        """Decided by the first (non-progress) record that carries isSidechain."""
        self.prompt_leaf: str | None = None
        self.newest_leaf: str | None = None
        self.msg_ids: list[tuple[str | None, str]] = []
        self.calls: list[tuple[str | None, tuple[str, ...]]] = []
        self.answers: list[tuple[str | None, str | None, tuple[str, ...]]] = []

    def feed(self, record: Record, kind: str, uuid: Any, parent: Any) -> None:
        if type(uuid) is str:
            self.parents[uuid] = parent if type(parent) is str else None
        if kind == "progress":
            return
        sidechain = record.get("isSidechain")
        if self.subagent is None and "isSidechain" in record:
            self.subagent = sidechain is True and isinstance(record.get("agentId"), str)
        if kind == "last-prompt":
            leaf = record.get("leafUuid")
            if type(leaf) is str:
                self.prompt_leaf = leaf
            return
        if (
            type(uuid) is str
            and kind in LEAF_TYPES
            and not (sidechain is True and not self.subagent)
        ):
            self.newest_leaf = uuid
            self.prompt_leaf = None

    def live_uuids(self) -> set[str]:
        parents = self.parents
        leaf = self.prompt_leaf if self.prompt_leaf in parents else self.newest_leaf
        live: set[str] = set()
        node = leaf
        while node is not None and node not in live and node in parents:
            live.add(node)
            node = parents[node]
        self._rescue_siblings(live)
        return live

    def _rescue_siblings(self, live: set[str]) -> None:
        live_msgs = {msg for uuid, msg in self.msg_ids if uuid in live}
        for uuid, msg in self.msg_ids:
            if uuid is not None and uuid not in live and msg in live_msgs:
                live.add(uuid)
        open_calls: set[str] = set()
        for uuid, ids in self.calls:
            if uuid in live:
                open_calls.update(ids)
        for uuid, _parent, ids in self.answers:
            if uuid in live:
                open_calls.difference_update(ids)
        for uuid, parent, ids in self.answers:
            if (
                uuid is not None
                and uuid not in live
                and parent in live
                and all(i in open_calls for i in ids)
            ):
                live.add(uuid)
                open_calls.difference_update(ids)


def _block_ids(content: Any, block_type: str, key: str) -> tuple[str, ...]:
    if type(content) is not list:
        return ()
    ids = []
    for block in content:
        if type(block) is dict and block.get("type") == block_type:
            value = block.get(key)
            if type(value) is str:
                ids.append(value)
    return tuple(ids)


ToolRef = tuple[str, int, str | None, bool]
"""(tool id, line, the record's uuid, the record is a sidechain record)."""


class ClaudeChecker:
    """Linkage and chain-head checks in file order; pairing on the live branch at the end."""

    __slots__ = ("_add", "_branch", "_first_line", "_head", "_results", "_sink", "_uses", "_valid")

    def __init__(self, sink: FindingSink) -> None:
        self._sink = sink
        self._add = sink.add
        self._first_line: dict[str, int] = {}
        """uuid -> the line that first used it."""
        self._valid: set[str] = set()
        """ids valid_id() accepted already."""
        self._branch = _Branch()
        self._uses: list[ToolRef] = []
        self._results: list[ToolRef] = []
        self._head: tuple[int, str] | None = None
        """The last last-prompt naming a leaf: (line, leafUuid)."""

    def feed(self, line: int, record: Record) -> None:
        add = self._add
        kind = record.get("type")
        if type(kind) is not str:
            kind = ""
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        if "uuid" in record:
            valid = self._valid  # a parent is mostly the uuid of the line before: known
            if type(uuid) is str and uuid in valid:
                pass
            elif valid_id(uuid):
                valid.add(uuid)
            else:
                add(FindingCode.INVALID_UUID, line)
            if parent is None or (type(parent) is str and parent in valid):
                pass
            elif valid_id(parent):
                valid.add(parent)
            else:
                add(FindingCode.INVALID_PARENT_UUID, line)
        if kind == "last-prompt":
            leaf = record.get("leafUuid")
            if type(leaf) is str:
                self._head = (line, leaf)
            if type(leaf) is not str or not leaf:
                add(FindingCode.INVALID_CHAIN_HEAD, line)
        if type(uuid) is str:
            first_line = self._first_line
            if type(parent) is str and parent not in first_line:
                add(FindingCode.BROKEN_PARENT_CHAIN, line)
            earlier = first_line.setdefault(uuid, line)
            if earlier != line:
                add(FindingCode.DUPLICATE_UUID, line, earlier)
        self._branch.feed(record, kind, uuid, parent)
        if kind == "assistant" or kind == "user":
            self._tools(line, record, kind, uuid if type(uuid) is str else None, parent)

    def _tools(self, line: int, record: Record, kind: str, uuid: str | None, parent: Any) -> None:
        """The tool ids of an assistant or user record: for the sibling rescue, and for
        pairing when the record has the supported envelope (message.role == type)."""
        message = record.get("message")
        if type(message) is not dict:
            return
        content = message.get("content")
        branch = self._branch
        if kind == "assistant":
            msg_id = message.get("id")
            if type(msg_id) is str:
                branch.msg_ids.append((uuid, msg_id))
            ids = _block_ids(content, "tool_use", "id")
            if ids:
                branch.calls.append((uuid, ids))
            refs = self._uses
        else:
            ids = _block_ids(content, "tool_result", "tool_use_id")
            if ids:
                branch.answers.append((uuid, parent if type(parent) is str else None, ids))
            refs = self._results
        if ids and message.get("role") == kind:
            sidechain = record.get("isSidechain") is True
            refs.extend((tool_id, line, uuid, sidechain) for tool_id in ids)

    def finish(self) -> None:
        head = self._head
        if head is not None and head[1] not in self._first_line:
            self._add(FindingCode.MISSING_CHAIN_HEAD, head[0])
        uses, results = self._uses, self._results
        if uses or results:
            live = self._branch.live_uuids()
            main_file = not self._branch.subagent
            _check_pairing(
                [u for u in uses if _is_live(u, live, main_file)],
                [r for r in results if _is_live(r, live, main_file)],
                self._sink,
            )


def _is_live(ref: ToolRef, live: set[str], main_file: bool) -> bool:
    _id, _line, uuid, sidechain = ref
    if sidechain and main_file:
        return False  # another context (a subagent's), only linked into this file
    return uuid is None or uuid in live


def _check_pairing(uses: list[ToolRef], results: list[ToolRef], sink: FindingSink) -> None:
    first_use: dict[str, int] = {}
    for tool_id, line, _uuid, _side in uses:
        earlier = first_use.get(tool_id)
        if earlier is None:
            first_use[tool_id] = line
        else:
            sink.add(FindingCode.DUPLICATE_TOOL_CALL_ID, line, earlier)
    last_result: dict[str, int] = {}
    for tool_id, line, _uuid, _side in results:
        last_result[tool_id] = line
    for tool_id, line, _uuid, _side in uses:
        if last_result.get(tool_id, -1) <= line:
            sink.add(FindingCode.ORPHANED_TOOL_USE, line)
    for tool_id, line, _uuid, _side in results:
        if first_use.get(tool_id, line) >= line:
            sink.add(FindingCode.ORPHANED_TOOL_RESULT, line)
