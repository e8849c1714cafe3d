"""Keep-probabilities for elision candidates (reference `HeuristicScorer`).

Deterministic and offline: only labels and summaries are read. The score is a ranking signal,
not a calibrated probability. Weights (clamped sum to [0, 1]):

| weight | signal |
|---|---|
| +0.18 | recency: (position among candidates + 1) / count |
| +0.12 | tool importance: 1.0 reading/searching/editing tools, 0.0 shell noise, 0.5 others |
| +0.25 | an error marker in the text |
| +0.12 | future references: mean over its tokens of later items using it (max 12), / 12 |
| +0.12 | goal overlap: share of its tokens found in the newest user goal |
| +0.10 | position: 1 - line / max line |
| +0.12 | IDF: sum of ln(N / df) over its tokens / (token count x max(ln N, 1)) |
| -0.15 | superseded: an output with the same label comes later |
| -0.12 | near duplicate: Jaccard >= 0.85 with the newest output of the same label |

The IDF sum is exact (math.fsum): a token set's order follows the process's string hash
seed, and a plain float sum would differ in its last bits from one run to the next.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import repeat
from typing import Protocol

from .admission import elidable_items
from .digest import goal_of, tool_name
from .model import Transcript, TranscriptItem
from .salience import has_error_marker

W_RECENCY = 0.18
W_TOOL = 0.12
W_ERROR = 0.25
W_FUTURE = 0.12
W_GOAL = 0.12
W_POSITION = 0.10
W_IDF = 0.12
W_SUPERSEDED = -0.15
W_NEAR_DUPLICATE = -0.12
FUTURE_REF_CAP = 12
NEAR_DUPLICATE_JACCARD = 0.85
MAX_TOKEN_CHARS = 128

IMPORTANT_TOOLS = frozenset(
    {"read_file", "view", "view_range", "search_files", "glob", "grep", "apply", "replace", "edit"}
)
NOISE_TOOLS = frozenset(
    {
        "bash",
        "ls",
        "cat",
        "echo",
        "pwd",
        "which",
        "find",
        "wc",
        "head",
        "tail",
        "sort",
        "uniq",
    }
)
_SPLIT = re.compile(r"[^\w/.]+")


def tokenize(text: str) -> frozenset[str]:
    """Lowercased tokens split on anything but letters, digits, `/`, `.` and `_`."""
    tokens = frozenset(filter(None, _SPLIT.split(text.lower())))
    # Checked on the distinct tokens, in C: a token over the limit is rare.
    if len(text) <= MAX_TOKEN_CHARS or max(map(len, tokens), default=0) <= MAX_TOKEN_CHARS:
        return tokens
    return frozenset(token for token in tokens if len(token) <= MAX_TOKEN_CHARS)


def tool_importance(label: str) -> float:
    name = tool_name(label)
    if name in IMPORTANT_TOOLS:
        return 1.0
    if name in NOISE_TOOLS:
        return 0.0
    return 0.5


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class Scorer(Protocol):
    """Keep-probabilities in [0, 1] by line index; None marks a missing score."""

    def score(
        self, transcript: Transcript, candidates: Sequence[TranscriptItem]
    ) -> dict[int, float | None]: ...


def _text(item: TranscriptItem) -> str:
    return item.summary or item.label


class HeuristicScorer:
    """The reference's default scorer (weights in the module docstring)."""

    def score(
        self, transcript: Transcript, candidates: Sequence[TranscriptItem]
    ) -> dict[int, float | None]:
        if not candidates:
            return {}
        # every live item is tokenized once: the future-reference pass needs them all
        tokens: dict[int, frozenset[str]] = {}
        future = self._future_references(transcript, {c.line_index for c in candidates}, tokens)
        for item in candidates:
            if item.line_index not in tokens:
                tokens[item.line_index] = tokenize(_text(item))
        goal = tokenize(goal_of(transcript))
        max_line = max((item.line_index for item in transcript.items), default=0)
        n_docs = len(candidates)
        df: Counter[str] = Counter()
        for item in candidates:
            df.update(tokens[item.line_index])
        idf_norm = max(math.log(n_docs), 1.0)
        idf = {token: math.log(n_docs / count) for token, count in df.items()}
        outputs = elidable_items(transcript)
        newest_by_label: dict[str, TranscriptItem] = {}
        for item in outputs:
            newest_by_label[item.label] = item
        scores: dict[int, float | None] = {}
        for position, item in enumerate(candidates):
            toks = tokens[item.line_index]
            count = len(toks)
            newest = newest_by_label.get(item.label)
            superseded = newest is not None and newest.line_index > item.line_index
            near_duplicate = superseded and (
                newest is not None
                and jaccard(toks, tokens.get(newest.line_index) or tokenize(_text(newest)))
                >= NEAR_DUPLICATE_JACCARD
            )
            value = (
                W_RECENCY * (position + 1) / n_docs
                + W_TOOL * tool_importance(item.label)
                + W_ERROR * (1.0 if has_error_marker(_text(item)) else 0.0)
                + W_FUTURE * future.get(item.line_index, 0.0)
                + W_GOAL * (len(toks & goal) / count if count else 0.0)
                + W_POSITION * (1.0 - item.line_index / max_line if max_line else 0.0)
                + W_IDF
                * (math.fsum(map(idf.__getitem__, toks)) / (count * idf_norm) if count else 0.0)
                + (W_SUPERSEDED if superseded else 0.0)
                + (W_NEAR_DUPLICATE if near_duplicate else 0.0)
            )
            scores[item.line_index] = min(1.0, max(0.0, value))
        return scores

    @staticmethod
    def _future_references(
        transcript: Transcript, wanted: set[int], tokens: dict[int, frozenset[str]]
    ) -> dict[int, float]:
        """Per candidate: the mean over its tokens of later live items using the token
        (capped at 12), divided by 12. One pass, newest to oldest; fills `tokens`."""
        later: Counter[str] = Counter()
        uses = later.get  # dict.get: no __missing__ call per token
        result: dict[int, float] = {}
        for item in reversed(transcript.items):
            if not item.active or item.est_tokens <= 0:
                continue
            toks = tokenize(_text(item))
            tokens[item.line_index] = toks
            if item.line_index in wanted:
                capped = map(min, map(uses, toks, repeat(0)), repeat(FUTURE_REF_CAP))
                result[item.line_index] = sum(capped) / len(toks) / FUTURE_REF_CAP if toks else 0.0
            later.update(toks)
        return result
