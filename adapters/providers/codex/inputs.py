"""The patch a Codex call carries (apply_patch as a custom tool, as a function, or as a shell
command): where it sits, the size of its body, and its stub. The body (the hunks) is what the
patched files hold once the patch applied; its `*** ` file lines stay, so the stubbed call
still says which files it changed."""

from __future__ import annotations

import re
from typing import Any

import orjson

from ....core.stubs import INPUT_STUB
from ....core.text import utf8_len

PATCH_BEGIN = "*** Begin Patch"
PATCH_END = "*** End Patch"
_FILE_LINE = "*** "
_ARGUMENT_KEYS = ("input", "patch", "command", "cmd")
"""Function-call argument keys that may hold a patch (apply_patch's input, a shell command)."""
APPLIED = "Success. Updated the following files:"
"""What apply_patch prints once a patch applied (after a shell's warnings, or wrapped in JSON
with its metadata); a failed patch prints an error instead."""
APPLIED_SCAN_CHARS = 1024


def patch_applied(output: str) -> bool:
    return APPLIED in output[:APPLIED_SCAN_CHARS]


def _stub_body(text: str, build: bool) -> tuple[str, int]:
    """`text` with each patch's body replaced by one stub line before its end (when
    `build`), and the UTF-8 bytes of the bodies."""
    kept: list[str] = []
    inside = False
    body = 0
    for line in text.split("\n"):
        mark = line.strip()
        if mark == PATCH_BEGIN:
            inside = True
        elif inside and mark == PATCH_END:
            inside = False
            if build and body:
                kept.append(INPUT_STUB.replace("{bytes}", str(body)))
        elif inside and not line.startswith(_FILE_LINE):
            body += utf8_len(line) + 1
            continue
        kept.append(line)
    return ("\n".join(kept) if build else text), body


def _sites(payload: dict[str, Any]) -> tuple[str, Any] | None:
    """(the payload field, its value decoded) of a call carrying a patch, else None."""
    ptype = payload.get("type")
    if ptype == "custom_tool_call":
        value = payload.get("input")
        return ("input", value) if type(value) is str and PATCH_BEGIN in value else None
    if ptype != "function_call":
        return None
    args = payload.get("arguments")
    if type(args) is not str or PATCH_BEGIN not in args:
        return None
    try:
        decoded = orjson.loads(args)
    except orjson.JSONDecodeError:
        return None
    return ("arguments", decoded) if type(decoded) is dict else None


def _rewrite(value: Any, build: bool) -> tuple[Any, int]:
    """A patch-holding value (a string, a list of words, arguments) with its bodies stubbed
    (when `build`), and their bytes."""
    if type(value) is str:
        return _stub_body(value, build) if PATCH_BEGIN in value else (value, 0)
    if type(value) is list:
        parts = [_rewrite(word, build) for word in value]
        return [part for part, _ in parts], sum(size for _, size in parts)
    if type(value) is dict:
        out = dict(value)
        total = 0
        for key in _ARGUMENT_KEYS:
            if key in value:
                out[key], size = _rewrite(value[key], build)
                total += size
        return out, total
    return value, 0


def patch_bytes(payload: dict[str, Any]) -> int:
    """UTF-8 bytes of the patch bodies a call carries; 0 for a call carrying none."""
    site = _sites(payload)
    return _rewrite(site[1], build=False)[1] if site is not None else 0


def stub_patch(payload: dict[str, Any]) -> bool:
    """The call's patch bodies stubbed in place; False when it carries none."""
    site = _sites(payload)
    if site is None:
        return False
    key, value = site
    stubbed, size = _rewrite(value, build=True)
    if not size:
        return False
    payload[key] = stubbed if key == "input" else orjson.dumps(stubbed).decode()
    return True


_FILE_LINES = re.compile(r"\*\*\* (?:Add|Update|Delete) File: [^\n\\]+")
"""A patch's file lines as written in a call's raw field (JSON-escaped arguments included:
a backslash ends one)."""
_PATCHED_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
"""The file a line of a patch body names."""


def patched_paths(text: str) -> list[str]:
    """The files a text's patch file lines name (`*** Update File: path`), in order."""
    return [path.strip() for path in _PATCHED_FILE.findall(text)]


def patch_files(payload: dict[str, Any]) -> list[str]:
    """The `*** Update File: ...` lines of a patch-carrying call, as written."""
    site = _sites(payload)
    raw = payload.get(site[0]) if site is not None else None
    return _FILE_LINES.findall(raw) if type(raw) is str else []
