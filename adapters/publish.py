"""Fork publication: apply a plan (or restore a snapshot) into a NEW sibling transcript.

The source is never written. The sequence follows the reference's copy path: bind the plan to
the source digest, snapshot the source into the vault first, build and verify the candidate,
give it a new identity, write an intent receipt, re-check the source, publish no-clobber,
then mark the receipt completed. The operation id is a digest of what was asked, so a rerun
finds the first receipt and returns it instead of writing again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from enum import StrEnum
from pathlib import Path

import orjson
from pydantic import ValidationError

from adapters.atomic import describe, private_dir, publish_new, replace_private
from adapters.events import append_event
from adapters.paths import data_dir
from adapters.planning import LoadedSession
from adapters.rewrite import RewriteError, apply_plan, rewrite_identity
from adapters.vault import Vault
from core.admission import admit
from core.model import Provider
from core.plan import CompactionPlan
from core.policy import PolicyConfig
from core.receipt import OperationKind, Receipt, fork_session_id, items_covered, operation_id
from core.telemetry import EventAction, EventOutcome, TelemetryEvent, source_identity
from core.vault_model import IndexEntry, VaultError
from core.verify import verify

FaultHook = Callable[[str], None]
"""Called with each step's name after it completes; tests raise there to simulate a crash."""

STEPS = ("snapshot", "candidate", "verify", "intent", "recheck", "publish", "complete")


class PublishErrorCode(StrEnum):
    CONTROL_PLAN = "control_plan"
    NOT_ADMITTED = "not_admitted"
    SOURCE_CHANGED = "source_changed"
    ALREADY_RUNNING = "already_running"
    NEEDS_RECOVERY = "needs_recovery"
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

    def __init__(self, code: PublishErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def operations_dir(root: Path | None = None) -> Path:
    return private_dir((root or data_dir()) / "operations")


def receipt_roots(root: Path | None = None) -> set[str]:
    """Snapshot ids that receipts point at: prune keeps them (an undo needs them)."""
    directory = (root or data_dir()) / "operations"
    roots: set[str] = set()
    if not directory.is_dir():
        return roots
    for path in directory.glob("*.json"):
        receipt = _read_receipt(path)
        if receipt is not None:
            roots.add(receipt.snapshot_manifest_sha256)
    return roots


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fork_path(source: Path, provider: Provider, session_id: str, now: float) -> Path:
    """Claude: `<id>.jsonl` beside the source; Codex: `rollout-<local time>-<id>.jsonl`."""
    if provider is Provider.CLAUDE:
        return source.with_name(f"{session_id}.jsonl")
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime(now))
    return source.with_name(f"rollout-{stamp}-{session_id}.jsonl")


def resume_command(provider: Provider, session_id: str) -> str:
    if provider is Provider.CLAUDE:
        return f"claude --resume {session_id}"
    return f"codex resume {session_id}"


@contextmanager
def _operation_lock(directory: Path, operation: str) -> Iterator[None]:
    fd = os.open(directory / f"{operation}.lock", os.O_RDWR | os.O_CREAT, 0o600)
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


def _read_receipt(path: Path) -> Receipt | None:
    try:
        return Receipt.model_validate(orjson.loads(path.read_bytes()))
    except FileNotFoundError:
        return None
    except (orjson.JSONDecodeError, ValidationError):
        raise PublishError(
            PublishErrorCode.NEEDS_RECOVERY,
            f"receipt {path.name} is damaged; refusing to replay the operation",
        ) from None


def _write_receipt(path: Path, receipt: Receipt) -> None:
    replace_private(path, orjson.dumps(receipt.model_dump(mode="json"), option=orjson.OPT_INDENT_2))


def _settled(receipt: Receipt, path: Path) -> Receipt | None:
    """The earlier receipt when its fork is on disk with the promised bytes; None when the
    earlier run stopped before publishing (safe to redo); an error when something else sits
    at the fork's name."""
    target = Path(receipt.path)
    if not target.exists():
        return None
    if file_sha256(target) != receipt.output_sha256:
        raise PublishError(
            PublishErrorCode.NEEDS_RECOVERY,
            f"{target} exists but differs from this operation's output; refusing speculative "
            "replay",
        )
    if not receipt.completed:
        receipt = receipt.model_copy(update={"completed": True})
        _write_receipt(path, receipt)
    return receipt


