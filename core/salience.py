"""Salient lines: which lines of an item's text the state card keeps, and of what class.

A line is salient by what it says, whatever tool printed it, in this order of precedence:
- an error: an error marker (error, failed, traceback, exit code, not found, ...), unless the
  only one is a zero count ("0 failures", "no errors");
- an open task or a pending effect: todo, fixme, pending, in-flight, not yet, unfinished,
  awaiting, still running, before retrying, must be confirmed, follow up, ...;
- a standing decision: an explicit one (decided, we will, chose, going with, approved,
  agreed, "use X instead"), a prohibition or constraint (a sentence that opens with do not /
  don't / never / avoid; must not, should not, may not, not allowed, not permitted, not
  granted, forbidden, prohibited; NOT in capitals), or a revocation or supersession (revoked,
  superseded, no longer, replaced by, rescinded, withdrawn).
A plain negation ("changes not staged", "can never match") is none of these. core.digest says
where each class goes on the card. Of a payload only the head is read (SALIENT_SCAN_BYTES): its
salient lines, at most SALIENT_LINES_PER_ITEM.

A head is not read line by line: one compiled search over its lowercased text finds the lines
holding a *needle* (a literal every salient line must contain: the markers themselves, and the
fixed words of the decision and negation patterns), and only those lines get the exact tests. A
head whose lowercasing changes its length (U+0130) is read line by line instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from enum import Enum

from .limits import SALIENT_LINES_PER_ITEM, SALIENT_SCAN_BYTES

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
    "fatal:",
)
OPEN_TASK_MARKERS = (
    "todo",
    "fixme",
    "pending",
    "open:",
    "follow up",
    "follow-up",
    "in-flight",
    "in flight",
    "not yet",
    "unfinished",
    "awaiting",
    "still running",
    "before retrying",
    "before you retry",
    "must be confirmed",
    "needs confirmation",
)
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|we will|we'll|will use|chose|chosen|going with|approved"
    r"|agreed)\b"
    r"|\buse\b[^.;\n]{1,60}?\binstead\b",
    re.IGNORECASE,
)
_PROHIBITION = re.compile(
    r"(?:^\W*|[.!?;:]\s+|\bplease\s+)(?:do not|don['’]?t|never|avoid)\b"
    r"|\b(?:must not|must never|mustn['’]?t|should not|shouldn['’]?t|may not|not allowed"
    r"|not permitted|not granted|forbidden|prohibited)\b",
    re.IGNORECASE,
)
_EMPHATIC_NOT = re.compile(r"\bNOT\b")
_REVOCATION = re.compile(
    r"\b(?:revoked|revoke|superseded|supersedes|no longer|replaced by|rescinded|withdrawn)\b",
    re.IGNORECASE,
)
_ZERO_COUNT = re.compile(
    r"\b(?:0|no|zero)\s+(?:failures?|errors?|failed|failing)\b"
    r"|\bexit(?:ed)?(?: with)?(?: code| status)?:?\s*0\b(?!\.\d)"
)
"""A tally or a status that reports no failure ("410 tests, 0 failures", "Exit code: 0")."""
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
    "atal:",
)
_NEEDLES_OF_OPEN_TASKS = (
    "odo",
    "fixme",
    "pending",
    "pen:",
    "follow",
    "in-fl",
    "in fl",
    "not y",
    "unfinish",
    "await",
    "still runn",
    "retry",
    "confirm",
)
_NEEDLES_OF_DECISIONS = (
    "cide",
    "cisi",
    "will",
    "'ll",
    "chose",
    "going w",
    "nstead",
    "pprov",
    "greed",
    "not",
    "never",
    "'t",
    "’t",
    "dont",
    "mustnt",
    "dnt",
    "void",
    "forbid",
    "prohib",
    "revok",
    "supersed",
    "no lo",
    "laced b",
    "rescind",
    "withdr",
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
_LISTED_FILE = re.compile(r"[\w.@+~-]*(?:/[\w.@+-]+)+/?|[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}")
"""A line that is one path or file name (a listing's line): it reports nothing."""
_NUMBERED_LINE = re.compile(r"\s*\d+\u2192")
_NUMBERED_IN_TAIL = re.compile(r"\d\u2192")
"""A file's line as Claude Code's Read and Edit outputs show it ("    12→code"): file content,
whose "error" or "not" says nothing about the session, so never a card line."""


class Salience(Enum):
    ERROR = "error"
    OPEN_TASK = "open_task"
    DECISION = "decision"


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


def may_be_salient(text: str) -> bool:
    """False when no line of `text` can be salient (it holds none of the needles)."""
    if not text.isascii() and _DOTTED_I in text:
        return True
    return _NEEDLES.search(_fold_case(text)) is not None


def salience(line: str) -> Salience | None:
    """The class of a salient line, or None (precedence: error, open task, decision)."""
    lowered = line.lower()
    if _ERROR_ANY.search(lowered) and _ERROR_ANY.search(_ZERO_COUNT.sub(" ", lowered)):
        return Salience.ERROR
    if _OPEN_TASK_ANY.search(lowered):
        return Salience.OPEN_TASK
    return Salience.DECISION if _decides(line) else None


def _decides(line: str) -> bool:
    """A decision, a prohibition or constraint, a revocation."""
    # The patterns are slow to try: most lines hold none of their needles.
    if _DOTTED_I not in line and not _DECISION_NEEDLES.search(_fold_case(line)):
        return False
    return bool(
        _DECISION.search(line)
        or _PROHIBITION.search(line)
        or _REVOCATION.search(line)
        or _EMPHATIC_NOT.search(line)
    )


_STANDING_RULE = re.compile(
    r"(?:^\W*|[.!?;:]\s+|\bplease\s+)(?:do not|don['’]?t|never|avoid)\b"
    r"|\b(?:must not|must never|mustn['’]?t|should not|shouldn['’]?t)\b",
    re.IGNORECASE,
)
"""A prohibition a tool output states as a rule ("Do NOT restart ...", "... must not ..."):
the words that also open error messages ("Operation not permitted", "not allowed") are left
out, since in an output they report a refusal, not a rule."""


def said_salience(line: str) -> Salience | None:
    """The class of a line the user or the assistant wrote: a decision (a prohibition and a
    revocation are decisions too) before an open task; never an error, which the card takes
    from failed calls only."""
    if _decides(line):
        return Salience.DECISION
    return Salience.OPEN_TASK if _OPEN_TASK_ANY.search(line.lower()) else None


def standing_rule(line: str) -> bool:
    """Whether a line of a tool's output states a rule the next turn must honour: a
    prohibition worded as one, or a revocation (core.digest: the card's `constraint:`)."""
    return _STANDING_RULE.search(line) is not None or _REVOCATION.search(line) is not None


_FAILING_SUMMARY = re.compile(
    r"^=+ .*\b[1-9]\d* (?:failed|errors?)\b"  # pytest's summary line
    r"|^FAILED \S"  # pytest's short test summary
    r"|\btest result: FAILED\b"  # cargo test
    r"|^error\[E\d+\]|^error: (?:could not compile|aborting due to)"  # rustc, cargo
    r"|^\S+?:\d+(?::\d+)?: (?:fatal )?error\b"  # gcc, clang, go vet: path:line:col: error
    r"|\berror TS\d+:"  # tsc
    r"|^--- FAIL: |^FAIL\s"  # go test
    r"|^\s*Tests?:.*\b[1-9]\d* failed\b"  # jest, vitest
    r"|^npm ERR! ",
    re.MULTILINE,
)
FAILING_TAIL_CHARS = 4096
"""Where a test runner or compiler prints its summary: the end of its output."""


def payload_excerpt(text: str, head_bytes: int) -> str:
    """What a planner keeps of an elided output for the card and the probes: all of a short
    one; a long one's head (at most `head_bytes` UTF-8 bytes) and, after a line break, its
    last FAILING_TAIL_CHARS characters, where a failure is reported."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= head_bytes:
        return text
    head = data[:head_bytes].decode("utf-8", "ignore")
    return head + "\n" + text[-FAILING_TAIL_CHARS:]


def reports_failure(text: str) -> bool:
    """Whether an output holds a failing test run's or a compiler's summary (a call can
    succeed, say through a pipe, and still report one): its head and its tail are read."""
    head = text[:SALIENT_SCAN_BYTES]
    if _FAILING_SUMMARY.search(head):
        return True
    return len(text) > len(head) and _FAILING_SUMMARY.search(text[-FAILING_TAIL_CHARS:]) is not None


def without_file_lines(text: str) -> str:
    """A tool output's one-line summary ("call => output tail") without its tail when that
    tail shows a file's numbered lines: the call (which file) is what the card keeps."""
    call, arrow, tail = text.partition(" => ")
    return call if arrow and _NUMBERED_IN_TAIL.search(tail) else text


def _meaningful(line: str) -> str | None:
    """The line without surrounding noise when it has at least 3 letters or digits in its
    first 64 characters and is not a numbered file line, else None."""
    if _NUMBERED_LINE.match(line):
        return None
    stripped = line.strip().lstrip(_LEADING_NOISE).strip()
    if _LISTED_FILE.fullmatch(stripped):
        return None
    if _THREE_WORD_CHARS.search(stripped[:64]) is None:
        return None
    return stripped


# -- the salient lines of one payload ----------------------------------------------------------

SalientLine = tuple[Salience, str]


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


Judge = Callable[[Salience, str], "Salience | None"]
"""How a reader takes a salient line: the class it keeps the line under, or None to leave it
(a line left does not count towards the cap)."""


def _select_lines(lines: Iterable[str], judge: Judge | None) -> list[SalientLine]:
    """The selection rule, line by line: the salient lines, in order."""
    kept: list[SalientLine] = []
    for raw in lines:
        line = _meaningful(raw)
        if line is None:
            continue
        kind = salience(line)
        if kind is not None and judge is not None:
            kind = judge(kind, line)
        if kind is not None:
            kept.append((kind, line))
            if len(kept) >= SALIENT_LINES_PER_ITEM:
                break
    return kept


def salient_payload_lines(payload: str, judge: Judge | None = None) -> list[SalientLine]:
    """The payload lines the card keeps, in order, each with its class: its salient lines
    (as `judge` takes them), at most SALIENT_LINES_PER_ITEM."""
    if not payload:
        return []
    region = _scan_region(payload)
    if not region.isascii() and _DOTTED_I in region:  # folding would shift positions
        return _select_lines(region.split("\n"), judge)
    kept: list[SalientLine] = []
    size = len(region)
    pos = 0
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
                if kind is not None and judge is not None:
                    kind = judge(kind, line)
                if kind is not None:
                    kept.append((kind, line))
        pos = stop + 1
    return kept
