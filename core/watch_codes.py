"""The closed vocabulary of `gobtui watch`'s decisions, apart from the decisions themselves
(core.watch): the board names them without loading the planning models."""

from __future__ import annotations

from enum import StrEnum


class WatchCode(StrEnum):
    PUBLISHED = "published"
    WOULD_PUBLISH = "would_publish"
    ALREADY_PUBLISHED = "already_published"
    PROVIDER_COMPACT = "provider_compact"
    HELD = "held"
    RETRY_WAIT = "retry_wait"
    UNRESUMED_FORK = "unresumed_fork"
    NO_PLAN = "no_plan"
    REFUSED = "refused"
    FAILED = "failed"
