"""Lifecycle hooks: which hook points gobtui installs, how its entries are merged into (and
taken out of) a provider's hook settings, and what a hook payload must hold to be acted on.

Claude Code (settings.json) and Codex (hooks.json) share one document shape: a top-level
`hooks` object mapping an event name to matcher groups, each `{"matcher": regex, "hooks":
[{"type": "command", "command": ...}]}`. Merging only ever adds a group of ours and removing
only takes out handlers whose command is ours: the user's other settings and hooks stay as
they are, in their order. A document of another shape is refused, never "repaired".

Pure: the adapter reads and writes the files.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeGuard

from .limits import HOOK_SESSION_ID_MAX_CHARS
from .model import Provider


class HookEvent(StrEnum):
    """What `gobtui hook <event>` is called for."""

    PRE_COMPACT = "pre-compact"
    """Before the client compacts: snapshot the transcript as it is."""
    SESSION_START = "session-start"
    """A session starts; after a compaction (source "compact") it gets a recovery pointer."""


class HookSkip(StrEnum):
    """Why a hook call did nothing (logged; the agent is never blocked)."""

    NOT_JSON = "payload_not_json"
    TOO_LARGE = "payload_too_large"
    STDIN_OPEN = "payload_stdin_not_closed"
    """The client did not close stdin within HOOK_STDIN_DEADLINE_SECS."""
    NO_SESSION = "payload_without_session"
    NO_TRANSCRIPT = "payload_without_transcript"
    OUTSIDE_HOMES = "transcript_outside_provider_homes"
    NOT_A_FILE = "transcript_not_a_regular_file"
    FILE_SESSION_UNUSABLE = "transcript_session_id_unusable"
    """The id the transcript's own records (or name) give is not one a session id can be."""
    NOT_AFTER_COMPACT = "session_start_not_after_compaction"
    UNKNOWN_EVENT = "unknown_event"
    FAILED = "snapshot_failed"


class HookNote(StrEnum):
    """Something a hook call did differently from what its payload said (logged)."""

    SESSION_ID_IGNORED = "payload_session_id_not_the_transcripts"
    """The payload's session_id is not the one its transcript's records give: the
    transcript's is used (the snapshot is its session's, whatever the payload claims)."""


class HookSettingsError(ValueError):
    """A settings document gobtui will not edit (its shape is not the hooks shape)."""


@dataclass(frozen=True)
class HookPoint:
    provider: Provider
    name: str
    """The client's event name in the settings document."""
    matcher: str
    event: HookEvent

    @property
    def label(self) -> str:
        return f"{self.provider.value}:{self.name}"


HOOK_POINTS = (
    HookPoint(Provider.CLAUDE, "PreCompact", "", HookEvent.PRE_COMPACT),
    HookPoint(Provider.CLAUDE, "SessionStart", "compact", HookEvent.SESSION_START),
    HookPoint(Provider.CODEX, "PreCompact", "", HookEvent.PRE_COMPACT),
    # Codex anchors its source matchers.
    HookPoint(Provider.CODEX, "SessionStart", "^compact$", HookEvent.SESSION_START),
)

_OURS = re.compile(r"(?:^|[/\s'\"])gobtui['\"]? hook (?:pre-compact|session-start)$")
"""A handler command of ours: `<path>/gobtui hook <event>` (the path may be quoted)."""


def hook_command(executable: str, event: HookEvent) -> str:
    return f"{shlex.quote(executable)} hook {event.value}"


def is_ours(handler: Any) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return isinstance(command, str) and _OURS.search(command.strip()) is not None


def _events(doc: Any, create: bool) -> dict[str, Any] | None:
    if not isinstance(doc, dict):
        raise HookSettingsError("the settings are not a JSON object")
    hooks = doc.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = doc["hooks"] = {}
    if not isinstance(hooks, dict):
        raise HookSettingsError('"hooks" is not an object')
    return hooks


def _groups(hooks: dict[str, Any], name: str) -> list[Any]:
    groups = hooks.setdefault(name, [])
    if not isinstance(groups, list):
        raise HookSettingsError(f'"hooks.{name}" is not a list of matcher groups')
    return groups


def _has_ours(groups: list[Any], event: HookEvent) -> bool:
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if is_ours(handler) and str(handler["command"]).endswith(f" hook {event.value}"):
                return True
    return False


@dataclass(frozen=True)
class Merge:
    doc: dict[str, Any]
    changed: list[str]
    """Labels of the hook points added (install) or taken out (uninstall)."""
    unchanged: list[str]
    """Install: hook points that were there already."""


def install_into(doc: Any, points: list[HookPoint], executable: str) -> Merge:
    """`doc` with a group of ours for each point that has none (a copy; `doc` is kept)."""
    merged = copy.deepcopy(doc)
    hooks = _events(merged, create=True)
    assert hooks is not None
    added: list[str] = []
    present: list[str] = []
    for point in points:
        groups = _groups(hooks, point.name)
        if _has_ours(groups, point.event):
            present.append(point.label)
            continue
        command = {"type": "command", "command": hook_command(executable, point.event)}
        groups.append({"matcher": point.matcher, "hooks": [command]})
        added.append(point.label)
    return Merge(merged, added, present)


def remove_from(doc: Any, provider: Provider) -> Merge:
    """`doc` without any handler of ours; groups and events that held only ours go too."""
    merged = copy.deepcopy(doc)
    hooks = _events(merged, create=False)
    removed: list[str] = []
    for name in list(hooks or {}):
        assert hooks is not None
        groups = hooks[name]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept_groups.append(group)
                continue
            kept = [h for h in handlers if not is_ours(h)]
            if f"{provider.value}:{name}" not in removed:
                removed.append(f"{provider.value}:{name}")
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[name] = kept_groups
        else:
            del hooks[name]
    if hooks == {} and removed and isinstance(merged, dict):
        del merged["hooks"]
    return Merge(merged, removed, [])


_SESSION_ID = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class HookPayload:
    session_id: str
    transcript_path: str
    source: str
    """SessionStart: startup, resume, clear or compact ("" for other events)."""


def usable_session_id(value: object) -> TypeGuard[str]:
    """A session id a hook files a snapshot under and names in a command it suggests."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= HOOK_SESSION_ID_MAX_CHARS
        and _SESSION_ID.fullmatch(value) is not None
    )


def read_payload(value: Any) -> HookPayload | HookSkip:
    """The fields a hook acts on, or why it will not act (never an exception). The session
    id is only a claim: the adapter takes the transcript's own."""
    if not isinstance(value, dict):
        return HookSkip.NOT_JSON
    session_id = value.get("session_id")
    if not usable_session_id(session_id):
        return HookSkip.NO_SESSION
    path = value.get("transcript_path")
    if not isinstance(path, str) or not path.startswith("/") or "\x00" in path:
        return HookSkip.NO_TRANSCRIPT
    source = value.get("source")
    return HookPayload(session_id, path, source if isinstance(source, str) else "")
