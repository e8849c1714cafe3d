"""core.admission: one test per violation class, plus what is admitted."""

from __future__ import annotations

from gobtui.core.admission import AdmissionCode, admit, protected_lines
from gobtui.core.edits import (
    CacheEditEdit,
    CompactionPlan,
    DigestBlock,
    Edit,
    ElideEdit,
    InjectDigestEdit,
    ProviderCompactEdit,
)
from gobtui.core.limits import MAX_PLAN_ITEMS
from gobtui.core.model import ItemKind, Provider, Transcript, TranscriptItem
from gobtui.core.policy import PolicyConfig
from tests.builders.items import item, output, transcript, turns

POLICY = PolicyConfig(keep_recent_tool_outputs=2)
# 6 turns: outputs on lines 2, 5, 8, 11, 14, 17; 14 and 17 are protected.
T = turns(6)


def plan(*edits: Edit, before: int = 10_000, after: int = 5_000) -> CompactionPlan:
    return CompactionPlan(
        strategy="test",
        rationale="test",
        edits=list(edits),
        context_tokens_before=before,
        context_tokens_after=after,
    )


def codes(p: CompactionPlan, t: Transcript = T) -> list[AdmissionCode]:
    return admit(p, t, POLICY).codes


def test_protected_lines() -> None:
    assert protected_lines(T, 2) == {14, 17}
    assert protected_lines(T, 0) == set()
    assert protected_lines(T, 100) == {2, 5, 8, 11, 14, 17}


def test_admits_a_good_plan() -> None:
    verdict = admit(
        plan(ElideEdit(line_indexes=[2, 5, 8]), InjectDigestEdit(digest=DigestBlock())), T, POLICY
    )
    assert verdict.admitted and verdict.code is None and verdict.message == "admitted"
    assert admit(plan(ProviderCompactEdit(control="/compact")), T, POLICY).admitted
    assert admit(plan(CacheEditEdit(tool_use_ids=["t0", "t1"])), T, POLICY).admitted


def test_no_edits() -> None:
    assert codes(plan()) == [AdmissionCode.NO_EDITS]


def test_too_many_edits() -> None:
    edits = [ElideEdit(line_indexes=[2])] + [ElideEdit(line_indexes=[5]) for _ in range(64)]
    assert AdmissionCode.TOO_MANY_EDITS in codes(plan(*edits))


def test_too_many_items() -> None:
    many = transcript([item(i, ItemKind.USER, 1) for i in range(MAX_PLAN_ITEMS + 1)])
    assert AdmissionCode.TOO_MANY_ITEMS in codes(plan(ProviderCompactEdit(control="/c")), many)


def test_empty_elide() -> None:
    assert codes(plan(ElideEdit(line_indexes=[]))) == [AdmissionCode.EMPTY_ELIDE]


def test_not_increasing() -> None:
    assert codes(plan(ElideEdit(line_indexes=[5, 2]))) == [
        AdmissionCode.LINE_INDEXES_NOT_INCREASING
    ]
    assert AdmissionCode.LINE_INDEXES_NOT_INCREASING in codes(plan(ElideEdit(line_indexes=[2, 2])))


def test_duplicate_across_edits() -> None:
    assert codes(plan(ElideEdit(line_indexes=[2]), ElideEdit(line_indexes=[2]))) == [
        AdmissionCode.DUPLICATE_LINE_INDEX
    ]


def test_unknown_line() -> None:
    assert codes(plan(ElideEdit(line_indexes=[999]))) == [AdmissionCode.UNKNOWN_LINE_INDEX]


def test_not_elidable() -> None:
    # line 1 is a tool call: known, but not an elidable output
    assert codes(plan(ElideEdit(line_indexes=[1]))) == [AdmissionCode.LINE_NOT_ELIDABLE]
    dead = transcript([output(0), item(1, ItemKind.TOOL_RESULT, 0, 4000, active=False)])
    assert codes(plan(ElideEdit(line_indexes=[1])), dead) == [AdmissionCode.LINE_NOT_ELIDABLE]


