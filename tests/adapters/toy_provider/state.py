"""The toy's running state: what its records say about the session, for the board."""

from __future__ import annotations

from typing import ClassVar

import orjson

from gobtui.adapters.files.jsonl import Loads, Record
from gobtui.adapters.providers.full_parse import file_facts
from gobtui.adapters.providers.interface import JsonObject
from gobtui.core.model import ContextState, Coverage, Provider, SessionSummary
from tests.adapters.toy_provider import PROVIDER, card_text

_FIELDS = ("session_id", "cwd", "model", "window", "title", "context", "card")


class ToyState:
    provider: ClassVar[Provider] = PROVIDER
    tail_marker: ClassVar[tuple[bytes, ...]] = (b'"usage"',)
    tail_loads: ClassVar[Loads] = orjson.loads

    def __init__(self, path: str) -> None:
        self.path = path
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        self.window: int | None = None
        self.title: str | None = None
        self.context: int | None = None
        self.card = False

    def feed(self, record: Record, line_len: int) -> None:
        kind = record.get("toy")
        if kind == "session":
            self.session_id = str(record.get("id"))
            self.cwd, self.model = record.get("cwd"), record.get("model")
            window = record.get("window")
            self.window = window if type(window) is int else None
        elif kind == "say" and record.get("who") == "user" and self.title is None:
            self.title = str(record.get("text"))[:80]
        elif kind == "usage" and type(record.get("context")) is int:
            self.context = record["context"]
        elif kind == "compact":
            self.context = None
        self.card = self.card or card_text(record) is not None

    @property
    def head_known(self) -> bool:
        return self.session_id is not None

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
        facts = file_facts(
            size=size,
            mtime=mtime,
            coverage=coverage,
            records=records,
            bad_reasons=bad_reasons,
            torn=torn,
        )
        return SessionSummary(
            provider=PROVIDER,
            session_id=self.session_id or path.rsplit("/", 1)[-1].removesuffix(".jsonl"),
            path=path,
            cwd=self.cwd,
            model=self.model,
            title=self.title,
            context_tokens=self.context,
            context_window=self.window,
            context_state=ContextState.ABSENT if self.context is None else ContextState.REPORTED,
            has_state_card=self.card,
            **facts,
        )

    @classmethod
    def from_json(cls, path: str, data: JsonObject) -> ToyState:
        state = cls(path)
        for name in _FIELDS:
            setattr(state, name, data[name])
        return state

    def to_json(self) -> JsonObject:
        return {name: getattr(self, name) for name in _FIELDS}
