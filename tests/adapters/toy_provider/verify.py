"""The toy's checks of its records for core.verify: every result answers an earlier call, and
no call id is used twice (a `compact` record starts the live context again)."""

from __future__ import annotations

from typing import Any

from gobtui.adapters.files.jsonl import Record
from gobtui.core.verify.findings import FindingCode, FindingSink
from gobtui.core.verify.lines import RecordChecks


def toy_fact(record: Record) -> tuple[str | None, str | None]:
    kind, call = record.get("toy"), record.get("call")
    return (kind if type(kind) is str else None, call if type(call) is str else None)


class ToyChecker:
    def __init__(self, sink: FindingSink) -> None:
        self._sink = sink
        self._calls: dict[str, int] = {}
        self._answered: set[str] = set()

    def clone(self, sink: FindingSink) -> ToyChecker:
        twin = ToyChecker(sink)
        twin._calls, twin._answered = dict(self._calls), set(self._answered)
        return twin

    def feed_fact(self, line: int, fact: Any) -> None:
        kind, call = fact
        if kind == "compact":
            self._calls.clear()
            self._answered.clear()
        elif kind == "call" and call is not None:
            if call in self._calls:
                self._sink.add(FindingCode.DUPLICATE_TOOL_CALL_ID, line, self._calls[call] + 1)
            self._calls[call] = line
        elif kind == "result" and call is not None:
            if call not in self._calls:
                self._sink.add(FindingCode.ORPHANED_TOOL_RESULT, line)
            self._answered.add(call)

    def finish(self) -> None:
        for call, line in self._calls.items():
            if call not in self._answered:
                self._sink.add(FindingCode.UNPAIRED_TOOL_CALL, line)


def checks(provider: Any) -> RecordChecks:
    return RecordChecks(provider, toy_fact, ToyChecker, kind_key="toy")
