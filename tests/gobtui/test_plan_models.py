"""The pure models behind the plan screens: record rows, record diffs, the policy helpers."""

from __future__ import annotations

import itertools
from dataclasses import replace

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gobtui.core.limits import DIFF_STRING_MAX_CHARS
from gobtui.core.model import Provider, SessionSummary, Transcript
from gobtui.core.policy import PolicyConfig, QuotaPressure
from gobtui.core.strategies import STRATEGIES
from gobtui.services.planning_state import (
    ignoring_trigger,
    next_strategy,
    policy_for,
    session_moved_on,
)
from gobtui.view_models.diff_model import DiffTag, pretty_record, split_rows, unified_rows
from gobtui.view_models.format import human_bytes
from gobtui.view_models.preview_rows import (
    PairRow,
    RowChange,
    build_rows,
    sniff_type,
    split_lines,
    unfold,
)

FEW = settings(max_examples=40, deadline=None)
EMPTY = Transcript(Provider.CLAUDE, "s", "/x.jsonl")

lines_strategy = st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=30)


@FEW
@given(lines_strategy)
def test_split_lines_round_trips(lines: list[bytes]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    assert split_lines(data) == lines


def test_split_lines_keeps_a_torn_last_line() -> None:
    assert split_lines(b'{"a":1}\n{"b"') == [b'{"a":1}', b'{"b"']


def _covered(rows: list[PairRow]) -> list[int]:
    lines: list[int] = []
    for row in rows:
        if row.before is None:
            continue
        first = row.before.line
        lines.extend(range(first, first + row.count))
    return lines


@FEW
@given(
    st.lists(st.integers(0, 3), min_size=0, max_size=40),
    st.sets(st.integers(0, 39)),
    st.integers(0, 3),
)
def test_rows_cover_every_source_line_once_in_order(
    sizes: list[int], changed: set[int], appended: int
) -> None:
    source = [b"x" * (n + 1) + str(i).encode() for i, n in enumerate(sizes)]
    candidate = [line + b"!" if i in changed else line for i, line in enumerate(source)]
    candidate += [b'{"type":"user"}'] * appended
    elided = {i for i in changed if i % 2 == 0}
    rows = build_rows(source, candidate, EMPTY, elided=elided, card="card\nline two")
    assert _covered(rows) == list(range(len(source)))
    touched = {r.before.line: r.change for r in rows if r.before and r.change is not RowChange.FOLD}
    for i in changed & set(range(len(source))):
        assert touched[i] is (RowChange.STUBBED if i in elided else RowChange.CHANGED)
    added = [r for r in rows if r.change is RowChange.ADDED]
    assert len(added) == appended
    cards = [r.text for r in rows if r.change is RowChange.CARD_LINE]
    assert cards == (["card", "line two"] if appended else [])
    for a, b in itertools.pairwise(rows):
        assert not (a.change is RowChange.FOLD and b.change is RowChange.FOLD)
    for row in rows:
        if row.change is RowChange.FOLD:
            assert row.count >= 2 and row.before is not None
            first = row.before.line
            assert row.fold_bytes == sum(len(line) for line in source[first : first + row.count])


@FEW
@given(st.lists(st.integers(0, 3), min_size=0, max_size=40), st.sets(st.integers(0, 39)))
def test_unfolding_every_fold_gives_the_unfolded_rows(sizes: list[int], changed: set[int]) -> None:
    """Enter on a fold row opens it: its records, each as an unfolded table shows it."""
    source = [
        b'{"type":"user","n":' + str(i).encode() + b"}" + b"x" * n for i, n in enumerate(sizes)
    ]
    candidate = [line + b"!" if i in changed else line for i, line in enumerate(source)]
    folded = build_rows(source, candidate, EMPTY, fold_min=2)
    opened = [row for fold in folded for row in unfold(fold, source, EMPTY)]
    assert opened == build_rows(source, candidate, EMPTY, fold_min=len(source) + 2)


def test_stub_rows_carry_the_bytes_they_free() -> None:
    source = [b'{"type":"user"}', b"a" * 500, b'{"type":"assistant"}']
    candidate = [source[0], b"a" * 40, source[2]]
    rows = build_rows(source, candidate, EMPTY, elided={1}, fold_min=2)
    stub = next(r for r in rows if r.change is RowChange.STUBBED)
    assert stub.freed == 460
    assert [r.change for r in rows] == [RowChange.SAME, RowChange.STUBBED, RowChange.SAME]
    assert rows[0].before is not None and rows[0].before.label == "user"


def test_api_drops_are_marked_though_the_file_is_unchanged() -> None:
    source = [b"a", b"b", b"c"]
    rows = build_rows(source, source, EMPTY, api_dropped={1})
    assert [r.change for r in rows] == [RowChange.SAME, RowChange.API_DROP, RowChange.SAME]


def test_sniff_type_reads_only_the_head() -> None:
    assert sniff_type(b'{"type":"file-history-snapshot","x":1}') == "file-history-snapshot"
    assert sniff_type(b'{"x":"' + b"y" * 600 + b'","type":"late"}') == ""


# --- record diff ---------------------------------------------------------------------------

text_lines = st.lists(st.sampled_from(["{", "}", '"a": 1,', '"b": 2,', "[", "]", "x"]), max_size=25)


@FEW
@given(text_lines, text_lines)
def test_unified_rows_rebuild_both_sides(a: list[str], b: list[str]) -> None:
    rows = unified_rows(a, b, context=10_000)
    if a == b:  # an unchanged record folds whole (one line is shown, not folded)
        assert [r.tag for r in rows] == ([DiffTag.FOLD] if len(a) > 1 else [DiffTag.EQUAL] * len(a))
        return
    assert all(r.tag is not DiffTag.FOLD for r in rows)
    assert [r.text for r in rows if r.tag in (DiffTag.EQUAL, DiffTag.DELETE)] == a
    assert [r.text for r in rows if r.tag in (DiffTag.EQUAL, DiffTag.INSERT)] == b


@FEW
@given(text_lines, text_lines, st.integers(0, 3))
def test_folds_hide_only_unchanged_lines(a: list[str], b: list[str], context: int) -> None:
    rows = unified_rows(a, b, context=context)
    hidden = sum(int(r.text.split()[1]) for r in rows if r.tag is DiffTag.FOLD)
    shown_old = [r for r in rows if r.tag in (DiffTag.EQUAL, DiffTag.DELETE)]
    assert len(shown_old) + hidden == len(a)
    pairs = split_rows(a, b, context=context)
    left = [p.left.text for p in pairs if p.left is not None and p.left.tag is not DiffTag.FOLD]
    left_hidden = sum(
        int(p.left.text.split()[1]) for p in pairs if p.left and p.left.tag is DiffTag.FOLD
    )
    assert len(left) + left_hidden == len(a)


def test_large_changed_blocks_stay_exact() -> None:
    # Past the difflib budget: same-length middles compare line by line, others become one
    # replaced block; both still rebuild each side exactly.
    a = ["{", '  "v": 1,', "}"] * 1_000
    same_length = [line.replace("1", "2") if i % 7 == 0 else line for i, line in enumerate(a)]
    longer = [*same_length[:1500], "extra", *same_length[1500:]]
    for b in (same_length, longer):
        rows = unified_rows(a, b, context=10_000)
        assert [r.text for r in rows if r.tag in (DiffTag.EQUAL, DiffTag.DELETE)] == a
        assert [r.text for r in rows if r.tag in (DiffTag.EQUAL, DiffTag.INSERT)] == b
    aligned = unified_rows(a, same_length, context=10_000)
    assert sum(r.tag is DiffTag.DELETE for r in aligned) == sum(
        x != y for x, y in zip(a, same_length, strict=True)
    )


def test_identical_records_fold_whole() -> None:
    rows = unified_rows(["a", "b", "c", "d"], ["a", "b", "c", "d"])
    assert [(r.tag, r.text) for r in rows] == [(DiffTag.FOLD, "⋯ 4 unchanged lines")]


def test_pretty_record_keeps_key_order_and_cuts_long_strings() -> None:
    long = "z" * (DIFF_STRING_MAX_CHARS * 3)
    record = orjson.dumps({"zeta": 1, "alpha": {"content": long}, "mid": [1, 2]})
    pretty = pretty_record(record)
    text = "\n".join(pretty.lines)
    assert text.index('"zeta"') < text.index('"alpha"') < text.index('"mid"')
    assert pretty.cut_strings == 1 and pretty.is_json
    assert long not in text and f"cut: {len(long):,} chars" in text


def test_strings_differing_past_the_cut_still_differ() -> None:
    head = "h" * DIFF_STRING_MAX_CHARS
    one = pretty_record(orjson.dumps({"c": head + "one"}))
    two = pretty_record(orjson.dumps({"c": head + "two"}))
    assert one.lines != two.lines


def test_big_integers_and_lone_surrogates_are_shown_exactly() -> None:
    pretty = pretty_record(b'{"n": 123456789012345678901234567890, "s": "\\ud800x"}')
    assert pretty.lines[1] == '  "n": 123456789012345678901234567890,'
    assert pretty.lines[2] == '  "s": "\ud800x"'


def test_a_line_that_is_not_json_is_shown_raw_and_cut() -> None:
    pretty = pretty_record(b"not json " + b"q" * 5000)
    assert not pretty.is_json and len(pretty.lines) == 1
    assert pretty.cut_strings == 1 and len(pretty.lines[0]) < 600
    assert pretty_record(None).lines == []


# --- policy helpers ------------------------------------------------------------------------


@FEW
@given(
    st.integers(0, 20_000_000),
    st.sampled_from(list(QuotaPressure)),
    st.integers(1_000, 400_000),
)
def test_ignoring_trigger_reaches_the_current_context(
    context: int, pressure: QuotaPressure, trigger: int
) -> None:
    policy = PolicyConfig(
        trigger_tokens=trigger, floor_tokens=trigger // 4, quota_pressure=pressure
    )
    lowered = ignoring_trigger(policy, context)
    assert lowered.floor_tokens < lowered.trigger_tokens
    if context >= policy.effective_trigger():
        assert lowered == policy
    else:
        assert lowered.effective_trigger() <= max(1, context)


def test_policy_for_is_the_defaults_with_auto() -> None:
    summary = SessionSummary(provider=Provider.CODEX, session_id="x", path="/x.jsonl")
    # the trigger lowered to fire before Codex compacts by itself (244,800)
    assert policy_for(summary) == (PolicyConfig(trigger_tokens=220_320), "auto")


def test_next_strategy_wraps_both_ways() -> None:
    names = list(STRATEGIES)
    assert next_strategy(names[-1], 1) == names[0]
    assert next_strategy(names[0], -1) == names[-1]
    assert next_strategy("unknown", 1) == names[1]


def test_human_bytes() -> None:
    assert [human_bytes(n) for n in (0, 1023, 1024, 1536, 150 * 1024, 3 * 1024**2)] == [
        "0 B",
        "1023 B",
        "1.0 KB",
        "1.5 KB",
        "150 KB",
        "3.0 MB",
    ]
    assert human_bytes(-2048) == "-2.0 KB"


def test_session_moved_on_only_when_its_file_did() -> None:
    mine = SessionSummary(provider=Provider.CLAUDE, session_id="a", path="/a.jsonl", bytes=100)
    other = SessionSummary(provider=Provider.CLAUDE, session_id="b", path="/b.jsonl", bytes=5)
    assert not session_moved_on(mine, 100, [mine, other], [])
    assert not session_moved_on(mine, 100, [replace(other, bytes=9)], ["/b.jsonl"])
    assert session_moved_on(mine, 100, [replace(mine, bytes=160)], [])
    assert session_moved_on(mine, 100, [], ["/a.jsonl"])


def test_the_board_says_no_plan_reasons_in_words() -> None:
    """The CLI's JSON keeps the closed codes; the dashboard says what each means."""
    from gobtui.core.edits import NoPlanReason
    from gobtui.core.evaluation import EvalRow, RowStatus
    from gobtui.view_models.eval_rows import row_note
    from gobtui.view_models.format import NO_PLAN_WORDS, no_plan_words

    assert set(NO_PLAN_WORDS) == {reason.value for reason in NoPlanReason}
    row = EvalRow(
        strategy="elide",
        status=RowStatus.NO_PLAN,
        reason_code=NoPlanReason.MINIMUM_SAVINGS_NOT_MET.value,
        context_tokens_before=1,
    )
    assert row_note(row) == "saves under the minimum" == no_plan_words(row.reason_code or "")
