"""Finding transcript files under the provider homes: by content, within fixed bounds.

A `.jsonl` file is a transcript when its first records look like one (`sniff_record`), not
because of its name. The walk is bounded (depth below the home, total directory entries),
never follows a symlink that leads out of the home, and skips (and counts) what it cannot
read, with a warning on the `adapters.sessions.discovery` logger. Files older than the age cut-off are
not opened at all.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

from ...core.limits import DISCOVERY_MAX_ENTRIES, SNIFF_BYTES
from ...core.model import Provider
from ..config.paths import Homes
from ..files.jsonl import decode_line
from ..files.regular import open_regular
from ..providers.registry import provider_of, providers, sniff_prefix, sniff_record

log = logging.getLogger(__name__)

SNIFF_FIRST_READ = 4096
"""Most first lines fit here; only a longer one costs a second read up to SNIFF_BYTES."""
SNIFF_MAX_OBJECTS = 4
"""JSON objects looked at before a file is declared not a transcript."""

EMPTY: Final = "empty"
_NOT: Final = "not"
Sniffed = Provider | Literal["empty"] | None
"""A provider, EMPTY (a whitespace-only file), or None: not a transcript."""
_Verdict = Provider | Literal["empty", "not"]
KnownProvider = Callable[[str, int], Provider | None]
"""(path, inode) -> the provider when the caller already knows the file (no sniff then)."""


@dataclass(frozen=True, slots=True)
class Found:
    provider: Provider
    path: str
    size: int
    mtime: float
    inode: int
    is_subagent: bool = False
    parent_path: str | None = None
    mtime_ns: int | None = None
    """The walk's stat figure (None: not from a stat)."""


@dataclass(slots=True)
class DiscoveryReport:
    found: list[Found] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Directories and files that could not be read."""
    entries: int = 0
    truncated: bool = False
    """DISCOVERY_MAX_ENTRIES was reached before the walk ended."""
    not_followed: int = 0
    """Symlinks leading out of the home."""
    too_old: int = 0
    not_transcripts: int = 0


@dataclass(frozen=True, slots=True)
class Root:
    provider: Provider
    home: str
    path: str
    max_depth: int
    """Entries deeper than this below the home are not visited (the root itself is 1)."""


def provider_roots(homes: Homes) -> list[Root]:
    """Each provider's session folders in its home (its package's SESSION_DIRS: Claude's
    projects, Codex's sessions and archived_sessions), existing or not."""
    roots: list[Root] = []
    for provider in providers():
        home = homes.of(provider)
        if home is None:
            continue
        package = provider_of(provider)
        for name in package.SESSION_DIRS:
            path = os.path.join(str(home), name)
            roots.append(Root(provider, str(home), path, package.SESSION_MAX_DEPTH))
    return roots


def _skip(report: DiscoveryReport, path: str, error: OSError) -> None:
    """Count what cannot be read, and say so: a silent skip looks like an empty home."""
    report.skipped.append(path)
    if not isinstance(error, FileNotFoundError):  # gone since it was listed: nothing to say
        log.warning("cannot read %s: %s", path, (error.strerror or str(error)).lower())


