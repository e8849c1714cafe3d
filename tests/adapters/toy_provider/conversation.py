"""The toy's conversation entries."""

from __future__ import annotations

from gobtui.core.conversation import EntryKind, EntryWriter, Record
from gobtui.core.model import TranscriptItem


class ToyConversation(EntryWriter):
    def add(self, item: TranscriptItem, record: Record) -> None:
        kind = record.get("toy")
        if kind == "say":
            who = EntryKind.USER if record.get("who") == "user" else EntryKind.ASSISTANT
            self._message(who, str(record.get("text") or ""), item.line_index)
        elif kind == "call":
            self._call(item.line_index, record.get("call"), record.get("name"), record.get("args"))
        elif kind == "result":
            self._result(item.line_index, record.get("call"), str(record.get("output")), False)
