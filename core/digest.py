"""The state card built over elided items (reference `state_card_digest`, plus salient lines).

What the card can read: each item carries a `label` (the tool name, never payload text) and a
`summary` of at most 240 characters (for tool outputs: the call and a short output tail). A host
that can read the transcript may also hand over the payload text of the elided lines
(`payloads`); only its first 16 KiB are scanned.

How an item becomes card lines
------------------------------
1. Its tool name (label before the first `(` or space, lowercased) joins the concepts set.
2. Its *item line* is its summary, or its label when it has none; the *payload lines* are the
   lines of the host-supplied payload head, when there is one.
3. A line is *salient* when it matches, in this order of precedence:
   - an error marker (the reference's list: error, failed, traceback, not found, exit code, ...)
     -> `errors`;
   - an open-task marker (todo, fixme, pending, open:, follow up, follow-up) -> `open_tasks`;
   - an explicit decision (decided, decision, we will / we'll, will use, chose / chosen, going
     with, "use X instead") or a negation / prohibition (not, never, don't, do not, must not,
     cannot, can't, shouldn't, won't, avoid, no longer) -> `decisions`. Negations go with
     decisions because a prohibition is a standing decision the next turn must honour.
4. The item line is always kept: when not salient it goes, as in the reference, to
   `files_touched` if it holds a `/` or comes from a tool result, else to `decisions`.
5. Of the payload lines, the first *meaningful* one (at least 3 letters or digits, leading
   ellipsis and whitespace stripped) is kept as well (it goes where the item line went when it
   is not salient itself), plus every salient line, at most 4 lines per item. The top of an
   output is where tools put their verdict, so one critical sentence above a huge listing
   survives.
6. Entries are cut to 240 bytes, deduplicated across the whole card (case and whitespace
   folded), and each list keeps 8: in `decisions`, explicit decisions and negations come before
   plain item lines; otherwise the oldest first, as in the reference. A rendered card over the
   32 KiB digest cap sheds entries (file lines first, errors last) until it fits.

`goal` is the summary of the newest user prompt that is neither markup (`<...`) nor a card;
`summary` is the goal cut to 120 bytes; `current_work` is the newest assistant prose summary
(records carrying tool_use_ids are tool traffic, not prompts or prose, and are skipped for
both); `context` names the provider; `covers_items` counts the elided items.

How it stays fast
-----------------
The selection above is computed once per item (`CardMemo`, shared by every pass and strategy
planning one transcript) and the card is a fold over those per-item lines. A payload head is
not read line by line: one compiled search over its lowercased text finds the lines holding a
*needle* (a literal every salient line must contain: the markers themselves, and the fixed
words of the decision and negation patterns), and only those lines get the exact tests. A head
whose lowercasing changes its length (U+0130) is read line by line instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from core.limits import (
    DIGEST_ENTRY_MAX_BYTES,
    DIGEST_LIST_MAX,
    DIGEST_SUMMARY_MAX_BYTES,
    MAX_DIGEST_BYTES,
    SALIENT_LINES_PER_ITEM,
    SALIENT_SCAN_BYTES,
)
from core.model import ItemKind, Transcript, TranscriptItem
from core.plan import CARD_MARKERS, DigestBlock

ERROR_MARKERS = (
    "error",
    "failed",
    "failure",
    "panic",
    "exception",
    "traceback",
    "enoent",
    "eacces",
    "non-zero",
    "nonzero",
    "exit code",
    "stderr:",
    "command failed",
    "permission denied",
    "no such file",
    "not found",
    "timed out",
    "killed",
    "abort",
)
OPEN_TASK_MARKERS = ("todo", "fixme", "pending", "open:", "follow up", "follow-up")
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|we will|we'll|will use|chose|chosen|going with)\b"
    r"|\buse\b[^.;\n]{1,60}?\binstead\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|never|don['’]?t|do not|does not|must not|mustn['’]?t|cannot|can['’]?t"
    r"|shouldn['’]?t|should not|won['’]?t|avoid|no longer)\b",
    re.IGNORECASE,
)
# Needles: a salient line holds at least one, each a substring of a marker or of a fixed word
# of _DECISION / _NEGATION (lowercased; "not" covers "do not", "cannot", ..., "'t" covers
# "don't", "can't", ...). Each starts with a letter less common than the marker's own first
# one where it can, so the search enters a branch at fewer positions.
_NEEDLES_OF_ERRORS = (
    "rror",
    "fail",
    "panic",
    "xcept",
    "back",
    "noent",
    "cces",
    "zero",
    "xit c",
    "derr",
    "permission d",
    "no such",
    "not",
    "med out",
    "killed",
    "bort",
)
_NEEDLES_OF_OPEN_TASKS = ("odo", "fixme", "pending", "pen:", "follow")
_NEEDLES_OF_DECISIONS = (
    "cide",
    "cisi",
    "will",
    "'ll",
    "chose",
    "going w",
    "nstead",
    "not",
    "never",
    "'t",
    "’t",
    "dont",
    "mustnt",
    "cant",
    "dnt",
    "wont",
    "void",
    "no lo",
)
_LETTER_ORDER = "etaoinsrhldcumfpgwybvkxjqz"
"""English letter frequency: trie branches for common first letters are tried first."""


_Trie = dict[str, "_Trie"]


def _literal_trie(words: Iterable[str]) -> str:
    """A regex matching where one of `words` starts, shaped as a trie: sre tries the branches
    of an alternation one by one, and a trie keeps that to one branch per letter."""
    root: _Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        if "" in node:
            return ""  # a shorter word already matches here
        chars = sorted(node, key=lambda c: (_LETTER_ORDER.find(c) % 100, c))
        branches = [re.escape(c) + emit(node[c]) for c in chars]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return emit(root)


_ERROR_ANY = re.compile(_literal_trie(ERROR_MARKERS))
_OPEN_TASK_ANY = re.compile(_literal_trie(OPEN_TASK_MARKERS))
_NEEDLES = re.compile(
    _literal_trie(_NEEDLES_OF_ERRORS + _NEEDLES_OF_OPEN_TASKS + _NEEDLES_OF_DECISIONS)
)
"""Searched in folded text: a salient line holds at least one match."""
_DECISION_NEEDLES = re.compile(_literal_trie(_NEEDLES_OF_DECISIONS))
_DOTLESS_I, _LONG_S = "\u0131", "\u017f"
"""What re.IGNORECASE also matches for `i` and `s` and lower() keeps: _fold_case maps them.
With lower() (which maps the Kelvin sign to `k`), folding gives every character a match of
_DECISION / _NEGATION can hold the letter of the pattern; U+0130, the one character whose
lowercase is two characters, is handled apart."""
_DOTTED_I = "\u0130"
_FOLD_CHUNK = 2048
"""A payload head is folded (and searched) this many characters at a time, whole lines."""
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_WIDE_BREAKS = ("\x85", "\u2028", "\u2029")
"""Line breaks of str.splitlines() besides "\n" (the wide ones only in non-ASCII text)."""
_THREE_WORD_CHARS = re.compile(r"\w\W*\w\W*\w")
_LEADING_NOISE = "…. \t"


class Salience(Enum):
    ERROR = "error"
    OPEN_TASK = "open_task"
    DECISION = "decision"


def tool_name(label: str) -> str:
    """The label before its first `(` or space, lowercased."""
    return re.split(r"[( ]", label, maxsplit=1)[0].strip().lower()


def has_error_marker(text: str) -> bool:
    return _ERROR_ANY.search(text.lower()) is not None


def _fold_case(text: str) -> str:
    """Lowercase with the regex equivalents of i and s; as long as `text` when it holds no
    U+0130."""
    folded = text.lower()
    if not text.isascii():
        if _DOTLESS_I in folded:
            folded = folded.replace(_DOTLESS_I, "i")
        if _LONG_S in folded:
            folded = folded.replace(_LONG_S, "s")
    return folded


def salience(line: str) -> Salience | None:
    """The class of a salient line, or None (precedence: error, open task, decision)."""
    lowered = line.lower()
    if _ERROR_ANY.search(lowered):
        return Salience.ERROR
    if _OPEN_TASK_ANY.search(lowered):
        return Salience.OPEN_TASK
    # The patterns are slow to try: most lines hold none of their needles.
    if _DOTTED_I not in line and not _DECISION_NEEDLES.search(_fold_case(line)):
        return None
    if _DECISION.search(line) or _NEGATION.search(line):
        return Salience.DECISION
    return None


def cut_utf8(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes; a cut text ends in `...` (limit - 3 bytes of it)."""
    if len(text) <= limit and (text.isascii() or len(text) <= limit // 4):
        return text  # at most 4 bytes a character: no need to encode
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: max(0, limit - 3)].decode("utf-8", "ignore") + "..."


