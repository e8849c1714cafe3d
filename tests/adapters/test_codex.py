"""Codex adapter: the oracle, real fixtures (figures derived by hand), incremental reads."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.adapters.files.jsonl import LineCursor
from gobtui.adapters.providers import reader
from gobtui.adapters.providers.codex.parse import parse_transcript
from gobtui.adapters.providers.codex.skim import OPAQUE_PAYLOADS, tail_loads
from gobtui.adapters.providers.codex.state import CodexState, session_id_from_path
from gobtui.adapters.providers.reader import FileCursor, advance, open_cursor
from gobtui.core import text as text_mod
from gobtui.core.limits import HEAD_SCAN_BYTES, TITLE_MAX_CHARS, USAGE_HISTORY_MAX
from gobtui.core.model import ContextState, Coverage, ItemKind, Provider
from tests.builders.codex import record
from tests.builders.common import write_jsonl

Copy = Callable[..., Path]
L_04 = "codex/madshn__localpush__rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
L_34 = "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
L_38 = "codex/madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
KV_01 = "codex/kvsankar__agent-history__session-01.jsonl"
KV_COMPACT = "codex/kvsankar__agent-history__session_with_compaction.jsonl"
RATE = "codex/jazzyalex__agent-sessions__codex_053_rate_limit.jsonl"
LEGACY = "codex/jazzyalex__agent-sessions__codex_050_legacy.jsonl"
SMALL = "codex/jazzyalex__agent-sessions__small.jsonl"
WINDOW = "oracle/codex-window.jsonl"


def cold(path: Path) -> FileCursor:
    """A whole read from 0 (what the incremental reader converges to); head+tail cold reads
    of big files are tested on their own."""
    return open_cursor(str(path), Provider.CODEX, CodexState, full=True)


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold reads of the (up to 1 MB) fixtures read every line, not a head and a tail."""
    monkeypatch.setattr(reader, "FULL_READ_MAX_BYTES", 4 * 1024 * 1024)


def token_count(inp: int, out: int, cached: int = 0, window: int | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "last_token_usage": {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "output_tokens": out,
        }
    }
    if window is not None:
        info["model_context_window"] = window
    return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}


# -- the oracle ---------------------------------------------------------------------------------


def test_oracle_dialects_manifest(fixtures_dir: Path) -> None:
    manifest = json.loads((fixtures_dir / "oracle/dialects-manifest.json").read_text())
    entry = next(f for f in manifest["fixtures"] if f["file"] == "codex-window.jsonl")
    path = fixtures_dir / WINDOW
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]
    transcript = parse_transcript(str(path))
    kinds = {k.name.replace("_", "").lower(): k for k in ItemKind}
    got = {item.line_index: item for item in transcript.items}
    assert sorted(got) == [e["line"] for e in entry["items"]]
    for expected in entry["items"]:
        item = got[expected["line"]]
        assert item.kind is kinds[expected["kind"].lower()], expected
        assert item.active == expected["active"], expected
        assert item.elidable_bytes == expected["elidable_bytes"], expected
        assert item.elidable_parts == expected["parts"], expected
        assert item.uuid == expected["uuid"] and item.parent_uuid == expected["parent"]
    assert transcript.context_tokens() == entry["context_tokens"] == 211
    assert transcript.summary is not None
    # the token_usage_record (100 + 7) came first and is overridden by the token_count
    assert [s.context_tokens for s in transcript.summary.usage_history] == [107, 211]


# -- real fixtures ------------------------------------------------------------------------------


@pytest.mark.usefixtures("whole_reads")
def test_every_fixture_parses_and_agrees_with_a_cold_read(fixtures_dir: Path) -> None:
    paths = [*sorted((fixtures_dir / "codex").glob("*.jsonl")), fixtures_dir / WINDOW]
    assert len(paths) == 12
    for path in paths:
        transcript = parse_transcript(str(path))
        cursor = cold(path)
        assert transcript.summary is not None
        assert cursor.summary() == transcript.summary, path
        assert transcript.summary.bad_lines == 0 and not transcript.summary.torn_tail


