"""Claude Code's checks of `verify` (core.verify): uuid linkage, the chain head, tool pairing
on the live branch.

The live branch is the transcript parser's (.state and .items; the walk and the sibling
rescue are .items'):

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

from typing import Any, NamedTuple

from ....core.model import Provider
from ....core.verify.findings import FindingCode, FindingSink, RawFinding
from ....core.verify.ids import valid_id
from ....core.verify.lines import RecordChecks
from ...files.jsonl import Record
from .items import Siblings, rescue_siblings, walk

LEAF_TYPES = frozenset({"user", "assistant", "attachment"})


class ClaudeFact(NamedTuple):
    """What the Claude checks read from one record (a pure function of it): a file's checks
    are a pass over these, so a record seen before is not read again."""

    kind: str
    """`type` when a string, else ""."""
    has_uuid: bool
    uuid: str | None
    """`uuid` when a string."""
    bad_uuid: bool
    """The record has a `uuid` that valid_id() refuses."""
    bad_parent: bool
    """The record has a `uuid` and a `parentUuid` that is neither null nor a valid id."""
    parent: str | None
    """`parentUuid` when a string."""
    leaf: str | None
    """`leafUuid` when a string."""
    has_leaf: bool
    """The record has a `leafUuid` key."""
    has_sidechain: bool
    sidechain: bool
    """`isSidechain` is true."""
    agent: bool
    """`agentId` is a string."""
    has_message: bool
    """`message` is an object."""
    msg_id: str | None
    """An assistant's message.id when a string."""
    ids: tuple[str, ...]
    """An assistant's tool_use ids, or a user record's tool_result ids."""
    role_ok: bool
    """message.role equals the record's type."""


def claude_fact(record: Record) -> ClaudeFact:
    kind = record.get("type")
    if type(kind) is not str:
        kind = ""
    uuid = record.get("uuid")
    parent = record.get("parentUuid")
    has_uuid = "uuid" in record
    leaf = record.get("leafUuid")
    message: Any = record.get("message")
    has_message = type(message) is dict
    msg_id: Any = None
    ids: tuple[str, ...] = ()
    role_ok = False
    if has_message and (kind == "assistant" or kind == "user"):
        content = message.get("content")
        if kind == "assistant":
            msg_id = message.get("id")
            ids = _block_ids(content, "tool_use", "id")
        else:
            ids = _block_ids(content, "tool_result", "tool_use_id")
        role_ok = message.get("role") == kind
    return ClaudeFact(
        kind=kind,
        has_uuid=has_uuid,
        uuid=uuid if type(uuid) is str else None,
        bad_uuid=has_uuid and not valid_id(uuid),
        bad_parent=has_uuid and not (parent is None or valid_id(parent)),
        parent=parent if type(parent) is str else None,
        leaf=leaf if type(leaf) is str else None,
        has_leaf="leafUuid" in record,
        has_sidechain="isSidechain" in record,
        sidechain=record.get("isSidechain") is True,
        agent=isinstance(record.get("agentId"), str),
        has_message=has_message,
        msg_id=msg_id if type(msg_id) is str else None,
        ids=ids,
        role_ok=role_ok,
    )


