"""How a provider's records read in the vault views (its package's record_text face): which
fields hold text, what heads a text, which fields every record repeats, and where a tool
call's input or a text held as JSON is. The walk over a record is the app's, the same for
every provider (gobtui.view_models.vault_text); this says only what that walk cannot know."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Node = dict[str, Any]


def _nothing(*_args: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class RecordText:
    text_keys: frozenset[str]
    """Keys whose string values are text to read, however short (a prompt of one word)."""
    labels: Mapping[str, str]
    """Headings by the `type` of the object holding the text (or of the record)."""
    role_types: frozenset[str]
    """Text of these types is headed by its message's role."""
    quiet_keys: frozenset[str]
    """Fields a preview skips: ids, times and session facts every record repeats."""
    short_field_keys: frozenset[str] = frozenset()
    """Of the text keys, those that are a setting when short (a word or two)."""
    tool_input: Callable[[Node, str, Any], tuple[str, Any] | None] = _nothing
    """(the tool's name, its input: a string or an object) when node[key] is the input of a
    tool call, else None."""
    json_text: Callable[[Node, str, Any], Node | None] = _nothing
    """The object, when node[key] is a text written as a JSON object in a string (read as
    its fields, so its newlines show), else None."""
    enclosing_label: Callable[[Node], str | None] = _nothing
    """The heading an object gives the texts inside it (a tool result's blocks), or None."""


def merged(readings: Sequence[RecordText]) -> RecordText:
    """Every reading at once, the first that has an answer giving it: for a record no
    provider claims."""

    def first(attribute: str) -> Callable[..., Any]:
        def ask(*args: Any) -> Any:
            for reading in readings:
                found = getattr(reading, attribute)(*args)
                if found is not None:
                    return found
            return None

        return ask

    labels: dict[str, str] = {}
    for reading in reversed(readings):
        labels.update(reading.labels)
    return RecordText(
        text_keys=frozenset().union(*(r.text_keys for r in readings)),
        labels=labels,
        role_types=frozenset().union(*(r.role_types for r in readings)),
        quiet_keys=frozenset().union(*(r.quiet_keys for r in readings)),
        short_field_keys=frozenset().union(*(r.short_field_keys for r in readings)),
        tool_input=first("tool_input"),
        json_text=first("json_text"),
        enclosing_label=first("enclosing_label"),
    )
