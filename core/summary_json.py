"""A SessionSummary back from the JSON orjson wrote of it (the summary cache), every field
checked: the bytes are read back from disk, so anything else is refused (ValueError), never
passed on to the board."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
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


_NONE = type(None)
_CHECKED: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("session_id", (str,)),
    ("path", (str,)),
    ("cwd", (str, _NONE)),
    ("model", (str, _NONE)),
    ("title", (str, _NONE)),
    ("context_tokens", (int, _NONE)),
    ("context_window", (int, _NONE)),
    ("records", (int,)),
    ("bad_lines", (int,)),
    ("torn_tail", (bool,)),
    ("bytes", (int,)),
    ("agent_id", (str, _NONE)),
    ("parent_session_id", (str, _NONE)),
    ("has_state_card", (bool,)),
    ("fork_as_published", (bool,)),
)
"""The plain fields and the exact types each may hold (type(), so a bool is no int)."""
_TIMES = (("mtime", False), ("first_ts", True), ("last_ts", True))
"""The float fields, and whether each may be null (a whole number comes back a float)."""
_CONTEXT_STATES = {c.value: c for c in ContextState}
_COVERAGES = {c.value: c for c in Coverage}
_TURNS = {t.value: t for t in TurnState}
_FIELDS = tuple(f.name for f in fields(SessionSummary))


def summary_to_json(summary: SessionSummary) -> dict[str, Any]:
    """What orjson writes of `summary` for summary_from_json: its fields by name, the usage
    samples as [tokens, ts] pairs (thousands per home: half the bytes, a quarter of the work
    to read back)."""
    out = {name: getattr(summary, name) for name in _FIELDS}
    out["usage_history"] = [(s.context_tokens, s.ts) for s in summary.usage_history]
    return out


def _member(table: dict[str, E], value: Any, name: str) -> E:
    member = table.get(value) if type(value) is str else None
    if member is None:
        raise _bad(name)
    return member


def _provider(value: Any) -> Provider:
    """Provider(value), which finds a provider made by Provider.extra too."""
    if type(value) is str:
        try:
            return Provider(value)
        except ValueError:
            pass
    raise _bad("provider")


def _samples(value: Any) -> list[UsageSample]:
    if type(value) is not list:
        raise _bad("usage_history")
    try:
        samples = [UsageSample(tokens, ts) for tokens, ts in value]
    except (TypeError, ValueError):
        raise _bad("usage_history") from None
    for sample in samples:
        if type(sample.context_tokens) is not int or not (
            sample.ts is None or type(sample.ts) is float
        ):
            break
    else:
        return samples
    return [  # a whole-number time, or something else: checked one by one
        UsageSample(_int(s.context_tokens, "usage_history"), _opt_float(s.ts, "usage_history"))
        for s in samples
    ]


def summary_from_json(value: Any) -> SessionSummary:
    """The summary `value` (decoded JSON, as summary_to_json wrote it) holds. Raises
    ValueError when it holds anything else."""
    d = _object(value, "summary")
    try:
        kw: dict[str, Any] = {}
        for name, allowed in _CHECKED:
            field_value = d[name]
            if type(field_value) not in allowed:
                raise _bad(name)
            kw[name] = field_value
        for name, nullable in _TIMES:
            kw[name] = (_opt_float if nullable else _float)(d[name], name)
        turn = d["turn"]
        return SessionSummary(
            provider=_provider(d["provider"]),
            context_state=_member(_CONTEXT_STATES, d["context_state"], "context_state"),
            coverage=_member(_COVERAGES, d["coverage"], "coverage"),
            turn=None if turn is None else _member(_TURNS, turn, "turn"),
            components=_components(d["components"]),
            lifetime=_components(d["lifetime"]),
            usage_history=_samples(d["usage_history"]),
            compactions=_list(d["compactions"], "compactions", _compaction),
            bad_reasons=_reasons(d["bad_reasons"]),
            subagents=_list(d["subagents"], "subagents", _subagent),
            **kw,
        )
    except KeyError as missing:
        raise ValueError(f"summary field {missing} is missing") from None
