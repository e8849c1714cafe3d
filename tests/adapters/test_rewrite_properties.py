"""Properties of adapters.rewrite.apply over generated Claude and Codex transcript files.

An admitted plan never grows the file, never changes a line it does not elide, never touches
the protected tail, and leaves valid JSONL whose tool calls and results still pair.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.providers.interface import RewriteCode, RewriteError
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.providers.rewrite_records import split_lines, stub_output
from gobtui.adapters.rewrite.apply import apply_plan, rewrite_identity
from gobtui.core.admission import admit, protected_lines
from gobtui.core.edits import CompactionPlan, ElideEdit
from gobtui.core.model import Provider, Transcript
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies import STRATEGIES, plan_for
from gobtui.core.strategies.common import candidates
from tests.adapters.rewrite_checks import check_rewritten
from tests.builders.generated import claude_files, codex_files

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
files = st.sampled_from([Provider.CLAUDE, Provider.CODEX]).flatmap(
    lambda provider: (claude_files() if provider is Provider.CLAUDE else codex_files()).map(
        lambda data: (provider, data)
    )
)
policies = st.builds(
    PolicyConfig,
    trigger_tokens=st.just(1),
    floor_tokens=st.just(0),
    min_savings_tokens=st.just(0),
    keep_recent_tool_outputs=st.integers(0, 3),
)


def _parse(directory: str, data: bytes, provider: Provider, name: str = "in.jsonl") -> Transcript:
    path = Path(directory) / name
    path.write_bytes(data)
    return parse_transcript(provider, str(path))


@SETTINGS
@given(files, policies)
def test_admitted_plans_apply_cleanly(file: tuple[Provider, bytes], policy: PolicyConfig) -> None:
    provider, data = file
    with tempfile.TemporaryDirectory() as directory:
        transcript = _parse(directory, data, provider)
        protected = protected_lines(transcript, policy.keep_recent_tool_outputs)
        for strategy in STRATEGIES:
            plan = plan_for(strategy, transcript, policy)
            if not isinstance(plan, CompactionPlan) or not admit(plan, transcript, policy).admitted:
                # elide finds work wherever an unprotected output frees something
                assert strategy != "elide" or not candidates(transcript, policy)
                continue
            try:
                out = apply_plan(data, provider, plan, transcript)
            except RewriteError as error:
                # a control edit writes nothing; a card may outweigh what a small plan frees
                expected = RewriteCode.CONTROL_EDIT if plan.is_control else RewriteCode.GREW
                assert error.code is expected
                assert plan.is_control or plan.digest is not None
                continue
            check_rewritten(
                data, out, provider, plan, transcript, Path(directory) / "out.jsonl", protected
            )


@SETTINGS
@given(files, st.data())
def test_any_elidable_subset_elides_in_place(
    file: tuple[Provider, bytes], data: st.DataObject
) -> None:
    provider, source = file
    with tempfile.TemporaryDirectory() as directory:
        transcript = _parse(directory, source, provider)
        elidable = [item.line_index for item in transcript.items if item.elidable]
        chosen = data.draw(st.lists(st.sampled_from(elidable), min_size=1, unique=True))
        template = data.draw(st.sampled_from(["[elided]", "[{kind}: {bytes} bytes]", "{bytes}"]))
        plan = CompactionPlan(
            strategy="test",
            rationale="test",
            edits=[ElideEdit(line_indexes=sorted(chosen), stub_template=template)],
            context_tokens_before=1,
            context_tokens_after=0,
        )
        out = apply_plan(source, provider, plan, transcript)
        check_rewritten(source, out, provider, plan, transcript, Path(directory) / "out.jsonl")


@SETTINGS
@given(files, st.sampled_from(["11111111-2222-4333-8444-555555555555", "fork-2", "X"]))
def test_identity_changes_only_the_session_id(file: tuple[Provider, bytes], new_id: str) -> None:
    provider, data = file
    out = bytes(rewrite_identity(data, provider, new_id))  # built in a bytearray
    assert out.endswith(b"\n") == data.endswith(b"\n")
    src, dst = split_lines(data), split_lines(out)
    assert len(src) == len(dst)
    for before, after in zip(src, dst, strict=True):
        record = decode_line(before.strip())
        assert isinstance(record, dict)
        if provider is Provider.CLAUDE and "sessionId" in record:
            record["sessionId"] = new_id
        elif provider is Provider.CODEX and record.get("type") == "session_meta":
            payload = record["payload"]
            for key in ("id", "session_id"):
                if key in payload:
                    payload[key] = new_id
        else:
            assert after == before
            continue
        assert orjson.loads(after) == record
    with tempfile.TemporaryDirectory() as directory:
        assert _parse(directory, out, provider).session_id == new_id


@SETTINGS
@given(files)
def test_split_lines_indexes_as_the_reader_does(file: tuple[Provider, bytes]) -> None:
    provider, data = file
    lines = split_lines(data)
    assert b"".join(lines) == data
    with tempfile.TemporaryDirectory() as directory:
        transcript = _parse(directory, data, provider)
    assert transcript.items
    for item in transcript.items:
        record = decode_line(lines[item.line_index].strip())
        assert isinstance(record, dict)
        assert record.get("uuid") == item.uuid or item.uuid is None


TEXTS = st.text(
    alphabet=st.sampled_from(["a", "é", '"', "\\", "\n", "\x01", "\u2028", "😀", " "]),
    max_size=40,
)
OUTPUTS = st.one_of(
    TEXTS,
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, TEXTS),
            st.builds(lambda t: {"type": "image", "source": t}, TEXTS),
            st.builds(lambda t: {"type": "text", "text": 3, "note": t}, TEXTS),
        ),
        max_size=4,
    ),
    st.integers(),
)
STUBS = st.one_of(TEXTS, TEXTS.map(lambda t: t * 20))


def stub_by_serializing(value: object, stub: str) -> object | None:
    """stub_output as it was: both sides always serialized."""
    replaced: object
    if isinstance(value, str):
        if not value:
            return None
        replaced = stub
    elif isinstance(value, list):
        positions = [
            i for i, b in enumerate(value) if b.get("type") == "text" and type(b["text"]) is str
        ]
        if sum(len(value[i]["text"].encode()) for i in positions) == 0:
            return None
        replaced = list(value)
        for rank, i in enumerate(positions):
            replaced[i] = {**value[i], "text": stub if rank == 0 else ""}
    else:
        return None
    return None if len(orjson.dumps(replaced)) >= len(orjson.dumps(value)) else replaced


@settings(max_examples=400, deadline=None)
@given(OUTPUTS, STUBS)
def test_stub_output_decides_as_serializing_both_sides_does(value: object, stub: str) -> None:
    """The size bound that spares serializing a big output never changes the answer."""
    got = stub_output(value, lambda _n_bytes: stub, frozenset({"text"}))
    assert got == stub_by_serializing(value, stub)
