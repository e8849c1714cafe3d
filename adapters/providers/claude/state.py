"""Claude Code transcripts: a running summary state (for the board) and a full parse into items.

ClaudeState is fed records in file order and may start anywhere in a file (a cold read of a big
file feeds its head, then a tail), so it assumes nothing about having seen the first line. It
keeps only bounded data: the parent links of the newest records (for the live-branch walk),
the newest usage samples and compactions.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict, deque
from collections.abc import Container
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import orjson

from ....core.limits import (
    COMPACTION_EVENTS_MAX,
    RECENT_LINK_WINDOW,
    TITLE_MAX_CHARS,
    USAGE_HISTORY_MAX,
)
from ....core.model import (
    CompactionEvent,
    ContextComponents,
    ContextState,
    Coverage,
    Provider,
    SessionSummary,
    TurnState,
    UsageSample,
    claude_context_window,
)
from ....core.text import collapse
from ...files.jsonl import Loads, Record
from ...files.timefmt import parse_ts
from ..full_parse import file_facts
from .cards import card_text as card_text_of
from .items import has_tool_result, user_text

Usage = tuple[int | None, int | None, int | None, int | None]
"""(input, cache_creation, cache_read, output): missing counts 0, null or odd is None."""
Link = tuple[str | None, Usage | None, bool]
"""(parentUuid, usage when a real-usage assistant, is a compact_boundary)."""

_USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
_LEAF_TYPES = frozenset({"user", "assistant", "attachment"})
_SYNTHETIC_MODEL = "<synthetic>"
_ISO_MILLIS_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)
"""The shape Claude Code writes timestamps in; its minute prefix is [:17]."""
_SECONDS = {f"{s:02d}.": s * 1_000_000 for s in range(60)}
_MILLIS = {f"{m:03d}Z": m * 1000 for m in range(1000)}
"""The rest of that shape after the minute, in microseconds: "SS." and "mmmZ"."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def usage_of(message: dict[str, Any]) -> Usage | None:
    """The four context components of a real usage, or None when there is none."""
    usage = message.get("usage")
    if type(usage) is not dict or message.get("model") == _SYNTHETIC_MODEL:
        return None
    get = usage.get  # an absent component (older builds) counts 0: nothing was charged
    a = get("input_tokens", 0)
    b = get("cache_creation_input_tokens", 0)
    c = get("cache_read_input_tokens", 0)
    d = get("output_tokens", 0)
    values = (
        a if type(a) is int and a >= 0 else None,
        b if type(b) is int and b >= 0 else None,
        c if type(c) is int and c >= 0 else None,
        d if type(d) is int and d >= 0 else None,
    )
    if values == (0, 0, 0, 0) and not any(key in usage for key in _USAGE_KEYS):
        return None
    return values


def usage_total(usage: Usage) -> int:
    a, b, c, d = usage
    return (a or 0) + (b or 0) + (c or 0) + (d or 0)


def _subagent_of(path: str) -> tuple[str, str] | None:
    """(agent id, parent session id) for `<dir>/<session-id>/subagents/agent-<id>.jsonl`."""
    folder, name = os.path.split(path)
    session_dir, sub = os.path.split(folder)
    if sub != "subagents" or not name.startswith("agent-") or not name.endswith(".jsonl"):
        return None
    return name[len("agent-") : -len(".jsonl")], os.path.basename(session_dir)


def _stem(path: str) -> str:
    name = os.path.basename(path)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else os.path.splitext(name)[0]


