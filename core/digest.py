"""The state card built over elided items (reference `state_card_digest`, plus salient lines).

What the card can read: each item carries a `label` (the tool name, never payload text) and a
`summary` of at most 240 characters (for tool outputs: the call and a short output tail). A host
that can read the transcript may also hand over the payload text of the elided lines
(`payloads`); only its first 16 KiB are scanned.

How an item becomes card lines
------------------------------
Each field means what it says: `file:` is a path, `decision:` a sentence that decides,
`error:` a line that reports one; a tool's name is none of them (`concept:` stays empty).
1. Its *item line* is its summary, or its label when it has none; the *payload lines* are the
   lines of the host-supplied payload head, when there is one.
2. A line is *salient* (core.salience) by what it says: an error -> `errors`; an open task or a
   pending effect -> `open_tasks`; a decision, a prohibition or constraint, a revocation ->
   `decisions` (a prohibition is a standing decision the next turn must honour). A line that
   is none of these is not kept: the card is not a log of the calls.
3. The item's `paths` (files its calls named in their arguments, core.paths) go to
   `files_touched`, and so do the paths in its kept lines (an error's `src/app.py:12:`).
4. A *file view* (item.file_view, core.paths.is_file_view) is a call that only shows files: a
   reading tool (read, grep, glob, ...) or a shell command of reading words (cat, sed, rg,
   ...) whose arguments name a path. Its output is what the files hold, so its lines ("error",
   "not", "TODO" in code) are not read; the path is what the card keeps. A reading tool with no
   path is no file view.
5. An elided *edit input* (item.elides_input: what a finished Edit, Write or patch wrote)
   gives its paths only: the file holds that content now. Elided reasoning (the model's own
   narrative) gives the files its summary names, paths or bare names, and no sentences.
6. Of the payload lines, every salient one is kept, at most 4 per item: one critical sentence
   inside a huge output survives its elision.
7. Entries are cut to 240 bytes, deduplicated across the whole card (case and whitespace
   folded), and each list keeps its 16 newest entries (the state is what the latest turns left:
   the errors of the last attempt, the files last touched), shown in the order they happened.
   A rendered card over the 32 KiB digest cap sheds entries (file lines first, errors last)
   until it fits.

`goal` is the summary of the newest user prompt that is neither markup (`<...`) nor a card;
`summary` is the goal cut to 120 bytes; `current_work` is the newest assistant prose summary
(records carrying tool_use_ids are tool traffic, not prompts or prose, and are skipped for
both); `context` names the provider; `covers_items` counts the elided items.

How it stays fast
-----------------
The selection above is computed once per item (`CardMemo`, shared by every pass and strategy
planning one transcript) and the card is a fold over those per-item lines; a payload head is
searched for needles, not read line by line (core.salience).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .card_text import CARD_MARKERS
from .edits import DigestBlock
from .limits import (
    DIGEST_ENTRY_MAX_BYTES,
    DIGEST_LIST_MAX,
    MAX_DIGEST_BYTES,
    SALIENT_SCAN_BYTES,
)
from .model import ItemKind, Transcript, TranscriptItem
from .salience import (
    FAILING_TAIL_CHARS,
    Salience,
    reports_failure,
    said_salience,
    salience,
    salient_payload_lines,
    standing_rule,
    without_file_lines,
)

_TOOL_NAME_END = re.compile(r"[( ]")


def tool_name(label: str) -> str:
    """The label before its first `(` or space, lowercased."""
    return _TOOL_NAME_END.split(label, maxsplit=1)[0].strip().lower()


def cut_utf8(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes; a cut text ends in `...` (limit - 3 bytes of it)."""
    if len(text) <= limit and (text.isascii() or len(text) <= limit // 4):
        return text  # at most 4 bytes a character: no need to encode
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: max(0, limit - 3)].decode("utf-8", "ignore") + "..."


def _is_card(text: str) -> bool:
    return text.startswith(CARD_MARKERS)


def _prose(item: TranscriptItem, kind: ItemKind) -> bool:
    # Tool results can be user records and tool calls assistant ones: those carry tool_use_ids.
    return item.kind is kind and item.active and bool(item.summary) and not item.tool_use_ids


CONTINUATION_PREAMBLES = ("This session is being continued from a previous conversation",)
"""How a provider's own compaction summary opens (Claude Code's, posted as a user message):
it is no prompt of the user's."""


_TAG = re.compile(r"<[^<>]{1,80}>")
_CARD_GOAL = re.compile(
    r"^\[(?:gobtui|gobstopper) state card\] goal: (.+?)"
    r"(?= (?:summary|concept|file|decision|constraint|error|todo|current|context): |"
    r" \(covers \d+ earlier records\)|$)"
)


