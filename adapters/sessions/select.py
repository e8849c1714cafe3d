"""Choosing one session from the command line: an id prefix or a transcript file path.

A selector is checked before use (nonempty, bounded, no control characters). An exact id wins
over prefixes; a prefix that fits several sessions is an error listing them. A subagent is
selected by its own agent id. A path is taken as it is: the provider is judged by content.
"""

from __future__ import annotations

import os
import stat
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ...core.limits import DEFAULT_MAX_AGE_SECS, SELECT_LIST_MAX, SELECTOR_MAX_CHARS
from ...core.model import Provider, SessionSummary
from ..config.paths import Homes, cache_dir
from .cache import SummaryCache
from .discovery import EMPTY, sniff_file
from .store import SessionStore


class SelectErrorCode(StrEnum):
    EMPTY = "empty"
    TOO_LONG = "too_long"
    CONTROL_CHARS = "control_chars"
    NO_MATCH = "no_match"
    AMBIGUOUS = "ambiguous"
    NOT_FOUND = "not_found"
    NOT_A_FILE = "not_a_file"
    UNREADABLE = "unreadable"
    NOT_A_TRANSCRIPT = "not_a_transcript"


class SelectError(Exception):
    """A one-line message about a selector that names no single session."""

    def __init__(self, code: SelectErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Selection:
    """The chosen transcript. `summary` is None for a path outside the scanned sessions."""

    provider: Provider
    path: str
    summary: SessionSummary | None = None

    @property
    def session_id(self) -> str | None:
        return own_id(self.summary) if self.summary is not None else None


def own_id(summary: SessionSummary) -> str:
    """The id a session is selected by: a subagent's agent id, else the session id.

    A Claude subagent file carries its parent's session id, so that one would be ambiguous.
    """
    return summary.agent_id or summary.session_id


def check_selector(selector: str) -> str:
    """The selector, if usable; else SelectError. Control characters are never echoed."""
    if not selector.strip():
        raise SelectError(SelectErrorCode.EMPTY, "empty session selector")
    if len(selector) > SELECTOR_MAX_CHARS:
        raise SelectError(
            SelectErrorCode.TOO_LONG,
            f"session selector of {len(selector)} characters (at most {SELECTOR_MAX_CHARS})",
        )
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in selector):
        raise SelectError(
            SelectErrorCode.CONTROL_CHARS,
            "session selector contains control or format characters (escapes, bidi marks)",
        )
    return selector


def looks_like_path(selector: str) -> bool:
    """A selector taken as a path (not an id): it has a separator, ~ or . first, or .jsonl."""
    return os.sep in selector or selector.startswith(("~", ".")) or selector.endswith(".jsonl")


def select_session(selector: str, summaries: Iterable[SessionSummary]) -> Selection:
    """The one session `selector` names among `summaries` (subagents included), or a path."""
    selector = check_selector(selector)
    known = {s.path: s for s in summaries}  # one entry per file
    if looks_like_path(selector):
        return _select_path(selector, known)
    found = [s for s in known.values() if own_id(s) == selector]
    if not found:
        found = [s for s in known.values() if own_id(s).startswith(selector)]
    if len(found) == 1:
        return Selection(found[0].provider, found[0].path, found[0])
    if found:
        found.sort(key=lambda s: (-s.mtime, s.path))
        listed = ", ".join(f"{own_id(s)} ({s.path})" for s in found[:SELECT_LIST_MAX])
        more = ", …" if len(found) > SELECT_LIST_MAX else ""
        raise SelectError(
            SelectErrorCode.AMBIGUOUS,
            f"{selector!r} matches {len(found)} sessions: {listed}{more}",
        )
    if os.path.isfile(selector):  # a bare file name in the current directory
        return _select_path(selector, known)
    raise SelectError(SelectErrorCode.NO_MATCH, f"no session matches {selector!r}")


def _select_path(selector: str, known: dict[str, SessionSummary]) -> Selection:
    path = os.path.abspath(os.path.expanduser(selector))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise SelectError(SelectErrorCode.NOT_FOUND, f"no such file: {path}") from None
    except OSError as error:
        raise SelectError(
            SelectErrorCode.UNREADABLE, f"cannot read {path}: {error.strerror}"
        ) from None
    if stat.S_ISDIR(mode):
        raise SelectError(
            SelectErrorCode.NOT_A_FILE, f"{path} is a directory, not a transcript file"
        )
    if not stat.S_ISREG(mode):
        raise SelectError(SelectErrorCode.NOT_A_FILE, f"{path} is not a regular file")
    real = os.path.realpath(path)
    for summary in known.values():
        if os.path.realpath(summary.path) == real:
            return Selection(summary.provider, summary.path, summary)
    try:
        sniffed = sniff_file(path)
    except OSError as error:
        raise SelectError(
            SelectErrorCode.UNREADABLE, f"cannot read {path}: {error.strerror}"
        ) from None
    if sniffed is None or sniffed == EMPTY:
        what = "is empty" if sniffed == EMPTY else "is not a Claude Code or Codex transcript"
        raise SelectError(SelectErrorCode.NOT_A_TRANSCRIPT, f"{path} {what}")
    return Selection(sniffed, path)


def load_summaries(
    homes: Homes,
    all_sessions: bool,
    *,
    use_cache: bool = True,
    now: float | None = None,
) -> list[SessionSummary]:
    """Every session file under the homes, subagents as their own entries, sorted by path.

    Uses the same cursor cache as `detect`, so a warm run reads only what changed.
    """
    cache = SummaryCache(cache_dir() / "cursors") if use_cache else None
    try:
        store = SessionStore(
            homes, cache, max_age_secs=None if all_sessions else DEFAULT_MAX_AGE_SECS
        )
        store.scan(time.time() if now is None else now)
        summaries = [store.get(path) for path in store.paths()]
    finally:
        if cache is not None:
            cache.close()
    return [summary for summary in summaries if summary is not None]