def _inside(real: str, base: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


class _Walk:
    """One root's bounds: what a symlink may resolve to, and the layout rules."""

    def __init__(self, root: Root) -> None:
        self.root = root
        # The fixed root may itself be a symlink (sessions on another disk): the user set
        # that up, so both the home and the root's target count as inside.
        self.bounds = (os.path.realpath(root.home), os.path.realpath(root.path))
        self.file_layout = provider_of(root.provider).file_layout

    def allowed(self, real: str) -> bool:
        return any(_inside(real, base) for base in self.bounds)

    def layout(self, parts: tuple[str, ...]) -> tuple[bool, str | None, bool]:
        """(is_subagent, parent_path, expected) for a file at root/parts, as the root's
        provider lays its files out."""
        is_subagent, parent, expected = self.file_layout(parts)
        where = os.path.join(self.root.path, *parent) if parent is not None else None
        return is_subagent, where, expected


def sniff_bytes(data: bytes, *, at_eof: bool) -> _Verdict | None:
    """Judge the head of a file; None when more bytes are needed (only before EOF)."""
    pos = 0
    objects = 0
    seen_content = False
    while objects < SNIFF_MAX_OBJECTS:
        nl = data.find(b"\n", pos)
        if nl < 0:
            line = data[pos:].strip()
            if not line:
                if not at_eof:
                    return None
                return EMPTY if not seen_content else _NOT
            if at_eof:
                decoded = decode_line(line)
                if isinstance(decoded, dict):
                    return sniff_record(decoded) or _NOT
            elif len(data) < SNIFF_BYTES:
                return None
            # A first line longer than SNIFF_BYTES, or one still being written.
            return _sniff_prefix(line)
        line = data[pos:nl].strip()
        pos = nl + 1
        if not line:
            continue
        seen_content = True
        decoded = decode_line(line)
        if isinstance(decoded, dict):
            objects += 1
            provider = sniff_record(decoded)
            if provider is not None:
                return provider
    return _NOT


def _sniff_prefix(line: bytes) -> Provider | Literal["not"]:
    """Top-level keys of an unfinished first line (escaped text cannot match a quoted key)."""
    if not line.startswith(b"{"):
        return _NOT
    return sniff_prefix(line) or _NOT


def sniff_file(path: str) -> Sniffed:
    """Provider by content, EMPTY for an empty (whitespace) file, None when not a transcript.

    Raises OSError when the file cannot be read.
    """
    fd = open_regular(path, follow_symlinks=True)
    try:
        if hasattr(os, "posix_fadvise"):  # a cold disk would read ahead far past the head
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        data = os.pread(fd, SNIFF_FIRST_READ, 0)
        at_eof = len(data) < SNIFF_FIRST_READ
        verdict = sniff_bytes(data, at_eof=at_eof)
        if verdict is None:
            more = os.pread(fd, SNIFF_BYTES - len(data), len(data))
            data += more
            verdict = sniff_bytes(data, at_eof=len(data) < SNIFF_BYTES)
            if verdict is None:
                verdict = _NOT
    finally:
        os.close(fd)
    return None if verdict == _NOT else verdict


def _judge(
    walk: _Walk,
    path: str,
    parts: tuple[str, ...],
    st: os.stat_result,
    cutoff: float | None,
    known: KnownProvider | None,
    report: DiscoveryReport,
) -> Found | None:
    """Age filter, layout and content sniff for one regular .jsonl file. May raise OSError."""
    if cutoff is not None and st.st_mtime < cutoff:
        report.too_old += 1
        return None
    is_subagent, parent, expected = walk.layout(parts)
    provider = known(path, st.st_ino) if known is not None else None
    if provider is None:
        sniffed = sniff_file(path)
        if sniffed == EMPTY and expected:
            # An empty file in the expected place is a session that has just been created.
            provider = walk.root.provider
        elif isinstance(sniffed, Provider):
            provider = sniffed
        else:
            report.not_transcripts += 1
            return None
    return Found(
        provider, path, st.st_size, st.st_mtime, st.st_ino, is_subagent, parent, st.st_mtime_ns
    )


Candidate = tuple[_Walk, str, tuple[str, ...], os.stat_result]
"""A regular .jsonl file met by the walk, not judged yet: (root's bounds, path, parts, stat)."""
Prefetch = Callable[[list[str]], None]
"""Told every path about to be judged, before the first `known` call (to look them up at once)."""


def _walk_root(
    walk: _Walk, report: DiscoveryReport, max_entries: int, candidates: list[Candidate]
) -> None:
    root = walk.root
    stack: list[tuple[str, int, tuple[str, ...]]] = [(root.path, 1, ())]
    visited = {walk.bounds[1]}
    while stack:
        directory, depth, parts = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as error:
            _skip(report, directory, error)
            continue
        subdirs: list[tuple[str, int, tuple[str, ...]]] = []
        for entry in entries:
            if report.entries >= max_entries:
                report.truncated = True
                return
            report.entries += 1
            child_parts = (*parts, entry.name)
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    if not walk.allowed(real):
                        report.not_followed += 1
                        continue
                    if entry.is_dir():
                        if real in visited:  # a loop back into the tree
                            continue
                        visited.add(real)
                if entry.is_dir():
                    if depth + 1 < root.max_depth:
                        subdirs.append((entry.path, depth + 1, child_parts))
                    continue
                if not entry.name.endswith(".jsonl") or not entry.is_file():
                    continue
                candidates.append((walk, entry.path, child_parts, entry.stat()))
            except OSError as error:
                _skip(report, entry.path, error)
        stack.extend(reversed(subdirs))  # depth-first in name order: truncation is stable


def _candidates(homes: Homes, report: DiscoveryReport, max_entries: int) -> list[Candidate]:
    """Every regular .jsonl file the walk of the provider roots meets, not judged yet."""
    candidates: list[Candidate] = []
    for root in provider_roots(homes):
        try:
            if not stat.S_ISDIR(os.stat(root.path).st_mode):
                continue
        except (FileNotFoundError, NotADirectoryError):
            continue  # a default home that does not exist yet is simply empty
        except OSError as error:  # e.g. a home without search permission
            _skip(report, root.path, error)
            continue
        _walk_root(_Walk(root), report, max_entries, candidates)
        if report.truncated:
            break
    return candidates


def any_transcript(homes: Homes) -> bool:
    """Whether the homes hold a transcript at all (of any age): judged file by file, up to
    the first one (`--auto-demo` asks before the board starts)."""
    report = DiscoveryReport()
    for walk, path, parts, st in _candidates(homes, report, DISCOVERY_MAX_ENTRIES):
        try:
            if _judge(walk, path, parts, st, None, None, report) is not None:
                return True
        except OSError:
            continue  # unreadable: the board reports it
    return False


def scan_homes(
    homes: Homes,
    *,
    now: float,
    max_age_secs: float | None,
    known: KnownProvider | None = None,
    max_entries: int = DISCOVERY_MAX_ENTRIES,
    prefetch: Prefetch | None = None,
) -> DiscoveryReport:
    """Walk every provider root; the full report (found, skipped, bounds hit)."""
    report = DiscoveryReport()
    cutoff = None if max_age_secs is None else now - max_age_secs
    candidates = _candidates(homes, report, max_entries)
    if prefetch is not None:
        prefetch([path for _, path, _, st in candidates if cutoff is None or st.st_mtime >= cutoff])
    for walk, path, parts, st in candidates:
        try:
            found = _judge(walk, path, parts, st, cutoff, known, report)
        except OSError as error:
            _skip(report, path, error)
            continue
        if found is not None:
            report.found.append(found)
    report.found.sort(key=lambda f: f.path)
    # A file reached twice (through an inside symlink) is reported once, at its first path.
    seen: set[tuple[int, int, float]] = set()
    unique: list[Found] = []
    for found in report.found:
        key = (found.inode, found.size, found.mtime)
        if key not in seen:
            seen.add(key)
            unique.append(found)
    report.found = unique
    return report


def discover(homes: Homes, *, now: float, max_age_secs: float | None) -> list[Found]:
    """Transcript files under the homes, sorted by path. See scan_homes for the counters."""
    return scan_homes(homes, now=now, max_age_secs=max_age_secs).found


def discover_path(
    homes: Homes,
    path: str,
    *,
    now: float,
    max_age_secs: float | None,
    known: KnownProvider | None = None,
) -> Found | None:
    """Judge one path (a watcher event) by the same rules as the walk.

    None when the path is outside every root, too deep, leaves the home through a symlink,
    is not a regular .jsonl file or not a transcript. Raises OSError when it cannot be read
    (FileNotFoundError when it is gone).
    """
    if not path.endswith(".jsonl"):
        return None
    path = os.path.abspath(path)
    real = os.path.realpath(path)
    for root in provider_roots(homes):
        walk = _Walk(root)
        # Watchers may report resolved paths: map them back under the root as spelled.
        if _inside(path, root.path):
            rel = os.path.relpath(path, root.path)
        elif _inside(path, walk.bounds[1]):
            rel = os.path.relpath(path, walk.bounds[1])
        else:
            continue
        parts = tuple(rel.split(os.sep))
        if rel == "." or len(parts) + 1 > root.max_depth or not walk.allowed(real):
            return None
        full = os.path.join(root.path, *parts)
        st = os.stat(full)
        if not stat.S_ISREG(st.st_mode):
            return None
        cutoff = None if max_age_secs is None else now - max_age_secs
        return _judge(walk, full, parts, st, cutoff, known, DiscoveryReport())
    return None