class ClaudeState:
    """The running summary of one Claude transcript (see the module docstring)."""

    provider: ClassVar[Provider] = Provider.CLAUDE
    tail_marker: ClassVar[tuple[bytes, ...]] = (b'"usage"',)
    tail_loads: ClassVar[Loads] = staticmethod(orjson.loads)

    def __init__(self, path: str) -> None:
        self.path = path
        by_path = _subagent_of(path)
        self.subagent: bool | None = True if by_path else None
        """None until decided: by the path, else by the first record carrying isSidechain."""
        self.path_agent: str | None = by_path[0] if by_path else None
        self.path_parent: str | None = by_path[1] if by_path else None
        self.agent_id: str | None = None
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        self.title: str | None = None
        self.links: OrderedDict[str, Link] = OrderedDict()
        self.prompt_leaf: str | None = None
        """leafUuid of the last `last-prompt`, until a leaf-type record follows it."""
        self.newest_leaf: str | None = None
        self.newest_usage: Usage | None = None
        self.history: OrderedDict[str, tuple[float | None, int]] = OrderedDict()
        """message.id (or uuid) -> (ts, context tokens): one sample per API response."""
        self.compactions: deque[tuple[float | None, int | None, str | None]] = deque(
            maxlen=COMPACTION_EVENTS_MAX
        )
        self.first_ts: float | None = None
        self._last_ts: float | None = None
        self._last_pending = False
        """last_ts is _hi_raw's instant, not worked out yet (see feed_parts)."""
        self._lo_raw = ""
        """The raw timestamps of first_ts / last_ts when of the common shape, else ""."""
        self._hi_raw = ""
        self._ts_len = -1
        """Their common length, -1 when the fast path is off."""
        self._minute = ""
        """A memo for `_ts` (never saved): the minute of the last timestamp of the common shape
        parsed ("YYYY-MM-DDTHH:MM:"), and its instant in microseconds."""
        self._minute_us = 0
        self._anon = 0
        self._turn: TurnState | None = None
        self._turn_unread: list[tuple[str, Record]] = []
        """The newest conversational records not yet asked who is up after them: only the
        newest that says decides (`turn`), so most never need asking."""
        self.state_card = False
        """A user record of the main chain was a state card: the file is a fork gobtui made."""
        self.life = [0, 0, 0, 0]
        """Lifetime usage (input, cache creation, cache read, output) of the responses read."""
        self._life_key = ""
        self._life_last: Usage | None = None

    @property
    def head_known(self) -> bool:
        return self.title is not None and self.session_id is not None and self.cwd is not None

    # -- feeding -------------------------------------------------------------------------

    def feed(self, record: Record, line_len: int) -> None:
        self.feed_parts(record, record.get("type"), record.get("uuid"), record.get("parentUuid"))

    def feed_parts(self, record: Record, kind: Any, uuid: Any, parent: Any) -> None:
        """feed(), given the record's type, uuid and parentUuid (a full parse has them)."""
        raw_ts = record.get("timestamp")
        if raw_ts is not None:
            if (
                type(raw_ts) is str
                and len(raw_ts) == self._ts_len
                and raw_ts[:17] == self._minute
                and raw_ts[17:20] in _SECONDS
                and raw_ts[20:] in _MILLIS
            ):
                # Most records. Valid and of the exact shape (the minute _ts last worked out,
                # known seconds and millis), like _lo_raw and _hi_raw: the strings order like
                # the instants, so only a new newest counts, worked out when asked for.
                if raw_ts > self._hi_raw:
                    self._hi_raw = raw_ts
                    self._last_pending = True
                elif raw_ts < self._lo_raw:
                    self._note_ts(raw_ts)
            else:
                self._note_ts(raw_ts)
        if kind == "progress":  # ~70% of lines; only their links matter (others chain to them)
            if type(uuid) is str:
                links = self.links
                links[uuid] = (parent if type(parent) is str else None, None, False)
                if len(links) > RECENT_LINK_WINDOW:
                    links.popitem(False)
            return
        if self.session_id is None:
            sid = record.get("sessionId")
            if isinstance(sid, str) and sid:
                self.session_id = sid
        cwd = record.get("cwd")
        if type(cwd) is str and cwd:
            self.cwd = cwd
        sidechain = record.get("isSidechain")
        if self.subagent is None and "isSidechain" in record:
            self.subagent = sidechain is True and isinstance(record.get("agentId"), str)
        if self.agent_id is None and self.subagent:
            agent = record.get("agentId")
            if isinstance(agent, str) and agent:
                self.agent_id = agent
        # A main file's sidechain records belong to another context: links only.
        excluded = sidechain is True and not self.subagent
        if kind == "last-prompt":
            leaf = record.get("leafUuid")
            if isinstance(leaf, str):
                self.prompt_leaf = leaf
            return
        if not excluded and (kind == "assistant" or kind == "user" or kind == "system"):
            unread = self._turn_unread
            unread.append((kind, record))
            if len(unread) > _TURN_UNREAD_MAX:
                self._settle_turn()
        if type(uuid) is not str:
            return
        usage: Usage | None = None
        boundary = False
        if kind == "assistant" and not excluded:
            usage = self._assistant(record, uuid)
        elif kind == "user" and not excluded:
            if self.title is None:
                self._maybe_title(record)
            if not self.state_card and card_text_of(record) is not None:
                self.state_card = True
        elif kind == "system" and record.get("subtype") == "compact_boundary" and not excluded:
            boundary = True
            self._compaction(record)
        if kind in _LEAF_TYPES and not excluded:
            self.newest_leaf = uuid
            self.prompt_leaf = None
        links = self.links
        # A repeated uuid keeps its old place (eviction a little early) but its newest value.
        links[uuid] = (parent if type(parent) is str else None, usage, boundary)
        if len(links) > RECENT_LINK_WINDOW:
            links.popitem(False)

    @property
    def turn(self) -> TurnState | None:
        """Who is up after the newest conversational record of the main chain."""
        if self._turn_unread:
            self._settle_turn()
        return self._turn

    @turn.setter
    def turn(self, value: TurnState | None) -> None:
        self._turn_unread.clear()
        self._turn = value

    def _settle_turn(self) -> None:
        unread = self._turn_unread
        for kind, record in reversed(unread):
            turn = turn_of(kind, record)
            if turn is not None:
                self._turn = turn
                break
        unread.clear()

    @property
    def last_ts(self) -> float | None:
        if self._last_pending:
            self._last_pending = False
            self._last_ts = self._ts(self._hi_raw)
        return self._last_ts

    @last_ts.setter
    def last_ts(self, value: float | None) -> None:
        self._last_ts = value
        self._last_pending = False

    def _ts(self, raw: Any) -> float | None:
        """parse_ts(raw); one of the common shape in the minute of the last one is cheap."""
        if type(raw) is str and raw[:17] == self._minute:
            sec = _SECONDS.get(raw[17:20])
            milli = _MILLIS.get(raw[20:])
            if sec is not None and milli is not None:
                # as datetime.timestamp() does: whole microseconds / 10**6, one rounding
                return (self._minute_us + sec + milli) / 1_000_000
        ts = parse_ts(raw)
        if ts is not None and type(raw) is str and _ISO_MILLIS_Z.fullmatch(raw):
            self._minute = raw[:17]
            self._minute_us = (datetime.fromisoformat(raw[:16] + "+00:00") - _EPOCH) // _MICROSECOND
        return ts

    def _note_ts(self, raw: Any) -> None:
        ts = self._ts(raw)
        if ts is None:
            return
        # Valid timestamps of the exact shape order like their instants: feed skips parsing
        # one that lies between the raw min and max (of that shape; another ordering, say a
        # decimal comma, could put an earlier instant between them).
        shaped = type(raw) is str and _ISO_MILLIS_Z.fullmatch(raw) is not None
        if self.first_ts is None or ts < self.first_ts:
            self.first_ts = ts
            self._lo_raw = raw if shaped else ""
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
            self._hi_raw = raw if shaped else ""
        lo, hi = self._lo_raw, self._hi_raw
        self._ts_len = len(lo) if lo and len(lo) == len(hi) else -1

    def _assistant(self, record: Record, uuid: str) -> Usage | None:
        message = record.get("message")
        if type(message) is not dict:
            return None
        usage = usage_of(message)
        if usage is None:
            return None
        model = message.get("model")
        if type(model) is str and model:
            self.model = model
        self.newest_usage = usage
        msg_id = message.get("id")
        if type(msg_id) is str and msg_id:
            key = msg_id
        else:
            self._anon += 1
            key = f"#{uuid}#{self._anon}"
        history = self.history
        sample = history.get(key)
        self._add_life(key, usage)
        ts = sample[0] if sample else self._ts(record.get("timestamp"))
        # Streaming-split records repeat one response's usage: one sample, newest figures.
        history[key] = (ts, usage_total(usage))
        if len(history) > USAGE_HISTORY_MAX:
            history.popitem(False)
        return usage

    def _add_life(self, key: str, usage: Usage) -> None:
        """Sum a response's usage into the lifetime; the records a streamed response is split
        into follow each other and repeat its usage (newest figures): it counts once."""
        life = self.life
        if key == self._life_key and self._life_last is not None:
            for i, value in enumerate(self._life_last):
                life[i] -= value or 0
        for i, value in enumerate(usage):
            life[i] += value or 0
        self._life_key, self._life_last = key, usage

    def _maybe_title(self, record: Record) -> None:
        if record.get("isMeta") is True or record.get("isCompactSummary") is True:
            return
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if has_tool_result(content):
            return
        text = user_text(content)
        if text is None:
            return
        text = text.strip()
        if text and not text.startswith("<"):  # caveats, command echoes, reminders
            self.title = collapse(text, TITLE_MAX_CHARS)

    def _compaction(self, record: Record) -> None:
        meta = record.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        pre = meta.get("preTokens")
        trigger = meta.get("trigger")
        self.compactions.append(
            (
                self._ts(record.get("timestamp")),
                pre if type(pre) is int else None,
                trigger if isinstance(trigger, str) else None,
            )
        )

    # -- reading the state ---------------------------------------------------------------

    def leaf(self, known: Container[str] | None = None) -> str | None:
        """The live leaf: the last last-prompt's leafUuid if it is a known record, else the
        newest leaf-type record. `known` is where uuids are looked up (default: the links)."""
        where: Container[str] = self.links if known is None else known
        if self.prompt_leaf is not None and self.prompt_leaf in where:
            return self.prompt_leaf
        return self.newest_leaf

    def context(self) -> tuple[ContextState, Usage | None]:
        """Usage of the newest usage-bearing assistant on the live branch."""
        node = self.leaf()
        links = self.links
        for _ in range(len(links) + 1):  # the step bound is the cycle guard
            entry = links.get(node) if node is not None else None
            if entry is None:
                break  # a root, a link out of the window (or of the file)
            parent, usage, boundary = entry
            if usage is not None:
                return _state_of(usage), usage
            if boundary:
                return ContextState.RESET, None
            node = parent
        if self.newest_usage is None:
            return ContextState.ABSENT, None
        return _state_of(self.newest_usage), self.newest_usage

    def summary(
        self,
        *,
        path: str,
        size: int,
        mtime: float,
        coverage: Coverage,
        records: int,
        bad_reasons: dict[str, int],
        torn: bool,
    ) -> SessionSummary:
        state, usage = self.context()
        components = None
        if usage is not None:
            components = ContextComponents(
                input_tokens=usage[0],
                cache_creation_tokens=usage[1],
                cache_read_tokens=usage[2],
                output_tokens=usage[3],
            )
        agent_id = parent_id = None
        if self.subagent:
            agent_id = self.agent_id or self.path_agent or _stem(path)
            parent_id = self.session_id or self.path_parent
        return SessionSummary(
            provider=Provider.CLAUDE,
            session_id=self.session_id or _stem(path),
            path=path,
            cwd=self.cwd,
            model=self.model,
            title=self.title,
            context_tokens=usage_total(usage) if usage is not None else None,
            context_window=claude_context_window(self.model, self._peak(usage)),
            context_state=state,
            components=components,
            usage_history=[UsageSample(context_tokens=n, ts=ts) for ts, n in self.history.values()],
            compactions=[
                CompactionEvent(ts=ts, pre_tokens=pre, trigger=trigger)
                for ts, pre, trigger in self.compactions
            ],
            **file_facts(
                size=size,
                mtime=mtime,
                coverage=coverage,
                records=records,
                bad_reasons=bad_reasons,
                torn=torn,
            ),
            first_ts=self.first_ts,
            last_ts=self.last_ts,
            agent_id=agent_id,
            parent_session_id=parent_id,
            turn=self.turn,
            has_state_card=self.state_card,
            lifetime=ContextComponents(
                input_tokens=self.life[0],
                cache_creation_tokens=self.life[1],
                cache_read_tokens=self.life[2],
                output_tokens=self.life[3],
            )
            if any(self.life)
            else None,
        )

    def _peak(self, usage: Usage | None) -> int:
        """The largest context reported in the window of samples kept (and now)."""
        peak = usage_total(usage) if usage is not None else 0
        return max([peak, *(tokens for _ts, tokens in self.history.values())])

    # -- persistence ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "subagent": self.subagent,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "model": self.model,
            "title": self.title,
            "links": [[u, p, list(us) if us else None, b] for u, (p, us, b) in self.links.items()],
            "prompt_leaf": self.prompt_leaf,
            "newest_leaf": self.newest_leaf,
            "newest_usage": list(self.newest_usage) if self.newest_usage else None,
            "history": [[k, ts, n] for k, (ts, n) in self.history.items()],
            "compactions": [list(c) for c in self.compactions],
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "ts_raw": [self._lo_raw, self._hi_raw, self._ts_len],
            "anon": self._anon,
            "turn": self.turn,
            "state_card": self.state_card,
            "life": [*self.life, self._life_key, list(self._life_last or ()) or None],
        }

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> ClaudeState:
        state = cls(path)
        state.subagent = data["subagent"]
        state.agent_id = data["agent_id"]
        state.session_id = data["session_id"]
        state.cwd = data["cwd"]
        state.model = data["model"]
        state.title = data["title"]
        for uuid, parent, usage, boundary in data["links"]:
            state.links[uuid] = (parent, _usage_from(usage), bool(boundary))
        state.prompt_leaf = data["prompt_leaf"]
        state.newest_leaf = data["newest_leaf"]
        state.newest_usage = _usage_from(data["newest_usage"])
        for key, ts, tokens in data["history"]:
            state.history[key] = (ts, int(tokens))
        for ts, pre, trigger in data["compactions"]:
            state.compactions.append((ts, pre, trigger))
        state.first_ts = data["first_ts"]
        state.last_ts = data["last_ts"]
        lo, hi, length = data["ts_raw"]
        if _ISO_MILLIS_Z.fullmatch(lo) and _ISO_MILLIS_Z.fullmatch(hi) and length == len(lo):
            state._lo_raw, state._hi_raw, state._ts_len = lo, hi, length
        state._anon = int(data["anon"])
        turn = data.get("turn")
        state.turn = TurnState(turn) if turn in _TURN_VALUES else None
        state.state_card = data.get("state_card") is True
        *life, state._life_key, last = data["life"]
        state.life = [int(n) for n in life]
        if len(state.life) != 4 or type(state._life_key) is not str:
            raise ValueError("not a lifetime")
        state._life_last = _usage_from(last)
        return state


