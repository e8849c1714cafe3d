"""core.probes: deterministic extraction, caps, and recall after a plan."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from gobtui.adapters.providers.claude import parse as claude_parse
from gobtui.core import probes as probes_module
from gobtui.core.edits import (
    CacheEditEdit,
    CompactionPlan,
    DigestBlock,
    Edit,
    ElideEdit,
    InjectDigestEdit,
)
from gobtui.core.limits import MAX_PROBES
from gobtui.core.model import ItemKind, Transcript
from gobtui.core.policy import PolicyConfig
from gobtui.core.probes import (
    KIND_CAPS,
    Probe,
    ProbeKind,
    extract_probes,
    line_probes,
    probe_recall,
)
from gobtui.core.strategies import get
from tests.builders.items import item, output, transcript, transcripts


def kinds(text: str) -> dict[ProbeKind, list[str]]:
    found: dict[ProbeKind, list[str]] = {}
    for probe in line_probes(text, 0):
        found.setdefault(probe.kind, []).append(probe.text)
    return found


def test_kinds() -> None:
    found = kinds(
        "ran cargo test --workspace in ~/src/gob and ./build.sh; see src/core/plan.rs\n"
        "error: cannot find value `x`\n"
        "We decided to use orjson for the cache.\n"
        "Do NOT restart the worker while it drains.\n"
        "The refund is still pending; confirm before retrying.\n"
        "Changes not staged for commit: parse_transcript and makeDigestBlock"
    )
    assert "~/src/gob" in found[ProbeKind.PATH]
    assert "./build.sh" in found[ProbeKind.PATH]
    assert "src/core/plan.rs" in found[ProbeKind.PATH]
    assert found[ProbeKind.ERROR_SIGNATURE][0].startswith("error: cannot find value")
    # sentences that decide or leave something open, by what they say (core.salience)
    assert found[ProbeKind.DECISION] == [
        "We decided to use orjson for the cache.",
        "Do NOT restart the worker while it drains.",
    ]
    assert found[ProbeKind.OPEN_TASK] == ["The refund is still pending; confirm before retrying."]
    assert "plan.rs" in found[ProbeKind.FILE_NAME]
    # commands and identifiers are no probes; a plain negation is no decision
    assert set(found) == {
        ProbeKind.PATH,
        ProbeKind.ERROR_SIGNATURE,
        ProbeKind.DECISION,
        ProbeKind.OPEN_TASK,
        ProbeKind.FILE_NAME,
    }


def test_probe_bounds() -> None:
    long = "decided " + "x" * 200
    (probe,) = line_probes(long, 3)
    assert probe.line == 3
    assert len(probe.text.encode()) <= 64
    many = " ".join(f"/p/{i}" for i in range(10))
    assert len(kinds(many)[ProbeKind.PATH]) == 4  # at most 4 of one kind per line
    assert ProbeKind.PATH not in kinds("/a")  # under 3 bytes


def test_extract_caps_and_order() -> None:
    items = [
        item(i, ItemKind.TOOL_RESULT, 10, label="t", summary=f"/dir{i}/a /dir{i}/b snake_case_{i}")
        for i in range(100)
    ]
    items.append(item(200, ItemKind.USER, 0, label="user", summary="/dead/path"))  # dead
    probes = extract_probes(transcript(items))
    assert len(probes) <= MAX_PROBES
    assert sum(p.kind is ProbeKind.PATH for p in probes) == KIND_CAPS[ProbeKind.PATH]
    order = list(ProbeKind)
    assert all(
        (a.line, order.index(a.kind)) <= (b.line, order.index(b.kind)) for a, b in pairwise(probes)
    )
    assert len({p.text for p in probes}) == len(probes)
    assert all(p.line != 200 for p in probes)


def two_outputs() -> Transcript:
    return transcript(
        [
            item(0, ItemKind.USER, 10, label="user", summary="edit src/app.py please"),
            output(1, summary="cat(/etc/hosts) => error: permission denied"),
            output(2, summary="ls(/srv/data) => fine"),
        ]
    )


def plan_with(*edits: Edit) -> CompactionPlan:
    return CompactionPlan(
        strategy="t",
        rationale="t",
        edits=list(edits),
        context_tokens_before=100,
        context_tokens_after=50,
    )


def test_recall_counts_elided_lines_unless_carried() -> None:
    t = two_outputs()
    probes = extract_probes(t)
    texts = {p.text for p in probes}
    assert {"/etc/hosts", "/srv/data", "src/app.py"} <= texts
    elided = probe_recall(probes, t, plan_with(ElideEdit(line_indexes=[1])), tail_start=2)
    assert elided.probes_recalled < elided.probes_total
    assert "/etc/hosts" in elided.missed_probes
    assert elided.tail_intact and elided.tail_probes_total >= 1
    # the same elision with the line's summary on the state card recalls everything
    card = DigestBlock(errors=["cat(/etc/hosts) => error: permission denied"], covers_items=1)
    carried = probe_recall(
        probes, t, plan_with(ElideEdit(line_indexes=[1]), InjectDigestEdit(digest=card))
    )
    assert carried.recall == 1.0 and carried.missed_probes == []
    by_kind = {k.kind: (k.total, k.recalled) for k in elided.by_kind}
    assert by_kind[ProbeKind.PATH][0] >= 3


def test_recall_of_cache_edit_and_empty() -> None:
    t = transcript([output(1, summary="ls(/srv/data) => fine", tool_use_ids=("a",))])
    probes = extract_probes(t)
    score = probe_recall(probes, t, plan_with(CacheEditEdit(tool_use_ids=["a"])))
    assert score.recall < 1.0
    empty = probe_recall([], t, plan_with(ElideEdit(line_indexes=[1])))
    assert empty.recall == 1.0 and empty.tail_intact


@settings(max_examples=50, deadline=None)
@given(transcripts())
def test_extraction_is_deterministic_and_bounded(t: Transcript) -> None:
    first = extract_probes(t)
    assert first == extract_probes(t)
    assert len(first) <= MAX_PROBES
    for kind, cap in KIND_CAPS.items():
        assert sum(p.kind is kind for p in first) <= cap


def test_real_fixture_recall(fixtures_dir: Path) -> None:
    t = claude_parse.parse_transcript(
        str(fixtures_dir / "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    )
    probes = extract_probes(t)
    assert 10 <= len(probes) <= MAX_PROBES
    policy = PolicyConfig(trigger_tokens=50_000, floor_tokens=30_000, keep_recent_tool_outputs=4)
    elide = get("elide").evaluate(t, policy)
    compacted = get("compacted").evaluate(t, policy)
    assert elide is not None and compacted is not None
    plain = probe_recall(probes, t, elide)
    carded = probe_recall(probes, t, compacted)
    assert 0.0 < plain.recall <= carded.recall <= 1.0  # the card only adds visible text


PARTS = [
    "we decided to",
    "DECISION:",
    "Chosen path",
    "will use uv",
    "going with it",
    "error: boom",
    "error[E0308]",
    "FAILED tests",
    "panicked at",
    "git status -s",
    "pytest -x",
    "src/app/main.py",
    "./run.sh",
    "~/notes.md",
    "config.toml",
    "snake_case_name",
    "camelCaseName",
    "abcdefghij",
    "a_b",
    "x_y_z_w_v_q",
    "shortName",
    "HTTPServer9x",
    "ñandú_largo_nombre",
    "_9876543210",
    "-",
    "é",
    "plain words only",
    "İ dotted",
    "ſtrange",
    "decİde",
    "\n",
    " ",
    "a/b",
    "x.y",
    "(git log",
    "xgit status",
    "égit diff",
    "1go run",
    "python3 -m x",
    "kubectl get",
    "make\tbuild",
    "cargo\u00a0test",
    "npm",
    "run",
]
"""Pieces of text that each kind matches or nearly matches, and separators."""


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.sampled_from(PARTS), max_size=12),
    st.sampled_from([" ", "", "\n", "é", "_", "("]),
)
def test_prefilters_never_change_the_probes(parts: list[str], separator: str) -> None:
    """The literal prefilters only skip scans that could not match."""
    text = separator.join(parts)
    slow: list[Probe] = []
    for kind, pattern in probes_module._MATCHERS:
        seen: set[str] = set()
        for match in pattern.finditer(text):
            value = probes_module._value(kind, text, match)
            if value is None or not probes_module._fits(value) or value in seen:
                continue
            seen.add(value)
            slow.append(Probe(kind, value, 3))
            if len(seen) >= 4:
                break
    assert line_probes(text, 3) == slow


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(PARTS), max_size=6).map(" ".join), max_size=40),
    st.integers(2, 9),
)
def test_block_prefilter_finds_what_one_text_at_a_time_finds(texts: list[str], size: int) -> None:
    """Prefiltering several items' texts at once skips only kinds none of them can match:
    any block size gives what blocks of one item (a prefilter per text) give."""
    t = transcript([output(line, summary=text) for line, text in enumerate(texts, start=1)])
    # patch.object, not a fixture: hypothesis runs many examples per function-scoped fixture
    with patch.object(probes_module, "PROBE_BLOCK_ITEMS", 1):
        one_by_one = extract_probes(t)
    with patch.object(probes_module, "PROBE_BLOCK_ITEMS", size):
        assert extract_probes(t) == one_by_one


def test_possible_kinds_rules_out_only_absent_kinds() -> None:
    texts = ["see /etc/hosts", "plain words", "we decided so"]
    found = probes_module.possible_kinds(texts, probes_module.ALL_KINDS)
    assert {ProbeKind.PATH, ProbeKind.DECISION} <= found
    assert ProbeKind.FILE_NAME not in found and ProbeKind.ERROR_SIGNATURE not in found
    # a needle split across two texts is at most a false alarm, never a miss
    assert (
        probes_module.possible_kinds(["err", "or: x"], frozenset({ProbeKind.ERROR_SIGNATURE}))
        == frozenset()
    )
