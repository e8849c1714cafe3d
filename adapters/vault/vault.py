"""The snapshot vault: exact, content-addressed copies of transcripts, and their history.

Layout under the root (default `data_dir()/vault`, directories 0700, files 0600):

    chunks/<sha256>      the transcript cut in VAULT_CHUNK_BYTES pieces, shared by snapshots
    manifests/<sha256>   {"schema_version":3,"source_sha256","bytes","chunks":[...]}; its
                         sha256 is the snapshot id
    index.jsonl          append-only: one IndexEntry per snapshot taken, each line carrying
                         the sha256 of its other fields (line_sha256)
    never-indexed        present while the index has never held an entry: an empty index is
                         then a fresh vault, not an emptied one
    tmp/                 private temporary files before they are linked into place

A snapshot streams the file once: each chunk is hashed and stored while the whole-file digest
runs beside it on another thread, so it costs little more than hashing. Every read re-hashes
every chunk and checks the byte count and the source digest; anything off is a VaultError
with a damage code (never a partial answer). Listings (entries, history, stats) check every
index line (its checksum) and each entry they show against its manifest (present, hashing to
the id, agreeing with the entry) without reading chunks, so they stay cheap: `stats(deep=True)`
re-hashes every chunk. Commands share a flock on the root; prune and repair take it
exclusively.

An append that fails (a full disk) is cut back off under the index's lock, so the index is as
it was; one interrupted harder (a crash) leaves an unterminated last line that readers ignore
and the next writer cuts off.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ...core.limits import (
    VAULT_CHUNK_BYTES,
    VAULT_INDEX_LINE_MAX_BYTES,
    VAULT_INDEX_MAX_BYTES,
    VAULT_INFLIGHT_CHUNKS,
    VAULT_IO_THREADS,
    VAULT_LOCK_WAIT_SECS,
    VAULT_MANIFEST_MAX_BYTES,
    VAULT_MAX_RECORDS,
    VAULT_TRANSCRIPT_MAX_BYTES,
)
from ...core.model import Provider
from ...core.vault.errors import VaultError, VaultErrorCode, check_label
from ...core.vault.index import IndexEntry, Manifest, read_index, record_count_of, validate_entry
from ...core.vault.records import diff_records
from ...core.vault.reports import RestoreReport, SnapshotDiff, VaultStats
from ..config.paths import data_dir
from ..files.atomic import fsync_dir, write_all
from ..files.private_fs import PrivateError, PrivateErrorCode, private_dir
from ..providers.registry import record_type
from . import fs
from .reader import VaultReader, io_errors

if TYPE_CHECKING:
    pass

Progress = Callable[[int, int], None]
"""progress(bytes done, bytes in all) while a snapshot streams."""
Locate = Callable[[Provider, str], str | None]
"""locate(provider, session id) -> that session's transcript path, for `repair`."""

_PLACEHOLDER_SHA = "0" * 64