def goal_of(transcript: Transcript) -> str:
    """What the user asked for, present whenever the session holds a prompt: the newest user
    prompt of the live context that is not markup, not a card and not a provider's
    compaction summary; else the goal of an earlier card (a fork of a fork); else the newest
    such prompt from before a compaction; else a slash command's words without its tags. (A
    live part that opens with a provider's compaction summary and holds no prompt since has
    no goal to give: that summary, kept in the context, says what the user asked.)"""
    earlier = card_goal = marked = ""
    for item in reversed(transcript.items):
        if item.kind is not ItemKind.USER or item.tool_use_ids or not item.summary:
            continue
        text = item.summary.strip()
        if _is_card(text):
            found = _CARD_GOAL.match(text)
            card_goal = card_goal or (found.group(1).strip() if found else "")
        elif text.startswith(CONTINUATION_PREAMBLES):
            continue
        elif text.startswith("<"):  # a slash command's words; not the client's notices
            if "<command-" in text:
                marked = marked or " ".join(_TAG.sub(" ", text).split())
        elif item.active:
            return text
        else:
            earlier = earlier or text
    return card_goal or earlier or marked


def current_work_of(transcript: Transcript) -> str:
    for item in reversed(transcript.items):
        if _prose(item, ItemKind.ASSISTANT) and item.summary:
            text = item.summary.strip()
            if text and not _is_card(text):
                return text
    return ""


# -- per-item card lines, memoized ---------------------------------------------------------------

_ERRORS, _OPEN_TASKS, _DECIDED, _RULES, _FILES = range(5)
_SLOTS = 5
_SLOT_OF = {
    Salience.ERROR: _ERRORS,
    Salience.OPEN_TASK: _OPEN_TASKS,
    Salience.DECISION: _DECIDED,
}
_FAILING_INLINE = re.compile(r"\b[1-9]\d* failed\b|\btest result: FAILED\b|\berror\[E\d+\]")
"""A failing summary in a one-line output tail (its line starts are gone)."""


@dataclass(frozen=True, slots=True)
class ItemCard:
    """What one item may give the card: its candidate lines in order, each with the list it
    goes to (entries are normalized, deduplicated and bounded by the fold)."""

    lines: tuple[tuple[int, str], ...]


_PEOPLE = (ItemKind.USER, ItemKind.ASSISTANT)
_PATHS_ONLY = (ItemKind.REASONING, ItemKind.TOOL_CALL)


def _said(kind: Salience, line: str) -> Salience | None:
    return said_salience(line)


def _errors(kind: Salience, line: str) -> Salience | None:
    return kind if kind is Salience.ERROR else None


def _slot(kind: Salience) -> int:
    """Where a tool output's salient line goes: a stated rule is a constraint, not a decision
    of the session's."""
    return _RULES if kind is Salience.DECISION else _SLOT_OF[kind]


def item_card(item: TranscriptItem, payload: str | None) -> ItemCard:
    files = tuple((_FILES, path) for path in item.paths)  # what its calls named
    text = (item.summary or "").strip()
    if item.kind in _PEOPLE and not item.tool_use_ids:  # what the user and the assistant said
        said = [(_SLOT_OF[k], text)] if text and (k := said_salience(text)) else []
        if payload:
            said.extend((_SLOT_OF[k], line) for k, line in salient_payload_lines(payload, _said))
        return ItemCard((*said, *files))
    if (
        item.elides_input  # an edit: its content is in its file
        or item.kind in _PATHS_ONLY  # the model's narrative, a call
        or (item.kind is not ItemKind.TOOL_RESULT and not item.tool_use_ids)  # system, meta
        or item.file_view  # an output that is what files hold
    ):
        return ItemCard(files)
    text = without_file_lines(text or item.label)
    failed = item.failed or (
        reports_failure(payload) if payload else bool(_FAILING_INLINE.search(text))
    )

    def judge(kind: Salience, line: str) -> Salience | None:
        if kind is Salience.ERROR:
            return kind if failed else None  # a call that succeeded reports no error
        if kind is Salience.DECISION:
            return kind if standing_rule(line) else None  # a rule the output stated
        return kind

    kept: list[tuple[int, str]] = []
    if text and (k := salience(text)) is not None and (k := judge(k, text)) is not None:
        kept.append((_slot(k), text))
    if payload:
        kept.extend((_slot(k), line) for k, line in salient_payload_lines(payload, judge))
        if failed and len(payload) > SALIENT_SCAN_BYTES:  # where a failure is reported
            tail = payload[-FAILING_TAIL_CHARS:].partition("\n")[2]
            kept.extend((_ERRORS, line) for _k, line in salient_payload_lines(tail, _errors))
    return ItemCard((*kept, *files))


_VARYING = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,}\b|\d+")


def _signature(entry: str) -> str:
    """What two reports of one error share: the text with its numbers and ids folded (line
    numbers, counts, addresses, hashes), so the newest stands for the others."""
    return _VARYING.sub("#", entry.casefold())


