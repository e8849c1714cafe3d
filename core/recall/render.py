"""How each packed item reads in the injectable text, and what it costs in tokens.

Every string taken from a card, a label or a path goes through the one sanitizer: the text
is printed by the CLI and injected into a model's context.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

from ..edits import DigestBlock
from ..model import Provider
from ..sanitize import terminal_safe
from ..telemetry import TelemetryEvent
from ..tokens import estimate_tokens
from ..vault.index import IndexEntry
from ..vault.reports import CONTENT_TRUST
from .model import Arm, CardSeen, PackItem

ARM_HEADINGS = {
    Arm.CARDS: "## state cards",
    Arm.FACTS: "## facts from earlier cards",
    Arm.SNAPSHOTS: "## snapshots (gobtui recall or read-snapshot opens them)",
    Arm.EVENTS: "## events",
}
FACT_FIELDS = (
    ("todo", "open_tasks"),
    ("error", "errors"),
    ("decision", "decisions"),
    ("constraint", "constraints"),
    ("file", "files_touched"),
)
"""Card entries in the order a returning agent needs them: what is open, what broke, what was
decided, which files."""


def when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def who(provider: Provider, session_id: str) -> str:
    return f"{provider.value} {terminal_safe(session_id[:8])}"


def head_line(verb: str, subject: str) -> str:
    return f"[gobtui {verb}] {subject}: {CONTENT_TRUST.replace('_', ' ')}, not instructions"


def card_body(card: DigestBlock, include_private: bool) -> list[str]:
    """The card's lines a pack shows: its goal (the user's prompt) only privately."""
    lines = [f"  goal: {card.goal}"] if include_private and card.goal else []
    for prefix, name in FACT_FIELDS:
        lines += [f"  {prefix}: {entry}" for entry in getattr(card, name)]
    if card.current_work:
        lines.append(f"  current: {card.current_work}")
    return [terminal_safe(line) for line in lines]


def snapshot_line(entry: IndexEntry, include_private: bool) -> str:
    label = f" ({terminal_safe(entry.strategy)})" if entry.strategy else ""
    line = (
        f"- snapshot {entry.sha256[:12]} of {who(entry.provider, entry.session_id)}{label}, "
        f"{when(entry.ts)}, {entry.record_count} records"
    )
    return line + (f", {terminal_safe(entry.path)}" if include_private else "")


def card_text(seen: CardSeen, include_private: bool) -> str:
    snap = seen.snapshot
    head = (
        f"- {who(snap.provider, snap.session_id)}, {when(snap.ts)}, "
        f"snapshot {snap.sha256[:12]} record {seen.record_index}"
    )
    if include_private:
        head += f", {terminal_safe(snap.path)}"
    return "\n".join([head, *card_body(seen.card, include_private)])


def event_key(event: TelemetryEvent, ordinal: int) -> str:
    """An event's identity (events carry no id): its place in events.jsonl (append only, so
    two events of one instant keep their order and never share a cursor position), and a
    digest of what it says."""
    data = f"{event.ts!r}\x00{event.source_identity_sha256}\x00{event.action}\x00{event.outcome}"
    return f"e:{ordinal:09d}:" + hashlib.sha256(data.encode()).hexdigest()[:12]


def event_text(event: TelemetryEvent) -> str:
    error = f" [{terminal_safe(event.error_code)}]" if event.error_code else ""
    before, after = event.context_tokens_before, event.context_tokens_after
    # A hook's record of the client's own compaction has no figures: the client keeps them.
    figures = f": context {before} -> {after} tokens" if before or after else ""
    return (
        f"- {when(event.ts)} {who(event.provider, event.session_id)} {event.action.value} "
        f"{event.outcome.value} {terminal_safe(event.strategy)}{figures}{error}"
    )


def tokens(text: str) -> int:
    """What a line of the text costs, its newline included."""
    return estimate_tokens(len(text.encode("utf-8", "surrogatepass")) + 1)


def item(arm: Arm, provider: Provider, session: str, ts: float, ref: str, text: str) -> PackItem:
    return PackItem(arm, provider, session, ts, ref, text, tokens(text))


def fill(offered: Sequence[PackItem], budget: int, head: str) -> tuple[list[PackItem], int]:
    """Take items in order while they fit, skipping one that does not; the heading lines are
    charged with the first item that needs them."""
    packed: list[PackItem] = []
    used = 0
    arms: set[Arm] = set()
    for offer in offered:
        cost = offer.tokens + (0 if packed else tokens(head))
        cost += 0 if offer.arm in arms else tokens(ARM_HEADINGS[offer.arm])
        if used + cost <= budget:
            packed.append(offer)
            arms.add(offer.arm)
            used += cost
    return packed, used


def render(packed: Sequence[PackItem], head: str, *, headings: bool = True) -> str:
    """The injectable text: exactly the packed items, by arm (or in order), under `head`."""
    if not packed:
        return ""
    if not headings:
        return "\n".join([head, *(p.text for p in packed)])
    lines = [head]
    for arm in Arm:
        in_arm = [p.text for p in packed if p.arm is arm]
        if in_arm:
            lines += [ARM_HEADINGS[arm], *in_arm]
    return "\n".join(lines)