def test_localpush_12_41_04(fixtures_dir: Path) -> None:
    s = cold(fixtures_dir / L_04).summary()
    # line 415, the last token_count: last_token_usage input 108869 (cached 108288) + output 6189
    assert (s.context_tokens, s.context_window) == (108869 + 6189, 258400)
    assert s.components is not None and s.components.cache_read_tokens == 108288
    # 55 token_counts carry info; 27 repeat the one before: 28 distinct samples
    assert len(s.usage_history) == 28
    assert s.session_id == "019c8a4d-8f45-7010-8b5d-7fad920aa6f9"
    assert s.model == "gpt-5.3-codex" and s.context_state is ContextState.REPORTED
    # lines 3/4 are injected context; the user_message event (line 9) is the prompt typed
    assert s.title == "[REDACTED_MESSAGE len=115 sha=a83ebe6f]"


@pytest.mark.usefixtures("whole_reads")
def test_localpush_12_54_34_compaction_then_zero_usage(
    fixtures_dir: Path, fixture_copy: Copy
) -> None:
    s = cold(fixtures_dir / L_34).summary()
    # line 1784: 209950 + 2184 = 212134 is the last real usage before the compacted line 1787;
    # line 1786 (before it) and 1790 (after it) have an all-zero last_token_usage: ignored.
    assert [(c.pre_tokens, c.trigger) for c in s.compactions] == [(212134, None)]
    # the last line with usage, 2720: input 162073 (cached 157696) + output 293
    assert (s.context_tokens, s.context_window) == (162073 + 293, 258400)
    assert s.context_state is ContextState.REPORTED
    # 286 distinct non-zero usages, the newest kept
    assert len(s.usage_history) == USAGE_HISTORY_MAX
    assert s.usage_history[-1].context_tokens == 162366
    assert all(sample.context_tokens > 0 for sample in s.usage_history)
    # cut just after the zero token_count of line 1790: still reset, not 0
    path = fixture_copy(L_34)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:1791]))
    cut = cold(path).summary()
    assert cut.context_state is ContextState.RESET and cut.context_tokens is None
    assert cut.compactions[0].pre_tokens == 212134 and cut.context_window == 258400
    items = parse_transcript(str(fixture_copy(L_34, "again.jsonl"))).items
    assert all(not i.active and i.est_tokens == 0 for i in items if i.line_index < 1787)
    assert all(i.active for i in items if i.line_index >= 1787)


def test_localpush_13_19_38_truncated_session(fixtures_dir: Path) -> None:
    s = cold(fixtures_dir / L_38).summary()
    # line 12 is `info: null`; line 18: 34469 (cached 3456) + 431; window from task_started (7)
    assert (s.context_tokens, s.context_window, len(s.usage_history)) == (34900, 258400, 1)
    # the file ends on a function_call with no output
    assert parse_transcript(str(fixtures_dir / L_38)).items[-1].kind is ItemKind.TOOL_CALL


def test_kvsankar_session_01(fixtures_dir: Path) -> None:
    s = cold(fixtures_dir / KV_01).summary()
    # line 9: 22539 (cached 20864) + 10; window 258400 on task_started (line 1) and line 9
    assert (s.context_tokens, s.context_window) == (22549, 258400)
    assert (s.model, s.cwd) == ("gpt-5.5", "/tmp/agent-history-real-agent/codex/workspace")


def test_window_from_task_started_alone(fixture_copy: Copy) -> None:
    path = fixture_copy(KV_01)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:9]))
    s = cold(path).summary()
    assert (s.context_window, s.context_tokens, s.context_state) == (
        258400,
        None,
        ContextState.ABSENT,
    )


def test_kvsankar_compaction(fixtures_dir: Path) -> None:
    s = cold(fixtures_dir / KV_COMPACT).summary()
    # no usage before the compacted line 12; line 19: 2000 (cached 500) + 1000, window 128000
    assert [c.pre_tokens for c in s.compactions] == [None]
    assert (s.context_tokens, s.context_window) == (3000, 128000)
    # compacted without replacement_history: one not-elidable ToolResult
    items = parse_transcript(str(fixtures_dir / KV_COMPACT)).items
    compacted = next(i for i in items if i.line_index == 12)
    assert (compacted.kind, compacted.elidable_bytes, compacted.elidable_parts) == (
        ItemKind.TOOL_RESULT,
        None,
        0,
    )