class CardMemo:
    """Per-item card lines of one transcript and payload map, computed once and shared by
    every card built over them (passes of choose_with_digest, strategies of one eval).

    A memo answers only for the very transcript and payload map it was made with; a card
    asked for with others is built without it.
    """

    __slots__ = ("_cards", "_current_work", "_goal", "entries", "payloads", "transcript")

    def __init__(self, transcript: Transcript, payloads: Mapping[int, str] | None = None) -> None:
        self.transcript = transcript
        self.payloads = payloads
        self._cards: list[ItemCard | None] = [None] * len(transcript.items)
        self._goal: str | None = None
        self._current_work: str | None = None
        self.entries: dict[str, tuple[str, str]] = {}
        """A card line -> its entry (whitespace folded, cut to the entry cap) and that
        entry's deduplication key: the same lines recur in every card over these items."""

    def serves(self, transcript: Transcript, payloads: Mapping[int, str] | None) -> bool:
        return (
            self.transcript is transcript
            and self.payloads is payloads
            and len(self._cards) == len(transcript.items)
        )

    def card(self, position: int) -> ItemCard:
        """The card lines of transcript.items[position]."""
        found = self._cards[position]
        if found is None:
            item = self.transcript.items[position]
            payload = self.payloads.get(item.line_index) if self.payloads else None
            found = self._cards[position] = item_card(item, payload)
        return found

    def goal(self) -> str:
        if self._goal is None:
            self._goal = goal_of(self.transcript)
        return self._goal

    def current_work(self) -> str:
        if self._current_work is None:
            self._current_work = current_work_of(self.transcript)
        return self._current_work


def _fold(memo: CardMemo, positions: Sequence[int], said: Iterable[str]) -> list[list[str]]:
    """The lists of the card over these items: each entry cut to 240 bytes, deduplicated
    across the card and against the scalars `said` (case and whitespace folded; an error by
    its signature; an entry stands where it last appeared), each list kept to its
    DIGEST_LIST_MAX newest entries (a full list refuses an entry without marking it seen),
    shown in the order they happened."""
    batches: list[list[list[str]]] = [[] for _ in range(_SLOTS)]
    counts = [0] * _SLOTS
    seen: set[str] = {" ".join(text.split()).casefold() for text in said if text}
    entries = memo.entries
    open_lists = _SLOTS
    for position in reversed(positions):  # the newest items first: theirs is the state
        if not open_lists:
            break
        batch: list[list[str]] = [[] for _ in range(_SLOTS)]
        for slot, text in reversed(memo.card(position).lines):  # its newest line first too
            if counts[slot] >= DIGEST_LIST_MAX:
                continue
            found = entries.get(text)
            if found is None:
                entry = cut_utf8(" ".join(text.split()), DIGEST_ENTRY_MAX_BYTES)
                found = entries[text] = (entry, entry.casefold())
            entry, key = found
            if slot == _ERRORS:
                key = _signature(key)
            if not entry or key in seen:
                continue
            seen.add(key)
            batch[slot].append(entry)
            counts[slot] += 1
            if counts[slot] >= DIGEST_LIST_MAX:
                open_lists -= 1
        for slot, kept in enumerate(batch):
            if kept:
                batches[slot].append(kept)
    return [[entry for kept in reversed(slot) for entry in reversed(kept)] for slot in batches]


def _fit(card: DigestBlock) -> DigestBlock:
    """Shed entries until the rendered card is within the digest cap."""
    order = ("files_touched", "decisions", "concepts", "constraints", "open_tasks", "errors")
    lists = {name: list(getattr(card, name)) for name in order}
    while len(card.render().encode("utf-8", "surrogatepass")) > MAX_DIGEST_BYTES:
        name = next((n for n in order if lists[n]), None)
        if name is None:
            return card  # scalars alone are a few hundred bytes: under any sane cap
        lists[name].pop()
        card = card.model_copy(update={name: list(lists[name])})
    return card


def state_card_digest(
    transcript: Transcript,
    chosen_lines: Iterable[int],
    payloads: Mapping[int, str] | None = None,
    memo: CardMemo | None = None,
) -> DigestBlock:
    """The card over the chosen (elided) lines; `payloads` maps a line to its payload text.
    `memo` (made for this transcript and payload map) shares per-item work between cards."""
    if memo is None or not memo.serves(transcript, payloads):
        memo = CardMemo(transcript, payloads)
    chosen = set(chosen_lines)
    positions = [i for i, item in enumerate(transcript.items) if item.line_index in chosen]
    goal = cut_utf8(memo.goal(), DIGEST_ENTRY_MAX_BYTES)
    current = cut_utf8(memo.current_work(), DIGEST_ENTRY_MAX_BYTES)
    lists = _fold(memo, positions, (goal, current))
    # No field repeats another: the goal says what a summary of the prompt would.
    summary = "" if goal else f"gobtui state card covering {len(positions)} elided items"
    card = DigestBlock(
        goal=goal,
        summary=summary,
        files_touched=lists[_FILES],
        decisions=lists[_DECIDED],
        constraints=lists[_RULES],
        errors=lists[_ERRORS],
        open_tasks=lists[_OPEN_TASKS],
        current_work="" if current.casefold() == goal.casefold() else current,
        context=f"provider: {transcript.provider.value}",
        covers_items=len(positions),
    )
    return _fit(card)
