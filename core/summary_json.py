"""A SessionSummary back from the JSON orjson wrote of it (the summary cache), every field
checked: the bytes are read back from disk, so anything else is refused (ValueError), never
passed on to the board."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypeVar

from .model import (
    CompactionEvent,
    ContextComponents,
    ContextState,
    Coverage,
    Provider,
    SessionSummary,
    SubagentRef,
    TurnState,
    UsageSample,
)

E = TypeVar("E", bound=StrEnum)


def _bad(name: str) -> ValueError:
    return ValueError(f"summary field {name!r} is malformed")


def _int(value: Any, name: str) -> int:
    if type(value) is not int:
        raise _bad(name)
    return value


def _opt_int(value: Any, name: str) -> int | None:
    return None if value is None else _int(value, name)


def _float(value: Any, name: str) -> float:
    if type(value) is float or type(value) is int:
        return float(value)
    raise _bad(name)


def _opt_float(value: Any, name: str) -> float | None:
    return None if value is None else _float(value, name)


def _str(value: Any, name: str) -> str:
    if type(value) is not str:
        raise _bad(name)
    return value


def _opt_str(value: Any, name: str) -> str | None:
    return None if value is None else _str(value, name)


def _bool(value: Any, name: str) -> bool:
    if type(value) is not bool:
        raise _bad(name)
    return value


def _enum(kind: type[E], value: Any, name: str) -> E:
    try:
        return kind(_str(value, name))
    except ValueError:
        raise _bad(name) from None


def _object(value: Any, name: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _bad(name)
    return value


T = TypeVar("T")


def _list(value: Any, name: str, item: Callable[[dict[str, Any]], T]) -> list[T]:
    if type(value) is not list:
        raise _bad(name)
    try:
        return [item(_object(entry, name)) for entry in value]
    except KeyError:
        raise _bad(name) from None


def _sample(d: dict[str, Any]) -> UsageSample:
    return UsageSample(
        context_tokens=_int(d["context_tokens"], "usage_history"),
        ts=_opt_float(d["ts"], "usage_history"),
    )


def _compaction(d: dict[str, Any]) -> CompactionEvent:
    return CompactionEvent(
        ts=_opt_float(d["ts"], "compactions"),
        pre_tokens=_opt_int(d["pre_tokens"], "compactions"),
        trigger=_opt_str(d["trigger"], "compactions"),
    )


def _subagent(d: dict[str, Any]) -> SubagentRef:
    return SubagentRef(
        agent_id=_str(d["agent_id"], "subagents"),
        path=_str(d["path"], "subagents"),
        context_tokens=_opt_int(d["context_tokens"], "subagents"),
        records=_int(d["records"], "subagents"),
        bytes=_int(d["bytes"], "subagents"),
        mtime=_float(d["mtime"], "subagents"),
    )


def _components(value: Any) -> ContextComponents | None:
    if value is None:
        return None
    d = _object(value, "components")
    try:
        return ContextComponents(
            input_tokens=_opt_int(d["input_tokens"], "components"),
            cache_read_tokens=_opt_int(d["cache_read_tokens"], "components"),
            cache_creation_tokens=_opt_int(d["cache_creation_tokens"], "components"),
            output_tokens=_opt_int(d["output_tokens"], "components"),
        )
    except KeyError:
        raise _bad("components") from None


def _reasons(value: Any) -> dict[str, int]:
    d = _object(value, "bad_reasons")
    return {_str(k, "bad_reasons"): _int(v, "bad_reasons") for k, v in d.items()}


def summary_from_json(value: Any) -> SessionSummary:
    """The summary `value` (decoded JSON) holds. Raises ValueError when it holds anything else."""
    d = _object(value, "summary")
    try:
        turn = d["turn"]
        return SessionSummary(
            provider=_enum(Provider, d["provider"], "provider"),
            session_id=_str(d["session_id"], "session_id"),
            path=_str(d["path"], "path"),
            cwd=_opt_str(d["cwd"], "cwd"),
            model=_opt_str(d["model"], "model"),
            title=_opt_str(d["title"], "title"),
            context_tokens=_opt_int(d["context_tokens"], "context_tokens"),
            context_window=_opt_int(d["context_window"], "context_window"),
            context_state=_enum(ContextState, d["context_state"], "context_state"),
            components=_components(d["components"]),
            usage_history=_list(d["usage_history"], "usage_history", _sample),
            compactions=_list(d["compactions"], "compactions", _compaction),
            records=_int(d["records"], "records"),
            bad_lines=_int(d["bad_lines"], "bad_lines"),
            bad_reasons=_reasons(d["bad_reasons"]),
            torn_tail=_bool(d["torn_tail"], "torn_tail"),
            bytes=_int(d["bytes"], "bytes"),
            mtime=_float(d["mtime"], "mtime"),
            coverage=_enum(Coverage, d["coverage"], "coverage"),
            first_ts=_opt_float(d["first_ts"], "first_ts"),
            last_ts=_opt_float(d["last_ts"], "last_ts"),
            agent_id=_opt_str(d["agent_id"], "agent_id"),
            parent_session_id=_opt_str(d["parent_session_id"], "parent_session_id"),
            subagents=_list(d["subagents"], "subagents", _subagent),
            turn=None if turn is None else _enum(TurnState, turn, "turn"),
            has_state_card=_bool(d["has_state_card"], "has_state_card"),
            fork_as_published=_bool(d["fork_as_published"], "fork_as_published"),
        )
    except KeyError as missing:
        raise ValueError(f"summary field {missing} is missing") from None
