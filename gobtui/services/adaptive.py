"""The adaptive policy (`adaptive = true` in config.toml): each session's trigger and floor come
from the tuner (core.policy.tune) wherever gobtui decides: plan, apply, watch, the board,
policy-check and the MCP server all ask here, so they agree, and say why in words.

The tuner works from the configured policy (already lowered to fire before the client's own
compaction), the session's window and context, and its earlier compactions (events.jsonl). What
it knows of the elidable share depends on the caller: a plan has the session's items, the board
and the watch pre-check do not, and skip that step, as the reference's watch does. With
`adaptive` off, the configured policy is what everything uses, and the tuner's figures are only
a preview of what turning it on would do (`tune`, `explain`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gobtui.adapters.config.stamp import file_stamp
from gobtui.adapters.publish.events import events_path, read_events
from gobtui.core.model import Provider
from gobtui.core.policy import (
    PolicyConfig,
    PolicyDecision,
    PolicyProvider,
    TuneReason,
    policy_check,
    tune,
)
from gobtui.core.telemetry import TelemetryEvent, recent_reductions, source_identity


@dataclass(frozen=True)
class Adapted:
    """The policy a decision uses, and what the tuner changed (nothing when off)."""

    policy: PolicyConfig
    base: PolicyConfig
    reasons: tuple[TuneReason, ...] = ()

    @property
    def adaptive(self) -> bool:
        return self.base.adaptive

    def words(self) -> list[str]:
        return [reason.words for reason in self.reasons]

    def line(self) -> str | None:
        """One line for plan output and the preview: None when adaptive is off."""
        if not self.adaptive:
            return None
        moved = (
            f"trigger {self.policy.trigger_tokens:,}, floor {self.policy.floor_tokens:,} "
            f"(configured {self.base.trigger_tokens:,} / {self.base.floor_tokens:,})"
        )
        why = "; ".join(self.words()) or "nothing to change"
        return f"adaptive: {moved}: {why}"

    def as_json(self) -> dict[str, object]:
        return {
            "adaptive": self.adaptive,
            "trigger_tokens": self.policy.trigger_tokens,
            "floor_tokens": self.policy.floor_tokens,
            "base_trigger_tokens": self.base.trigger_tokens,
            "base_floor_tokens": self.base.floor_tokens,
            "reasons": [reason.value for reason in self.reasons],
            "reasons_words": self.words(),
        }


class RecentCompactions:
    """The applied compactions of each session (events.jsonl), read again only when the file
    changes: the board asks for every row."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self._loaded = False
        self._stamp: tuple[int, int] | None = None
        self._events: list[TelemetryEvent] = []

    def of(self, provider: Provider, session_id: str, path: str) -> list[tuple[int, int]]:
        stamp = file_stamp(events_path(self.root))
        if not self._loaded or stamp != self._stamp:
            self._events = read_events(self.root) if stamp is not None else []
            self._stamp, self._loaded = stamp, True
        if not self._events:
            return []  # (most homes: no path resolved for nothing)
        identity = source_identity(provider, session_id, str(Path(path).resolve()))
        return recent_reductions(self._events, identity)


def adapt(
    policy: PolicyConfig,
    *,
    provider: PolicyProvider,
    session_id: str | None,
    path: str | None,
    window: int | None,
    context_tokens: int,
    elidable_tokens: int | None,
    recent: RecentCompactions | None = None,
) -> Adapted:
    """The policy to decide with: `policy` itself when adaptive is off; else the tuner's
    trigger and floor for this session (tune() without ever reading an event when off).
    Without a file (`path` None: policy-check of a session gobtui does not read, Devin's),
    the session has no compactions of record."""
    if not policy.adaptive:
        return Adapted(policy, policy)
    history: list[tuple[int, int]] = []
    if path is not None and session_id is not None and isinstance(provider, Provider):
        history = (recent or RecentCompactions()).of(provider, session_id, path)
    tuned = tune(policy, window, context_tokens, elidable_tokens, history)
    return Adapted(tuned.apply(policy), policy, tuple(tuned.reasons))


def tuner_preview(
    policy: PolicyConfig,
    *,
    provider: PolicyProvider,
    session_id: str | None,
    path: str | None,
    window: int | None,
    context_tokens: int,
    elidable_tokens: int | None,
    recent: RecentCompactions | None = None,
) -> Adapted:
    """What `adaptive = true` would decide with, whether or not it is on (tune, explain)."""
    on = policy.model_copy(update={"adaptive": True})
    found = adapt(
        on, provider=provider, session_id=session_id, path=path, window=window,
        context_tokens=context_tokens, elidable_tokens=elidable_tokens, recent=recent,
    )  # fmt: skip
    return Adapted(
        found.policy.model_copy(update={"adaptive": policy.adaptive}), policy, found.reasons
    )


def checked_policy(
    provider: PolicyProvider,
    session_id: str | None,
    context_tokens: int,
    session_active: bool,
    policy: PolicyConfig,
    strategy: str,
    window: int | None,
) -> PolicyDecision:
    """policy-check (the CLI's and the MCP tool's): decided from the tuner's trigger and floor
    when adaptive, with its reasons. The session is named, not read (policy-check is for an
    orchestrator's numbers): no item share nor compactions of record go in."""
    adapted = adapt(
        policy, provider=provider, session_id=session_id, path=None, window=window,
        context_tokens=context_tokens, elidable_tokens=None,
    )  # fmt: skip
    decision = policy_check(provider, context_tokens, session_active, adapted.policy, strategy)
    return decision.model_copy(update={"tune_reasons": list(adapted.reasons)})