class _Branch:
    """What the live-branch walk needs, gathered in file order (see the module docstring)."""

    __slots__ = ("newest_leaf", "parents", "prompt_leaf", "siblings", "subagent")

    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.subagent: bool | None = None
        """Decided by the first (non-progress) record that carries isSidechain."""
        self.prompt_leaf: str | None = None
        self.newest_leaf: str | None = None
        self.siblings = Siblings()

    def clone(self) -> _Branch:
        twin = _Branch()
        twin.parents = dict(self.parents)
        twin.subagent = self.subagent
        twin.prompt_leaf = self.prompt_leaf
        twin.newest_leaf = self.newest_leaf
        twin.siblings = self.siblings.copy()
        return twin

    def feed(self, fact: ClaudeFact) -> None:
        kind, uuid = fact.kind, fact.uuid
        if uuid is not None:
            self.parents[uuid] = fact.parent
        if kind == "progress":
            return
        if self.subagent is None and fact.has_sidechain:
            self.subagent = fact.sidechain and fact.agent
        if kind == "last-prompt":
            if fact.leaf is not None:
                self.prompt_leaf = fact.leaf
            return
        if uuid is not None and kind in LEAF_TYPES and not (fact.sidechain and not self.subagent):
            self.newest_leaf = uuid
            self.prompt_leaf = None

    def leaf(self) -> str | None:
        """Where the live walk starts."""
        return self.prompt_leaf if self.prompt_leaf in self.parents else self.newest_leaf

    def live_uuids(self) -> set[str]:
        live = walk(self.parents, self.leaf())
        rescue_siblings(live, self.siblings)
        return live


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
    """Linkage and chain-head checks in file order; pairing on the live branch at the end.

    A clone (a candidate's checks resuming from its source's) remembers the checker it came
    from and the facts fed since. When those add no tool ids and no node the source's
    records point at, and the live walk from the new leaf enters the source where the
    source's own walk starts, the live branch is the source's plus the new nodes, none of
    them holding a tool id: the pairing findings are the source's, computed once.
    """

    __slots__ = (
        "_add",
        "_added",
        "_branch",
        "_first_line",
        "_frozen",
        "_head",
        "_origin",
        "_pairing_memo",
        "_results",
        "_sink",
        "_users",
        "_uses",
    )

    def __init__(self, sink: FindingSink) -> None:
        self._sink = sink
        self._add = sink.add
        self._first_line: dict[str, int] = {}
        """uuid -> the line that first used it."""
        self._branch = _Branch()
        self._uses: list[ToolRef] = []
        self._results: list[ToolRef] = []
        self._users: list[tuple[str | None, int, bool]] = []
        """Every user record: (uuid, line, is a sidechain record), for where a branch ends."""
        self._head: tuple[int, str] | None = None
        """The last last-prompt naming a leaf: (line, leafUuid)."""
        self._origin: ClaudeChecker | None = None
        self._added: list[ClaudeFact] = []
        self._frozen = False
        """Cloned: its state is its clones' origin, it takes no more lines."""
        self._pairing_memo: tuple[str | None, frozenset[str], list[RawFinding]] | None = None

    def clone(self, sink: FindingSink) -> ClaudeChecker:
        """A checker in this one's state, reporting to `sink` (this one takes no more lines)."""
        self._frozen = True
        twin = ClaudeChecker(sink)
        twin._first_line = dict(self._first_line)
        twin._branch = self._branch.clone()
        twin._uses = list(self._uses)
        twin._results = list(self._results)
        twin._users = list(self._users)
        twin._head = self._head
        twin._origin = self
        return twin

    def feed(self, line: int, record: Record) -> None:
        self.feed_fact(line, claude_fact(record))

    def feed_fact(self, line: int, fact: Any) -> None:
        if self._frozen:
            raise ValueError("a checker that was cloned takes no more lines")
        if self._origin is not None:
            self._added.append(fact)
        add = self._add
        kind, uuid, parent = fact.kind, fact.uuid, fact.parent
        if fact.has_uuid:
            if fact.bad_uuid:
                add(FindingCode.INVALID_UUID, line)
            if fact.bad_parent:
                add(FindingCode.INVALID_PARENT_UUID, line)
        if kind == "last-prompt":
            leaf = fact.leaf
            if leaf:
                self._head = (line, leaf)
            elif fact.has_leaf:  # (2.1.97 and later write none: that is no finding)
                add(FindingCode.INVALID_CHAIN_HEAD, line)
        if uuid is not None:
            first_line = self._first_line
            if parent is not None and parent not in first_line:
                add(FindingCode.BROKEN_PARENT_CHAIN, line)
            earlier = first_line.setdefault(uuid, line)
            if earlier != line:
                add(FindingCode.DUPLICATE_UUID, line, earlier + 1)
        self._branch.feed(fact)
        if kind == "user":
            self._users.append((uuid, line, fact.sidechain))
        if (kind == "assistant" or kind == "user") and fact.has_message:
            self._tools(line, fact)

    def _tools(self, line: int, fact: ClaudeFact) -> None:
        """The tool ids of an assistant or user record: for the sibling rescue, and for
        pairing when the record has the supported envelope (message.role == type)."""
        sib = self._branch.siblings
        uuid, ids = fact.uuid, fact.ids
        if fact.kind == "assistant":
            if fact.msg_id is not None:
                sib.msg_uuids.append(uuid)
                sib.msg_keys.append(fact.msg_id)
            if ids:
                sib.call_uuids.append(uuid)
                sib.call_ids.append(ids)
            refs = self._uses
        else:
            if ids:
                sib.answer_uuids.append(uuid)
                sib.answer_parents.append(fact.parent)
                sib.answer_ids.append(ids)
            refs = self._results
        if ids and fact.role_ok:
            sidechain = fact.sidechain
            refs.extend((tool_id, line, uuid, sidechain) for tool_id in ids)

    def finish(self) -> None:
        head = self._head
        if head is not None and head[1] not in self._first_line:
            self._add(FindingCode.MISSING_CHAIN_HEAD, head[0])
        if self._uses or self._results:
            found = self._origin_pairing()
            for line, code, detail in self._pairing() if found is None else found:
                self._add(code, line, *detail)

    def _pairing(self) -> list[RawFinding]:
        """The pairing findings of the live branch."""
        uses, results = self._uses, self._results
        live = self._branch.live_uuids()

        def on_branch(uuid: str | None, sidechain: bool) -> bool:
            # a main file's sidechain records are another context's
            if not self._branch.subagent and sidechain:
                return False
            return uuid is None or uuid in live

        live_uses = [u for u in uses if on_branch(u[2], u[3])]
        live_results = [r for r in results if on_branch(r[2], r[3])]
        users = [line for uuid, line, side in self._users if on_branch(uuid, side)]
        sink = FindingSink()
        _check_pairing(live_uses, live_results, max(users, default=-1), sink)
        return sink.raw()

    def _memo(self) -> tuple[str | None, frozenset[str], list[RawFinding]]:
        """(where the live walk starts, every uuid a record or an answer points at, the
        pairing findings) of this (frozen) checker."""
        if self._pairing_memo is None:
            branch = self._branch
            pointed = {parent for parent in branch.parents.values() if parent is not None}
            pointed.update(p for p in branch.siblings.answer_parents if p is not None)
            self._pairing_memo = (self._branch.leaf(), frozenset(pointed), self._pairing())
        return self._pairing_memo

    def _origin_pairing(self) -> list[RawFinding] | None:
        """The origin's pairing findings when they are this checker's (see the class
        docstring), else None."""
        origin = self._origin
        if origin is None:
            return None
        branch, was = self._branch, origin._branch
        sib, was_sib = branch.siblings, was.siblings
        if (
            len(self._uses) != len(origin._uses)
            or len(self._results) != len(origin._results)
            or len(sib.msg_uuids) != len(was_sib.msg_uuids)
            or len(sib.call_uuids) != len(was_sib.call_uuids)
            or len(sib.answer_uuids) != len(was_sib.answer_uuids)
            or branch.subagent != was.subagent
        ):
            return None
        new = {fact.uuid for fact in self._added if fact.uuid is not None}
        start, pointed, findings = origin._memo()
        if any(uuid in was.parents or uuid in pointed for uuid in new):
            return None
        parents = branch.parents
        node = self._branch.leaf()
        path: set[str] = set()
        while node is not None and node in new and node not in path:
            path.add(node)
            node = parents[node]
        if node in path or node != start:
            return None
        if len(self._users) != len(origin._users) and any(
            code is FindingCode.INTERRUPTED_TOOL_USE for _line, code, _detail in findings
        ):
            return None  # a new user record may turn an interrupted call into an orphan
        return findings


