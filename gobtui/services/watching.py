"""`gobtui watch` without a screen: the dashboard's store, board and policies, one pass at a
time. Each pass re-scans the homes (the store reads only what grew), then decides for every
session over its trigger (core.watch): a live one is only told its provider's control, an
idle one gets a verified fork (or, in a dry run, the plan it would carry).

A pass plans a session only when its file or its policy changed since the last decision: a
decision holds for the bytes it was made on, so an idle board costs a stat per file. Only news
is returned: a decision equal to the last one reported for that session is not repeated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gobtui.adapters.config.config_file import ResolvedPolicy
from gobtui.adapters.config.paths import Homes, cache_dir, data_dir
from gobtui.adapters.planning.load import PlanningError, load_session, plan_session
from gobtui.adapters.publish.events import append_event, read_events
from gobtui.adapters.publish.operations import published_receipts
from gobtui.adapters.publish.publisher import Publisher, PublishError
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.store import SessionStore
from gobtui.adapters.vault.vault import Vault
from gobtui.core.board import BoardPolicy, BoardRow, build_board
from gobtui.core.edits import NoPlan
from gobtui.core.limits import ACTIVE_ONLY_SECS, DEFAULT_MAX_AGE_SECS, HOT_SECS
from gobtui.core.model import Provider, SessionSummary
from gobtui.core.policy import PROVIDER_CONTROLS, PolicyConfig, TuneReason
from gobtui.core.receipt import Receipt
from gobtui.core.telemetry import (
    EventAction,
    EventOutcome,
    TelemetryEvent,
    source_identity,
)
from gobtui.core.watch import Gate, SessionState, WatchDecision, gate
from gobtui.core.watch_codes import WatchCode
from gobtui.services import policies
from gobtui.services.published_forks import PublishedForks


@dataclass(frozen=True)
class WatchSettings:
    dry_run: bool = False
    active_only: bool = False
    all_sessions: bool = False
    provider: Provider | None = None
    live_secs: float = HOT_SECS
    use_cache: bool = True


@dataclass
class _Settled:
    stamp: tuple[Any, ...]
    decision: WatchDecision


@dataclass
class HeadlessWatch:
    homes: Homes
    settings: WatchSettings = field(default_factory=WatchSettings)
    clock: Callable[[], float] = time.time
    reported: dict[str, WatchDecision] = field(default_factory=dict)
    _settled: dict[str, _Settled] = field(default_factory=dict)
    _failed: dict[str, float] = field(default_factory=dict)
    _store: SessionStore | None = None
    _cache: SummaryCache | None = None
    sessions_seen: int = 0
    current: list[WatchDecision] = field(default_factory=list)
    """Every decision of the last pass (one per session over its trigger), news or not."""

    def _session_store(self) -> SessionStore:
        if self._store is None:
            if self.settings.use_cache:
                self._cache = SummaryCache(cache_dir() / "cursors")
            max_age: float | None = DEFAULT_MAX_AGE_SECS
            if self.settings.active_only:
                max_age = ACTIVE_ONLY_SECS
            elif self.settings.all_sessions:
                max_age = None
            self._store = SessionStore(self.homes, self._cache, max_age_secs=max_age)
        return self._store

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def pass_once(self) -> list[WatchDecision]:
        """One pass: the decisions that are news since the last pass, board order."""
        now = self.clock()
        summaries = self._session_store().scan(now)
        wanted = self.settings.provider
        summaries = [s for s in summaries if wanted is None or s.provider is wanted]
        self.sessions_seen = len(summaries)
        current = policies.current()
        forks = PublishedForks(published_receipts())
        summaries = forks.mark(summaries)
        board = BoardPolicy(hot_secs=self.settings.live_secs, session_trigger=current.trigger)
        rows = [row for row in build_board(summaries, board, now) if row.over_trigger]
        published = self._last_published()
        news: list[WatchDecision] = []
        self.current = []
        for row in rows:
            decision = self._decide(row, current, published, now)
            self.current.append(decision)
            if not decision.same_news(self.reported.get(row.key)):
                news.append(decision)
                self._on_news(row, decision)
            self.reported[row.key] = decision
        return news

    def _last_published(self) -> dict[str, float]:
        last: dict[str, float] = {}
        for event in read_events():
            if (
                event.outcome is EventOutcome.APPLIED
                and event.action is EventAction.TRANSCRIPT_COMPACT
            ):
                last[event.session_id] = max(event.ts, last.get(event.session_id, 0.0))
        return last

    def _decide(
        self,
        row: BoardRow,
        current: policies.SessionPolicies,
        published: dict[str, float],
        now: float,
    ) -> WatchDecision:
        summary = row.summary
        resolved = current.resolve(summary)
        pre = current.adapted(summary)
        policy = pre.policy
        state = SessionState(
            over_trigger=row.over_trigger,
            live=row.live,
            unresumed_fork=summary.fork_as_published,
            last_published_ts=published.get(summary.session_id),
            last_failed_ts=self._failed.get(row.key),
        )
        base = _Base(row, now, list(pre.reasons))
        verdict = gate(state, policy, now)
        if verdict is Gate.PROVIDER_COMPACT:
            return base.decision(
                WatchCode.PROVIDER_COMPACT,
                control=PROVIDER_CONTROLS[summary.provider],
                detail="live: its owner compacts it; nothing written",
            )
        if verdict is not Gate.PLAN:
            return base.decision(WatchCode(verdict.value), strategy=resolved.strategy)
        stamp = (summary.mtime, summary.bytes, policy, resolved.strategy, self.settings.dry_run)
        settled = self._settled.get(row.key)
        if settled is not None and settled.stamp == stamp:
            return settled.decision
        decision = self._plan_and_publish(base, summary, policy, resolved, current)
        if decision.decision is WatchCode.FAILED:
            self._failed[row.key] = now
        else:
            self._failed.pop(row.key, None)
            self._settled[row.key] = _Settled(stamp, decision)
        return decision

    def _plan_and_publish(
        self,
        base: _Base,
        summary: SessionSummary,
        policy: PolicyConfig,
        resolved: ResolvedPolicy,
        current: policies.SessionPolicies,
    ) -> WatchDecision:
        strategy = resolved.strategy
        try:
            session = load_session(Path(summary.path), summary.provider)
            if policy.adaptive:  # the plan knows the items: the tuner's full say, as `plan`
                tuned = current.adapted(summary, session.transcript)
                policy = tuned.policy
                base = replace(base, reasons=list(tuned.reasons))
            outcome = plan_session(session, strategy, policy, False, resolved.external_command)
        except PlanningError as error:
            return base.decision(WatchCode.FAILED, strategy=strategy, detail=str(error))
        result = outcome.result
        if isinstance(result, NoPlan):
            return base.decision(
                WatchCode.NO_PLAN, strategy=strategy, detail=result.reason_code.value
            )
        plan = outcome.plan
        if plan is None:
            message = outcome.admission.message if outcome.admission else "refused"
            return base.decision(WatchCode.REFUSED, strategy=strategy, detail=message)
        if plan.is_control:
            return base.decision(
                WatchCode.PROVIDER_COMPACT,
                strategy=plan.strategy,
                control=plan.edits[0].op,
                detail="the strategy asks the provider to compact; nothing written",
            )
        publisher = Publisher(Vault(data_dir() / "vault"))
        earlier = publisher.published(session, plan)
        if earlier is not None:
            return base.forked(WatchCode.ALREADY_PUBLISHED, earlier, plan.context_tokens_after)
        if self.settings.dry_run:
            return base.decision(
                WatchCode.WOULD_PUBLISH,
                strategy=plan.strategy,
                context_tokens_after=plan.context_tokens_after,
                detail="dry run: nothing written",
            )
        try:
            receipt = publisher.apply(session, plan, policy, None, base.reasons)
        except PublishError as error:
            return base.decision(
                WatchCode.FAILED, strategy=plan.strategy, detail=f"{error} [{error.code.value}]"
            )
        return base.forked(WatchCode.PUBLISHED, receipt, plan.context_tokens_after)

    def _on_news(self, row: BoardRow, decision: WatchDecision) -> None:
        """A live session's delegation is recorded once per news, as the reference does:
        skipped, nothing credited. A dry run records nothing."""
        if self.settings.dry_run or decision.decision is not WatchCode.PROVIDER_COMPACT:
            return
        summary = row.summary
        append_event(
            TelemetryEvent(
                ts=decision.ts,
                provider=summary.provider,
                session_id=summary.session_id,
                source_identity_sha256=source_identity(
                    summary.provider, summary.session_id, str(Path(summary.path).resolve())
                ),
                strategy=decision.strategy or "sawtooth",
                action=EventAction.PROVIDER_COMPACT,
                outcome=EventOutcome.SKIPPED,
                trigger_tokens=row.trigger_tokens,
                context_tokens_before=summary.context_tokens or 0,
                context_tokens_after=summary.context_tokens or 0,
                est_reclaimed_tokens=0,
                items_covered=0,
                bytes_before=summary.bytes,
                duration_ms=0.0,
            )
        )


@dataclass(frozen=True)
class _Base:
    """What every decision about one row says."""

    row: BoardRow
    now: float
    reasons: list[TuneReason]
    """What the adaptive tuner moved (nothing when it is off)."""

    def decision(self, code: WatchCode, **more: Any) -> WatchDecision:
        summary = self.row.summary
        return WatchDecision(
            ts=self.now,
            provider=summary.provider,
            session_id=summary.session_id,
            project=self.row.project,
            decision=code,
            context_tokens=summary.context_tokens or 0,
            trigger_tokens=self.row.trigger_tokens,
            tune_reasons=self.reasons,
            **more,
        )

    def forked(self, code: WatchCode, receipt: Receipt, after: int) -> WatchDecision:
        return self.decision(
            code,
            strategy=receipt.strategy,
            context_tokens_after=after,
            fork_session_id=receipt.session_id,
            fork_path=receipt.path,
            resume_command=receipt.resume_command,
        )