def _meaningful(line: str) -> str | None:
    """The line without surrounding noise when it has at least 3 letters or digits in its
    first 64 characters, else None."""
    stripped = line.strip().lstrip(_LEADING_NOISE).strip()
    if _THREE_WORD_CHARS.search(stripped[:64]) is None:
        return None
    return stripped


def _is_card(text: str) -> bool:
    return text.startswith(CARD_MARKERS)


def _prose(item: TranscriptItem, kind: ItemKind) -> bool:
    # Tool results can be user records and tool calls assistant ones: those carry tool_use_ids.
    return item.kind is kind and item.active and bool(item.summary) and not item.tool_use_ids


def goal_of(transcript: Transcript) -> str:
    """The newest user prompt's summary that is not markup and not a card."""
    for item in reversed(transcript.items):
        if _prose(item, ItemKind.USER) and item.summary:
            text = item.summary.strip()
            if text and not text.startswith("<") and not _is_card(text):
                return text
    return ""


def current_work_of(transcript: Transcript) -> str:
    for item in reversed(transcript.items):
        if _prose(item, ItemKind.ASSISTANT) and item.summary:
            text = item.summary.strip()
            if text and not _is_card(text):
                return text
    return ""


# -- the salient lines of one payload ----------------------------------------------------------

SalientLine = tuple[Salience | None, str]


