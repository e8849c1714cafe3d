"""adapters.rewrite.lines and the incremental eval: the same bytes, reports and rows as the
one-shot path (apply_plan, verify, probe_recall over whole payloads, a plan per strategy).

Every strategy's plan (and hand-made ones, refused ones included) is applied through one
SourceRewriter per source, so rewritten lines and the card's scan are shared as in an eval.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.adapters.planning import load as planning
from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import load_session
from gobtui.adapters.providers.interface import RewriteError
from gobtui.adapters.providers.registry import verify_checks
from gobtui.adapters.providers.rewrite_records import split_lines
from gobtui.adapters.rewrite.apply import apply_plan, payload_texts
from gobtui.adapters.rewrite.lines import SourceRewriter, read_source
from gobtui.core.admission import admit, protected_tail_start
from gobtui.core.edits import CompactionPlan, DigestBlock, Edit, ElideEdit, InjectDigestEdit
from gobtui.core.evaluation import EvalRow, RowStatus, mark_best
from gobtui.core.limits import EVAL_PAYLOAD_BYTES
from gobtui.core.model import Provider, Transcript
from gobtui.core.policy import PolicyConfig
from gobtui.core.probe_witness import ProbeWitness
from gobtui.core.probes import extract_probes, probe_recall
from gobtui.core.strategies import STRATEGIES, EvalContext, plan_for
from gobtui.core.strategies.common import prefix_tokens
from gobtui.core.verify import verify
from tests.builders.generated import claude_files, codex_files

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
files = st.sampled_from([Provider.CLAUDE, Provider.CODEX]).flatmap(
    lambda provider: (claude_files() if provider is Provider.CLAUDE else codex_files()).map(
        lambda data: (provider, data)
    )
)
LOW = PolicyConfig(trigger_tokens=1, floor_tokens=0, min_savings_tokens=0)
Copy = Callable[..., Path]
BIG_FIXTURE = "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
FIXTURES = [
    ("claude/marot__spotter__tool_heavy.jsonl", Provider.CLAUDE),
    ("claude/jazzyalex__agent-sessions__small.jsonl", Provider.CLAUDE),
    ("claude/daaain__claude-code-log__edge_cases.jsonl", Provider.CLAUDE),
    ("claude/kvsankar__agent-history__session_with_compaction.jsonl", Provider.CLAUDE),
    ("codex/kvsankar__agent-history__session_with_compaction.jsonl", Provider.CODEX),
    ("codex/jazzyalex__agent-sessions__codex_053_rate_limit.jsonl", Provider.CODEX),
    ("codex/jazzyalex__agent-sessions__small.jsonl", Provider.CODEX),
]


def _outcome(call: Callable[[], object]) -> tuple[str, object]:
    try:
        return ("ok", call())
    except RewriteError as error:
        return ("error", (error.code, str(error)))


def _plans(
    transcript: Transcript, payloads: dict[int, str], policy: PolicyConfig
) -> list[CompactionPlan]:
    plans: list[CompactionPlan] = []
    for name in STRATEGIES:
        plan = plan_for(name, transcript, policy, EvalContext(payloads=payloads))
        if isinstance(plan, CompactionPlan):
            plans.append(plan)
    lines = [item.line_index for item in transcript.items]
    card = InjectDigestEdit(digest=DigestBlock(goal="g", summary="s", covers_items=1))
    for chosen, stub in ((lines[:3], "[x]"), (lines[-2:], "{bytes} b {kind}"), ([99999], "y")):
        edits: list[Edit] = [ElideEdit(line_indexes=sorted(set(chosen)), stub_template=stub), card]
        plans.append(
            CompactionPlan(
                strategy="hand",
                rationale="hand-made",
                edits=edits,
                context_tokens_before=1,
                context_tokens_after=0,
            )
        )
    return plans


def check_source(path: Path, provider: Provider, policy: PolicyConfig) -> None:
    session = load_session(path, provider)
    data, transcript = session.data, session.transcript
    elidable = [item.line_index for item in transcript.items if item.elidable]
    assert session.payloads == payload_texts(data, provider, elidable, EVAL_PAYLOAD_BYTES)
    assert list(session.lines) == split_lines(data)
    assert session.source_checks.report() == verify(data, verify_checks(provider))
    fresh = SourceRewriter(data, provider, transcript)  # no help from the load pass
    for plan in _plans(transcript, dict(session.payloads), policy):
        expected = _outcome(partial(apply_plan, data, provider, plan, transcript))
        assert _outcome(partial(session.rewriter.apply, plan)) == expected
        assert _outcome(partial(fresh.apply, plan)) == expected
        if expected[0] == "ok":
            overlay = session.rewriter.overlay(plan)
            candidate = expected[1]
            assert isinstance(candidate, bytes) and overlay.size == len(candidate)
            report = session.source_checks.candidate_report(overlay.replaced, overlay.appended)
            assert report == verify(candidate, verify_checks(provider))


@SETTINGS
@given(files, st.integers(0, 3))
def test_generated_sources(file: tuple[Provider, bytes], keep: int) -> None:
    provider, data = file
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "s.jsonl"
        path.write_bytes(data)
        check_source(path, provider, LOW.model_copy(update={"keep_recent_tool_outputs": keep}))


@pytest.mark.parametrize(("name", "provider"), FIXTURES)
def test_fixtures(name: str, provider: Provider, fixture_copy: Copy) -> None:
    check_source(fixture_copy(name), provider, LOW)


CLAUDE_SCANNED = [
    "claude/marot__spotter__tool_heavy.jsonl",
    "claude/jazzyalex__agent-sessions__small.jsonl",
    "claude/daaain__claude-code-log__edge_cases.jsonl",
    "claude/jazzyalex__agent-sessions__schema_drift.jsonl",
    "claude/kvsankar__agent-history__session_with_compaction.jsonl",
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    "oracle/claude-branch.jsonl",
]


@pytest.mark.parametrize("name", CLAUDE_SCANNED)
def test_read_source_scan_is_the_scan_of_the_lines(name: str, fixture_copy: Copy) -> None:
    """read_source's scan takes the leaf from the parse: the one a scan of the lines finds."""
    from gobtui.adapters.providers.claude.rewrite import CardScan

    path = fixture_copy(name)
    session = load_session(path, Provider.CLAUDE)
    source = read_source(session.data, Provider.CLAUDE, session.transcript, EVAL_PAYLOAD_BYTES)
    scan = CardScan.of(split_lines(session.data), session.transcript.path)
    assert isinstance(source.scan, CardScan)
    assert source.scan._state is None or session.transcript.leaf_uuid is None  # no state fed
    fallback = session.transcript.session_id  # what the card uses when the scan has none
    assert (source.scan.leaf, source.scan.session_id or fallback, source.scan.timestamp) == (
        scan.leaf,
        scan.session_id or fallback,
        scan.timestamp,
    )
    assert (source.scan.mode, source.scan.where, source.scan.parents) == (
        scan.mode,
        scan.where,
        scan.parents,
    )


