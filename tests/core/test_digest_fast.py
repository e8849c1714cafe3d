"""core.salience's fast selection and core.digest's memoized card equal the line-by-line reference.

The reference below is the card's rules written plainly: every line of the payload head read
in turn with the marker lists and the patterns. The fast path searches needles in folded
text; these tests draw payloads rich in markers, near-markers, case tricks (U+0130, dotless i,
long s, the Kelvin sign, final sigma) and every str.splitlines() line break.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from gobtui.core import digest, salience
from gobtui.core.digest import CardMemo, state_card_digest
from gobtui.core.edits import DigestBlock
from gobtui.core.limits import (
    DIGEST_ENTRY_MAX_BYTES,
    DIGEST_LIST_MAX,
    SALIENT_LINES_PER_ITEM,
    SALIENT_SCAN_BYTES,
)
from gobtui.core.model import ItemKind, Transcript, TranscriptItem
from gobtui.core.salience import salient_payload_lines
from tests.builders.items import item, output, transcript

SETTINGS = settings(max_examples=50, deadline=None)

# -- the slow reference ------------------------------------------------------------------------

_STANDING = [
    re.compile(
        r"\b(?:decided|decide|decision|we will|we'll|will use|chose|chosen|going with)\b", re.I
    ),
    re.compile(r"\b(?:approved|agreed)\b", re.I),
    re.compile(r"\buse\b[^.;\n]{1,60}?\binstead\b", re.I),
    re.compile(r"(?:^\W*|[.!?;:]\s+|\bplease\s+)(?:do not|don['’]?t|never|avoid)\b", re.I),
    re.compile(r"\b(?:must not|must never|mustn['’]?t|should not|shouldn['’]?t|may not)\b", re.I),
    re.compile(r"\b(?:not allowed|not permitted|not granted|forbidden|prohibited)\b", re.I),
    re.compile(r"\bNOT\b"),
    re.compile(r"\b(?:revoked|revoke|superseded|supersedes|no longer|replaced by)\b", re.I),
    re.compile(r"\b(?:rescinded|withdrawn)\b", re.I),
]
_ZERO = re.compile(
    r"\b(?:0|no|zero)\s+(?:failures?|errors?|failed|failing)\b"
    r"|\bexit(?:ed)?(?: with)?(?: code| status)?:?\s*0\b(?!\.\d)"
)
_ALNUM = re.compile(r"\w")
_LISTED = re.compile(r"[\w.@+~-]*(?:/[\w.@+-]+)+/?|[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}")


def ref_salience(line: str) -> str | None:
    lowered = line.lower()
    if any(marker in _ZERO.sub(" ", lowered) for marker in salience.ERROR_MARKERS):
        return "error"
    if any(marker in lowered for marker in salience.OPEN_TASK_MARKERS):
        return "open_task"
    if any(pattern.search(line) for pattern in _STANDING):
        return "decision"
    return None


def ref_meaningful(line: str) -> str | None:
    if re.match(r"\s*\d+→", line):  # a numbered file line, as Read and Edit show files
        return None
    stripped = line.strip().lstrip("…. \t").strip()
    if _LISTED.fullmatch(stripped):  # one path or file name: a listing's line
        return None
    if len(_ALNUM.findall(stripped[:64])) < 3:
        return None
    return stripped


def ref_said(line: str) -> str | None:
    """A line the user or the assistant wrote: a decision first, then an open task."""
    if any(pattern.search(line) for pattern in _STANDING):
        return "decision"
    return "open_task" if any(m in line.lower() for m in salience.OPEN_TASK_MARKERS) else None


def ref_payload_lines(
    payload: str, judge: Callable[[str, str], str | None] | None = None
) -> list[tuple[str | None, str]]:
    head = payload[:SALIENT_SCAN_BYTES]
    lines = head.splitlines()
    if len(payload) > SALIENT_SCAN_BYTES and lines:
        lines.pop()
    kept: list[tuple[str | None, str]] = []
    for raw in lines:
        line = ref_meaningful(raw)
        kind = ref_salience(line) if line is not None else None
        if line is not None and kind is not None and judge is not None:
            kind = judge(kind, line)
        if line is not None and kind is not None:
            kept.append((kind, line))
            if len(kept) >= SALIENT_LINES_PER_ITEM:
                break
    return kept


def ref_cut(text: str, limit: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: max(0, limit - 3)].decode("utf-8", "ignore") + "..."


def ref_lines(it: TranscriptItem, payload: str | None) -> list[tuple[str, str]]:
    """The card rules, item by item: people's words give decisions and open tasks; a tool's
    output gives errors only when its call failed, rules it states, open tasks; every item
    the paths its calls named, and nothing else (no path from text)."""
    files = [("files", p) for p in it.paths]
    if it.kind in (ItemKind.ASSISTANT, ItemKind.TOOL_CALL) or it.kind is ItemKind.REASONING:
        people = it.kind is ItemKind.ASSISTANT and not it.tool_use_ids
        if not people:
            return files
    slot = {"error": "error", "open_task": "open", "decision": "dec", "rule": "rule"}
    text = (it.summary or "").strip()
    kept: list[tuple[str, str]] = []
    if it.kind in (ItemKind.USER, ItemKind.ASSISTANT) and not it.tool_use_ids:
        if text and (kind := ref_said(text)):
            kept.append((slot[kind], text))
        for _kind, line in ref_payload_lines(payload, lambda _k, x: ref_said(x)) if payload else []:
            kept.append((slot[ref_said(line) or ""], line))
        return [*kept, *files]
    if (not it.tool_use_ids and it.kind is not ItemKind.TOOL_RESULT) or it.file_view:
        return files
    text = text or it.label.strip()
    if re.search(r" => .*\d→", text, re.S):
        text = text.split(" => ")[0]  # a tail of numbered file lines: keep the call
    failed = it.failed or (
        salience.reports_failure(payload)
        if payload
        else bool(re.search(r"\b[1-9]\d* failed\b|test result: FAILED|error\[E\d+\]", text))
    )

    def judge(kind: str, line: str) -> str | None:
        if kind == "error":
            return kind if failed else None
        if kind == "decision":
            return "rule" if salience.standing_rule(line) else None
        return kind

    if text and (kind := ref_salience(text)) and (kind := judge(kind, text)):
        kept.append((slot[kind], text))
    for kind, line in ref_payload_lines(payload, judge) if payload else []:
        kept.append((slot[kind or ""], line))
    if failed and payload and len(payload) > SALIENT_SCAN_BYTES:  # and the end of its output
        tail = payload[-salience.FAILING_TAIL_CHARS :].partition("\n")[2]
        for _kind, line in ref_payload_lines(tail, lambda k, _x: k if k == "error" else None):
            kept.append(("error", line))
    return [*kept, *files]


def ref_card(
    t: Transcript, chosen_lines: Iterable[int], payloads: Mapping[int, str] | None
) -> DigestBlock:
    chosen = set(chosen_lines)
    items = [i for i in t.items if i.line_index in chosen]
    per_item = [ref_lines(it, payloads.get(it.line_index) if payloads else None) for it in items]
    goal = ref_cut(digest.goal_of(t), DIGEST_ENTRY_MAX_BYTES)
    current = ref_cut(digest.current_work_of(t), DIGEST_ENTRY_MAX_BYTES)
    # Newest items first, an item's newest line first; each list keeps its newest entries,
    # shown oldest first; nothing repeats the goal or the current work; errors by signature.
    lists: dict[str, list[list[str]]] = {k: [] for k in ("error", "open", "dec", "rule", "files")}
    counts = dict.fromkeys(lists, 0)
    seen: set[str] = {" ".join(x.split()).casefold() for x in (goal, current) if x}
    for lines in reversed(per_item):
        batch: dict[str, list[str]] = {k: [] for k in lists}
        for target, text in reversed(lines):
            entry = ref_cut(" ".join(text.split()), DIGEST_ENTRY_MAX_BYTES)
            key = entry.casefold()
            if target == "error":
                key = re.sub(r"0x[0-9a-f]+|\b[0-9a-f]{7,}\b|\d+", "#", key)
            if not entry or key in seen or counts[target] >= DIGEST_LIST_MAX:
                continue
            seen.add(key)
            batch[target].insert(0, entry)
            counts[target] += 1
        for target, entries in batch.items():
            lists[target].insert(0, entries)
    flat = {k: [e for entries in v for e in entries] for k, v in lists.items()}
    card = DigestBlock(
        goal=goal,
        summary="" if goal else f"gobtui state card covering {len(items)} elided items",
        files_touched=flat["files"],
        decisions=flat["dec"],
        constraints=flat["rule"],
        errors=flat["error"],
        open_tasks=flat["open"],
        current_work="" if current.casefold() == goal.casefold() else current,
        context=f"provider: {t.provider.value}",
        covers_items=len(items),
    )
    return digest._fit(card)


# -- generated payloads --------------------------------------------------------------------------

PIECES = [
    *salience.ERROR_MARKERS,
    *salience.OPEN_TASK_MARKERS,
    "decided",
    "approved",
    "NOT granted",
    "forbidden",
    "must not",
    "revoked",
    "superseded",
    "replaced by",
    ". Never",
    "Exit code: 0",
    "0 failures",
    "fatal:",
    "src/app.py",
    "TODO.md",
    "We will",
    "we'll",
    "Will Use",
    "chosen",
    "going with",
    "use the cache instead",
    "use x. instead",
    "not",
    "NOT",
    "nothing",
    "never",
    "don't",
    "don’t",
    "dont",
    "do not",
    "Cannot",
    "can't",
    "shouldn’t",
    "won't",
    "avoid",
    "no longer",
    "İ",
    "ı",
    "ſ",
    "K",
    "ΣΑΣ",
    "…",
    "...",
    "é",
    "💡",
    " ",
    "\t",
    "ab",
    "x_1",
    "12",
    "7→",
    "  12→",
    " => ",
    "/path/to/f.py",
    "erro",
    "r",
    "fail",
    "nevermind",
    "instea",
    "stderr",
    "todos",
    "\n",
    "\n",
    "\n",
    "\r\n",
    "\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\u2028",
    "\u2029",
]
payloads = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=80).map("".join),
    st.text(max_size=200),
    # heads longer than the scan window, cut mid-line or on a line end
    st.tuples(
        st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join),
        st.integers(SALIENT_SCAN_BYTES - 40, SALIENT_SCAN_BYTES + 40),
        st.lists(st.sampled_from(PIECES), max_size=20).map("".join),
    ).map(lambda t: ("x" * 30 + "\n" + t[0] * (t[1] // max(1, len(t[0]))))[: t[1]] + t[2]),
)


def as_reference(
    found: Sequence[tuple[salience.Salience | None, str]],
) -> list[tuple[str | None, str]]:
    return [(kind.value if kind else None, line) for kind, line in found]


@SETTINGS
@given(payloads)
def test_fast_selection_equals_the_line_by_line_reference(payload: str) -> None:
    assert as_reference(salient_payload_lines(payload)) == ref_payload_lines(payload)


@SETTINGS
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_salience_equals_the_reference(line: str) -> None:
    assert (kind.value if (kind := salience.salience(line)) else None) == ref_salience(line)


def test_selection_examples_stay_as_documented() -> None:
    payload = (
        "…   hdr\nplain line\nwe will use X\nerror: boom\nTODO: later\nmore error\nfifth error"
    )
    assert as_reference(salient_payload_lines(payload)) == [
        ("decision", "we will use X"),
        ("error", "error: boom"),
        ("open_task", "TODO: later"),
        ("error", "more error"),
    ]
    # a file as Read shows it is content, not a message: none of its lines is kept
    read = '     1→package main\n     2→func run() error {\n     3→\treturn errors.New("not ok")'
    assert salient_payload_lines(read) == []
    edited = "The file /src/a.go has been updated.\n    12→\tpanic(err)\nerror: build failed"
    assert as_reference(salient_payload_lines(edited)) == [("error", "error: build failed")]
    # U+0130 lowercases to two characters: read line by line, same answer
    assert as_reference(salient_payload_lines("İİİ ok\nİ failed")) == [("error", "İ failed")]


def test_every_marker_and_fixed_word_holds_a_needle() -> None:
    needles = salience._NEEDLES_OF_ERRORS + salience._NEEDLES_OF_OPEN_TASKS
    for marker in salience.ERROR_MARKERS + salience.OPEN_TASK_MARKERS:
        assert any(needle in marker for needle in needles), marker
    words = [
        "decided", "decide", "decision", "we will", "we'll", "will use", "chose", "chosen",
        "going with", "use it instead", "approved", "agreed", "never", "dont", "don't",
        "don’t", "do not", "must not", "must never", "mustnt", "mustn't", "mustn’t",
        "shouldnt", "shouldn't", "shouldn’t", "should not", "may not", "not allowed",
        "not permitted", "not granted", "forbidden", "prohibited", "not", "avoid", "revoked",
        "revoke", "superseded", "supersedes", "no longer", "replaced by", "rescinded",
        "withdrawn",
    ]  # fmt: skip
    for word in words:
        assert any(needle in word for needle in salience._NEEDLES_OF_DECISIONS), word


# -- whole cards -----------------------------------------------------------------------------


@st.composite
def transcripts_with_payloads(draw: st.DrawFn) -> tuple[Transcript, dict[int, str]]:
    items: list[TranscriptItem] = [item(0, ItemKind.USER, summary=draw(st.sampled_from(PIECES)))]
    texts: dict[int, str] = {}
    for line in range(1, draw(st.integers(1, 14))):
        label = draw(st.sampled_from(["Read", "Bash(ls)", "grep x", "", "edit"]))
        summary = draw(st.one_of(st.none(), st.lists(st.sampled_from(PIECES), max_size=6)))
        paths = tuple(draw(st.lists(st.sampled_from(["/a/b.py", "src/c.rs", "d"]), max_size=2)))
        text = "".join(summary) if summary else None
        if draw(st.integers(0, 4)) == 0:  # now and then a turn of prose a strategy elides
            kind = draw(st.sampled_from([ItemKind.USER, ItemKind.ASSISTANT]))
            items.append(item(line, kind, 50, elidable=400, label="text", summary=text))
        else:
            items.append(
                output(
                    line,
                    3000,
                    label=label,
                    summary=text,
                    paths=paths,
                    file_view=bool(paths) and draw(st.booleans()),
                    failed=draw(st.booleans()),
                )
            )
        if draw(st.booleans()):
            texts[line] = draw(payloads)
    return transcript(items), texts


@SETTINGS
@given(transcripts_with_payloads(), st.data())
def test_cards_equal_the_reference_with_and_without_a_memo(
    case: tuple[Transcript, dict[int, str]], data: st.DataObject
) -> None:
    t, texts = case
    memo = CardMemo(t, texts)
    lines = [i.line_index for i in t.items]
    for _ in range(3):  # passes over overlapping choices share the memo
        chosen = data.draw(st.lists(st.sampled_from(lines), unique=True))
        expected = ref_card(t, chosen, texts)
        assert state_card_digest(t, chosen, texts) == expected
        assert state_card_digest(t, chosen, texts, memo) == expected


def test_a_memo_serves_only_its_own_transcript_and_payloads() -> None:
    first = transcript([output(1, 4000, label="Read", summary="error in a")])
    other = transcript([output(1, 4000, label="Bash", summary="all fine here")])
    memo = CardMemo(first, {1: "x"})
    assert memo.serves(first, memo.payloads)
    assert not memo.serves(first, {1: "x"})  # an equal map is not the same map
    assert not memo.serves(other, memo.payloads)
    state_card_digest(first, [1], memo.payloads, memo)
    card = state_card_digest(other, [1], memo.payloads, memo)
    assert card == ref_card(other, [1], memo.payloads)
    assert card.decisions == [] and card.concepts == []
