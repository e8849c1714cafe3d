"""The content a Claude Code edit tool's input carries (what Edit, Write, MultiEdit and
NotebookEdit put in the file): where it sits, its size, and its stub. The parse counts it once
the call's result says the edit was made; the rewrite stubs it, the file path left beside."""

from __future__ import annotations

from typing import Any

from ....core.stubs import INPUT_STUB
from ....core.text import utf8_len

EDIT_CONTENT: dict[str, tuple[str, ...]] = {
    "Edit": ("old_string", "new_string"),
    "Write": ("content",),
    "NotebookEdit": ("new_source",),
    "MultiEdit": ("edits",),
}
"""Edit tools, and the input keys that hold file content (MultiEdit: a list of edits, each
with old_string and new_string)."""
_MULTI_KEYS = ("old_string", "new_string")


def content_sites(name: str, tool_input: Any) -> list[tuple[dict[str, Any], str]]:
    """(container, key) of each non-empty content string of an edit tool's input, in order."""
    keys = EDIT_CONTENT.get(name)
    if keys is None or type(tool_input) is not dict:
        return []
    if name == "MultiEdit":
        edits = tool_input.get("edits")
        pairs = [
            (edit, key)
            for edit in (edits if type(edits) is list else ())
            if type(edit) is dict
            for key in _MULTI_KEYS
        ]
    else:
        pairs = [(tool_input, key) for key in keys]
    return [(where, key) for where, key in pairs if type(where.get(key)) is str and where[key]]


def content_bytes(name: str, tool_input: Any) -> int:
    """UTF-8 bytes of the content an edit tool's input carries; 0 for any other tool."""
    return sum(utf8_len(where[key]) for where, key in content_sites(name, tool_input))


def stub_content(name: str, tool_input: Any) -> bool:
    """The input's content replaced in place: its first string by the stub (naming the size
    of all), the others emptied. False when it carries none."""
    sites = content_sites(name, tool_input)
    if not sites:
        return False
    total = sum(utf8_len(where[key]) for where, key in sites)
    for rank, (where, key) in enumerate(sites):
        where[key] = INPUT_STUB.replace("{bytes}", str(total)) if rank == 0 else ""
    return True