def test_rate_limit_and_legacy(fixtures_dir: Path) -> None:
    s = cold(fixtures_dir / RATE).summary()
    # line 1: 12091 + 182; line 2 (`info: null`) changes nothing
    assert (s.context_tokens, s.context_window) == (12273, 258400)
    legacy = cold(fixtures_dir / LEGACY).summary()  # info {"prompt", "completion"}, then null
    assert (legacy.context_tokens, legacy.context_state) == (None, ContextState.ABSENT)
    assert legacy.session_id == "test-legacy-session"


def test_jazzyalex_small(fixtures_dir: Path) -> None:
    s = cold(fixtures_dir / SMALL).summary()
    assert s.session_id == "019fc8be-3658-7ca3-9e29-000000000000"  # first of 7 session_metas
    assert s.agent_id is None  # the later subagent metas are spawned threads, not this file
    # 6 compactions: the first after line 21 (16341 + 81), the others with no usage before
    assert [c.pre_tokens for c in s.compactions] == [16422, None, None, None, None, None]
    # line 86's all-zero usage after a compaction keeps it reset; zero windows are ignored
    assert (s.context_state, s.context_tokens, s.context_window) == (
        ContextState.RESET,
        None,
        258400,
    )
    assert s.model == "gpt-5.6-sol" and s.title == "List the files"
    assert s.last_ts == s.first_ts  # "[trimmed for fixture]" timestamps are not times


# -- synthetic shapes ---------------------------------------------------------------------------


def test_duplicate_token_counts_do_not_double(tmp_path: Path) -> None:
    tc = token_count(1000, 50, window=258400)
    records = [tc, tc, {"type": "response_item", "payload": {"type": "message"}}, tc]
    s = cold(write_jsonl(tmp_path / "dup.jsonl", [*records, token_count(2000, 5)])).summary()
    assert [u.context_tokens for u in s.usage_history] == [1050, 2005]


def test_unknown_usage_shapes(tmp_path: Path) -> None:
    odd = {"type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": 5}}}
    half = {
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {"last_token_usage": {"input_tokens": None, "output_tokens": 7}},
        },
    }
    s = cold(write_jsonl(tmp_path / "odd.jsonl", [token_count(10, 1), odd])).summary()
    assert (s.context_tokens, s.context_state) == (11, ContextState.REPORTED)
    s = cold(write_jsonl(tmp_path / "half.jsonl", [half])).summary()
    assert (s.context_tokens, s.context_state) == (7, ContextState.UNKNOWN)


def test_subagent_and_identity(tmp_path: Path) -> None:
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-1", "depth": 1}}}
    metas = [
        {"type": "session_meta", "payload": {"id": "child", "cwd": "/a", "source": spawn}},
        {"type": "session_meta", "payload": {"id": "other", "cwd": "/b", "source": "cli"}},
        {"type": "turn_context", "payload": {"cwd": "/c", "model": "gpt-5.5"}},
    ]
    s = cold(write_jsonl(tmp_path / "sub.jsonl", metas)).summary()
    assert (s.session_id, s.agent_id, s.parent_session_id, s.cwd) == (
        "child",
        "child",
        "parent-1",
        "/c",
    )
    meta = {
        "type": "session_meta",
        "payload": {"session_id": "c2", "parent_thread_id": "p2", "source": {"subagent": "review"}},
    }
    s = cold(write_jsonl(tmp_path / "sub2.jsonl", [meta])).summary()
    assert (s.session_id, s.agent_id, s.parent_session_id) == ("c2", "c2", "p2")
    uuid = "019c8a70-dda7-7f33-98ea-f30553347322"
    assert session_id_from_path(f"/x/rollout-2026-02-23T13-19-38-{uuid}.jsonl") == uuid
    assert (
        cold(write_jsonl(tmp_path / "plain.jsonl", [token_count(1, 1)])).summary().session_id
        == "plain"
    )


