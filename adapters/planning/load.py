"""Planning on a real file: load it once, then plan with one strategy (adapters.planning.evaluate
evaluates them all).

The source is read once into memory and bound to its sha256; every candidate is built from
those bytes in memory (a temporary copy that never touches the disk), so an eval cannot
disturb the session it measures, and `apply` can later refuse a source that moved on.

A plan reads the live part (adapters.providers.live_part): the newest compaction and what
follows, which the context window bounds however long the history before it; the whole file
only when there is no compaction or the live branch reaches back before it. That text is read
line by line once (adapters.rewrite.lines.read_source): the elided-output heads, the card's
scan and verify's per-line facts come from that one pass. A fork keeps the history before it
byte for byte. A session
then keeps what its plans share: a PlanMemo (per-item card lines, each strategy's plan,
admissions), a SourceRewriter (rewritten lines) and SourceChecks (the source's verify state),
so an eval builds each candidate as an overlay of the source and verifies only its new lines.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from ...core.admission import Admission, admit
from ...core.calibration import Calibration, calibrate
from ...core.composition import Composition, composition
from ...core.context_words import why_no_plan
from ...core.edits import CompactionPlan, NoPlan, NoPlanReason
from ...core.limits import (
    EVAL_PAYLOAD_BYTES,
    MAX_PLAN_ITEMS,
    MAX_PLAN_RECORDS,
    MAX_PLAN_SOURCE_BYTES,
)
from ...core.model import Provider, Transcript
from ...core.policy import PolicyConfig
from ...core.probes import Probe, extract_probes
from ...core.record_number import shown
from ...core.strategies import STRATEGIES, EvalContext, PlanMemo, UnknownStrategyError, plan_for
from ...core.strategies.common import admit_with
from ...core.strategies.external import AGENTIC_ID, EXTENSION_IDS
from ...core.verify import SourceChecks
from ..config.config_file import ExternalCommand
from ..files.regular import regular_file
from ..providers.full_parse import gc_paused
from ..providers.interface import CardScanner
from ..providers.live_part import WHOLE, LivePart, find_live_part
from ..providers.registry import parse_data, verify_checks
from ..rewrite.lines import SourceLines, SourceRewriter, read_source
from .agentic import run_plugin
from .external import STRATEGY_ID as EXTERNAL_ID
from .external import ExternalError, run_external

Progress = Callable[[int, int, str], None]
"""(done, total, what) while an eval runs."""


class PlanningErrorCode(StrEnum):
    UNREADABLE = "unreadable"
    TOO_LARGE = "too_large"
    TOO_MANY_ITEMS = "too_many_items"
    TOO_MANY_RECORDS = "too_many_records"
    CHANGED = "changed"
    UNKNOWN_STRATEGY = "unknown_strategy"
    EXTERNAL_FAILED = "external_failed"


class PlanningError(Exception):
    """A one-line reason the session cannot be planned (no transcript content)."""

    def __init__(self, code: PlanningErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class LoadedSession:
    """A transcript read once: its bytes, their digest, the parse of the text a plan reads
    (`data`: its live part, see the module docstring) and elided-output heads.

    What load_session's pass found besides (line starts, the card's scan, verify's line
    facts) rides along; a session built without them computes each on first use. The memo,
    rewriter and checks are made on first use and kept: they serve this session only.
    """

    path: Path
    provider: Provider
    data: bytes
    source_sha256: str
    transcript: Transcript
    payloads: Mapping[int, str] = field(repr=False)
    starts: list[int] | None = field(default=None, repr=False, compare=False)
    card_scan: CardScanner | None = field(default=None, repr=False, compare=False)
    checks: SourceChecks | None = field(default=None, repr=False, compare=False)
    source: bytes | None = field(default=None, repr=False, compare=False)
    """The whole file, when `data` is its live part (None: `data` is the whole file)."""
    live: LivePart = WHOLE

    @cached_property
    def _live_offsets(self) -> tuple[int, int]:
        """(the file's lines before the live part, the lines of its head in `data`)."""
        if self.source is None:
            return 0, 0
        return self.source.count(b"\n", 0, self.live.start), self.live.head.count(b"\n")

    def record_number(self, index: int) -> int:
        """The file's own record number (1-based, as `verify`, the vault and read-snapshot
        show it) of line `index` of `data`: the head's lines are the file's first ones, the
        live part's come after every line before it."""
        before, head = self._live_offsets
        return shown(index if index < head else before + (index - head))

    @property
    def live_first_record(self) -> int:
        """The record number the live part starts at (1: the whole file is read)."""
        before, _head = self._live_offsets
        return shown(before)

    @property
    def source_bytes(self) -> bytes:
        """The whole file as it was read."""
        return self.data if self.source is None else self.source

    def whole(self, rewritten: bytes) -> bytes:
        """The file a rewrite of `data` stands for: the history before the live part kept."""
        return self.live.whole(self.source_bytes, rewritten)

    def whole_size(self, rewritten: int) -> int:
        """len(whole(r)) for a rewrite r of `rewritten` bytes, without joining it."""
        return len(self.source_bytes) - len(self.data) + rewritten

    @property
    def session_id(self) -> str:
        return self.transcript.session_id

    def context(self, live: bool) -> EvalContext:
        return EvalContext(live=live, payloads=self.payloads, memo=self.memo)

    @cached_property
    def lines(self) -> SourceLines:
        """The source's lines (as split_lines cuts them), sliced on demand."""
        return SourceLines(self.data, self.starts)

    @cached_property
    def composition(self) -> Composition:
        """What fills the context, by kind (core.composition), fitted on the live usage
        records; once a session (a plan's no-plan sentence and the faces share it)."""
        transcript = self.transcript
        live = {item.line_index for item in transcript.items if item.active}
        usage = self.card_scan.usage_points(live) if self.card_scan is not None else []
        reported = transcript.summary.context_tokens if transcript.summary is not None else None
        return composition(transcript.items, usage, reported)

    @cached_property
    def probes(self) -> list[Probe]:
        """extract_probes() over the payloads, once."""
        return extract_probes(self.transcript, self.payloads)

    @cached_property
    def memo(self) -> PlanMemo:
        return PlanMemo(self.transcript, self.payloads)

    @cached_property
    def rewriter(self) -> SourceRewriter:
        return SourceRewriter(
            self.data,
            self.provider,
            self.transcript,
            lines=self.lines,
            source_sha256=bytes.fromhex(self.source_sha256),
            scan=self.card_scan,
        )

    @cached_property
    def source_checks(self) -> SourceChecks:
        """verify() of the source, kept line by line for its candidates."""
        if self.checks is not None:
            return self.checks
        return SourceChecks(self.data, verify_checks(self.provider), None, self.lines.starts)


def load_session(path: Path, provider: Provider) -> LoadedSession:
    """Read `path` and parse its live part for planning; PlanningError when it cannot be
    planned."""
    try:
        source, mtime_ns = _read_whole(path)
    except OSError as error:
        raise PlanningError(
            PlanningErrorCode.UNREADABLE, f"cannot read {path}: {error.strerror or error}"
        ) from None
    live = find_live_part(source, provider)
    # Counted before anything is decoded: a file of millions of tiny lines is refused in the
    # time a count takes, not after a parse of every one of them.
    records = source.count(b"\n", live.start) + (0 if source.endswith(b"\n") else 1)
    if records > MAX_PLAN_RECORDS:
        raise PlanningError(
            PlanningErrorCode.TOO_MANY_RECORDS,
            f"{records} records after the newest compaction, over the planning limit of "
            f"{MAX_PLAN_RECORDS}",
        )
    transcript = parse_data(provider, str(path), live.text(source), mtime_ns, part=live.start > 0)
    if transcript is None:  # the live branch runs on before the newest compaction
        live = WHOLE
        transcript = parse_data(provider, str(path), source, mtime_ns, part=False)
    assert transcript is not None  # (a whole parse always answers)
    data = live.text(source)
    if len(transcript.items) > MAX_PLAN_ITEMS:
        raise PlanningError(
            PlanningErrorCode.TOO_MANY_ITEMS,
            f"{len(transcript.items)} items, over the planning limit of {MAX_PLAN_ITEMS}",
        )
    with gc_paused():
        read = read_source(data, provider, transcript, EVAL_PAYLOAD_BYTES)
    transcript.calibration = calibration_of(transcript, read.scan)
    return LoadedSession(
        path=path,
        provider=provider,
        data=data,
        source_sha256=hashlib.sha256(source).hexdigest(),
        transcript=transcript,
        payloads=read.payloads,
        starts=read.lines.starts,
        card_scan=read.scan,
        checks=read.checks,
        source=None if live.start == 0 else source,
        live=live,
    )


def calibration_of(transcript: Transcript, scan: CardScanner) -> Calibration:
    """The session's calibration: its live items' estimates against the context reported at
    each live usage record (core.calibration)."""
    live = [(item.line_index, item.est_tokens) for item in transcript.items if item.active]
    usage = scan.usage_points({line for line, _tokens in live})
    return calibrate(live, usage, transcript.provider.traits.default_slope)


def _read_whole(path: Path) -> tuple[bytes, int]:
    """The file's bytes as of one moment, and its mtime then. A live session grows meanwhile:
    what was appended after that moment is left for the next plan. One that shrank (was
    rewritten) is read again, once."""
    with regular_file(path) as handle:
        for _attempt in range(2):
            st = os.fstat(handle.fileno())
            if st.st_size > MAX_PLAN_SOURCE_BYTES:
                raise PlanningError(
                    PlanningErrorCode.TOO_LARGE,
                    f"{path} is {st.st_size} bytes, over the planning limit of "
                    f"{MAX_PLAN_SOURCE_BYTES}",
                )
            handle.seek(0)
            data = handle.read(st.st_size)
            if len(data) == st.st_size:
                return data, st.st_mtime_ns
    raise PlanningError(
        PlanningErrorCode.CHANGED, f"{path} changed while it was read (rewritten?); try again"
    )


@dataclass(frozen=True)
class PlanOutcome:
    """One strategy's answer: a plan with its admission, or a no-plan object."""

    strategy: str
    result: CompactionPlan | NoPlan
    admission: Admission | None

    @property
    def plan(self) -> CompactionPlan | None:
        """The plan when there is one and admission accepts it."""
        if isinstance(self.result, CompactionPlan) and self.admission and self.admission.admitted:
            return self.result
        return None


def check_strategy(strategy: str, external: ExternalCommand | None = None) -> None:
    if strategy in EXTENSION_IDS and external is not None:
        return
    if strategy == EXTERNAL_ID:
        raise PlanningError(
            PlanningErrorCode.UNKNOWN_STRATEGY,
            "external runs a preset's command: name a preset whose config.toml section sets "
            'strategy = "external", command = [...] and trusted_legacy_command = true '
            "(--preset NAME)",
        )
    if strategy in EXTENSION_IDS:
        raise PlanningError(
            PlanningErrorCode.UNKNOWN_STRATEGY,
            f"{strategy} runs a preset's command or plugin: name a preset whose config.toml "
            'section sets plugin = "/path/to/bundle" and trusted_plugin_sha256 = "..." '
            "(or a trusted command) with --preset NAME",
        )
    if strategy not in STRATEGIES:
        raise PlanningError(PlanningErrorCode.UNKNOWN_STRATEGY, str(UnknownStrategyError(strategy)))


def plan_session(
    session: LoadedSession,
    strategy: str,
    policy: PolicyConfig,
    live: bool = False,
    external: ExternalCommand | None = None,
) -> PlanOutcome:
    """One strategy behind the central gates, then admission. `external` is the trusted
    command or plugin of a preset, run only when `strategy` is external or agentic and the
    trigger is reached."""
    check_strategy(strategy, external)
    if strategy in EXTENSION_IDS and external is not None:
        return _plan_external(session, policy, external, strategy)
    ctx = session.context(live)
    with gc_paused():  # planning allocates much, and cycles none: no need to rescan the heap
        result = plan_for(strategy, session.transcript, policy, ctx)
        if isinstance(result, NoPlan):
            why = why_no_plan(result, session.transcript, policy, session.composition)
            return PlanOutcome(strategy, result.model_copy(update={"why": why}), None)
        return PlanOutcome(strategy, result, admit_with(result, session.transcript, policy, ctx))


def _plan_external(
    session: LoadedSession, policy: PolicyConfig, external: ExternalCommand, strategy: str
) -> PlanOutcome:
    if external.plugin is not None:  # a plugin proposes file edits only, under any id
        strategy = AGENTIC_ID
    transcript = session.transcript
    before = transcript.context_tokens()
    if before < policy.effective_trigger():
        return PlanOutcome(
            strategy,
            NoPlan(
                reason_code=NoPlanReason.BELOW_TRIGGER,
                context_tokens_before=before,
                effective_trigger_tokens=policy.effective_trigger(),
                target_context_tokens=policy.floor_tokens,
                min_savings_tokens=policy.min_savings_tokens,
            ),
            None,
        )
    try:
        if external.plugin is not None:
            result = run_plugin(external, transcript, session.source_sha256, policy)
        else:
            result = run_external(
                external.argv,
                transcript,
                session.source_sha256,
                policy,
                trusted=external.trusted,
                timeout_secs=external.timeout_secs,
                strategy_id=strategy,
            )
    except ExternalError as error:
        raise PlanningError(PlanningErrorCode.EXTERNAL_FAILED, str(error)) from None
    if isinstance(result, NoPlan):
        return PlanOutcome(strategy, result, None)
    return PlanOutcome(strategy, result, admit(result, transcript, policy))


def candidate_bytes(session: LoadedSession, plan: CompactionPlan) -> bytes:
    """The compacted transcript a file plan produces (identity unchanged): apply_plan's
    bytes, built from the session's rewriter."""
    return session.rewriter.apply(plan)
