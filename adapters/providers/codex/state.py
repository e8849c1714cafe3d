"""Codex CLI rollouts: a running summary state (for the board) and a full parse into items.

CodexState is fed records in file order and may start anywhere in a file (a cold read of a big
file feeds its head, then a tail), so nothing in it assumes it saw the first line. The items
and the full parse are in adapters/providers/codex/items.py and adapters/providers/codex/parse.py.
"""

from __future__ import annotations

import os
import re
from collections import deque
from typing import Any, ClassVar

from ....core.limits import COMPACTION_EVENTS_MAX, TITLE_MAX_CHARS, USAGE_HISTORY_MAX
from ....core.model import (
    CompactionEvent,
    ContextComponents,
    ContextState,
    Coverage,
    Provider,
    SessionSummary,
    TurnState,
    UsageSample,
)
from ....core.text import collapse
from ...files.jsonl import Loads, Record
from ...files.timefmt import parse_ts
from ..full_parse import file_facts
from .cards import card_text as card_text_of
from .items import content_text
from .skim import tail_loads

_ROLLOUT_UUID = re.compile(
    r"-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)

Components = tuple[int | None, int | None, int | None, int | None]
"""(input incl. cached, cache read, cache write, output) of the latest usage."""


def session_id_from_path(path: str) -> str:
    """`rollout-<ts>-<uuid>.jsonl` -> uuid; otherwise the file stem."""
    name = os.path.basename(path)
    match = _ROLLOUT_UUID.search(name)
    if match and name.startswith("rollout-"):
        return match.group(1)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else os.path.splitext(name)[0]


def _count(value: Any) -> int | None:
    """A token count, or None for null/missing/odd values (bools are not counts)."""
    return value if type(value) is int and value >= 0 else None


def _sample_ts(sample: tuple[Any, int, bool]) -> float | None:
    ts, _tokens, raw = sample
    return parse_ts(ts) if raw else ts


def _title(text: str) -> str | None:
    return collapse(text, TITLE_MAX_CHARS) or None


def _is_real_prompt(text: str) -> bool:
    """Injected context (environment, AGENTS.md, instructions) is sent as user messages too."""
    head = text.lstrip()
    return bool(head) and not head.startswith("<") and not head.startswith("# AGENTS.md")


_TURNS: dict[Any, TurnState] = {
    "task_started": TurnState.RESPONDING,
    "user_message": TurnState.RESPONDING,
    "function_call": TurnState.TOOL_PENDING,
    "custom_tool_call": TurnState.TOOL_PENDING,
    "local_shell_call": TurnState.TOOL_PENDING,
    "function_call_output": TurnState.RESPONDING,
    "custom_tool_call_output": TurnState.RESPONDING,
    "agent_message": TurnState.TURN_ENDED,
    "task_complete": TurnState.TURN_ENDED,
    "turn_aborted": TurnState.TURN_ENDED,
}
"""Turn events and response items by payload type, and who is up after each (an answer may
be followed by more calls: the next record says so)."""
_ANSWERED, _ASKED = TurnState.TURN_ENDED, TurnState.RESPONDING
_TURN_VALUES = frozenset(turn.value for turn in TurnState)


class CodexState:
    """Running summary of a Codex rollout (implements adapters.providers.reader.TailState)."""

    provider: ClassVar[Provider] = Provider.CODEX
    # Only token_count events with a real `info` carry this key (`info: null` ones do not), so
    # a tail holding it holds the latest usage.
    # The newest usage, and the turn_context naming the model in use.
    tail_marker: ClassVar[tuple[bytes, ...]] = (b'"last_token_usage"', b'"turn_context"')
    tail_loads: ClassVar[Loads] = staticmethod(tail_loads)

    __slots__ = (
        "_last_ts",
        "_last_usage",
        "agent_id",
        "compactions",
        "components",
        "context_state",
        "context_tokens",
        "cwd",
        "first_ts",
        "life",
        "model",
        "parent_session_id",
        "path",
        "seen_meta",
        "session_id",
        "state_card",
        "title_event",
        "title_item",
        "turn",
        "usage",
        "window",
    )

    @property
    def head_known(self) -> bool:
        # The typed prompt (an event), not an injected message standing in for it.
        return self.title_event is not None and self.session_id is not None and bool(self.cwd)

    def __init__(self, path: str) -> None:
        self.path = path
        self.session_id: str | None = None
        self.seen_meta = False
        self.cwd: str | None = None
        self.model: str | None = None
        self.agent_id: str | None = None
        self.parent_session_id: str | None = None
        # A user_message event is the prompt as typed; response_item user messages may be
        # injected context, so they only stand in when no event was seen.
        self.title_event: str | None = None
        self.title_item: str | None = None
        self.context_tokens: int | None = None
        self.context_state = ContextState.ABSENT
        self.components: Components | None = None
        self.window: int | None = None
        self.usage: deque[tuple[Any, int, bool]] = deque(maxlen=USAGE_HISTORY_MAX)
        """(timestamp, tokens, the timestamp still raw): parsed when shown, the newest only."""
        self.compactions: deque[tuple[float | None, int | None]] = deque(
            maxlen=COMPACTION_EVENTS_MAX
        )
        # Codex writes most token_count events twice; the previous usage object spots repeats.
        self._last_usage: Any = None
        self.first_ts: float | None = None
        # Raw value, parsed in summary(): parsing every line's timestamp would cost the hot loop.
        self._last_ts: Any = None
        self.turn: TurnState | None = None
        """Who is up after the newest turn event or conversational item."""
        self.state_card = False
        """A user message (or a compaction's replacement history) was a state card: the
        rollout is a fork gobtui made."""
        self.life: tuple[int | None, int | None, int | None] | None = None
        """The newest total_token_usage: (input incl. cached, cached input, output)."""

    # -- feeding -------------------------------------------------------------------------------

    def feed(self, record: Record, line_len: int) -> None:
        self.feed_parts(record, record.get("type"), record.get("payload"))

    def feed_parts(self, record: Record, rtype: Any, payload: Any) -> None:
        """feed(), given the record's type and payload (a full parse has them)."""
        ts = record.get("timestamp")
        if ts is not None:
            # A cheap "starts with a digit" test keeps placeholders like "[trimmed]" out
            if (type(ts) is str and "0" <= ts < ":") or type(ts) in (int, float):
                self._last_ts = ts
            if self.first_ts is None:
                self.first_ts = parse_ts(ts)
        if type(payload) is not dict:
            return
        if rtype == "event_msg" or rtype == "response_item":
            ptype = payload.get("type")
            if ptype == "message":  # an answer, or a prompt (or context sent as one)
                role = payload.get("role")
                turn = _ANSWERED if role == "assistant" else _ASKED if role == "user" else None
            else:
                turn = _TURNS.get(ptype)
            if turn is not None:
                self.turn = turn
        if rtype == "event_msg":
            ptype = payload.get("type")
            if ptype == "token_count":
                self._token_count(payload, ts)
            elif ptype == "task_started":
                self._set_window(payload.get("model_context_window"))
            elif ptype == "user_message" and self.title_event is None:
                message = payload.get("message")
                if isinstance(message, str):
                    self.title_event = _title(message)
        elif rtype == "response_item":
            if payload.get("type") == "message" and payload.get("role") == "user":
                self._user_item(payload)
                if not self.state_card and card_text_of(record) is not None:
                    self.state_card = True
        elif rtype == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model:
                self.model = model
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd:
                self.cwd = cwd
        elif rtype == "compacted":
            if not self.state_card and card_text_of(record) is not None:
                self.state_card = True
            self.compactions.append((parse_ts(ts), self.context_tokens))
            self.context_tokens = None
            self.components = None
            self.context_state = ContextState.RESET
        elif rtype == "session_meta":
            self._session_meta(payload)
        elif rtype == "token_usage_record":
            usage = payload.get("usage")
            if type(usage) is dict and usage != self._last_usage:
                self._last_usage = usage
                self._apply_usage(usage, ts)

    def _user_item(self, payload: dict[str, Any]) -> None:
        text = content_text(payload.get("content"))
        if self.title_item is None and self.title_event is None and _is_real_prompt(text):
            self.title_item = _title(text)

    def _token_count(self, payload: dict[str, Any], ts: Any) -> None:
        info = payload.get("info")
        if type(info) is not dict:
            return  # `info: null` carries rate limits only
        self._set_window(info.get("model_context_window"))
        total = info.get("total_token_usage")
        if type(total) is dict:  # the client's own running total: the newest one stands
            self.life = (
                _count(total.get("input_tokens")),
                _count(total.get("cached_input_tokens")),
                _count(total.get("output_tokens")),
            )
        last = info.get("last_token_usage")
        if type(last) is not dict or info == self._last_usage:
            return
        self._last_usage = info
        self._apply_usage(last, ts)

    def _apply_usage(self, usage: dict[str, Any], ts: Any) -> None:
        inp = _count(usage.get("input_tokens"))
        out = _count(usage.get("output_tokens"))
        if inp is None and out is None:
            return  # unknown shape: leave the context as it was
        total = (inp or 0) + (out or 0)
        if total == 0:
            # All zeros: written around a compaction (Codex clears last_token_usage), never a
            # real request. Taking it would turn "reset" into 0 and zero the pre-compaction size.
            return
        self.context_tokens = total
        self.context_state = (
            ContextState.REPORTED if inp is not None and out is not None else ContextState.UNKNOWN
        )
        self.components = (
            inp,
            _count(usage.get("cached_input_tokens")),
            _count(usage.get("cache_write_input_tokens")),
            out,
        )
        self.usage.append((ts, total, True))

    def _set_window(self, value: Any) -> None:
        window = _count(value)
        if window:  # some builds write 0 where they know no window
            self.window = window

    def _session_meta(self, payload: dict[str, Any]) -> None:
        # A file can hold several (resume, fork, subagent spawn): the first one is the file's.
        if self.seen_meta:
            return
        self.seen_meta = True
        sid = payload.get("id") or payload.get("session_id")
        if isinstance(sid, str) and sid:
            self.session_id = sid
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd and self.cwd is None:
            self.cwd = cwd
        source = payload.get("source")
        if isinstance(source, dict) and "subagent" in source:
            self.agent_id = self.session_id
            parent = payload.get("parent_thread_id")
            sub = source.get("subagent")
            spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
            if not isinstance(parent, str) and isinstance(spawn, dict):
                parent = spawn.get("parent_thread_id")
            self.parent_session_id = parent if isinstance(parent, str) and parent else None

    # -- persistence ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "seen_meta": self.seen_meta,
            "cwd": self.cwd,
            "model": self.model,
            "agent_id": self.agent_id,
            "parent_session_id": self.parent_session_id,
            "title_event": self.title_event,
            "title_item": self.title_item,
            "context_tokens": self.context_tokens,
            "context_state": self.context_state.value,
            "components": list(self.components) if self.components is not None else None,
            "window": self.window,
            "usage": [[_sample_ts(sample), sample[1]] for sample in self.usage],
            "compactions": [list(event) for event in self.compactions],
            "last_usage": self._last_usage,
            "first_ts": self.first_ts,
            "last_ts": self._last_ts,
            "turn": self.turn,
            "state_card": self.state_card,
            "life": list(self.life) if self.life is not None else None,
        }

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> CodexState:
        state = cls(path)
        state.session_id = data["session_id"]
        state.seen_meta = bool(data["seen_meta"])
        state.cwd = data["cwd"]
        state.model = data["model"]
        state.agent_id = data["agent_id"]
        state.parent_session_id = data["parent_session_id"]
        state.title_event = data["title_event"]
        state.title_item = data["title_item"]
        state.context_tokens = data["context_tokens"]
        state.context_state = ContextState(data["context_state"])
        comps = data["components"]
        state.components = (comps[0], comps[1], comps[2], comps[3]) if comps is not None else None
        state.window = data["window"]
        turn = data.get("turn")
        state.turn = TurnState(turn) if turn in _TURN_VALUES else None
        state.usage.extend((ts, tokens, False) for ts, tokens in data["usage"])
        state.compactions.extend((ts, pre) for ts, pre in data["compactions"])
        state._last_usage = data["last_usage"]
        state.first_ts = data["first_ts"]
        state._last_ts = data["last_ts"]
        state.state_card = data.get("state_card") is True
        life = data["life"]
        if life is not None:
            a, b, c = life
            state.life = (_count(a), _count(b), _count(c))
        return state

    # -- output --------------------------------------------------------------------------------

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
        comps = self.components
        return SessionSummary(
            provider=Provider.CODEX,
            session_id=self.session_id or session_id_from_path(path),
            path=path,
            cwd=self.cwd,
            model=self.model,
            title=self.title_event or self.title_item,
            context_tokens=self.context_tokens,
            context_window=self.window,
            context_state=self.context_state,
            components=None
            if comps is None
            else ContextComponents(
                input_tokens=comps[0],
                cache_read_tokens=comps[1],
                cache_creation_tokens=comps[2],
                output_tokens=comps[3],
            ),
            usage_history=[
                UsageSample(context_tokens=sample[1], ts=_sample_ts(sample))
                for sample in self.usage
            ],
            compactions=[CompactionEvent(ts=ts, pre_tokens=pre) for ts, pre in self.compactions],
            **file_facts(
                size=size,
                mtime=mtime,
                coverage=coverage,
                records=records,
                bad_reasons=bad_reasons,
                torn=torn,
            ),
            first_ts=self.first_ts,
            last_ts=parse_ts(self._last_ts),
            agent_id=self.agent_id,
            parent_session_id=self.parent_session_id,
            turn=self.turn,
            lifetime=None
            if self.life is None
            else ContextComponents(
                input_tokens=self.life[0],
                cache_read_tokens=self.life[1],
                output_tokens=self.life[2],
            ),
            has_state_card=self.state_card,
        )
