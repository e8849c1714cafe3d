"""Where each client keeps its hook settings, and the careful edit of that file.

The file is read whole (it is small), merged (core.hooks) and written back atomically with
its mode kept, after a copy of the old one is saved beside it under a new name. The client may
rewrite its file at any moment, so the write is a compare-and-swap: it is refused when the file
is no longer the one read (adapters.files.atomic.replace_if_unchanged). A settings file that is
a symlink (a dotfiles checkout) is not written through: the user is shown what to add. A file
that is not the hooks shape is refused, never rewritten.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ...core.hooks import HOOK_POINTS, HookSettingsError, Merge, install_into, remove_from
from ...core.limits import HOOK_SETTINGS_MAX_BYTES
from ...core.model import Provider
from ..config.paths import Homes
from ..files.atomic import (
    FileChangedError,
    FileState,
    publish_new,
    read_state,
    replace_if_unchanged,
)

SETTINGS_FILES = {Provider.CLAUDE: "settings.json", Provider.CODEX: "hooks.json"}
"""Claude Code reads hooks from <home>/settings.json, Codex from <home>/hooks.json."""
BACKUP_SUFFIX = ".gobtui-bak"


class HookFileError(Exception):
    """A settings file gobtui will not edit, in one line."""


class HookFileChanged(HookFileError):
    """The settings file changed between its read and the write: nothing was written."""


@dataclass(frozen=True)
class Edit:
    provider: Provider
    path: Path
    merge: Merge
    text: str
    """The whole file as it would be written."""
    read: FileState
    """The file when read: the write is refused if it changed meanwhile."""

    @property
    def existed(self) -> bool:
        return self.read.identity is not None

    @property
    def original(self) -> bytes:
        return self.read.data


def settings_path(homes: Homes, provider: Provider) -> Path | None:
    home = homes.of(provider)
    return None if home is None else home / SETTINGS_FILES[provider]


def _read(path: Path) -> tuple[Any, FileState]:
    try:
        state = read_state(path, HOOK_SETTINGS_MAX_BYTES)
    except ValueError as error:  # a symlink (a dotfiles checkout), a FIFO, a huge file
        why = "; gobtui does not write through it" if "symlink" in str(error) else ""
        raise HookFileError(f"{path} {error}{why}") from None
    data = state.data
    if not data.strip():
        return {}, state
    try:
        return parse(data), state
    except orjson.JSONDecodeError as error:
        raise HookFileError(f"{path} is not valid JSON ({error}); it was left as it is") from None
    except RecursionError:
        raise HookFileError(f"{path} is nested too deeply; it was left as it is") from None


@dataclass(frozen=True)
class JsonNumber:
    """A number as the user wrote it: a 30-digit id or 1.50 stays what it was (a float would
    make them 1.2345678901234568e+29 and 1.5)."""

    text: str


def parse(data: bytes) -> Any:
    """The document, its numbers kept as written. orjson checks it first (strict UTF-8, no
    lone surrogate, no NaN), so what is accepted is what was accepted before."""
    orjson.loads(data)
    return json.loads(data.decode(), parse_int=JsonNumber, parse_float=JsonNumber)


def render(doc: Any) -> str:
    """The document as orjson's two-space indent would write it, numbers as they were read.
    RecursionError for a document nested deeper than Python's stack."""
    out: list[str] = []
    _render_into(doc, "", out)
    return "".join(out) + "\n"


def _render_into(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, JsonNumber):
        out.append(value.text)
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, dict | list) and value:
        inner = indent + "  "
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        out.append("{" if isinstance(value, dict) else "[")
        for n, (key, item) in enumerate(items):
            out.append(("," if n else "") + "\n" + inner)
            if key is not None:
                out.append(_string(key) + ": ")
            _render_into(item, inner, out)
        out.append("\n" + indent + ("}" if isinstance(value, dict) else "]"))
    else:  # true, false, null, {} and [] (and numbers gobtui made itself, should it ever)
        out.append(orjson.dumps(value).decode())


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def plan_edit(homes: Homes, provider: Provider, executable: str, install: bool) -> Edit | None:
    """What install (or uninstall) would write for one client; None without its home."""
    path = settings_path(homes, provider)
    if path is None:
        return None
    doc, state = _read(path)
    try:
        if install:
            points = [p for p in HOOK_POINTS if p.provider is provider]
            merge = install_into(doc, points, executable)
        else:
            merge = remove_from(doc, provider)
    except HookSettingsError as error:
        raise HookFileError(f"{path}: {error}; it was left as it is") from None
    try:
        text = render(merge.doc)
    except RecursionError:
        raise HookFileError(f"{path} is nested too deeply; it was left as it is") from None
    return Edit(provider, path, merge, text, state)


def write_edit(edit: Edit, now: float | None = None) -> Path | None:
    """Write the edit (nothing when it changes nothing); the old file's copy, if one.
    HookFileError, and nothing written over, when the file changed since it was read."""
    if not edit.merge.changed:
        return None
    changed = HookFileChanged(f"{edit.path} changed while gobtui was editing it; run it again")
    backup = None
    mode = 0o600
    if edit.existed:
        st = os.lstat(edit.path)
        mode = stat.S_IMODE(st.st_mode)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        backup = edit.path.with_name(f"{edit.path.name}{BACKUP_SUFFIX}-{stamp}")
        for n in range(1, 100):
            try:
                publish_new(backup, edit.original, mode)
                break
            except FileExistsError:
                backup = edit.path.with_name(f"{edit.path.name}{BACKUP_SUFFIX}-{stamp}-{n}")
    else:
        edit.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        replace_if_unchanged(edit.path, edit.text.encode(), mode, edit.read)
    except FileChangedError:
        if backup is not None:  # a copy of a file that was never replaced: no use
            backup.unlink(missing_ok=True)
        raise changed from None
    return backup
