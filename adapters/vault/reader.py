"""Reading the vault with its lock held: the index, manifests, and verified chunk streams.

Obtained from `Vault.reading()`. Every index line is parsed and, when bound, checked against
its checksum; an index that is missing or empty while manifests are there is damage (an
emptied index must not read as an empty vault). Every chunk is re-hashed as it is read (one
chunk ahead on a worker thread, so hashing overlaps the caller's work); the byte count and
the whole-file digest are checked when the stream ends.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from ...core.limits import (
    VAULT_AMBIGUOUS_SHOWN,
    VAULT_CHUNK_BYTES,
    VAULT_INDEX_MAX_BYTES,
    VAULT_MANIFEST_MAX_BYTES,
    VAULT_MAX_RECORDS,
    VAULT_PREFETCH_CHUNKS,
    VAULT_SHA_PREFIX_MIN_CHARS,
)
from ...core.vault.errors import VaultError, VaultErrorCode, is_hex_prefix, quote, require_sha256
from ...core.vault.index import IndexEntry, IndexView, Manifest, read_index
from ...core.vault.reports import DamagedSnapshot, VaultStats
from . import fs


class VaultLayout(Protocol):
    """Where a vault keeps its files (adapters.vault.vault.Vault is one): all a reader needs."""

    @property
    def index_path(self) -> Path: ...
    @property
    def manifests_dir(self) -> Path: ...
    @property
    def chunks_dir(self) -> Path: ...
    @property
    def never_indexed_path(self) -> Path: ...


@contextmanager
def io_errors() -> Iterator[None]:
    """OSError from the file system becomes a one-line VaultError(IO)."""
    try:
        yield
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        raise VaultError(VaultErrorCode.IO, f"{error.strerror or error}{where}") from error


class VaultReader:
    def __init__(self, vault: VaultLayout, *, exists: bool) -> None:
        self.vault = vault
        self.exists = exists
        self._index: tuple[bytes, IndexView] | None = None
        self._lines: dict[str, list[int]] | None = None

    # --- the index ---------------------------------------------------------------------------

    def entries_in_order(self) -> list[IndexEntry]:
        """Every entry in append order (oldest first); read and validated once per reader."""
        return self.index_view().entries

    def index_view(self) -> IndexView:
        """The index as read (entries, intact bytes, a torn tail), once per reader."""
        return self._load_index()[1]

    def entries(self) -> list[IndexEntry]:
        """Newest first, as the index says (nothing checked beyond the lines themselves)."""
        return self.entries_in_order()[::-1]

    def checked_entries(self, session_id: str | None = None) -> list[IndexEntry]:
        """Newest first (of one session, or all), each bound to a sound manifest.

        What a listing shows must be restorable as shown, so every entry listed is checked
        against its manifest (check_manifests); chunks are not read, which keeps it cheap.
        """
        entries = [e for e in self.entries() if session_id is None or e.session_id == session_id]
        self.check_manifests(entries)
        return entries

    def check_manifests(self, entries: Iterable[IndexEntry]) -> dict[str, Manifest]:
        """The manifests of `entries` by id, each verified by `manifest` (present, a plain
        file, hashing to its id, parsable, agreeing with every index line that names it)."""
        manifests: dict[str, Manifest] = {}
        for entry in entries:
            if entry.sha256 not in manifests:
                manifests[entry.sha256] = self.manifest(entry.sha256)
        return manifests

    def _index_lines(self, sha: str) -> list[int]:
        """The 1-based index lines naming snapshot `sha` (a map built once per reader)."""
        if self._lines is None:
            self._lines = {}
            for number, entry in enumerate(self.entries_in_order(), start=1):
                self._lines.setdefault(entry.sha256, []).append(number)
        return self._lines.get(sha, [])

    def index_bytes(self) -> bytes:
        """The raw index as read (at most one byte over its limit, so it can be refused)."""
        return self._load_index()[0]

    def _load_index(self) -> tuple[bytes, IndexView]:
        if self._index is None:
            self._index = self._read_index() if self.exists else (b"", IndexView([], 0, 0))
        return self._index

    def _read_index(self, again: bool = True) -> tuple[bytes, IndexView]:
        try:
            fd = fs.open_regular(self.vault.index_path)
        except FileNotFoundError:
            # A snapshot creates the index before it stores a manifest, so manifests without
            # an index mean it was deleted; unless the index appeared after we looked (the
            # manifest listed is that snapshot's): then it is read like any other.
            if not fs.hex_names(self.vault.manifests_dir):
                return b"", IndexView([], 0, 0)
            if again and os.path.lexists(self.vault.index_path):
                return self._read_index(again=False)
            self._refuse_emptied("missing")
            return b"", IndexView([], 0, 0)
        except fs.NotRegular:
            raise VaultError(
                VaultErrorCode.DAMAGED_INDEX, "the index is not a plain file"
            ) from None
        try:
            fs.lock_file(fd, exclusive=False)  # an append in progress is never seen half-done
            data = fs.read_fd(fd, VAULT_INDEX_MAX_BYTES + 1)
            view = read_index(data)
            if not view.entries:
                # Still under the index lock, so no append can land (and retire the marker)
                # between reading the index and looking at the marker.
                self._refuse_emptied("empty")
        finally:
            os.close(fd)
        return data, view

    def _refuse_emptied(self, how: str) -> None:
        """An index without entries is an empty vault only when no manifest is there either,
        or when the vault never held an entry yet (its first snapshot failed to append:
        the never-indexed marker). Otherwise the index was deleted or emptied: damage."""
        manifests = fs.hex_names(self.vault.manifests_dir)
        if not manifests:
            return
        # Manifests are listed before the marker is looked at: a snapshot creates the marker
        # before it stores its manifest, so seeing the manifest means seeing the marker.
        if how == "empty" and os.path.lexists(self.vault.never_indexed_path):
            return
        raise VaultError(
            VaultErrorCode.DAMAGED_INDEX,
            f"the index is {how} but {len(manifests)} manifests are present; "
            "gobtui vault --repair rebuilds it",
        )

    def find(self, sha_or_prefix: str) -> IndexEntry:
        prefix = sha_or_prefix.strip().lower()
        if not is_hex_prefix(prefix) or len(prefix) < VAULT_SHA_PREFIX_MIN_CHARS:
            raise VaultError(
                VaultErrorCode.INVALID_INPUT,
                f"{quote(sha_or_prefix)} is not a snapshot id "
                f"(at least {VAULT_SHA_PREFIX_MIN_CHARS} hex digits)",
            )
        newest: dict[str, IndexEntry] = {}
        for entry in self.entries():
            if entry.sha256.startswith(prefix):
                newest.setdefault(entry.sha256, entry)
        if not newest:
            raise VaultError(VaultErrorCode.NOT_FOUND, f"no snapshot id starts with {prefix}")
        if len(newest) > 1:
            shown = ", ".join(sha[:16] for sha in list(newest)[:VAULT_AMBIGUOUS_SHOWN])
            more = " …" if len(newest) > VAULT_AMBIGUOUS_SHOWN else ""
            raise VaultError(
                VaultErrorCode.AMBIGUOUS,
                f"{prefix} matches {len(newest)} snapshots: {shown}{more}",
            )
        return next(iter(newest.values()))

    # --- manifests and chunks ----------------------------------------------------------------

    def manifest(self, sha: str) -> Manifest:
        """The verified manifest of snapshot `sha` (a full id), bound to its index entries."""
        require_sha256(sha)
        if not self.exists:
            raise VaultError(VaultErrorCode.NOT_FOUND, f"no snapshot {sha} (the vault is empty)")
        lines = self._index_lines(sha)
        try:
            manifest = self.read_manifest(sha)
        except VaultError as error:
            if error.code is VaultErrorCode.NOT_FOUND and lines:
                raise VaultError(
                    VaultErrorCode.MISSING_MANIFEST,
                    f"manifest {sha} is missing (named by index line {lines[0]})",
                ) from None
            raise
        in_order = self.entries_in_order()
        for number in lines:
            entry = in_order[number - 1]
            field = (
                "bytes" if entry.bytes != manifest.bytes
                else "source_sha256" if entry.source_sha256 != manifest.source_sha256
                else None
            )  # fmt: skip
            if field is not None:
                raise VaultError(
                    VaultErrorCode.DAMAGED_INDEX,
                    f"index line {number} (snapshot {sha[:12]}) does not match its manifest "
                    f"({field})",
                )
        return manifest

    def read_manifest(self, sha: str) -> Manifest:
        """Manifest `sha` on its own: a plain file hashing to its name, parsable and coherent
        (NOT_FOUND when absent). What the index says of it is not looked at."""
        try:
            data = fs.read_small(self.vault.manifests_dir / sha, VAULT_MANIFEST_MAX_BYTES)
        except FileNotFoundError:
            raise VaultError(VaultErrorCode.NOT_FOUND, f"no snapshot {sha}") from None
        except fs.NotRegular:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST, f"manifest {sha} is not a plain file"
            ) from None
        if len(data) > VAULT_MANIFEST_MAX_BYTES or hashlib.sha256(data).hexdigest() != sha:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST, f"manifest {sha} fails its hash check"
            )
        return Manifest.from_bytes(data, sha)

    def chunks(self, sha: str, manifest: Manifest | None = None) -> Iterator[bytes]:
        """The snapshot's bytes chunk by chunk, each verified before it is handed out.

        One thread reads and hashes the chunks ahead of the caller, another feeds the
        whole-file digest (hashlib drops the GIL, so both overlap with the caller's work).
        """
        manifest = manifest if manifest is not None else self.manifest(sha)
        source = hashlib.sha256()
        count = len(manifest.chunks)
        total = 0
        ahead: deque[Future[bytes]] = deque()
        digesting: deque[Future[None]] = deque()
        with (
            ThreadPoolExecutor(1, thread_name_prefix="vault-read") as reader,
            ThreadPoolExecutor(1, thread_name_prefix="vault-digest") as digester,
        ):
            try:
                for position, name in enumerate(manifest.chunks):
                    ahead.append(reader.submit(self._load, sha, position, count, name))
                    if len(ahead) > VAULT_PREFETCH_CHUNKS:
                        data = ahead.popleft().result()
                        digesting.append(digester.submit(source.update, data))
                        total += len(data)
                        while len(digesting) > VAULT_PREFETCH_CHUNKS:
                            digesting.popleft().result()
                        yield data
                while ahead:
                    data = ahead.popleft().result()
                    digesting.append(digester.submit(source.update, data))
                    total += len(data)
                    yield data
                while digesting:
                    digesting.popleft().result()
            finally:
                for pending in (ahead, digesting):
                    for future in pending:
                        future.cancel()
        if total != manifest.bytes:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST,
                f"manifest {sha} promises {manifest.bytes} bytes; its chunks hold {total}",
            )
        if source.hexdigest() != manifest.source_sha256:
            raise VaultError(
                VaultErrorCode.DAMAGED_MANIFEST,
                f"manifest {sha}: the chunks do not add up to the source digest",
            )

    def _load(self, sha: str, position: int, count: int, name: str) -> bytes:
        """One chunk, verified against its name."""
        where = f"(piece {position + 1} of {count} of snapshot {sha[:12]})"
        try:
            data = fs.read_small(self.vault.chunks_dir / name, VAULT_CHUNK_BYTES)
        except FileNotFoundError:
            raise VaultError(
                VaultErrorCode.MISSING_CHUNK, f"chunk {name} is missing {where}"
            ) from None
        except fs.NotRegular:
            raise VaultError(
                VaultErrorCode.DAMAGED_CHUNK, f"chunk {name} is not a plain file {where}"
            ) from None
        if len(data) > VAULT_CHUNK_BYTES or hashlib.sha256(data).hexdigest() != name:
            raise VaultError(
                VaultErrorCode.DAMAGED_CHUNK, f"chunk {name} fails its hash check {where}"
            )
        return data

    def records(self, sha: str, manifest: Manifest | None = None) -> Iterator[tuple[int, bytes]]:
        """(physical line index, line without its newline). A final newline ends the last line
        rather than starting an empty one; blank lines are records of their own."""
        index = 0
        pieces: list[bytes] = []
        for chunk in self.chunks(sha, manifest):
            lines = chunk.split(b"\n")
            if len(lines) == 1:
                pieces.append(chunk)
                continue
            if pieces:
                pieces.append(lines[0])
                lines[0] = b"".join(pieces)
                pieces = []
            if index + len(lines) - 1 > VAULT_MAX_RECORDS:
                raise VaultError(
                    VaultErrorCode.LIMIT, f"snapshot {sha} has over {VAULT_MAX_RECORDS} records"
                )
            for line in lines[:-1]:
                yield index, line
                index += 1
            if lines[-1]:
                pieces.append(lines[-1])
        if pieces:
            if index >= VAULT_MAX_RECORDS:
                raise VaultError(
                    VaultErrorCode.LIMIT, f"snapshot {sha} has over {VAULT_MAX_RECORDS} records"
                )
            yield index, b"".join(pieces)

    def stats(self, *, deep: bool = False) -> VaultStats:
        """Counts and sizes, once every snapshot is bound to a sound manifest whose chunks
        are all present and add up to its byte count (sizes only: no chunk is re-hashed).

        `deep` re-hashes every chunk of every snapshot (and of every manifest no line names)
        and recomputes each source digest; a snapshot that fails is reported in `damaged`
        rather than raised, so one damaged snapshot does not hide the state of the others.
        """
        view = self.index_view()
        entries = view.entries
        chunks = fs.hex_names(self.vault.chunks_dir) if self.exists else {}
        manifests = fs.hex_names(self.vault.manifests_dir) if self.exists else {}
        indexed = list(dict.fromkeys(e.sha256 for e in entries))
        damaged: list[DamagedSnapshot] = []
        rehashed: set[str] = set()
        named = set(indexed)
        unindexed = sorted(manifests.keys() - named)
        if deep:
            for sha in indexed + unindexed:
                failure = self._verify_fully(sha, sha in named, rehashed)
                if failure is not None:
                    damaged.append(failure)
        else:
            for sha, manifest in self.check_manifests(entries).items():
                _check_chunks_present(sha, manifest, chunks)
        distinct = {e.sha256: e.bytes for e in entries}
        try:
            index_bytes = os.lstat(self.vault.index_path).st_size
        except FileNotFoundError:
            index_bytes = 0
        return VaultStats(
            snapshots=len(entries),
            sessions=len({e.session_id for e in entries}),
            manifests=len(manifests),
            chunks=len(chunks),
            stored_bytes=sum(chunks.values()),
            logical_bytes=sum(distinct.values()),
            index_bytes=index_bytes,
            oldest_ts=min((e.ts for e in entries), default=None),
            newest_ts=max((e.ts for e in entries), default=None),
            index_torn_bytes=view.torn,
            unbound_entries=view.unbound,
            unindexed_manifests=len(unindexed),
            verification="chunks" if deep else "manifests",
            chunks_rehashed=len(rehashed),
            damaged=damaged,
        )

    def _verify_fully(self, sha: str, indexed: bool, rehashed: set[str]) -> DamagedSnapshot | None:
        """None when snapshot `sha` reads back whole; else what is wrong with it."""
        try:
            manifest = self.manifest(sha) if indexed else self.read_manifest(sha)
            rehashed.update(manifest.chunks)
            for _ in self.chunks(sha, manifest):
                pass
        except VaultError as error:
            if not error.damaged:
                raise
            return DamagedSnapshot(
                sha256=sha, code=error.code, message=error.message, indexed=indexed
            )
        return None


def _check_chunks_present(sha: str, manifest: Manifest, sizes: dict[str, int]) -> None:
    """Every chunk the manifest names is on disk, and their sizes add up to its byte count."""
    count = len(manifest.chunks)
    for position, name in enumerate(manifest.chunks):
        if name not in sizes:
            raise VaultError(
                VaultErrorCode.MISSING_CHUNK,
                f"chunk {name} is missing (piece {position + 1} of {count} of snapshot {sha[:12]})",
            )
    total = sum(sizes[name] for name in manifest.chunks)
    if total != manifest.bytes:
        raise VaultError(
            VaultErrorCode.DAMAGED_MANIFEST,
            f"manifest {sha} promises {manifest.bytes} bytes; its chunks hold {total}",
        )