def test_title_rules(tmp_path: Path) -> None:
    def user(text: str) -> dict[str, Any]:
        content = [{"type": "input_text", "text": text}]
        return {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": content},
        }

    long = "fix   the\nbug " + "x" * 300
    records = [
        user("<environment_context>cwd</environment_context>"),
        user("# AGENTS.md rules"),
        user(long),
    ]
    title = cold(write_jsonl(tmp_path / "t.jsonl", records)).summary().title
    assert title is not None and title.startswith("fix the bug x") and title.endswith("…")
    assert len(title) == TITLE_MAX_CHARS
    event = {"type": "event_msg", "payload": {"type": "user_message", "message": "typed  prompt"}}
    assert (
        cold(write_jsonl(tmp_path / "e.jsonl", [*records, event])).summary().title == "typed prompt"
    )


def test_items_by_shape(tmp_path: Path) -> None:
    big = "é" * 200  # 400 UTF-8 bytes
    wrapped = json.dumps({"output": "y" * 300, "metadata": {"exit_code": 0}})

    def ri(**payload: Any) -> dict[str, Any]:
        return {"type": "response_item", "payload": payload}

    records = [
        ri(type="message", role="developer", content="rules"),
        ri(
            type="message",
            role="assistant",
            content=[{"type": "output_text", "text": " hi  there "}],
        ),
        ri(
            type="local_shell_call",
            call_id="c1",
            action={"type": "exec", "command": ["bash", "-lc", "ls"]},
        ),
        ri(type="function_call_output", call_id="c1", output=big),
        ri(type="custom_tool_call", call_id="c2", name="apply_patch", input="*** Begin Patch"),
        ri(type="custom_tool_call_output", call_id="c2", output=wrapped),
        ri(type="function_call_output", tool_call_id="c3", output="short"),
        ri(
            type="reasoning",
            summary=[{"type": "summary_text", "text": "think"}],
            encrypted_content="zz",
        ),
        ri(type="agent_message", message="done"),
        ri(type="ghost_snapshot", ghost_commit={"id": "abc"}),
        {"type": "event_msg", "payload": {"type": "agent_message", "message": "dup"}},
    ]
    path = write_jsonl(tmp_path / "items.jsonl", records)
    path.write_bytes(path.read_bytes() + b"not json\n")
    t = parse_transcript(str(path))
    kinds = " ".join(i.kind.value for i in t.items)
    assert kinds == (
        "system assistant tool_call tool_result tool_call tool_result tool_result reasoning"
        " assistant meta"
    )
    by_line = {i.line_index: i for i in t.items}
    assert by_line[1].summary == "hi there"
    assert by_line[2].label == "bash" and by_line[2].tool_use_ids == ("c1",)
    shell_out = by_line[3]
    assert (shell_out.elidable_bytes, shell_out.elidable_parts, shell_out.label) == (400, 1, "bash")
    assert shell_out.payload_sha256 == hashlib.sha256(big.encode()).hexdigest()
    assert shell_out.summary is not None and shell_out.summary.startswith("bash(bash -lc ls) => …é")
    assert len(shell_out.summary) <= 240
    patch_out = by_line[5]
    assert patch_out.elidable_bytes == len(wrapped)  # a JSON-encoded string counts as a string
    assert patch_out.summary is not None and patch_out.summary.startswith(
        "apply_patch(*** Begin Patch) => …y"
    )
    assert by_line[6].tool_use_ids == ("c3",) and by_line[6].elidable_bytes is None
    assert by_line[7].summary == "think" and by_line[9].label == "ghost_snapshot"
    assert all(i.active and i.est_tokens > 0 for i in t.items)
    assert t.summary is not None and t.summary.bad_reasons == {"not_json": 1}


def test_compacted_item_parts(tmp_path: Path) -> None:
    history = [
        {"type": "function_call_output", "call_id": "a", "output": "a" * 300},
        {
            "type": "function_call_output",
            "call_id": "b",
            "output": [{"type": "input_text", "text": "b" * 400}],
        },
        {"type": "function_call_output", "call_id": "c", "output": "c" * 100},
        {
            "type": "function_call_output",
            "call_id": "d",
            "output": [
                {"type": "input_image", "image_url": "x"},
                {"type": "input_text", "text": "d" * 999},
            ],
        },
    ]
    records = [
        {
            "type": "response_item",
            "payload": {"type": "function_call", "call_id": "z", "name": "old"},
        },
        {"type": "compacted", "payload": {"message": "", "replacement_history": history}},
    ]
    t = parse_transcript(str(write_jsonl(tmp_path / "c.jsonl", records)))
    old, compacted = t.items
    assert (old.active, old.est_tokens) == (False, 0)
    assert (compacted.elidable_bytes, compacted.elidable_parts, compacted.active) == (700, 2, True)
    assert compacted.est_tokens == -(-len(orjson.dumps(history)) // 4)


# -- incremental reading ------------------------------------------------------------------------


def split_points(size: int) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(1, size - 1), max_size=12).map(lambda xs: sorted(set(xs)))