def test_a_session_growing_while_loaded_is_read_as_of_one_moment(
    fixture_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the agent appends after the size was taken waits for the next plan."""
    path = fixture_copy("claude/marot__spotter__tool_heavy.jsonl")
    original = path.read_bytes()
    fstat = os.fstat
    taken: list[int] = []

    def fstat_then_append(fd: int) -> os.stat_result:
        st = fstat(fd)
        taken.append(st.st_size)
        with open(path, "ab") as handle:  # the agent writes on (after every look at the size)
            handle.write(original.splitlines(keepends=True)[-1])
        return st

    monkeypatch.setattr("gobtui.adapters.planning.load.os.fstat", fstat_then_append)
    session = load_session(path, Provider.CLAUDE)
    moment = path.read_bytes()[: taken[-1]]  # as of the size the read went by
    assert session.source_bytes == moment and len(path.read_bytes()) > len(moment)
    assert session.source_sha256 == hashlib.sha256(moment).hexdigest()


def test_a_session_shrinking_while_loaded_is_an_error(
    fixture_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fixture_copy("claude/marot__spotter__tool_heavy.jsonl")
    fstat = os.fstat

    def fstat_then_cut(fd: int) -> os.stat_result:
        st = fstat(fd)
        os.truncate(path, st.st_size // 2)
        return st

    monkeypatch.setattr("gobtui.adapters.planning.load.os.fstat", fstat_then_cut)
    with pytest.raises(planning.PlanningError) as caught:
        load_session(path, Provider.CLAUDE)
    assert caught.value.code is planning.PlanningErrorCode.CHANGED


# -- the eval, row by row, against the one-shot computation --------------------------------------


def reference_rows(path: Path, provider: Provider, policy: PolicyConfig) -> list[EvalRow]:
    """evaluate_session as first written: nothing shared but the probes. It plans the text
    load_session read (the live part), and sizes are the whole file's."""
    session = load_session(path, provider)
    data, transcript, payloads = session.data, session.transcript, session.payloads
    history = len(session.source_bytes) - len(data)
    probes = extract_probes(transcript, payloads)
    tail = protected_tail_start(transcript, policy.keep_recent_tool_outputs)
    source = Counter(f.code.value for f in verify(data, verify_checks(provider)).findings)
    rows: list[EvalRow] = []
    for name in STRATEGIES:
        result = plan_for(name, transcript, policy, EvalContext(payloads=payloads))
        before = transcript.context_tokens()
        if not isinstance(result, CompactionPlan):
            rows.append(
                EvalRow(
                    strategy=name,
                    status=RowStatus.NO_PLAN,
                    reason_code=result.reason_code.value,
                    context_tokens_before=before,
                    context_tokens_after=result.projected_context_tokens_after,
                    est_reclaimed=result.projected_savings_tokens or 0,
                    bytes_before=len(data) + history,
                )
            )
            continue
        score = probe_recall(probes, transcript, result, tail, payloads)
        digest = result.digest
        row = EvalRow(
            strategy=name,
            status=RowStatus.PLAN,
            est_reclaimed=result.est_savings,
            context_tokens_before=result.context_tokens_before,
            context_tokens_after=result.context_tokens_after,
            prefix_tokens=prefix_tokens(transcript, result),
            bytes_before=len(data) + history,
            probes_total=score.probes_total,
            probes_recalled=score.probes_recalled,
            recall=round(score.recall, 4),
            tail_intact=score.tail_intact,
            missed_probes=score.missed_probes,
            elided_items=len(result.elided_lines),
            card_bytes=len(digest.render().encode("utf-8", "surrogatepass")) if digest else 0,
            control=result.is_control,
            client_compacts=result.projection.client_compacts if result.projection else None,
            calibrated_savings=(
                max(
                    0,
                    result.projection.context_tokens_before
                    - result.projection.context_tokens_after,
                )
                if result.projection
                else None
            ),
        )
        admission = admit(result, transcript, policy)
        if not admission.admitted:
            code = admission.code
            row = row.model_copy(
                update={"status": RowStatus.REFUSED, "reason_code": code.value if code else None}
            )
        elif not result.is_control:
            try:
                candidate = apply_plan(data, provider, result, transcript)
            except RewriteError as error:
                rows.append(
                    EvalRow(
                        strategy=name,
                        status=RowStatus.ERROR,
                        context_tokens_before=before,
                        error=str(error).splitlines()[0],
                    )
                )
                continue
            report = verify(candidate, verify_checks(provider))
            added = Counter(f.code.value for f in report.findings) - source
            row = row.model_copy(
                update={
                    # the candidate a fork is made of (the rewriter seeds its card's ids
                    # from the live part's digest), hashed whole
                    "result_sha256": hashlib.sha256(
                        session.source_bytes[:history] + session.rewriter.apply(result)
                    ).hexdigest(),
                    "bytes_after": len(candidate) + history,
                    "valid": not added,  # what the source carried is not held against it
                    "verify_errors": report.errors,
                    "verify_warnings": report.warnings,
                    "findings": sorted({f.code.value for f in report.findings}),
                }
            )
        rows.append(row)
    window = transcript.summary.context_window if transcript.summary is not None else None
    return mark_best(rows, policy.min_savings_tokens, policy.fork_ceiling(provider, window))


def _without_durations(rows: list[EvalRow]) -> list[EvalRow]:
    return [row.model_copy(update={"duration_ms": None}) for row in rows]


@pytest.mark.parametrize(("name", "provider"), FIXTURES)
@pytest.mark.parametrize("keep", [0, 2])
def test_eval_rows_equal_the_one_shot_rows(
    name: str, provider: Provider, keep: int, fixture_copy: Copy
) -> None:
    path = fixture_copy(name)
    policy = LOW.model_copy(update={"keep_recent_tool_outputs": keep})
    session = load_session(path, provider)
    rows = evaluate_session(session, policy)
    assert _without_durations(rows) == _without_durations(reference_rows(path, provider, policy))
    # a second eval of the same session answers from its memo: the same rows
    assert _without_durations(evaluate_session(session, policy)) == _without_durations(rows)


@SETTINGS
@given(files)
def test_eval_rows_of_generated_sources(file: tuple[Provider, bytes]) -> None:
    provider, data = file
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "s.jsonl"
        path.write_bytes(data)
        rows = evaluate_session(load_session(path, provider), LOW)
        assert _without_durations(rows) == _without_durations(reference_rows(path, provider, LOW))


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_probe_witnesses_give_probe_recall_scores(draw: st.DataObject) -> None:
    from tests.builders.items import output, transcript

    words = ["src/app/main.py", "make test", "error: boom", "decided to", "a_long_name_x", "ok"]
    lines = range(1, draw.draw(st.integers(2, 8)))
    t = transcript(
        [output(i, 4000, summary=draw.draw(st.sampled_from([*words, None]))) for i in lines]
    )
    payloads = {
        i: " ".join(draw.draw(st.lists(st.sampled_from(words), max_size=4)))
        for i in lines
        if draw.draw(st.booleans())
    }
    probes = extract_probes(t, payloads)
    witness = ProbeWitness(probes, t, payloads)
    for _ in range(3):  # witnesses found for one plan serve the next
        elided = draw.draw(st.lists(st.sampled_from(list(lines)), min_size=1, unique=True))
        edits: list[Edit] = [ElideEdit(line_indexes=sorted(elided))]
        carried = draw.draw(st.lists(st.sampled_from(words), max_size=2))
        if carried:  # a card carrying some texts recalls them
            edits.append(InjectDigestEdit(digest=DigestBlock(errors=carried, covers_items=1)))
        plan = CompactionPlan(
            strategy="t",
            rationale="t",
            edits=edits,
            context_tokens_before=1,
            context_tokens_after=0,
        )
        tail = draw.draw(st.sampled_from([None, *lines]))
        assert witness.score(plan, tail) == probe_recall(probes, t, plan, tail, payloads)


def test_eval_reports_its_progress_in_order_and_gives_the_one_shot_rows(
    fixture_copy: Copy,
) -> None:
    """Each strategy's plan, then each check, then the probes: steps only ever go up, and the
    rows are those of planning and verifying each candidate on its own."""
    path = fixture_copy(BIG_FIXTURE)
    policy = LOW.model_copy(update={"keep_recent_tool_outputs": 0})
    steps: list[tuple[int, int, str]] = []
    session = load_session(path, Provider.CLAUDE)
    rows = evaluate_session(session, policy, progress=lambda *step: steps.append(step))
    expected = reference_rows(path, Provider.CLAUDE, policy)
    assert _without_durations(rows) == _without_durations(expected)
    assert sum(row.bytes_after is not None for row in rows) >= 5
    verifying = [what for _, _, what in steps if what.startswith("verify ")]
    assert len(verifying) >= 5
    assert [step[0] for step in steps] == sorted(step[0] for step in steps)
    assert steps[-1] == (2 * len(rows), 2 * len(rows), "done")
