"""Publication bookkeeping: operation ids, receipts on disk, their lock, the fork's name.

A receipt is written as an intent before the fork is published and replaced by a completed
one after, under an exclusive per-operation lock; a rerun reads it back to answer without
writing again (see adapters/publish/publisher.py for the sequence).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

import orjson

from ...core.edits import Edit
from ...core.fork_id import fork_session_id
from ...core.limits import RECEIPT_MAX_BYTES
from ...core.model import Provider, resume_command, resume_line
from ...core.projection import Projection
from ...core.receipt import ForkForm, OperationKind, Receipt, operation_id
from ...core.vault.errors import VaultErrorCode
from ..config.paths import data_dir
from ..files.atomic import replace_private
from ..files.private_fs import PrivateError, open_private, private_dir
from ..files.regular import regular_file
from ..providers.registry import provider_of
from ..rewrite.apply import rewrite_identity


class PublishErrorCode(StrEnum):
    CONTROL_PLAN = "control_plan"
    NOT_ADMITTED = "not_admitted"
    SOURCE_CHANGED = "source_changed"
    ALREADY_RUNNING = "already_running"
    NEEDS_RECOVERY = "needs_recovery"
    DAMAGED_RECEIPT = "damaged_receipt"
    SNAPSHOT_MISMATCH = "snapshot_mismatch"
    REWRITE_FAILED = "rewrite_failed"
    NOT_SMALLER = "not_smaller"
    VERIFY_FAILED = "verify_failed"
    IDENTITY_OVERHEAD = "identity_overhead"
    TARGET_EXISTS = "target_exists"
    VAULT = "vault"
    IO = "io"


class PublishError(Exception):
    """A refused or failed publication; one line, no transcript content."""

    def __init__(
        self, code: PublishErrorCode, message: str, vault_code: VaultErrorCode | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.vault_code = vault_code
        """What the vault said, when it is the vault that refused (code `vault`)."""


def operations_dir(root: Path | None = None) -> Path:
    """The receipts folder: private, never reached through a symlink (adapters.files.private_fs)."""
    base = root or data_dir()
    folder = base / "operations"
    private_dir(folder, "receipts folder", root=folder)
    return folder


def _receipt_files(root: Path | None) -> list[Path]:
    directory = (root or data_dir()) / "operations"
    return list(directory.glob("*.json")) if directory.is_dir() else []


def receipt_roots(root: Path | None = None) -> set[str]:
    """Snapshot ids that receipts point at: prune keeps them (an undo needs them)."""
    receipts = (read_receipt(path) for path in _receipt_files(root))
    return {receipt.snapshot_manifest_sha256 for receipt in receipts if receipt is not None}


def published_receipts(root: Path | None = None) -> list[Receipt]:
    """The completed receipts of every apply, fork and undo, oldest first (unreadable ones
    are left out: this only labels forks)."""
    found: list[Receipt] = []
    for path in _receipt_files(root):
        with suppress(PublishError, OSError):
            receipt = read_receipt(path)
            if receipt is not None and receipt.completed:
                found.append(receipt)
    return sorted(found, key=lambda receipt: receipt.created_ts)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with regular_file(path) as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def operation_lock(directory: Path, operation: str) -> Iterator[None]:
    try:
        fd, _notes = open_private(directory / f"{operation}.lock", os.O_RDWR | os.O_CREAT, "lock")
    except PrivateError as error:
        raise PublishError(PublishErrorCode.IO, str(error)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PublishError(
                PublishErrorCode.ALREADY_RUNNING,
                "the same operation is already running in another process; try again shortly",
            ) from None
        yield
    finally:
        os.close(fd)


def read_receipt(path: Path) -> Receipt | None:
    """The receipt at `path` (read as the vault reads its files: never through a symlink,
    a regular file of the user's only); None when there is none."""
    try:
        fd, _notes = open_private(path, os.O_RDONLY, "receipt")
    except FileNotFoundError:
        return None
    except PrivateError as error:
        raise PublishError(PublishErrorCode.DAMAGED_RECEIPT, str(error)) from None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(RECEIPT_MAX_BYTES + 1)
        if len(data) > RECEIPT_MAX_BYTES:
            raise ValueError("receipt too large")
        return Receipt.model_validate(orjson.loads(data))
    except (ValueError, OSError):
        raise PublishError(
            PublishErrorCode.DAMAGED_RECEIPT,
            f"receipt {path.name} is damaged; refusing to replay the operation",
        ) from None


def write_receipt(path: Path, receipt: Receipt) -> None:
    replace_private(path, orjson.dumps(receipt.model_dump(mode="json"), option=orjson.OPT_INDENT_2))


def settled_receipt(receipt: Receipt, path: Path) -> Receipt | None:
    """The earlier receipt when its fork is on disk with the promised bytes; None when the
    earlier run stopped before publishing (safe to redo); an error when something else sits
    at the fork's name."""
    target = Path(receipt.path)
    if not target.exists():
        return None
    if file_sha256(target) != receipt.output_sha256:
        raise changed_fork(receipt, target)
    if not receipt.completed:
        receipt = receipt.model_copy(update={"completed": True})
        write_receipt(path, receipt)
    return receipt


def changed_fork(receipt: Receipt, target: Path) -> PublishError:
    """The refusal when the fork this operation publishes is on disk with other bytes.

    The fork's id derives from the operation, so the same operation can only ever publish that
    one file: it is never overwritten (the reference refuses the same way). The usual cause is
    a resumed fork, which starts with the bytes published; the message says what to do.
    """
    grown = _starts_with(target, receipt.bytes_after, receipt.output_sha256)
    how = "was resumed since (it grew)" if grown else "was changed since (resumed?)"
    fork = receipt.session_id
    if receipt.kind is OperationKind.APPLY:
        advice = (
            f"Apply again after the source changes, or compact the fork itself: gobtui apply {fork}"
        )
    elif receipt.kind is OperationKind.FORK:
        advice = f"Fork again after the source changes, or fork the fork: gobtui fork {fork}"
    else:  # an undo of one snapshot always names the same fork
        advice = f"This snapshot always restores to that fork; fork the fork: gobtui fork {fork}"
    return PublishError(
        PublishErrorCode.NEEDS_RECOVERY,
        f"the fork {target} published by this {receipt.kind.value} {how}; it is left as it "
        f"is. {advice}",
    )


def _starts_with(path: Path, size: int, sha256: str) -> bool:
    """Whether the file's first `size` bytes hash to `sha256` (the fork, appended to)."""
    digest = hashlib.sha256()
    left = size
    with regular_file(path) as handle:
        while left and (chunk := handle.read(min(left, 1 << 20))):
            digest.update(chunk)
            left -= len(chunk)
    return left == 0 and digest.hexdigest() == sha256


@dataclass(frozen=True)
class Operation:
    """One apply, undo or fork: its deterministic id, the fork's id and its receipt file.

    The fork's id also says the fork's size (core.fork_id), so it is known once the fork's
    bytes are: `identified` gives them their identity and the operation its `new_id`."""

    kind: OperationKind
    provider: Provider
    source_path: str
    source_session_id: str
    source_sha256: str
    id: str
    new_id: str
    receipt_path: Path

    @classmethod
    def start(
        cls,
        kind: OperationKind,
        provider: Provider,
        source_path: str,
        source_session_id: str,
        source_sha256: str,
        root: Path | None,
        edits: list[Edit] | None = None,
        extra: str = "",
    ) -> Operation:
        operation = operation_id(kind, provider, source_path, source_sha256, edits, extra)
        return cls(
            kind, provider, source_path, source_session_id, source_sha256, operation,
            "", operations_dir(root) / f"{operation}.json",
        )  # fmt: skip

    def identified(self, data: bytes) -> tuple[Operation, bytearray]:
        """`data` as the fork's transcript (rewrite_identity), and this operation with the
        fork's id, which names the size of those very bytes.

        The id's value does not change the size (ids are 36 characters that JSON never
        escapes), so the bytes are made once under a stand-in no transcript holds (random),
        and the stand-in then replaced by the id the size names.
        """
        stand_in = str(uuid.uuid4())
        output = rewrite_identity(data, self.provider, stand_in)
        named = replace(self, new_id=fork_session_id(self.id, len(output)))
        return named, output.replace(stand_in.encode(), named.new_id.encode())

    @contextmanager
    def locked(self) -> Iterator[tuple[Receipt | None, Receipt | None]]:
        """Held for the whole operation: (the earlier receipt, that receipt when its fork is
        already published as promised)."""
        with operation_lock(self.receipt_path.parent, self.id):
            earlier = read_receipt(self.receipt_path)
            yield earlier, (settled_receipt(earlier, self.receipt_path) if earlier else None)

    def target(self, earlier: Receipt | None, now: float) -> Path:
        if earlier is not None:
            return Path(earlier.path)
        return provider_of(self.provider).fork_path(Path(self.source_path), self.new_id, now)

    def receipt(
        self,
        strategy: str,
        target: Path,
        output: bytes | bytearray,
        snapshot: str,
        bytes_before: int,
        now: float,
        tokens: tuple[int, int] = (0, 0),
        projection: Projection | None = None,
        selected: str | None = None,
        cwd: str | None = None,
        form: ForkForm | None = None,
    ) -> Receipt:
        return Receipt(
            operation_id=self.id,
            kind=self.kind,
            provider=self.provider,
            strategy=strategy,
            source_path=self.source_path,
            source_session_id=self.source_session_id,
            path=str(target),
            session_id=self.new_id,
            source_sha256=self.source_sha256,
            output_sha256=hashlib.sha256(output).hexdigest(),
            snapshot_manifest_sha256=snapshot,
            bytes_before=bytes_before,
            bytes_after=len(output),
            reclaimed_bytes=max(0, bytes_before - len(output)),
            context_tokens_before=tokens[0],
            context_tokens_after=tokens[1],
            projection=projection,
            completed=False,
            created_ts=now,
            resume_command=resume_command(self.provider, self.new_id),
            selected_strategy=selected,
            resume_line=resume_line(resume_command(self.provider, self.new_id), cwd)
            if cwd
            else None,
            form=form,
        )