class Vault:
    def __init__(
        self,
        root: Path | None = None,
        *,
        chunk_bytes: int = VAULT_CHUNK_BYTES,
        max_bytes: int = VAULT_TRANSCRIPT_MAX_BYTES,
        lock_wait_secs: float = VAULT_LOCK_WAIT_SECS,
    ) -> None:
        if not 1 <= chunk_bytes <= VAULT_CHUNK_BYTES:
            raise ValueError(f"chunk_bytes must be 1..{VAULT_CHUNK_BYTES}")
        if not 0 <= max_bytes <= VAULT_TRANSCRIPT_MAX_BYTES:
            raise ValueError(f"max_bytes must be 0..{VAULT_TRANSCRIPT_MAX_BYTES}")
        self.root = Path(os.path.abspath(root if root is not None else data_dir() / "vault"))
        self.chunk_bytes = chunk_bytes
        self.max_bytes = max_bytes
        self.lock_wait_secs = lock_wait_secs

    @property
    def chunks_dir(self) -> Path:
        return self.root / "chunks"

    @property
    def manifests_dir(self) -> Path:
        return self.root / "manifests"

    @property
    def tmp_dir(self) -> Path:
        return self.root / "tmp"

    @property
    def index_path(self) -> Path:
        return self.root / "index.jsonl"

    @property
    def never_indexed_path(self) -> Path:
        return self.root / "never-indexed"

    # --- reading -----------------------------------------------------------------------------

    @contextmanager
    def reading(self, *, exclusive: bool = False) -> Iterator[VaultReader]:
        """A view of the vault with the lock held (shared, or exclusive for prune) throughout.

        A vault that does not exist yet reads as empty and is not created.
        """
        with io_errors():
            if not fs.is_real_dir(self.root):
                yield VaultReader(self, exists=False)
                return
            with fs.locked(self.root, exclusive=exclusive, wait_secs=self.lock_wait_secs):
                yield VaultReader(self, exists=True)

    def entries(self, *, checked: bool = True) -> list[IndexEntry]:
        """Every snapshot, newest first (append order, not wall clock).

        Each is checked against its manifest (VaultReader.checked_entries), so a listing never
        shows an entry that cannot be read back; `checked=False` only parses the index, for
        callers that merely look up session ids and verify what they then read.
        """
        with self.reading() as reader:
            return reader.checked_entries() if checked else reader.entries()

    def history(self, session_id: str) -> list[IndexEntry]:
        """One session's snapshots, newest first, each checked against its manifest."""
        with self.reading() as reader:
            return reader.checked_entries(session_id)

    def find(self, sha_or_prefix: str) -> IndexEntry:
        """The newest entry of the one snapshot whose id starts so (NOT_FOUND / AMBIGUOUS)."""
        with self.reading() as reader:
            return reader.find(sha_or_prefix)

    def read_bytes(self, sha: str) -> bytes:
        """The whole snapshot, verified (it is loaded in memory: prefer iter_records)."""
        with self.reading() as reader:
            return b"".join(reader.chunks(sha))

    def iter_records(self, sha: str) -> Iterator[tuple[int, bytes]]:
        """(physical line index, line without its newline), streamed from verified chunks.

        The lock is held until the iterator is exhausted or closed. A damaged chunk raises
        when it is reached, and a source digest mismatch at the very end: act on what was
        read only once the iteration has finished.
        """
        with self.reading() as reader:
            yield from reader.records(sha)

    def stats(self, *, deep: bool = False) -> VaultStats:
        """Counts and sizes; `deep` re-hashes every chunk (VaultReader.stats)."""
        with self.reading() as reader:
            return reader.stats(deep=deep)

    def diff(self, a: str, b: str) -> SnapshotDiff:
        """Record-level comparison: record hashes added and removed, record counts per type."""
        with self.reading() as reader:
            return diff_records(a, b, _typed_records(reader, a), _typed_records(reader, b))

    # --- writing -----------------------------------------------------------------------------

    def snapshot(
        self,
        path: Path,
        provider: Provider,
        session_id: str,
        label: str,
        now: float,
        progress: Progress | None = None,
    ) -> IndexEntry:
        """Store the transcript's current bytes and append an index entry (returned).

        The file is streamed in chunks, never loaded whole; chunks already in the vault (an
        earlier version of an appended file) are checked byte for byte and reused. The bytes
        taken are the file's size when it was opened.
        """
        with io_errors():
            source = Path(os.path.realpath(path))
            # Bad names and labels are refused before anything is read or written.
            check_label(label)
            validate_entry(
                ts=now, sha256=_PLACEHOLDER_SHA, path=str(source), session_id=session_id,
                provider=provider, bytes=0, record_count=0, source_sha256=_PLACEHOLDER_SHA,
                strategy=label,
            )  # fmt: skip
            fd = _open_source(source)
            try:
                size = os.fstat(fd).st_size
                if size > self.max_bytes:
                    raise VaultError(
                        VaultErrorCode.LIMIT,
                        f"{source} has {size} bytes; the vault takes at most {self.max_bytes}",
                    )
                self._prepare()
                with fs.locked(self.root, exclusive=False, wait_secs=self.lock_wait_secs):
                    floor = self._begin()
                    manifest, records = self._store_chunks(fd, size, progress)
                    sha = self._store_manifest(manifest)
                    entry = validate_entry(
                        ts=now, sha256=sha, path=str(source), session_id=session_id,
                        provider=provider, bytes=size, record_count=records,
                        source_sha256=manifest.source_sha256, strategy=label,
                    )  # fmt: skip
                    self._append_index(entry, floor)
                    return entry.bound()
            finally:
                os.close(fd)

    def restore_to(self, sha: str, target: Path) -> RestoreReport:
        """Write a verified snapshot to `target`, a file that must not exist yet.

        The bytes go to a private temporary file beside the target and get the target's name
        (a hard link: never over an existing file) only once every check has passed.
        """
        target = Path(os.path.abspath(target))
        with io_errors():
            if os.path.lexists(target):
                raise VaultError(
                    VaultErrorCode.TARGET_EXISTS, f"{target} exists; restore writes a new file"
                )
            with self.reading() as reader:
                manifest = reader.manifest(sha)
                published = fs.store_new(target, reader.chunks(sha, manifest), target.parent)
                if not published:
                    raise VaultError(
                        VaultErrorCode.TARGET_EXISTS, f"{target} appeared while restoring"
                    )
                fsync_dir(target.parent)
            return RestoreReport(
                snapshot_sha256=sha,
                source_sha256=manifest.source_sha256,
                bytes=manifest.bytes,
                path=str(target),
            )

    def _prepare(self) -> None:
        for directory in (self.root, self.chunks_dir, self.manifests_dir, self.tmp_dir):
            try:
                private_dir(directory, "vault folder", root=self.root)
            except PrivateError as error:  # a symlink, a file, someone else's: fail closed
                code = (
                    VaultErrorCode.IO
                    if error.code is PrivateErrorCode.IO
                    else VaultErrorCode.DAMAGED_LAYOUT
                )
                raise VaultError(code, str(error)) from None

    def _store_chunks(self, fd: int, size: int, progress: Progress | None) -> tuple[Manifest, int]:
        """Read, hash and store every chunk.

        Chunk digests run on this thread and the whole-file digest on another (hashlib drops
        the GIL for both); that thread also counts newlines, which holds the GIL but overlaps
        with the chunk hashing. Chunk writes, each with its fsync, run on a few more threads.
        """
        source = hashlib.sha256()
        digests: list[str] = []
        seen: set[str] = set()
        newlines = 0
        last = b""
        counting: deque[Future[int]] = deque()
        storing: deque[Future[bool]] = deque()

        def digest_and_count(data: bytes) -> int:
            source.update(data)
            return data.count(b"\n")

        with (
            ThreadPoolExecutor(1, thread_name_prefix="vault-digest") as digest_pool,
            ThreadPoolExecutor(VAULT_IO_THREADS, thread_name_prefix="vault-io") as io_pool,
        ):
            try:
                offset = 0
                while offset < size:
                    want = min(self.chunk_bytes, size - offset)
                    data = os.pread(fd, want, offset)
                    if len(data) != want:
                        raise VaultError(
                            VaultErrorCode.SOURCE_CHANGED,
                            "the transcript shrank while it was being snapshotted",
                        )
                    counting.append(digest_pool.submit(digest_and_count, data))
                    sha = hashlib.sha256(data).hexdigest()
                    digests.append(sha)
                    if sha not in seen:
                        seen.add(sha)
                        storing.append(io_pool.submit(self._put_chunk, sha, data))
                    offset += want
                    last = data[-1:]
                    while len(counting) > VAULT_INFLIGHT_CHUNKS:
                        newlines += counting.popleft().result()
                    while len(storing) > VAULT_INFLIGHT_CHUNKS:
                        storing.popleft().result()
                    if newlines > VAULT_MAX_RECORDS:
                        raise _too_many_records()
                    if progress is not None:
                        progress(offset, size)
                while counting:
                    newlines += counting.popleft().result()
                while storing:
                    storing.popleft().result()
            finally:
                for pending in (counting, storing):
                    for future in pending:
                        future.cancel()
        records = record_count_of(newlines, size, last == b"\n")
        if records > VAULT_MAX_RECORDS:
            raise _too_many_records()
        fsync_dir(self.chunks_dir)
        return Manifest(source_sha256=source.hexdigest(), bytes=size, chunks=digests), records

    def _put_chunk(self, sha: str, data: bytes) -> bool:
        """Store one chunk; True when new. An existing one must hold exactly these bytes."""
        final = self.chunks_dir / sha
        if not os.path.lexists(final) and fs.store_new(final, (data,), self.tmp_dir):
            return True
        try:
            existing = fs.read_small(final, VAULT_CHUNK_BYTES)
        except fs.NotRegular:
            existing = None
        if existing != data:
            raise VaultError(
                VaultErrorCode.DAMAGED_CHUNK, f"chunk {sha} does not hold the bytes it is named for"
            )
        return False

    def _store_manifest(self, manifest: Manifest) -> str:
        data = manifest.to_bytes()
        if len(data) > VAULT_MANIFEST_MAX_BYTES:
            raise VaultError(VaultErrorCode.LIMIT, "the snapshot needs too large a manifest")
        sha = hashlib.sha256(data).hexdigest()
        final = self.manifests_dir / sha
        if os.path.lexists(final) or not fs.store_new(final, (data,), self.tmp_dir):
            try:
                existing = fs.read_small(final, VAULT_MANIFEST_MAX_BYTES)
            except fs.NotRegular:
                existing = None
            if existing != data:
                raise VaultError(
                    VaultErrorCode.DAMAGED_MANIFEST,
                    f"manifest {sha} does not hold the bytes it is named for",
                )
        fsync_dir(self.manifests_dir)
        return sha

    def _begin(self) -> int:
        """Before anything is stored: refuse a damaged index, make sure the index exists (so
        manifests without one always mean it was deleted) and, in a vault that never held an
        entry, put the never-indexed marker down before the first manifest. Returns the
        index's intact length, which only appends can change while the shared lock is held."""
        intact = VaultReader(self, exists=True).index_view().intact  # damage stops us here
        fd = self._open_index()
        try:
            fs.lock_file(fd, exclusive=True)
            # Lines are shorter than VAULT_INDEX_LINE_MAX_BYTES: no newline there, no entry.
            entryless = b"\n" not in fs.read_fd(fd, VAULT_INDEX_LINE_MAX_BYTES)
            if entryless and not fs.hex_names(self.manifests_dir):
                fs.touch_private(self.never_indexed_path)
                fsync_dir(self.root)  # the index and marker must outlast the manifest
        finally:
            os.close(fd)
        return intact

    def _open_index(self) -> int:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.index_path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise VaultError(VaultErrorCode.DAMAGED_LAYOUT, "the index is not a plain file")
        return fd

    def _append_index(self, entry: IndexEntry, floor: int) -> None:
        """Append one bound line, or leave the index exactly as it was.

        Under the index's exclusive lock: a torn tail an earlier append left is cut off
        first, and if this write or its fsync fails (ENOSPC, EIO) the file is truncated back
        to its previous length before the error is raised, so no half line stays behind.
        """
        line = entry.to_line()
        if len(line) > VAULT_INDEX_LINE_MAX_BYTES:
            raise VaultError(VaultErrorCode.LIMIT, "the index entry is too long")
        fd = self._open_index()
        try:
            fs.lock_file(fd, exclusive=True)  # snapshots share the root lock: serialize appends
            size = os.fstat(fd).st_size
            view = read_index(fs.read_fd(fd, size))  # never append after a damaged line
            if view.intact < floor:
                raise VaultError(
                    VaultErrorCode.DAMAGED_INDEX, "the index shrank while a snapshot was taken"
                )
            if view.intact + len(line) > VAULT_INDEX_MAX_BYTES:
                raise VaultError(VaultErrorCode.LIMIT, "the index is full (128 MiB); prune it")
            if view.torn:
                os.ftruncate(fd, view.intact)
            try:
                write_all(fd, line)
                os.fsync(fd)
            except BaseException:
                _truncate_back(fd, view.intact)
                raise
            fs.unlink_quietly(self.never_indexed_path)
        finally:
            os.close(fd)
        fsync_dir(self.root)


def _truncate_back(fd: int, length: int) -> None:
    """Undo a failed append. If even this fails the tail stays torn, which readers ignore and
    the next writer cuts off; the append's own error is the one reported."""
    with suppress(OSError):
        os.ftruncate(fd, length)
        os.fsync(fd)


def _open_source(source: Path) -> int:
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK)
    except FileNotFoundError:
        raise VaultError(VaultErrorCode.NOT_FOUND, f"no such transcript: {source}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise VaultError(VaultErrorCode.INVALID_INPUT, f"{source} is not a regular file")
    return fd


def _too_many_records() -> VaultError:
    return VaultError(
        VaultErrorCode.LIMIT, f"the transcript has more than {VAULT_MAX_RECORDS} records"
    )


def _typed_records(reader: VaultReader, sha: str) -> list[tuple[str, str]]:
    out = []
    for _, line in reader.records(sha):
        try:
            kind = record_type(orjson.loads(line))
        except orjson.JSONDecodeError:
            kind = "unparsed"
        out.append((hashlib.sha256(line).hexdigest(), kind))
    return out