def _scan_region(payload: str) -> str:
    """The scanned head as text whose only line break is "\n", holding exactly the lines the
    card reads: those of str.splitlines() of the head, less the last one when the head cut
    the payload (it is probably cut mid-line)."""
    head = payload[:SALIENT_SCAN_BYTES]
    cut = len(payload) > SALIENT_SCAN_BYTES
    breaks = _OTHER_BREAKS if head.isascii() else _OTHER_BREAKS + _WIDE_BREAKS
    if any(mark in head for mark in breaks):
        lines = head.splitlines()
        if cut and lines:
            lines.pop()
        return "\n".join(lines)
    if not cut:
        return head
    end = len(head) - 1 if head.endswith("\n") else len(head)
    return head[: head.rfind("\n", 0, end) + 1]


def _select_lines(lines: Iterable[str]) -> list[SalientLine]:
    """The selection rule, line by line: the first meaningful line, then salient ones."""
    kept: list[SalientLine] = []
    first = True
    for raw in lines:
        line = _meaningful(raw)
        if line is None:
            continue
        kind = salience(line)
        if kind is not None or first:
            kept.append((kind, line))
        first = False
        if len(kept) >= SALIENT_LINES_PER_ITEM:
            break
    return kept


def salient_payload_lines(payload: str) -> list[SalientLine]:
    """The payload lines the card keeps, in order, each with its class: the first meaningful
    line (whatever its class), then salient lines, at most SALIENT_LINES_PER_ITEM in all."""
    if not payload:
        return []
    region = _scan_region(payload)
    if not region.isascii() and _DOTTED_I in region:  # folding would shift positions
        return _select_lines(region.split("\n"))
    kept: list[SalientLine] = []
    size = len(region)
    pos = 0
    while pos < size:  # the first meaningful line
        end = region.find("\n", pos)
        end = size if end < 0 else end
        line = _meaningful(region[pos:end])
        pos = end + 1
        if line is not None:
            kept.append((salience(line), line))
            break
    search = _NEEDLES.search
    while len(kept) < SALIENT_LINES_PER_ITEM and pos < size:
        # Fold whole lines from `pos` on: a needle holds no line break, so none straddles.
        stop = region.find("\n", min(size, pos + _FOLD_CHUNK))
        stop = size if stop < 0 else stop
        folded = _fold_case(region[pos:stop])
        at = 0
        while len(kept) < SALIENT_LINES_PER_ITEM:
            hit = search(folded, at)
            if hit is None:
                break
            start = folded.rfind("\n", 0, hit.start()) + 1
            end = folded.find("\n", hit.start())
            end = len(folded) if end < 0 else end
            at = end + 1
            line = _meaningful(region[pos + start : pos + end])
            if line is not None:
                kind = salience(line)
                if kind is not None:
                    kept.append((kind, line))
        pos = stop + 1
    return kept