class Publisher:
    """Publishes forks into the directory of their source, recording receipts and events."""

    def __init__(
        self,
        vault: Vault,
        root: Path | None = None,
        fault: FaultHook | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.vault = vault
        self.root = root
        self.fault = fault or (lambda step: None)
        self.clock = clock

    # --- apply -----------------------------------------------------------------------------

    def apply(
        self,
        session: LoadedSession,
        plan: CompactionPlan,
        policy: PolicyConfig,
        progress: Callable[[int, int], None] | None = None,
    ) -> Receipt:
        """Publish `plan` applied to `session` as a new fork; returns the receipt."""
        started = time.perf_counter()
        try:
            receipt, fresh = self._apply(session, plan, policy, progress)
        except PublishError as error:
            self._event(
                session, plan, policy, EventOutcome.FAILED, started, error_code=error.code.value
            )
            raise
        outcome = EventOutcome.APPLIED if fresh else EventOutcome.SKIPPED
        self._event(session, plan, policy, outcome, started, receipt=receipt)
        return receipt

    def _apply(
        self,
        session: LoadedSession,
        plan: CompactionPlan,
        policy: PolicyConfig,
        progress: Callable[[int, int], None] | None,
    ) -> tuple[Receipt, bool]:
        """The receipt, and whether this call published it (False: an earlier run did)."""
        if plan.is_control or not plan.rewrites_file:
            raise PublishError(
                PublishErrorCode.CONTROL_PLAN,
                f"{plan.strategy} asks the provider to compact; there is no file to publish",
            )
        admission = admit(plan, session.transcript, policy)
        if not admission.admitted:
            raise PublishError(PublishErrorCode.NOT_ADMITTED, f"plan refused: {admission.message}")
        source = session.path
        self._require_unchanged(source, session.source_sha256, "planning")
        canonical = str(source.resolve())
        operation = operation_id(
            OperationKind.APPLY, session.provider, canonical, session.source_sha256, plan.edits
        )
        new_id = fork_session_id(operation)
        directory = operations_dir(self.root)
        receipt_path = directory / f"{operation}.json"
        with _operation_lock(directory, operation):
            earlier = _read_receipt(receipt_path)
            if earlier is not None and (settled := _settled(earlier, receipt_path)) is not None:
                return settled, False
            entry = self._snapshot(session, plan.strategy, progress)
            self.fault("snapshot")
            try:
                candidate = apply_plan(session.data, session.provider, plan, session.transcript)
            except RewriteError as error:
                raise PublishError(PublishErrorCode.REWRITE_FAILED, str(error)) from None
            if len(candidate) >= len(session.data):
                raise PublishError(
                    PublishErrorCode.NOT_SMALLER,
                    f"the compacted copy ({len(candidate)} bytes) is not smaller than the "
                    f"source ({len(session.data)} bytes)",
                )
            self.fault("candidate")
            self._require_valid(session.data, candidate, session.provider)
            output = rewrite_identity(candidate, session.provider, new_id)
            if len(output) >= len(session.data):
                raise PublishError(
                    PublishErrorCode.IDENTITY_OVERHEAD, "fork identity overhead exceeds savings"
                )
            self.fault("verify")
            target = (
                Path(earlier.path)
                if earlier
                else fork_path(source, session.provider, new_id, self.clock())
            )
            receipt = Receipt(
                operation_id=operation,
                kind=OperationKind.APPLY,
                provider=session.provider,
                strategy=plan.strategy,
                source_path=canonical,
                source_session_id=session.session_id,
                path=str(target),
                session_id=new_id,
                source_sha256=session.source_sha256,
                output_sha256=hashlib.sha256(output).hexdigest(),
                snapshot_manifest_sha256=entry.sha256,
                bytes_before=len(session.data),
                bytes_after=len(output),
                reclaimed_bytes=len(session.data) - len(output),
                context_tokens_before=plan.context_tokens_before,
                context_tokens_after=plan.context_tokens_after,
                completed=False,
                created_ts=self.clock(),
                resume_command=resume_command(session.provider, new_id),
            )
            published = self._publish(receipt, receipt_path, source, session.source_sha256, output)
            return published, True

    # --- undo and fork ---------------------------------------------------------------------

    def undo(self, manifest_sha256: str) -> Receipt:
        """Restore a verified snapshot into a new fork beside the file it was taken from."""
        started = time.perf_counter()
        try:
            entry = self.vault.find(manifest_sha256)
            data = self.vault.read_bytes(entry.sha256)
        except VaultError as error:
            raise PublishError(PublishErrorCode.VAULT, str(error)) from None
        provider = Provider(entry.provider)
        report = verify(data, provider)
        if not report.ok:
            codes = ", ".join(sorted({f.code.value for f in report.findings}))
            raise PublishError(
                PublishErrorCode.VERIFY_FAILED, f"the snapshot does not verify ({codes})"
            )
        source = Path(entry.path)
        operation = operation_id(
            OperationKind.UNDO, provider, entry.path, entry.source_sha256, extra=entry.sha256
        )
        new_id = fork_session_id(operation)
        output = rewrite_identity(data, provider, new_id)
        directory = operations_dir(self.root)
        receipt_path = directory / f"{operation}.json"
        outcome = EventOutcome.APPLIED
        with _operation_lock(directory, operation):
            earlier = _read_receipt(receipt_path)
            settled = _settled(earlier, receipt_path) if earlier is not None else None
            target = (
                Path(earlier.path) if earlier else fork_path(source, provider, new_id, self.clock())
            )
            receipt = Receipt(
                operation_id=operation,
                kind=OperationKind.UNDO,
                provider=provider,
                strategy="undo",
                source_path=entry.path,
                source_session_id=entry.session_id,
                path=str(target),
                session_id=new_id,
                source_sha256=entry.source_sha256,
                output_sha256=hashlib.sha256(output).hexdigest(),
                snapshot_manifest_sha256=entry.sha256,
                bytes_before=entry.bytes,
                bytes_after=len(output),
                reclaimed_bytes=max(0, entry.bytes - len(output)),
                completed=False,
                created_ts=self.clock(),
                resume_command=resume_command(provider, new_id),
            )
            if settled is not None:
                receipt, outcome = settled, EventOutcome.SKIPPED
            else:
                receipt = self._publish(receipt, receipt_path, None, None, output)
        append_event(
            TelemetryEvent(
                ts=self.clock(),
                provider=provider,
                session_id=entry.session_id,
                source_identity_sha256=source_identity(provider, entry.session_id, entry.path),
                strategy="undo",
                action=EventAction.UNDO,
                outcome=outcome,
                trigger_tokens=0,
                context_tokens_before=0,
                context_tokens_after=0,
                est_reclaimed_tokens=0,
                items_covered=0,
                bytes_before=entry.bytes,
                bytes_after=len(output),
                duration_ms=round((time.perf_counter() - started) * 1000, 1),
            ),
            self.root,
        )
        return receipt

    def fork(self, session: LoadedSession) -> Receipt:
        """A plain copy under a new identity (snapshot first, like every publication)."""
        canonical = str(session.path.resolve())
        operation = operation_id(
            OperationKind.FORK, session.provider, canonical, session.source_sha256
        )
        new_id = fork_session_id(operation)
        directory = operations_dir(self.root)
        receipt_path = directory / f"{operation}.json"
        self._require_unchanged(session.path, session.source_sha256, "reading")
        with _operation_lock(directory, operation):
            earlier = _read_receipt(receipt_path)
            if earlier is not None and (settled := _settled(earlier, receipt_path)) is not None:
                return settled
            entry = self._snapshot(session, "fork", None)
            output = rewrite_identity(session.data, session.provider, new_id)
            target = (
                Path(earlier.path)
                if earlier
                else fork_path(session.path, session.provider, new_id, self.clock())
            )
            receipt = Receipt(
                operation_id=operation,
                kind=OperationKind.FORK,
                provider=session.provider,
                strategy="fork",
                source_path=canonical,
                source_session_id=session.session_id,
                path=str(target),
                session_id=new_id,
                source_sha256=session.source_sha256,
                output_sha256=hashlib.sha256(output).hexdigest(),
                snapshot_manifest_sha256=entry.sha256,
                bytes_before=len(session.data),
                bytes_after=len(output),
                reclaimed_bytes=max(0, len(session.data) - len(output)),
                completed=False,
                created_ts=self.clock(),
                resume_command=resume_command(session.provider, new_id),
            )
            return self._publish(receipt, receipt_path, session.path, session.source_sha256, output)

    # --- steps -----------------------------------------------------------------------------

    def _require_unchanged(self, source: Path, expected: str, since: str) -> None:
        try:
            actual = file_sha256(source)
        except OSError as error:
            raise PublishError(
                PublishErrorCode.IO, f"cannot read {source}: {describe(error)}"
            ) from None
        if actual != expected:
            raise PublishError(
                PublishErrorCode.SOURCE_CHANGED,
                f"the session changed since {since} (it is still being written?); plan again",
            )

    def _snapshot(
        self, session: LoadedSession, label: str, progress: Callable[[int, int], None] | None
    ) -> IndexEntry:
        try:
            entry = self.vault.snapshot(
                session.path, session.provider, session.session_id, label, self.clock(), progress
            )
        except VaultError as error:
            raise PublishError(PublishErrorCode.VAULT, str(error)) from None
        except OSError as error:
            raise PublishError(PublishErrorCode.IO, f"snapshot failed: {describe(error)}") from None
        if entry.source_sha256 != session.source_sha256:
            raise PublishError(
                PublishErrorCode.SOURCE_CHANGED,
                "the session changed while it was being snapshotted; plan again",
            )
        return entry

    def _require_valid(self, source: bytes, candidate: bytes, provider: Provider) -> None:
        """No errors, and no finding the source did not already have."""
        report = verify(candidate, provider)
        added = Counter(f.code.value for f in report.findings) - Counter(
            f.code.value for f in verify(source, provider).findings
        )
        if not report.ok or added:
            codes = ", ".join(sorted(set(added) or {f.code.value for f in report.findings}))
            raise PublishError(
                PublishErrorCode.VERIFY_FAILED, f"the compacted copy does not verify ({codes})"
            )

    def _publish(
        self,
        receipt: Receipt,
        receipt_path: Path,
        source: Path | None,
        source_sha256: str | None,
        output: bytes,
    ) -> Receipt:
        target = Path(receipt.path)
        try:
            _write_receipt(receipt_path, receipt)
            self.fault("intent")
            if source is not None and source_sha256 is not None:
                self._require_unchanged(source, source_sha256, "it was snapshotted")
            self.fault("recheck")
            try:
                publish_new(target, output)
            except FileExistsError:
                if file_sha256(target) != receipt.output_sha256:
                    raise PublishError(
                        PublishErrorCode.TARGET_EXISTS,
                        f"{target} already exists; a fork never overwrites a file",
                    ) from None
            self.fault("publish")
            receipt = receipt.model_copy(update={"completed": True})
            _write_receipt(receipt_path, receipt)
            self.fault("complete")
        except OSError as error:
            raise PublishError(PublishErrorCode.IO, f"cannot publish: {describe(error)}") from None
        return receipt

    def _event(
        self,
        session: LoadedSession,
        plan: CompactionPlan,
        policy: PolicyConfig,
        outcome: EventOutcome,
        started: float,
        receipt: Receipt | None = None,
        error_code: str | None = None,
    ) -> None:
        canonical = str(session.path.resolve())
        with suppress(OSError):  # telemetry never fails a publication
            append_event(
                TelemetryEvent(
                    ts=self.clock(),
                    provider=session.provider,
                    session_id=session.session_id,
                    source_identity_sha256=source_identity(
                        session.provider, session.session_id, canonical
                    ),
                    strategy=plan.strategy,
                    action=EventAction.TRANSCRIPT_COMPACT,
                    outcome=outcome,
                    trigger_tokens=policy.effective_trigger(),
                    context_tokens_before=plan.context_tokens_before,
                    context_tokens_after=plan.context_tokens_after,
                    est_reclaimed_tokens=plan.est_savings,
                    items_covered=items_covered(plan.edits),
                    bytes_before=len(session.data),
                    bytes_after=receipt.bytes_after if receipt else 0,
                    duration_ms=round((time.perf_counter() - started) * 1000, 1),
                    error_code=error_code,
                ),
                self.root,
            )
