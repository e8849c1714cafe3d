"""Where each client keeps its hook settings, and the careful edit of that file.

The file is read whole (it is small), merged (core.hooks) and written back atomically with
its mode kept, after a copy of the old one is saved beside it under a new name. A settings
file that is a symlink (a dotfiles checkout) is not written through: the user is shown what
to add. A file that is not the hooks shape is refused, never rewritten.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ...core.hooks import HOOK_POINTS, HookSettingsError, Merge, install_into, remove_from
from ...core.model import Provider
from ..config.paths import Homes
from ..files.atomic import publish_new, replace_private

SETTINGS_FILES = {Provider.CLAUDE: "settings.json", Provider.CODEX: "hooks.json"}
"""Claude Code reads hooks from <home>/settings.json, Codex from <home>/hooks.json."""
BACKUP_SUFFIX = ".gobtui-bak"


class HookFileError(Exception):
    """A settings file gobtui will not edit, in one line."""


@dataclass(frozen=True)
class Edit:
    provider: Provider
    path: Path
    merge: Merge
    text: str
    """The whole file as it would be written."""
    existed: bool
    original: bytes
    """The file's bytes when read: the write is refused if they changed meanwhile."""


def settings_path(homes: Homes, provider: Provider) -> Path | None:
    home = homes.claude if provider is Provider.CLAUDE else homes.codex
    return None if home is None else home / SETTINGS_FILES[provider]


def _read(path: Path) -> tuple[Any, bool, bytes]:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {}, False, b""
    if stat.S_ISLNK(st.st_mode):
        raise HookFileError(f"{path} is a symlink; gobtui does not write through it")
    if not stat.S_ISREG(st.st_mode):
        raise HookFileError(f"{path} is not a regular file")
    data = path.read_bytes()
    if not data.strip():
        return {}, True, data
    try:
        return orjson.loads(data), True, data
    except orjson.JSONDecodeError as error:
        raise HookFileError(f"{path} is not valid JSON ({error}); it was left as it is") from None


def _render(doc: Any) -> str:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def plan_edit(homes: Homes, provider: Provider, executable: str, install: bool) -> Edit | None:
    """What install (or uninstall) would write for one client; None without its home."""
    path = settings_path(homes, provider)
    if path is None:
        return None
    doc, existed, original = _read(path)
    try:
        if install:
            points = [p for p in HOOK_POINTS if p.provider is provider]
            merge = install_into(doc, points, executable)
        else:
            merge = remove_from(doc, provider)
    except HookSettingsError as error:
        raise HookFileError(f"{path}: {error}; it was left as it is") from None
    return Edit(provider, path, merge, _render(merge.doc), existed, original)


def write_edit(edit: Edit, now: float | None = None) -> Path | None:
    """Write the edit (nothing when it changes nothing); the old file's copy, if one."""
    if not edit.merge.changed:
        return None
    backup = None
    mode = 0o600
    if edit.existed:
        current = edit.path.read_bytes()
        if current != edit.original:
            raise HookFileError(f"{edit.path} changed while gobtui was editing it; run it again")
        mode = stat.S_IMODE(os.lstat(edit.path).st_mode)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        backup = edit.path.with_name(f"{edit.path.name}{BACKUP_SUFFIX}-{stamp}")
        for n in range(1, 100):
            try:
                publish_new(backup, current, mode)
                break
            except FileExistsError:
                backup = edit.path.with_name(f"{edit.path.name}{BACKUP_SUFFIX}-{stamp}-{n}")
    else:
        edit.path.parent.mkdir(parents=True, exist_ok=True)
    replace_private(edit.path, edit.text.encode(), mode)
    return backup
