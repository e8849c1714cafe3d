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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
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
_ALNUM = re.compile(r"\w")
_LEADING_NOISE = "…. \t"


class Salience(Enum):
    ERROR = "error"
    OPEN_TASK = "open_task"
    DECISION = "decision"


def tool_name(label: str) -> str:
    """The label before its first `(` or space, lowercased."""
    return re.split(r"[( ]", label, maxsplit=1)[0].strip().lower()


def has_error_marker(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in ERROR_MARKERS)


def salience(line: str) -> Salience | None:
    """The class of a salient line, or None (precedence: error, open task, decision)."""
    lowered = line.lower()
    if any(marker in lowered for marker in ERROR_MARKERS):
        return Salience.ERROR
    if any(marker in lowered for marker in OPEN_TASK_MARKERS):
        return Salience.OPEN_TASK
    if _DECISION.search(line) or _NEGATION.search(line):
        return Salience.DECISION
    return None


def cut_utf8(text: str, limit: int) -> str:
    """At most `limit` UTF-8 bytes; a cut text ends in `...` (limit - 3 bytes of it)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: max(0, limit - 3)].decode("utf-8", "ignore") + "..."


def _meaningful(line: str) -> str | None:
    stripped = line.strip().lstrip(_LEADING_NOISE).strip()
    if len(_ALNUM.findall(stripped[:64])) < 3:
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


class _Lists:
    """The card's lists while building: deduplicated, bounded, tiered."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.errors: list[str] = []
        self.open_tasks: list[str] = []
        self.salient_decisions: list[str] = []
        self.plain_decisions: list[str] = []
        self.files: list[str] = []

    def add(self, target: list[str], text: str) -> None:
        entry = cut_utf8(" ".join(text.split()), DIGEST_ENTRY_MAX_BYTES)
        key = entry.casefold()
        if not entry or key in self.seen or len(target) >= DIGEST_LIST_MAX:
            return
        self.seen.add(key)
        target.append(entry)

    def target(self, kind: Salience | None, plain: list[str]) -> list[str]:
        if kind is Salience.ERROR:
            return self.errors
        if kind is Salience.OPEN_TASK:
            return self.open_tasks
        if kind is Salience.DECISION:
            return self.salient_decisions
        return plain


def _payload_lines(payload: str) -> Iterable[str]:
    head = payload[:SALIENT_SCAN_BYTES]
    lines = head.splitlines()
    if len(payload) > SALIENT_SCAN_BYTES and lines:
        lines.pop()  # probably cut mid-line
    return lines


def _add_item(lists: _Lists, item: TranscriptItem, payload: str | None) -> None:
    text = (item.summary or item.label).strip()
    plain = (
        lists.files if "/" in text or item.kind is ItemKind.TOOL_RESULT else lists.plain_decisions
    )
    if text:
        lists.add(lists.target(salience(text), plain), text)
    if not payload:
        return
    kept = 0
    first = True
    for raw in _payload_lines(payload):
        line = _meaningful(raw)
        if line is None:
            continue
        kind = salience(line)
        if kind is not None or first:
            lists.add(lists.target(kind, plain), line)
            kept += 1
        first = False
        if kept >= SALIENT_LINES_PER_ITEM:
            break


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
) -> DigestBlock:
    """The card over the chosen (elided) lines; `payloads` maps a line to its payload text."""
    chosen = set(chosen_lines)
    items = [item for item in transcript.items if item.line_index in chosen]
    concepts: set[str] = set()
    lists = _Lists()
    for item in items:
        name = tool_name(item.label)
        if name:
            concepts.add(name)
        _add_item(lists, item, payloads.get(item.line_index) if payloads else None)
    decisions = (lists.salient_decisions + lists.plain_decisions)[:DIGEST_LIST_MAX]
    goal = cut_utf8(goal_of(transcript), DIGEST_ENTRY_MAX_BYTES)
    summary = (
        cut_utf8(goal, DIGEST_SUMMARY_MAX_BYTES)
        if goal
        else f"gobtui state card covering {len(items)} elided items"
    )
    card = DigestBlock(
        goal=goal,
        summary=summary,
        concepts=sorted(concepts)[:DIGEST_LIST_MAX],
        files_touched=lists.files,
        decisions=decisions,
        errors=lists.errors,
        open_tasks=lists.open_tasks,
        current_work=cut_utf8(current_work_of(transcript), DIGEST_ENTRY_MAX_BYTES),
        context=f"provider: {transcript.provider.value}",
        covers_items=len(items),
    )
    return _fit(card)
