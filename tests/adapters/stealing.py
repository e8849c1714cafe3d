"""A full parse whose forked Helper always takes part of this process's part (adapters.steal)."""

from __future__ import annotations

import select
from types import ModuleType
from typing import Any

import pytest

from adapters import full_parse, processes
from adapters import steal as steal_mod


def force_steal(monkeypatch: pytest.MonkeyPatch, module: ModuleType, share: str) -> list[int]:
    """A forked Helper with a small tail (`module`.`share` at 0.8), this process reading in
    small chunks and waiting at its first one for the Helper's question: it always gets part
    of this process's part. Where each extra part starts is listed, an entry a chunk."""
    if not processes.single_threaded():
        pytest.skip("forking needs a single-threaded test process")
    monkeypatch.setattr(processes, "HELPER_MIN_BYTES", 0)
    monkeypatch.setattr(processes, "_busy", lambda: False)
    monkeypatch.setattr(module, share, 0.8)
    monkeypatch.setattr(full_parse, "READ_CHUNK_BYTES", 512)
    monkeypatch.setattr(steal_mod, "STEAL_MIN_BYTES", 0)
    given: list[int] = []
    real = steal_mod.Steal.end_at

    def end_at(steal: steal_mod.Steal, pos: int, end: int) -> int:
        if not given:
            select.select([steal.asks[0]], [], [], 10)
        at = real(steal, pos, end)
        given.append(steal.given)
        return at

    monkeypatch.setattr(steal_mod.Steal, "end_at", end_at)
    return given


def spy(monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> list[tuple[Any, Any]]:
    """Each call of `module`.`name` from now on, as (its arguments, what it returned)."""
    calls: list[tuple[Any, Any]] = []
    real = getattr(module, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, real(*args, **kwargs)))
        return calls[-1][1]

    monkeypatch.setattr(module, name, recorded)
    return calls