def check_incremental(data: bytes, cuts: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rollout.jsonl"
        bounds = [0, *cuts, len(data)]
        path.write_bytes(data[: bounds[1]])
        cursor = cold(path)
        for start, end in itertools.pairwise(bounds[1:]):
            with path.open("ab") as handle:
                handle.write(data[start:end])
            cursor, _changed = advance(cursor)
        assert cursor.summary() == cold(path).summary()


@pytest.mark.parametrize("name", [WINDOW, KV_COMPACT, L_04])
def test_incremental_equals_full(fixtures_dir: Path, name: str) -> None:
    data = (fixtures_dir / name).read_bytes()

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(split_points(len(data)))
    def run(cuts: list[int]) -> None:
        check_incremental(data, cuts)

    run()


def test_partial_lines_torn_tail_truncation_replacement(fixtures_dir: Path, tmp_path: Path) -> None:
    data = (fixtures_dir / KV_COMPACT).read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1  # start of the final token_count line
    path = tmp_path / "live.jsonl"
    path.write_bytes(data[: last + 40])
    cursor = cold(path)
    s = cursor.summary()
    assert s.torn_tail and s.context_state is ContextState.RESET and s.records == 19
    with path.open("ab") as handle:
        handle.write(data[last + 40 :])
    cursor, changed = advance(cursor)
    assert changed and not cursor.summary().torn_tail and cursor.summary().context_tokens == 3000
    assert advance(cursor)[1] is False
    path.write_bytes(data[:last])  # truncated: read again from 0
    cursor, _ = advance(cursor)
    assert cursor.summary() == cold(path).summary()
    assert cursor.summary().context_tokens is None
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes((fixtures_dir / KV_01).read_bytes())
    os.replace(replacement, path)  # a new inode
    cursor, _ = advance(cursor)
    assert cursor.summary().context_tokens == 22549 and cursor.summary().session_id.startswith(
        "019e9625"
    )


@pytest.mark.usefixtures("whole_reads")
def test_state_json_round_trip_continues(fixtures_dir: Path, tmp_path: Path) -> None:
    data = (fixtures_dir / L_34).read_bytes()
    half = data.find(b"\n", len(data) // 2) + 1
    path = tmp_path / "rt.jsonl"
    path.write_bytes(data[:half])
    cursor = cold(path)
    saved = orjson.loads(orjson.dumps(cursor.to_json()))
    restored = FileCursor(
        provider=Provider.CODEX,
        path=str(path),
        inode=saved["inode"],
        size=saved["size"],
        mtime_ns=saved["mtime_ns"],
        lines=LineCursor.from_json(saved["lines"]),
        state=CodexState.from_json(str(path), saved["state"]),
        records=saved["records"],
        coverage=Coverage(saved["coverage"]),
        fingerprint=saved["fingerprint"],
    )
    assert restored.summary() == cursor.summary()
    with path.open("ab") as handle:
        handle.write(data[half:])
    restored, _ = advance(restored)
    assert restored.summary() == cold(path).summary()


def test_big_file_cold_read_is_head_and_tail(fixtures_dir: Path, tmp_path: Path) -> None:
    filler = orjson.dumps(
        {
            "timestamp": "2026-02-25T00:00:00.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "z" * 900}],
            },
        }
    )
    final = orjson.dumps(
        {"timestamp": "2026-02-25T01:00:00.000Z", **token_count(123456, 789, window=258400)}
    )
    path = tmp_path / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    path.write_bytes((fixtures_dir / L_34).read_bytes() + (filler + b"\n") * 2500 + final + b"\n")
    assert path.stat().st_size > 3_000_000
    s = open_cursor(str(path), Provider.CODEX, CodexState).summary()
    assert s.coverage is Coverage.HEAD_TAIL
    assert (s.context_tokens, s.context_window, s.context_state) == (
        124245,
        258400,
        ContextState.REPORTED,
    )
    assert s.session_id == "019c8a59-e9dd-71f0-9ae3-4079fe9726a9" and s.title is not None
    assert s.records < 2722 + 2501  # the middle was skipped
    assert parse_transcript(str(path)).context_tokens() == 124245


def test_cold_read_takes_the_model_from_a_turn_context_far_behind_the_tail(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """The usage is in the last lines; the turn_context naming the model in use is ~300 KB
    earlier: its one line is found by its bytes and decoded, the records around it are not,
    and a turn_context further back (an older model) is not the one taken."""

    def line(ts: str, record: dict[str, Any]) -> bytes:
        return orjson.dumps({"timestamp": ts, **record}) + b"\n"

    def context(model: str) -> bytes:
        turn = {"type": "turn_context", "payload": {"cwd": "/w", "model": model}}
        return line("2026-02-25T00:30:00.000Z", turn)

    filler = line(
        "2026-02-25T00:00:00.000Z",
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "z" * 900}],
            },
        },
    )
    final = line("2026-02-25T01:00:00.000Z", token_count(123456, 789, window=258400))
    path = tmp_path / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    head = (fixtures_dir / L_34).read_bytes()
    body = filler * 1000 + context("gpt-old") + filler * 10 + context("gpt-new") + filler * 300
    path.write_bytes(head + body + final)
    cursor = open_cursor(str(path), Provider.CODEX, CodexState)
    s = cursor.summary()
    assert s.coverage is Coverage.HEAD_TAIL
    full = open_cursor(str(path), Provider.CODEX, CodexState, full=True).summary()
    assert s.model == "gpt-new" == full.model
    assert s.context_tokens == 124245
    tail_records = 1 + 32 * 1024 // len(filler)
    head_records = head[:HEAD_SCAN_BYTES].count(b"\n")
    assert s.records <= head_records + 1 + tail_records  # the head, that line, the tail


