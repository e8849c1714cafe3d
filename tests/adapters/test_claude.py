"""Claude adapter: the oracle, the real fixtures, incremental reading, odd bytes, persistence."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.adapters.files import jsonl
from gobtui.adapters.files.jsonl import LineCursor
from gobtui.adapters.files.timefmt import parse_ts
from gobtui.adapters.providers import reader
from gobtui.adapters.providers.claude import items as claude_items
from gobtui.adapters.providers.claude import state as claude_mod
from gobtui.adapters.providers.claude.parse import parse_transcript
from gobtui.adapters.providers.claude.state import ClaudeState
from gobtui.adapters.providers.reader import FileCursor, advance, open_cursor
from gobtui.core import text as text_mod
from gobtui.core.limits import FULL_READ_MAX_BYTES, USAGE_HISTORY_MAX
from gobtui.core.model import (
    CompactionEvent,
    ContextState,
    Coverage,
    ItemKind,
    Provider,
    SessionSummary,
)
from tests.builders.claude import assistant as bare_assistant
from tests.builders.common import as_jsonl

Copy = Callable[..., Path]

MAROT_MAIN = "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
MAROT_SUB = (
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl"
)
MAROT_COMPACT_AGENT = (
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/"
    "agent-acompact-e1f845.jsonl"
)
SHORT = "claude/marot__spotter__short.jsonl"
TOOL_HEAVY = "claude/marot__spotter__tool_heavy.jsonl"
BRANCH = "oracle/claude-branch.jsonl"
EDGE_CASES = "claude/daaain__claude-code-log__edge_cases.jsonl"
KIND_NAMES = {
    "User": ItemKind.USER,
    "Assistant": ItemKind.ASSISTANT,
    "ToolResult": ItemKind.TOOL_RESULT,
    "ToolCall": ItemKind.TOOL_CALL,
    "System": ItemKind.SYSTEM,
    "Meta": ItemKind.META,
}


def cold(path: Path | str) -> SessionSummary:
    return open_cursor(str(path), Provider.CLAUDE, ClaudeState).summary()


def all_claude_fixtures(root: Path) -> list[Path]:
    return sorted((root / "claude").rglob("*.jsonl"))


# -- the oracle ------------------------------------------------------------------------------


def test_oracle_claude_branch(fixtures_dir: Path) -> None:
    path = fixtures_dir / BRANCH
    manifest = json.loads((fixtures_dir / "oracle/dialects-manifest.json").read_text())
    (expected,) = [f for f in manifest["fixtures"] if f["file"] == "claude-branch.jsonl"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == expected["sha256"]

    transcript = parse_transcript(str(path))
    got = [
        {
            "line": item.line_index,
            "kind": item.kind,
            "active": item.active,
            "elidable_bytes": item.elidable_bytes,
            "parts": item.elidable_parts,
            "uuid": item.uuid,
            "parent": item.parent_uuid,
        }
        for item in transcript.items
    ]
    want = [dict(entry, kind=KIND_NAMES[entry["kind"]]) for entry in expected["items"]]
    assert got == want
    assert transcript.context_tokens() == expected["context_tokens"] == 112
    summary = transcript.summary
    assert summary is not None
    assert summary.context_state is ContextState.REPORTED
    assert summary.components is not None
    assert summary.components.cache_creation_tokens == 0  # absent in live-a: counts 0
    # Dead items carry nothing and say so; the live tool result is fingerprinted.
    by_line = {item.line_index: item for item in transcript.items}
    assert by_line[2].est_tokens == 0 and by_line[2].label.endswith("(dead branch)")
    assert (
        by_line[3].elidable
        and by_line[3].payload_sha256 == hashlib.sha256(("é" * 150 + "tail").encode()).hexdigest()
    )
    assert by_line[3].label == "Read"
    assert all(len(item.label) <= 80 for item in transcript.items)
    # The cold reader agrees with the full parse.
    assert cold(path) == summary


# -- every fixture parses ------------------------------------------------------------------


def test_every_claude_fixture_parses(fixtures_dir: Path) -> None:
    files = all_claude_fixtures(fixtures_dir)
    assert len(files) == 10
    for path in files:
        transcript = parse_transcript(str(path))
        summary = transcript.summary
        assert summary is not None
        data = path.read_bytes()
        nonblank = sum(1 for line in data.split(b"\n") if line.strip())
        assert summary.records + summary.bad_lines == nonblank, path.name
        assert summary.bytes == len(data)
        assert not summary.torn_tail
        assert [i.line_index for i in transcript.items] == sorted(
            {i.line_index for i in transcript.items}
        )
        cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
        if len(data) <= FULL_READ_MAX_BYTES:
            assert cursor.summary() == summary, path.name
        else:
            assert cursor.coverage is Coverage.HEAD_TAIL
            assert cursor.summary().context_tokens == summary.context_tokens


def test_edge_cases_counts_non_objects(fixtures_dir: Path) -> None:
    # 19 non-blank lines: "massive error", 42 and [1] are JSON but not objects;
    # {"silly": "this"} is an object without a type: a record, but no item.
    summary = cold(fixtures_dir / EDGE_CASES)
    assert summary.records == 16
    assert summary.bad_reasons == {"not_object": 3}
    assert summary.bad_lines == 3
    assert summary.warned


def test_schema_drift_top_level_tool_records(fixtures_dir: Path) -> None:
    transcript = parse_transcript(
        str(fixtures_dir / "claude/jazzyalex__agent-sessions__schema_drift.jsonl")
    )
    kinds = {item.line_index: item.kind for item in transcript.items}
    assert kinds[1] is ItemKind.TOOL_CALL and kinds[2] is ItemKind.TOOL_RESULT
    assert kinds[8] is ItemKind.META
    assert 6 not in kinds and 7 not in kinds  # permission-mode, mode
    assert transcript.summary is not None
    assert transcript.summary.context_state is ContextState.ABSENT
    assert transcript.summary.context_tokens is None


# -- hand-derived context figures ----------------------------------------------------------
# Each was read off the file once with a one-off script (orjson over every line, printing the
# four usage numbers of each assistant record), then summed by hand:
#   (input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens)
HAND_DERIVED = [
    # marot short: the live leaf is the user record of line 12; its walk reaches the
    # assistant of line 9 (msg …pYiiQa, the last assistant record): 3 + 13835 + 11515 + 13.
    (SHORT, 25_366, (3, 13_835, 11_515, 13), "claude-opus-4-6"),
    # marot big session: last assistant record, line 1506 (msg …SB7aBF), after the one
    # compact_boundary of line 753: 1 + 7330 + 98729 + 1.
    (MAROT_MAIN, 106_061, (1, 7_330, 98_729, 1), "claude-opus-4-6"),
    # kvsankar session-01 (CC 2.1.152): the only assistant, line 3: 6 + 1045 + 3057 + 16.
    (
        "claude/kvsankar__agent-history__session-01.jsonl",
        4_124,
        (6, 1_045, 3_057, 16),
        "claude-opus-4-7",
    ),
    # kvsankar compaction: line 13 (msg_c006), after the boundary of line 8; no cache keys
    # at all (absent counts 0): 2200 + 0 + 0 + 80.
    (
        "claude/kvsankar__agent-history__session_with_compaction.jsonl",
        2_280,
        (2_200, 0, 0, 80),
        "claude-sonnet-4-20250514",
    ),
    # marot Task subagent: last assistant, line 143 (msg …XqkJyN): 0 + 475 + 70782 + 1.
    (MAROT_SUB, 71_258, (0, 475, 70_782, 1), "claude-sonnet-4-5-20250929"),
    # marot compaction agent: its one assistant, line 4: 3 + 8681 + 164830 + 8.
    (MAROT_COMPACT_AGENT, 173_522, (3, 8_681, 164_830, 8), "claude-opus-4-6"),
    # tool_heavy: line 36, the second record of msg …5jdsym (output grew 25 -> 173):
    # 47 + 1115 + 26504 + 173.
    (TOOL_HEAVY, 27_839, (47, 1_115, 26_504, 173), "claude-opus-4-6"),
]


@pytest.mark.parametrize(("relative", "tokens", "parts", "model"), HAND_DERIVED)
def test_hand_derived_context(
    fixtures_dir: Path, relative: str, tokens: int, parts: tuple[int, ...], model: str
) -> None:
    path = fixtures_dir / relative
    for summary in (cold(path), parse_transcript(str(path)).summary):
        assert summary is not None
        assert summary.context_tokens == tokens
        assert summary.context_state is ContextState.REPORTED
        assert summary.components is not None
        c = summary.components
        got = (c.input_tokens, c.cache_creation_tokens, c.cache_read_tokens, c.output_tokens)
        assert got == parts
        assert summary.model == model
        assert summary.context_window == 200_000


def test_marot_main_details(fixtures_dir: Path) -> None:
    summary = parse_transcript(str(fixtures_dir / MAROT_MAIN)).summary
    assert summary is not None
    assert summary.session_id == "4d5611e5-241a-462a-8d15-5122611a9569"
    assert summary.title is not None and summary.title.startswith("Work on bead spotter-dov.")
    assert len(summary.title) <= 120
    # 139 distinct message.ids among the 254 usage-bearing assistant records (one-off count),
    # the newest USAGE_HISTORY_MAX of them kept.
    assert len(summary.usage_history) == min(139, USAGE_HISTORY_MAX)
    assert summary.usage_history[-1].context_tokens == 106_061
    assert summary.compactions == [
        CompactionEvent(ts=summary.compactions[0].ts, pre_tokens=170_251, trigger="auto")
    ]
    assert summary.records == 1512 and summary.agent_id is None


def test_compaction_fixture_events(fixtures_dir: Path) -> None:
    summary = cold(fixtures_dir / "claude/kvsankar__agent-history__session_with_compaction.jsonl")
    assert [(c.pre_tokens, c.trigger) for c in summary.compactions] == [(155_116, "auto")]
    assert len(summary.usage_history) == 6
    assert summary.title == "Start working on the authentication module"


def test_subagent_identity(fixtures_dir: Path, fixture_copy: Copy) -> None:
    summary = cold(fixtures_dir / MAROT_SUB)
    assert summary.agent_id == "a2898e3"
    assert summary.parent_session_id == "4d5611e5-241a-462a-8d15-5122611a9569"
    assert summary.is_subagent
    assert summary.title is not None and summary.title.startswith("Very thorough exploration.")
    transcript = parse_transcript(str(fixtures_dir / MAROT_SUB))
    assert all(item.active for item in transcript.items)  # incl. parallel result, line 35
    # Outside the subagents/ layout the records still say it: isSidechain with agentId.
    moved = fixture_copy(MAROT_SUB, "agent-a2898e3.jsonl")
    assert cold(moved).agent_id == "a2898e3"
    assert cold(moved).context_tokens == 71_258


def test_parallel_tool_results_stay_live(fixtures_dir: Path) -> None:
    # short.jsonl line 10 answers the Bash tool_use of line 7; the next turn chains from the
    # Glob branch (lines 9, 11), so a bare parent walk would call line 10 dead.
    items = {i.line_index: i for i in parse_transcript(str(fixtures_dir / SHORT)).items}
    assert items[10].active and items[11].active and items[9].active
    assert items[10].label == "Bash"
    # tool_heavy: line 29 is a streaming-split sibling (same message.id) and line 31 its result.
    items = {i.line_index: i for i in parse_transcript(str(fixtures_dir / TOOL_HEAVY)).items}
    assert items[29].active and items[31].active


# -- incremental == full ---------------------------------------------------------------------


@pytest.mark.parametrize("relative", [BRANCH, SHORT, TOOL_HEAVY, MAROT_SUB, EDGE_CASES])
def test_incremental_equals_cold(
    fixtures_dir: Path, relative: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (fixtures_dir / relative).read_bytes()
    monkeypatch.setattr(reader, "FULL_READ_MAX_BYTES", len(data))  # cold reads read it all

    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.lists(st.integers(min_value=0, max_value=len(data)), max_size=12))
    def check(cuts: list[int]) -> None:
        points = [0, *sorted(cuts), len(data)]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.jsonl")
            with open(path, "wb") as handle:
                handle.write(data[: points[1]])
            cursor = open_cursor(path, Provider.CLAUDE, ClaudeState)
            for start, end in itertools.pairwise(points[1:]):
                with open(path, "ab") as handle:
                    handle.write(data[start:end])
                cursor, _ = advance(cursor)
            assert cursor.summary() == cold(path)
            parsed = parse_transcript(path).summary
            assert parsed is not None and cursor.records == parsed.records

    check()


# -- odd bytes -------------------------------------------------------------------------------

USER = {
    "type": "user",
    "uuid": "u1",
    "parentUuid": None,
    "sessionId": "s",
    "isSidechain": False,
    "timestamp": "2026-01-01T00:00:00.000Z",
    "message": {"role": "user", "content": "Hi"},
}
ASSISTANT = {
    "type": "assistant",
    "uuid": "a1",
    "parentUuid": "u1",
    "sessionId": "s",
    "timestamp": "2026-01-01T00:00:01.000Z",
    "message": {
        "id": "m1",
        "model": "claude-opus-4-6",
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello"}],
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 20,
            "cache_read_input_tokens": 30,
            "output_tokens": 4,
        },
    },
}


def test_partial_line_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first, second = as_jsonl(USER), as_jsonl(ASSISTANT)
    path.write_bytes(first + second[:40])
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    assert cursor.summary().torn_tail and cursor.records == 1
    assert cursor.summary().context_state is ContextState.ABSENT
    with path.open("ab") as handle:
        handle.write(second[40:])
    cursor, changed = advance(cursor)
    summary = cursor.summary()
    assert changed and summary.records == 2 and summary.bad_lines == 0
    assert not summary.torn_tail and summary.context_tokens == 64
    assert summary == cold(path)


def test_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(as_jsonl(USER) + as_jsonl(ASSISTANT)[:-30])
    summary = cold(path)
    assert summary.torn_tail and summary.warned
    assert summary.records == 1 and summary.bad_lines == 0
    transcript = parse_transcript(str(path))
    assert transcript.summary is not None and transcript.summary.torn_tail
    assert [i.line_index for i in transcript.items] == [0]


def test_last_line_without_newline_is_a_record(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(as_jsonl(USER) + as_jsonl(ASSISTANT).rstrip(b"\n"))
    summary = cold(path)
    assert not summary.torn_tail and summary.records == 2 and summary.context_tokens == 64


def test_too_long_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gobtui.core.limits

    monkeypatch.setattr(gobtui.core.limits, "MAX_LINE_BYTES", 700)
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 700)
    huge = dict(USER, uuid="u2", message={"role": "user", "content": "x" * 1000})
    path = tmp_path / "s.jsonl"
    path.write_bytes(as_jsonl(USER, huge, ASSISTANT))
    for summary in (cold(path), parse_transcript(str(path)).summary):
        assert summary is not None
        assert summary.bad_reasons == {"too_long": 1}
        assert summary.records == 2 and summary.context_tokens == 64


def test_non_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(as_jsonl(USER) + b'{"type":"user","x":"\xff\xfe"}\n' + as_jsonl(ASSISTANT))
    for summary in (cold(path), parse_transcript(str(path)).summary):
        assert summary is not None
        assert summary.bad_reasons == {"not_utf8": 1} and summary.records == 2
        assert summary.context_tokens == 64


def test_truncation_and_replacement_reread(fixtures_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes((fixtures_dir / TOOL_HEAVY).read_bytes())
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    assert cursor.summary().context_tokens == 27_839
    # Rewritten smaller in place (same inode): read again from 0.
    path.write_bytes((fixtures_dir / SHORT).read_bytes())
    cursor, changed = advance(cursor)
    assert changed
    assert cursor.summary() == cold(path)
    assert cursor.summary().context_tokens == 25_366
    # Replaced by a new file (new inode), bigger this time.
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_bytes((fixtures_dir / MAROT_SUB).read_bytes())
    os.replace(fresh, path)
    cursor, changed = advance(cursor)
    assert changed and cursor.summary().context_tokens == 71_258
    assert cursor.summary() == cold(path)


# -- persistence -----------------------------------------------------------------------------


def restore(cursor: FileCursor) -> FileCursor:
    """A cursor rebuilt from its JSON, as a cache would do."""
    data = orjson.loads(orjson.dumps(cursor.to_json()))
    return FileCursor(
        provider=Provider(data["provider"]),
        path=data["path"],
        inode=data["inode"],
        size=data["size"],
        mtime_ns=data["mtime_ns"],
        lines=LineCursor.from_json(data["lines"]),
        state=ClaudeState.from_json(data["path"], data["state"]),
        records=data["records"],
        bad_reasons=Counter(data["bad_reasons"]),
        coverage=Coverage(data["coverage"]),
        fingerprint=data["fingerprint"],
    )


@pytest.mark.parametrize("relative", [TOOL_HEAVY, MAROT_MAIN, MAROT_SUB, BRANCH])
def test_json_round_trip(fixtures_dir: Path, tmp_path: Path, relative: str) -> None:
    data = (fixtures_dir / relative).read_bytes()
    cut = data.rfind(b"\n", 0, len(data) * 2 // 3) + 17  # mid-line: a partial is carried too
    path = tmp_path / "s.jsonl"
    path.write_bytes(data[:cut])
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    again = restore(cursor)
    assert again.summary() == cursor.summary()
    assert restore(again).state.to_json() == cursor.state.to_json()
    with path.open("ab") as handle:
        handle.write(data[cut:])
    cursor, _ = advance(cursor)
    again, _ = advance(again)
    assert again.summary() == cursor.summary()
    assert again.summary().context_tokens == cold(path).context_tokens


# -- compaction, leaf and usage rules --------------------------------------------------------


def write(path: Path, records: list[dict[str, Any]], mode: str = "wb") -> None:
    with path.open(mode) as handle:
        handle.write(as_jsonl(*records))


BOUNDARY = {
    "type": "system",
    "subtype": "compact_boundary",
    "uuid": "b1",
    "parentUuid": None,
    "logicalParentUuid": "a1",
    "timestamp": "2026-01-01T00:01:00.000Z",
    "content": "Conversation compacted",
    "compactMetadata": {"trigger": "manual", "preTokens": 64},
}
SUMMARY_USER = {
    "type": "user",
    "uuid": "c1",
    "parentUuid": "b1",
    "isCompactSummary": True,
    "timestamp": "2026-01-01T00:01:01.000Z",
    "message": {"role": "user", "content": "This session is being continued"},
}


def assistant(
    uuid: str,
    parent: str | None,
    usage: dict[str, Any],
    msg: str | None = None,
    model: str = "claude-opus-4-6",
    **extra: Any,
) -> dict[str, Any]:
    text = [{"type": "text", "text": "ok"}]
    return bare_assistant(uuid, parent, text, msg or f"m-{uuid}", model, usage, **extra)


def test_compact_boundary_resets_then_new_usage(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, [USER, ASSISTANT, BOUNDARY, SUMMARY_USER])
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    summary = cursor.summary()
    assert summary.context_state is ContextState.RESET
    assert summary.context_tokens is None and summary.components is None
    assert [(c.pre_tokens, c.trigger) for c in summary.compactions] == [(64, "manual")]
    assert summary.title == "Hi"  # the compact summary is no prompt
    items = parse_transcript(str(path)).items
    assert [i.active for i in items] == [False, False, True, True]
    write(path, [assistant("a2", "c1", {"input_tokens": 5, "output_tokens": 1})], "ab")
    cursor, _ = advance(cursor)
    summary = cursor.summary()
    assert summary.context_state is ContextState.REPORTED and summary.context_tokens == 6
    assert [s.context_tokens for s in summary.usage_history] == [64, 6]


def test_null_component_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    usage = {
        "input_tokens": 7,
        "cache_read_input_tokens": None,
        "output_tokens": 2,
        "cache_creation_input_tokens": "12",
    }
    write(path, [USER, assistant("a1", "u1", usage)])
    summary = cold(path)
    assert summary.context_state is ContextState.UNKNOWN and summary.context_tokens == 9
    assert summary.components is not None and summary.components.cache_read_tokens is None


def test_synthetic_and_sidechain_usage_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    real = {"input_tokens": 100, "output_tokens": 1}
    write(
        path,
        [
            USER,
            assistant("a1", "u1", real),
            assistant("a2", "a1", {"input_tokens": 0, "output_tokens": 0}, model="<synthetic>"),
            assistant("x1", "a2", {"input_tokens": 999}, isSidechain=True),
        ],
    )
    summary = cold(path)
    assert summary.context_tokens == 101 and summary.model == "claude-opus-4-6"
    assert len(summary.usage_history) == 1
    items = parse_transcript(str(path)).items
    assert items[-1].label.endswith("(sidechain)") and not items[-1].active


def test_leaf_after_last_prompt(tmp_path: Path) -> None:
    # A last-prompt names a leaf; a live session appends after it, and the newest record wins.
    path = tmp_path / "s.jsonl"
    write(
        path,
        [
            USER,
            assistant("a1", "u1", {"input_tokens": 100}),
            assistant("a2", "u1", {"input_tokens": 200}),  # a rewound sibling
            {"type": "last-prompt", "leafUuid": "a1"},
        ],
    )
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    assert cursor.summary().context_tokens == 100
    write(path, [dict(USER, uuid="u3", parentUuid="a2")], "ab")
    cursor, _ = advance(cursor)
    assert cursor.summary().context_tokens == 200


def test_walk_out_of_window_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_mod, "RECENT_LINK_WINDOW", 8)
    chain: list[dict[str, Any]] = [USER, assistant("a1", "u1", {"input_tokens": 42})]
    for n in range(20):  # usage-free records push a1 out of the window
        chain.append({"type": "progress", "uuid": f"p{n}", "parentUuid": chain[-1]["uuid"]})
    path = tmp_path / "s.jsonl"
    write(path, chain)
    state = open_cursor(str(path), Provider.CLAUDE, ClaudeState).state
    assert isinstance(state, ClaudeState) and len(state.links) == 8
    write(path, [dict(USER, uuid="u9", parentUuid="p19")], "ab")
    summary = cold(path)
    assert summary.context_tokens == 42 and summary.context_state is ContextState.REPORTED


def test_usage_history_bounded_and_deduped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_mod, "USAGE_HISTORY_MAX", 3)
    records: list[dict[str, Any]] = [USER]
    for n in range(6):
        for split in range(2):  # streaming split: two records, one message.id
            records.append(
                assistant(
                    f"a{n}-{split}",
                    records[-1]["uuid"],
                    {"input_tokens": n, "output_tokens": split},
                    msg=f"m{n}",
                )
            )
    path = tmp_path / "s.jsonl"
    write(path, records)
    summary = cold(path)
    assert [s.context_tokens for s in summary.usage_history] == [4, 5, 6]


def test_title_skips_meta_commands_and_tool_results(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = "  Fix   the\n\nbug " + "y" * 300
    write(
        path,
        [
            dict(USER, uuid="m", isMeta=True, message={"role": "user", "content": "meta"}),
            dict(
                USER,
                uuid="c",
                message={"role": "user", "content": "<command-name>/mcp</command-name>"},
            ),
            dict(
                USER,
                uuid="t",
                message={
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "x", "content": "out"}],
                },
            ),
            dict(USER, uuid="s", isSidechain=True, message={"role": "user", "content": "side"}),
            dict(
                USER,
                uuid="r",
                message={"role": "user", "content": [{"type": "text", "text": text}]},
            ),
        ],
    )
    title = cold(path).title
    assert title is not None and title.startswith("Fix the bug yyy")
    assert len(title) == 120 and title.endswith("…")


def test_tool_result_with_image_is_elidable_image_and_all(tmp_path: Path) -> None:
    """Its text and its picture go (the picture as a line naming it: claude.media)."""
    path = tmp_path / "s.jsonl"
    call = {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "message": {
            "content": [{"type": "tool_use", "id": "t1", "name": "Screenshot", "input": {"q": 1}}]
        },
    }
    result = {
        "type": "user",
        "uuid": "r1",
        "parentUuid": "a1",
        "message": {
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [
                        {"type": "text", "text": "z" * 400},
                        {"type": "image", "source": {}},
                    ],
                }
            ]
        },
    }
    write(path, [USER, call, result])
    item = parse_transcript(str(path)).items[-1]
    assert item.kind is ItemKind.TOOL_RESULT and item.active
    assert item.elidable_bytes == 401 and item.image_bytes == 1 and item.elidable
    assert item.label == "Screenshot" and item.summary is not None
    assert item.summary.startswith('Screenshot({"q":1}) => …') and len(item.summary) <= 240


# -- the shortcuts are exact ------------------------------------------------------------------


def stamps() -> st.SearchStrategy[Any]:
    minute = st.sampled_from(["2026-02-12T15:59:", "2026-02-12T16:00:", "2026-02-12T16:01:"])
    rest = st.text(alphabet="0123456789.Z,+:٣", min_size=0, max_size=8)
    shaped = st.builds("{}{:02d}.{:03d}Z".format, minute, st.integers(0, 61), st.integers(0, 999))
    comma = st.builds("{}{:02d},{:03d}Z".format, minute, st.integers(0, 61), st.integers(0, 999))
    return st.one_of(
        shaped, comma, st.builds(str.__add__, minute, rest), st.none(), st.integers(0, 2 * 10**12)
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(stamps(), max_size=30))
def test_timestamp_shortcuts_are_exact(raws: list[Any]) -> None:
    state = ClaudeState("s.jsonl")
    for i, raw in enumerate(raws):
        assert state._ts(raw) == parse_ts(raw)
        state.feed({"type": "progress", "uuid": f"u{i}", "timestamp": raw}, 1)
    parsed = [ts for ts in map(parse_ts, raws) if ts is not None]
    assert (state.first_ts, state.last_ts) == (
        (min(parsed), max(parsed)) if parsed else (None, None)
    )


def test_timestamps_of_another_shape_are_never_skipped() -> None:
    # A decimal comma sorts before the point: such stamps once passed for lying between the
    # oldest and newest seen (and were skipped) although earlier or later than both.
    raws = [
        "2026-02-12T15:59:02.000Z",
        "2026-02-12T15:59:01,001Z",
        "2026-02-12T15:59:01.000Z",
        "2026-02-12T16:00:00.000Z",
        "2026-02-12T16:00:00,001Z",
    ]
    state = ClaudeState("s.jsonl")
    for i, raw in enumerate(raws):
        state.feed({"type": "progress", "uuid": f"u{i}", "timestamp": raw}, 1)
    parsed = [parse_ts(raw) for raw in raws]
    assert (state.first_ts, state.last_ts) == (parse_ts(raws[2]), parse_ts(raws[4]))
    assert (state.first_ts, state.last_ts) == (min(parsed), max(parsed))  # type: ignore[type-var]


def test_restored_state_goes_on_exactly() -> None:
    state = ClaudeState("s.jsonl")
    for i, raw in enumerate(["2026-02-12T15:59:02,000Z", "2026-02-12T15:59:05,500Z"]):
        state.feed({"type": "progress", "uuid": f"u{i}", "timestamp": raw}, 1)
    saved = state.to_json()
    assert saved["last_ts"] == parse_ts("2026-02-12T15:59:05,500Z")
    saved["ts_raw"] = ["2026-02-12T15:59:02,000Z", "2026-02-12T15:59:05,500Z", 24]  # older rows
    back = ClaudeState.from_json("s.jsonl", saved)
    for i, raw in enumerate(["2026-02-12T15:59:01.000Z", "2026-02-12T15:59:05.100Z"]):
        back.feed({"type": "progress", "uuid": f"v{i}", "timestamp": raw}, 1)
    # 05.100 sorts after "05,500" but is earlier: the newest stays the restored one
    assert (back.first_ts, back.last_ts) == (
        parse_ts("2026-02-12T15:59:01.000Z"),
        parse_ts("2026-02-12T15:59:05,500Z"),
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab é\n\t  "), max_size=1200), st.integers(1, 250))
def test_collapsing_shortcuts_are_exact(text: str, limit: int) -> None:
    flat = " ".join(text[: limit * 4].split())
    assert text_mod.collapse(text, limit) == text_mod.cut(flat, limit)
    tail = " ".join(text.split())
    assert claude_items._collapsed_tail(text, limit) == (
        tail if len(tail) <= limit else "…" + tail[-limit:]
    )
    shown = text_mod.cut(orjson.dumps({"text": text}).decode(), claude_items.TOOL_INPUT_CHARS)
    assert claude_items._shown_input({"text": text}) == shown


def test_item_kinds_are_what_becomes_an_item() -> None:
    # ITEM_KINDS says which record types become an item: each exactly one.
    builder = claude_items.ItemBuilder()
    kinds = [*sorted(claude_items.ITEM_KINDS), "progress", "summary", "last-prompt", None, 3]
    for index, kind in enumerate(kinds):
        builder.add(index, {"type": kind, "message": {"content": "x"}}, kind, f"u{index}", None)
    assert [i.line_index for i in builder.items] == list(range(len(claude_items.ITEM_KINDS)))


def test_a_session_past_200k_has_the_1m_window(tmp_path: Path) -> None:
    """1M sessions often carry a model id with no [1m] marker: 419,860 of 200k read 210 %."""
    from tests.builders.sessions import claude_one_million

    session = claude_one_million()
    session.model = "claude-opus-4-6"
    for record in session.records:
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict):
            message["model"] = "claude-opus-4-6"
    path = session.write(tmp_path / "projects")
    summary = parse_transcript(str(path)).summary
    assert summary is not None and summary.context_tokens is not None
    assert summary.context_tokens > 400_000
    assert summary.context_window == 1_000_000
    assert summary.occupancy is not None and summary.occupancy < 1
    from gobtui.core.model import claude_context_window

    small = claude_context_window("claude-opus-4-6", 150_000)
    assert (small, claude_context_window("claude-opus-4-6[1m]")) == (200_000, 1_000_000)


@pytest.mark.parametrize("before_prompt", [0, 20_000])
def test_a_cold_head_reads_on_until_it_knows_the_title(tmp_path: Path, before_prompt: int) -> None:
    """A big file's head is read a little first (HEAD_FIRST_BYTES), and further only while
    its id, folder and title are not known: a prompt after 20 KB of snapshots still titles
    it, as the full parse does."""
    from tests.builders.sessions import claude_work_session

    session = claude_work_session(120_000, "head")
    lines = session.text().splitlines(keepends=True)
    filler = {"type": "file-history-snapshot", "messageId": "m", "snapshot": {"x": "y" * 900}}
    padding = "".join(json.dumps(filler) + "\n" for _ in range(before_prompt // 920))
    path = tmp_path / f"{session.session_id}.jsonl"
    path.write_text(padding + "".join(lines))
    assert path.stat().st_size > FULL_READ_MAX_BYTES
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    assert cursor.coverage is Coverage.HEAD_TAIL
    whole = parse_transcript(str(path)).summary
    assert whole is not None and whole.title
    got = cursor.summary()
    assert (got.title, got.cwd, got.session_id) == (whole.title, whole.cwd, whole.session_id)
    assert got.context_tokens == whole.context_tokens


def test_lifetime_usage_counts_each_response_once(tmp_path: Path) -> None:
    def assistant(n: int, msg: str, out: int) -> dict[str, Any]:
        usage = {"input_tokens": 10, "cache_creation_input_tokens": 100,
                 "cache_read_input_tokens": 1000 * n, "output_tokens": out}  # fmt: skip
        return {
            "type": "assistant", "uuid": f"u{n}-{out}", "parentUuid": None, "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"id": msg, "model": "claude-opus-4-6", "role": "assistant",
                        "content": [{"type": "text", "text": "x"}], "usage": usage},
        }  # fmt: skip

    # one response split into two records (the usage repeated, its output grown), then another
    records = [assistant(1, "m1", 5), assistant(1, "m1", 9), assistant(2, "m2", 7)]
    path = tmp_path / "life.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    cursor = open_cursor(str(path), Provider.CLAUDE, ClaudeState)
    life = cursor.summary().lifetime
    assert life is not None
    assert (life.input_tokens, life.cache_creation_tokens) == (20, 200)
    assert (life.cache_read_tokens, life.output_tokens) == (3000, 16)
    state = cursor.state
    assert isinstance(state, ClaudeState)
    again = ClaudeState.from_json(str(path), state.to_json())
    assert again.life == state.life