def test_protected_tail() -> None:
    assert codes(plan(ElideEdit(line_indexes=[2, 14]))) == [AdmissionCode.PROTECTED_TAIL]
    assert codes(plan(CacheEditEdit(tool_use_ids=["t5"]))) == [AdmissionCode.PROTECTED_TAIL]


def test_stub_template() -> None:
    long = ElideEdit(line_indexes=[2], stub_template="x" * 97)
    assert codes(plan(long)) == [AdmissionCode.STUB_TEMPLATE_INVALID]
    two_lines = ElideEdit(line_indexes=[2], stub_template="a\n{bytes}")
    assert codes(plan(two_lines)) == [AdmissionCode.STUB_TEMPLATE_INVALID]
    assert codes(plan(ElideEdit(line_indexes=[2], stub_template="x" * 96))) == []


def test_per_item_stub() -> None:
    stray = ElideEdit(line_indexes=[2], per_item_stubs={5: "done"})
    assert codes(plan(stray)) == [AdmissionCode.PER_ITEM_STUB_INVALID]
    bad = ElideEdit(line_indexes=[2], per_item_stubs={2: "a\nb"})
    assert codes(plan(bad)) == [AdmissionCode.PER_ITEM_STUB_INVALID]


def test_multiple_digests() -> None:
    card = InjectDigestEdit(digest=DigestBlock())
    assert codes(plan(ElideEdit(line_indexes=[2]), card, card)) == [AdmissionCode.MULTIPLE_DIGESTS]


def test_digest_too_large() -> None:
    big = InjectDigestEdit(digest=DigestBlock(decisions=["x" * 1000] * 40))
    assert codes(plan(ElideEdit(line_indexes=[2]), big)) == [AdmissionCode.DIGEST_TOO_LARGE]


def test_control_not_alone() -> None:
    mixed = plan(ProviderCompactEdit(control="/compact"), ElideEdit(line_indexes=[2]))
    assert codes(mixed) == [AdmissionCode.CONTROL_NOT_ALONE]
    two = plan(ProviderCompactEdit(control="/compact"), CacheEditEdit(tool_use_ids=["t0"]))
    assert AdmissionCode.CONTROL_NOT_ALONE in codes(two)


def test_control_invalid() -> None:
    assert codes(plan(ProviderCompactEdit(control=""))) == [AdmissionCode.CONTROL_INVALID]
    assert codes(plan(ProviderCompactEdit(control="a\nb"))) == [AdmissionCode.CONTROL_INVALID]
    assert codes(plan(CacheEditEdit(tool_use_ids=[]))) == [AdmissionCode.CONTROL_INVALID]


def test_cache_edit_claude_only() -> None:
    codex = turns(6, provider=Provider.CODEX)
    assert codes(plan(CacheEditEdit(tool_use_ids=["t0"])), codex) == [
        AdmissionCode.CACHE_EDIT_UNSUPPORTED_PROVIDER
    ]


def test_unknown_tool_use_id() -> None:
    assert codes(plan(CacheEditEdit(tool_use_ids=["nope", "t0"]))) == [
        AdmissionCode.UNKNOWN_TOOL_USE_ID
    ]


def test_plan_grows_context() -> None:
    grows = plan(ElideEdit(line_indexes=[2]), before=100, after=101)
    assert codes(grows) == [AdmissionCode.PLAN_GROWS_CONTEXT]


def test_messages_hold_no_transcript_content() -> None:
    secret = "hunter2-secret-summary"
    t = transcript(
        [
            TranscriptItem(0, ItemKind.TOOL_RESULT, 10, elidable_bytes=400, summary=secret),
            TranscriptItem(1, ItemKind.USER, 10, summary=secret, tool_use_ids=(secret,)),
        ]
    )
    bad = plan(
        ElideEdit(line_indexes=[1, 0, 7], stub_template="y" * 200),
        CacheEditEdit(tool_use_ids=[secret]),
        InjectDigestEdit(digest=DigestBlock(goal="g" * 40_000)),
        InjectDigestEdit(digest=DigestBlock()),
        before=1,
        after=2,
    )
    verdict = admit(bad, t, PolicyConfig(keep_recent_tool_outputs=1))
    assert len(verdict.codes) >= 8
    assert secret not in verdict.message
    assert all(secret not in v.message for v in verdict.violations)