# -- the shortcuts are exact ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab é\n\t  "), max_size=1200), st.integers(1, 250))
def test_cut_shortcut_is_exact(text: str, limit: int) -> None:
    flat = " ".join(text[: 4 * limit].split())
    want = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    assert text_mod.collapse(text, limit) == want


def _rollout_line(
    rtype: str, payload: dict[str, Any], ts: str = "2026-02-23T12:41:05.123Z"
) -> bytes:
    return orjson.dumps(record(rtype, payload, ts))


@pytest.mark.parametrize(
    ("rtype", "ptype"),
    sorted((rtype, ptype) for rtype, types in OPAQUE_PAYLOADS.items() for ptype in types),
)
def test_a_skimmed_line_leaves_the_state_as_the_whole_record_does(rtype: str, ptype: str) -> None:
    # A payload holding every field some other type is read for: if the summary came to read
    # one of them for this type, the skimmed state would differ.
    payload = {
        "type": ptype,
        "role": "user",
        "content": [{"type": "input_text", "text": "[gobtui state card] look"}],
        "message": "a prompt",
        "info": {"last_token_usage": {"input_tokens": 9, "output_tokens": 1}},
        "model_context_window": 1000,
        "model": "gpt-x",
        "cwd": "/elsewhere",
        "usage": {"input_tokens": 5, "output_tokens": 5},
        "output": "x" * 5000,
    }
    before = [
        _rollout_line("session_meta", {"id": "s1", "cwd": "/w"}),
        _rollout_line("event_msg", {"type": "user_message", "message": "fix it"}),
    ]
    line = _rollout_line(rtype, payload, ts="2026-02-23T12:41:09.500Z")
    skimmed = tail_loads(line)
    assert skimmed == {
        "timestamp": "2026-02-23T12:41:09.500Z",
        "type": rtype,
        "payload": {"type": ptype},
    }
    whole, skim = CodexState("/r.jsonl"), CodexState("/r.jsonl")
    for raw in before:
        whole.feed(orjson.loads(raw), len(raw))
        skim.feed(orjson.loads(raw), len(raw))
    whole.feed(orjson.loads(line), len(line))
    skim.feed(skimmed, len(line))
    assert skim.to_json() == whole.to_json()


