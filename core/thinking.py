"""Preserved thinking: what a fork of a Claude session must leave out to pass the provider's
prefix check.

The provider checks every `thinking` / `redacted_thinking` block sent back against its
prefix (system, tools and every message before it); a block after a changed message fails,
and with it every later one (a 400 on new accounts). So from the first message a plan
changes on, a fork holds no thinking; the thinking before it stays byte-identical. The rule
is the plan's (here, so projection, card and receipt count it) and the rewrite's (adapters.
providers.claude.rewrite.prefix_safe, which also strips thinking from mixed records).

It applies to every Claude model: older ones accept earlier thinking left out, and a fork
cannot know which model will resume it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .model import ItemKind, Provider, Transcript, TranscriptItem

_ASSISTANT_SIDE = frozenset({ItemKind.ASSISTANT, ItemKind.REASONING})


def rule_applies(provider: Provider) -> bool:
    """Whether forks of this provider's sessions must leave thinking out after a change
    (Codex: the Responses API checks no prefix of the reasoning sent back)."""
    return provider.traits.thinking


def change_start(items: Sequence[TranscriptItem], first_line: int) -> int:
    """The first line of the message holding `first_line`: Claude Code writes a response one
    content block a record, so the records of one assistant message stand together (its
    thinking first)."""
    position = next((i for i, item in enumerate(items) if item.line_index >= first_line), None)
    if position is None:
        return first_line
    item = items[position]
    if item.line_index != first_line or item.kind not in _ASSISTANT_SIDE:
        return first_line
    start = first_line
    for earlier in reversed(items[:position]):
        if not earlier.active:
            continue
        if earlier.kind not in _ASSISTANT_SIDE:
            break
        start = earlier.line_index
    return start


def thinking_after(transcript: Transcript, changed: Iterable[int]) -> list[int]:
    """The thinking lines a fork changing `changed` lines must leave out (none for a
    provider the rule does not bind, or no change)."""
    lines = list(changed)
    if not lines or not rule_applies(transcript.provider):
        return []
    items = transcript.items
    start = change_start(items, min(lines))
    return [
        item.line_index
        for item in items
        if item.elidable and item.kind is ItemKind.REASONING and item.line_index >= start
    ]


def in_progress_start(items: Sequence[TranscriptItem]) -> int:
    """The line of the newest prompt: thinking after it is the turn in progress's own, never
    a candidate of its own (the rule still leaves it out after an earlier change)."""
    for item in reversed(items):
        if item.active and item.kind is ItemKind.USER:
            return item.line_index
    return -1
