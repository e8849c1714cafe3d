"""Fork publication: apply a plan (or restore a snapshot) into a NEW sibling transcript.

The source is never written. The sequence follows the reference's copy path: bind the plan to
the source digest, snapshot the source into the vault first, build and verify the candidate,
give it a new identity, write an intent receipt, re-check the source, publish no-clobber,
then mark the receipt completed. The operation id is a digest of what was asked, so a rerun
finds the first receipt and returns it instead of writing again.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path

from ...core.admission import admit
from ...core.edits import CompactionPlan
from ...core.model import Provider
from ...core.policy import PolicyConfig, TuneReason
from ...core.receipt import ForkForm, OperationKind, Receipt, items_covered
from ...core.strategies.auto import selected_strategy
from ...core.telemetry import EventAction, EventOutcome, TelemetryEvent, source_identity
from ...core.vault.errors import VaultError
from ...core.vault.index import IndexEntry
from ...core.verify import FindingCode, accepts, added_findings, verify
from ..files.atomic import describe, publish_new
from ..planning.load import LoadedSession
from ..providers.interface import RewriteError
from ..providers.registry import verify_checks
from ..vault.vault import Vault
from .events import append_event
from .operations import (
    Operation,
    PublishError,
    PublishErrorCode,
    file_sha256,
    operations_dir,
    read_receipt,
    receipt_roots,
    write_receipt,
)

log = logging.getLogger(__name__)

PUBLISHED_LABEL = "published"
"""The vault label of a compacted fork, kept as it was published."""

__all__ = [
    "STEPS",
    "PublishError",
    "PublishErrorCode",
    "Publisher",
    "file_sha256",
    "operations_dir",
    "receipt_roots",
]

FaultHook = Callable[[str], None]
"""Called with each step's name after it completes; tests raise there to simulate a crash."""