def test_lines_of_another_shape_are_decoded_whole() -> None:
    output = {"type": "function_call_output", "call_id": "c", "output": "ok"}
    spaced = b'{"timestamp": "2026-02-23T12:41:09Z", "type": "response_item", "payload": {}}'
    reordered = orjson.dumps({"type": "response_item", "timestamp": "t", "payload": output})
    torn = _rollout_line("response_item", output)[:-1] + b" "
    message = _rollout_line("response_item", {"type": "message", "role": "user", "content": []})
    for line in (spaced, reordered, message):
        assert tail_loads(line) == orjson.loads(line)
    with pytest.raises(orjson.JSONDecodeError):
        tail_loads(b'{"timestamp":"2026","type":"response_item","payload":{"type":"x"')
    with pytest.raises(orjson.JSONDecodeError):
        tail_loads(torn + b"]")


def test_a_cold_read_goes_through_the_provider_s_skimming_loads(tmp_path: Path) -> None:
    # The reader's own loads: a big rollout's tool outputs are skimmed, not decoded.
    path = tmp_path / "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
    lines = [_rollout_line("session_meta", {"id": "s1", "cwd": "/w"})]
    for n in range(40):
        lines.append(
            _rollout_line(
                "response_item",
                {"type": "function_call_output", "call_id": f"c{n}", "output": "y" * 4000},
            )
        )
        info = {"last_token_usage": {"input_tokens": 100 + n, "output_tokens": 1}}
        lines.append(_rollout_line("event_msg", {"type": "token_count", "info": info}))
    path.write_bytes(b"\n".join(lines) + b"\n")
    decoded: list[bytes] = []

    def counting(line: bytes) -> Any:
        decoded.append(bytes(line))
        return tail_loads(line)

    original = CodexState.tail_loads
    CodexState.tail_loads = staticmethod(counting)
    try:
        cursor = open_cursor(str(path), Provider.CODEX, CodexState)
    finally:
        CodexState.tail_loads = original
    # the tail holds the newest usage, and its tool outputs went through the skimming loads
    assert cursor.coverage is Coverage.HEAD_TAIL and cursor.summary().context_tokens == 140
    assert sum(b'"function_call_output"' in line for line in decoded) >= 5


def test_a_call_failed_when_its_output_says_so() -> None:
    from gobtui.adapters.providers.codex.items import call_failed

    meta = orjson.dumps({"output": "x", "metadata": {"exit_code": 1}}).decode()
    ok = orjson.dumps({"output": "error: shown", "metadata": {"exit_code": 0}}).decode()
    failed = [
        meta,
        "Exit code: 101\nWall time: 57.5 seconds\nOutput:\nerror[E0599]: no variant",
        "Process exited with code 2\nOutput:\n",
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error",
        "apply_patch verification failed: Failed to find expected lines in a.md",
    ]
    passed = [
        ok,
        "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nerror: a log line",
        "Plan updated",
    ]
    assert all(call_failed(out, out) for out in failed)
    assert not any(call_failed(out, out) for out in passed)


def test_lifetime_usage_is_the_client_s_newest_running_total(tmp_path: Path) -> None:
    first, second = token_count(1000, 50, cached=400), token_count(3000, 80, cached=2000)
    first["payload"]["info"]["total_token_usage"] = {
        "input_tokens": 1000, "cached_input_tokens": 400, "output_tokens": 50,
    }  # fmt: skip
    second["payload"]["info"]["total_token_usage"] = {
        "input_tokens": 4000, "cached_input_tokens": 2400, "output_tokens": 130,
    }  # fmt: skip
    path = write_jsonl(tmp_path / "life.jsonl", [first, second])
    life = cold(path).summary().lifetime
    assert life is not None and (life.input_tokens, life.cache_read_tokens) == (4000, 2400)
    assert life.output_tokens == 130
    cursor = cold(path)  # and it survives the cache
    again = type(cursor.state).from_json(str(path), cursor.state.to_json())
    assert isinstance(again, CodexState) and again.life == (4000, 2400, 130)