def _check_pairing(
    uses: list[ToolRef], results: list[ToolRef], last_user: int, sink: FindingSink
) -> None:
    """Calls and results of the live branch; an unanswered call after the last user record
    (the branch ends on it) is an interrupted one, which the client answers on resume."""
    first_use: dict[str, int] = {}
    for tool_id, line, _uuid, _side in uses:
        earlier = first_use.get(tool_id)
        if earlier is None:
            first_use[tool_id] = line
        else:
            sink.add(FindingCode.DUPLICATE_TOOL_CALL_ID, line, earlier + 1)
    last_result = {ref[0]: ref[1] for ref in results}  # the last result of each id
    for tool_id, line, _uuid, _side in uses:
        if last_result.get(tool_id, -1) <= line:
            code = (
                FindingCode.INTERRUPTED_TOOL_USE
                if line > last_user
                else FindingCode.ORPHANED_TOOL_USE
            )
            sink.add(code, line)
    for tool_id, line, _uuid, _side in results:
        if first_use.get(tool_id, line) >= line:
            sink.add(FindingCode.ORPHANED_TOOL_RESULT, line)


CHECKS = RecordChecks(Provider.CLAUDE, claude_fact, ClaudeChecker)
"""Claude Code's checks, as the package hands them out (ProviderPackage.verify_checks)."""