STEPS = ("snapshot", "candidate", "verify", "intent", "recheck", "publish", "complete", "kept")


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
        tune_reasons: Sequence[TuneReason] = (),
        *,
        compacted: bool = False,
    ) -> Receipt:
        """Publish `plan` applied to `session` as a new fork; returns the receipt.
        (`tune_reasons`: what the adaptive tuner moved in `policy`, for the event.)
        `compacted` (--experimental-compacted): the elided prefix and the card as one
        compaction record of the provider's (SourceRewriter.overlay), another operation than
        the portable fork of the same plan."""
        started = time.perf_counter()
        reasons = list(tune_reasons)
        try:
            receipt, fresh = self._apply(session, plan, policy, progress, compacted)
        except PublishError as error:
            self._event(
                session, plan, policy, EventOutcome.FAILED, started, reasons,
                error_code=error.code.value,
            )  # fmt: skip
            raise
        outcome = EventOutcome.APPLIED if fresh else EventOutcome.SKIPPED
        self._event(session, plan, policy, outcome, started, reasons, receipt=receipt)
        return receipt

    def published(
        self, session: LoadedSession, plan: CompactionPlan, *, compacted: bool = False
    ) -> Receipt | None:
        """The receipt of an earlier apply of this plan to these very bytes, when its fork is
        on disk as published: apply() would only return it. Reads only (no lock, no event);
        None otherwise, a damaged receipt included (apply() reports that)."""
        op = Operation.start(
            OperationKind.APPLY, session.provider, str(session.path.resolve()),
            session.session_id, session.source_sha256, self.root, plan.edits,
            _representation(compacted),
        )  # fmt: skip
        try:
            earlier = read_receipt(op.receipt_path)
            if earlier is None or not earlier.completed:
                return None
            fork = Path(earlier.path)
            return earlier if _holds(fork, earlier.output_sha256) else None
        except (PublishError, OSError):
            return None

    def _apply(
        self,
        session: LoadedSession,
        plan: CompactionPlan,
        policy: PolicyConfig,
        progress: Callable[[int, int], None] | None,
        compacted: bool = False,
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
        op = Operation.start(
            OperationKind.APPLY, session.provider, str(source.resolve()), session.session_id,
            session.source_sha256, self.root, plan.edits, _representation(compacted),
        )  # fmt: skip
        with op.locked() as (earlier, settled):
            if settled is not None:
                # An earlier run may have died between publishing and keeping the fork.
                if not self._kept(settled):
                    self._keep_fork(settled)
                return settled, False
            entry = self._snapshot(session, plan.strategy, progress)
            self.fault("snapshot")
            try:
                # apply_plan's bytes (tests/adapters/test_rewrite_lines.py), built from the
                # loaded session's lines without a second copy of every line.
                overlay = session.rewriter.overlay(plan, compacted=compacted)
                candidate = session.rewriter.materialize(overlay)
            except RewriteError as error:
                raise PublishError(PublishErrorCode.REWRITE_FAILED, str(error)) from None
            size = len(session.source_bytes)
            if session.whole_size(len(candidate)) >= size:
                raise PublishError(
                    PublishErrorCode.NOT_SMALLER,
                    f"the compacted copy ({session.whole_size(len(candidate))} bytes) is not "
                    f"smaller than the source ({size} bytes)",
                )
            self.fault("candidate")
            self._require_valid(session, candidate)
            if session.rewriter.thinking_violation(overlay) is not None:
                raise PublishError(
                    PublishErrorCode.VERIFY_FAILED,
                    "the compacted copy does not verify "
                    f"({FindingCode.THINKING_AFTER_CHANGE.value})",
                )
            op, output = op.identified(session.whole(candidate))
            if len(output) >= size:
                raise PublishError(
                    PublishErrorCode.IDENTITY_OVERHEAD, "fork identity overhead exceeds savings"
                )
            self.fault("verify")
            now = self.clock()
            receipt = op.receipt(
                plan.strategy, op.target(earlier, now), output, entry.sha256, size,
                now, (plan.context_tokens_before, plan.context_tokens_after), plan.projection,
                selected_strategy(plan), _cwd_of(session),
                ForkForm.COMPACTED_RECORD if compacted else ForkForm.PORTABLE,
            )  # fmt: skip
            published = self._publish(
                receipt, op.receipt_path, source, session.source_sha256, output
            )
            self._keep_fork(published)
            self.fault("kept")
            return published, True

    # --- undo and fork ---------------------------------------------------------------------

    def undo(self, manifest_sha256: str, cwd: str | None = None) -> Receipt:
        """Restore a verified snapshot into a new fork beside the file it was taken from
        (`cwd`: the session's directory, for the receipt's resume line, when known)."""
        started = time.perf_counter()
        try:
            entry = self.vault.find(manifest_sha256)
            data = self.vault.read_bytes(entry.sha256)
        except VaultError as error:
            raise PublishError(PublishErrorCode.VAULT, str(error), error.code) from None
        provider = Provider(entry.provider)
        op = Operation.start(
            OperationKind.UNDO, provider, entry.path, entry.session_id, entry.source_sha256,
            self.root, extra=entry.sha256,
        )  # fmt: skip
        op, output = op.identified(data)
        # The snapshot is what the session was: what it carried is no reason to refuse it back,
        # only a finding the new identity would add.
        checks = verify_checks(provider)
        added = added_findings(verify(bytes(output), checks), verify(data, checks))
        if added:
            raise PublishError(
                PublishErrorCode.VERIFY_FAILED,
                f"the restored copy does not verify ({', '.join(added)})",
            )
        outcome = EventOutcome.APPLIED
        with op.locked() as (earlier, settled):
            if settled is not None:
                receipt, outcome = settled, EventOutcome.SKIPPED
            else:
                now = self.clock()
                receipt = op.receipt(
                    "undo", op.target(earlier, now), output, entry.sha256, entry.bytes, now,
                    cwd=cwd,
                )  # fmt: skip
                receipt = self._publish(
                    receipt, op.receipt_path, None, None, output, _written(entry)
                )
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
        op = Operation.start(
            OperationKind.FORK, session.provider, str(session.path.resolve()),
            session.session_id, session.source_sha256, self.root,
        )  # fmt: skip
        self._require_unchanged(session.path, session.source_sha256, "reading")
        with op.locked() as (earlier, settled):
            if settled is not None:
                return settled
            entry = self._snapshot(session, "fork", None)
            source = session.source_bytes
            op, output = op.identified(source)
            now = self.clock()
            receipt = op.receipt(
                "fork", op.target(earlier, now), output, entry.sha256, len(source), now,
                cwd=_cwd_of(session),
            )  # fmt: skip
            return self._publish(
                receipt, op.receipt_path, session.path, session.source_sha256, output
            )

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

    def _keep_fork(self, receipt: Receipt) -> None:
        """The published fork into the vault as well: its state card (the error, the open
        task, the decision) is what recall finds, with no manual snapshot. The fork is out
        already, so a vault that refuses it now costs only that."""
        try:
            self.vault.snapshot(
                Path(receipt.path),
                receipt.provider,
                receipt.session_id,
                PUBLISHED_LABEL,
                self.clock(),
            )
        except (VaultError, OSError) as error:
            log.warning("the fork is published, but not kept in the vault: %s", error)

    def _kept(self, receipt: Receipt) -> bool:
        """Whether the vault holds the fork as it was published."""
        try:
            entries = self.vault.entries(checked=False)
        except VaultError:
            return True  # a vault that cannot be read is reported by what reads it, not here
        return any(
            e.session_id == receipt.session_id
            and e.strategy == PUBLISHED_LABEL
            and e.source_sha256 == receipt.output_sha256
            for e in entries
        )

    def _snapshot(
        self, session: LoadedSession, label: str, progress: Callable[[int, int], None] | None
    ) -> IndexEntry:
        try:
            entry = self.vault.snapshot(
                session.path, session.provider, session.session_id, label, self.clock(), progress
            )
        except VaultError as error:
            raise PublishError(PublishErrorCode.VAULT, str(error), error.code) from None
        except OSError as error:
            raise PublishError(PublishErrorCode.IO, f"snapshot failed: {describe(error)}") from None
        if entry.source_sha256 != session.source_sha256:
            raise PublishError(
                PublishErrorCode.SOURCE_CHANGED,
                "the session changed while it was being snapshotted; plan again",
            )
        return entry

    def _require_valid(self, session: LoadedSession, candidate: bytes) -> None:
        """The candidate, verified in full: no errors, and no finding the source did not
        already have (the source's report is the one planning already made)."""
        report = verify(candidate, verify_checks(session.provider))
        baseline = session.source_checks.report()
        if not accepts(report, baseline):
            codes = ", ".join(
                added_findings(report, baseline) or sorted({f.code.value for f in report.findings})
            )
            raise PublishError(
                PublishErrorCode.VERIFY_FAILED, f"the compacted copy does not verify ({codes})"
            )

    def _publish(
        self,
        receipt: Receipt,
        receipt_path: Path,
        source: Path | None,
        source_sha256: str | None,
        output: bytes | bytearray,
        written: float | None = None,
    ) -> Receipt:
        """Write the fork (never over a file) between the receipt's intent and completion.

        The fork is dated as its content (`written`, else the source's modification time): a
        session written seconds ago reads as one an agent is working on, and a fork has none.
        """
        target = Path(receipt.path)
        try:
            write_receipt(receipt_path, receipt)
            self.fault("intent")
            if source is not None and source_sha256 is not None:
                self._require_unchanged(source, source_sha256, "it was snapshotted")
                written = os.stat(source).st_mtime
            self.fault("recheck")
            try:
                publish_new(target, output)
                if written is not None:
                    os.utime(target, (time.time(), written))
            except FileExistsError:
                if not _holds(target, receipt.output_sha256):
                    raise PublishError(
                        PublishErrorCode.TARGET_EXISTS,
                        f"{target} already exists with other bytes; a fork never overwrites "
                        "a file (move it away to publish this one)",
                    ) from None
            self.fault("publish")
            receipt = receipt.model_copy(update={"completed": True})
            write_receipt(receipt_path, receipt)
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
        tune_reasons: list[TuneReason],
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
                    bytes_before=len(session.source_bytes),
                    bytes_after=receipt.bytes_after if receipt else 0,
                    duration_ms=round((time.perf_counter() - started) * 1000, 1),
                    error_code=error_code,
                    tune_reasons=tune_reasons,
                ),
                self.root,
            )


def _representation(compacted: bool) -> str:
    """What tells the operation of a compacted-record fork from the portable one's."""
    return "compacted" if compacted else ""


def _cwd_of(session: LoadedSession) -> str | None:
    summary = session.transcript.summary
    return summary.cwd if summary is not None else None


def _written(entry: IndexEntry) -> float:
    """When a snapshot's content was last written: the modification time of the file it was
    taken from while that file still holds those bytes, else the time it was taken."""
    path = Path(entry.path)
    with suppress(OSError):
        st = os.stat(path)
        # The size first: a source that grew since is not hashed whole for nothing.
        if st.st_size == entry.bytes and file_sha256(path) == entry.source_sha256:
            return min(st.st_mtime, entry.ts)
    return entry.ts


def _holds(path: Path, sha256: str) -> bool:
    """Whether the file at `path` is a plain file of exactly these bytes (a FIFO or a device
    planted there is not, and is never read)."""
    try:
        return file_sha256(path) == sha256
    except OSError:
        return False