_TURN_VALUES = frozenset(turn.value for turn in TurnState)
_TURN_UNREAD_MAX = 16
"""Conversational records held before the newest are asked who is up (a few KB of
references: settled by every summary, and each time this many more arrive)."""
_TURN_END_SUBTYPES = frozenset({"stop_hook_summary", "turn_duration"})
"""System records Claude Code writes once a turn is over."""
_INTERRUPTED = "[Request interrupted"


def turn_of(kind: str, record: Record) -> TurnState | None:
    """Who is up after this assistant, user or system record; None when it says nothing."""
    if kind == "system":
        return TurnState.TURN_ENDED if record.get("subtype") in _TURN_END_SUBTYPES else None
    message = record.get("message")
    if type(message) is not dict:
        return None
    content = message.get("content")
    blocks = [b for b in content if type(b) is dict] if type(content) is list else []
    types = {b.get("type") for b in blocks}
    if kind == "assistant":
        if "tool_use" in types or message.get("stop_reason") == "tool_use":
            return TurnState.TOOL_PENDING
        if "text" in types or type(content) is str:
            return TurnState.TURN_ENDED  # an answer (its stop_reason is often null)
        return TurnState.RESPONDING  # thinking: the answer is still to come
    if record.get("isMeta") is True:
        return None  # caveats and reminders the client adds
    texts = [b.get("text") for b in blocks if b.get("type") == "text"]
    if type(content) is str:
        texts.append(content)
    if any(type(t) is str and t.startswith(_INTERRUPTED) for t in texts):
        return TurnState.TURN_ENDED
    return TurnState.RESPONDING


def _state_of(usage: Usage) -> ContextState:
    return ContextState.UNKNOWN if None in usage else ContextState.REPORTED


def _usage_from(value: Any) -> Usage | None:
    if value is None:
        return None
    a, b, c, d = value
    return a, b, c, d