# -- per-item card lines, memoized ---------------------------------------------------------------

_ERRORS, _OPEN_TASKS, _DECIDED, _PLAIN_DECISIONS, _FILES = range(5)
_SLOTS = 5
_SLOT_OF = {Salience.ERROR: _ERRORS, Salience.OPEN_TASK: _OPEN_TASKS, Salience.DECISION: _DECIDED}


@dataclass(frozen=True, slots=True)
class ItemCard:
    """What one item may give the card: its tool name, and its candidate lines in order, each
    with the list it goes to (entries are normalized, deduplicated and bounded by the fold)."""

    concept: str
    lines: tuple[tuple[int, str], ...]


def item_card(item: TranscriptItem, payload: str | None) -> ItemCard:
    text = (item.summary or item.label).strip()
    plain = _FILES if "/" in text or item.kind is ItemKind.TOOL_RESULT else _PLAIN_DECISIONS
    lines: list[tuple[int, str]] = []
    if text:
        kind = salience(text)
        lines.append((plain if kind is None else _SLOT_OF[kind], text))
    if payload:
        for kind, line in salient_payload_lines(payload):
            lines.append((plain if kind is None else _SLOT_OF[kind], line))
    return ItemCard(tool_name(item.label), tuple(lines))


class CardMemo:
    """Per-item card lines of one transcript and payload map, computed once and shared by
    every card built over them (passes of choose_with_digest, strategies of one eval).

    A memo answers only for the very transcript and payload map it was made with; a card
    asked for with others is built without it.
    """

    __slots__ = ("_cards", "_current_work", "_goal", "payloads", "transcript")

    def __init__(self, transcript: Transcript, payloads: Mapping[int, str] | None = None) -> None:
        self.transcript = transcript
        self.payloads = payloads
        self._cards: list[ItemCard | None] = [None] * len(transcript.items)
        self._goal: str | None = None
        self._current_work: str | None = None

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


def _fold(memo: CardMemo, positions: Sequence[int]) -> tuple[set[str], list[list[str]]]:
    """The concepts and the five lists of the card over these items, oldest first: each
    entry cut to 240 bytes, deduplicated across the card (case and whitespace folded), and
    each list kept to DIGEST_LIST_MAX (a full list refuses an entry without marking it seen)."""
    concepts: set[str] = set()
    lists: list[list[str]] = [[] for _ in range(_SLOTS)]
    seen: set[str] = set()
    open_lists = _SLOTS
    for position in positions:
        card = memo.card(position)
        if card.concept:
            concepts.add(card.concept)
        if not open_lists:
            continue
        for slot, text in card.lines:
            target = lists[slot]
            if len(target) >= DIGEST_LIST_MAX:
                continue
            entry = cut_utf8(" ".join(text.split()), DIGEST_ENTRY_MAX_BYTES)
            key = entry.casefold()
            if not entry or key in seen:
                continue
            seen.add(key)
            target.append(entry)
            if len(target) >= DIGEST_LIST_MAX:
                open_lists -= 1
    return concepts, lists


def _fit(card: DigestBlock) -> DigestBlock:
    """Shed entries until the rendered card is within the digest cap."""
    order = ("files_touched", "decisions", "concepts", "open_tasks", "errors")
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
    concepts, lists = _fold(memo, positions)
    decisions = (lists[_DECIDED] + lists[_PLAIN_DECISIONS])[:DIGEST_LIST_MAX]
    goal = cut_utf8(memo.goal(), DIGEST_ENTRY_MAX_BYTES)
    summary = (
        cut_utf8(goal, DIGEST_SUMMARY_MAX_BYTES)
        if goal
        else f"gobtui state card covering {len(positions)} elided items"
    )
    card = DigestBlock(
        goal=goal,
        summary=summary,
        concepts=sorted(concepts)[:DIGEST_LIST_MAX],
        files_touched=lists[_FILES],
        decisions=decisions,
        errors=lists[_ERRORS],
        open_tasks=lists[_OPEN_TASKS],
        current_work=cut_utf8(memo.current_work(), DIGEST_ENTRY_MAX_BYTES),
        context=f"provider: {transcript.provider.value}",
        covers_items=len(positions),
    )
    return _fit(card)
