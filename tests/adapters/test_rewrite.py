"""adapters.rewrite.apply on real files: the dialect oracle, every fixture planned by every strategy,
the state card's records, identity rewrites, payload texts and each refusal."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.providers.claude.media import dimensions
from gobtui.adapters.providers.codex import rewrite as rewrite_codex
from gobtui.adapters.providers.interface import RewriteCode, RewriteError
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.providers.rewrite_records import split_lines
from gobtui.adapters.rewrite.apply import apply_plan, payload_texts, rewrite_identity
from gobtui.adapters.rewrite.lines import SourceRewriter
from gobtui.core.admission import admit, protected_lines
from gobtui.core.edits import (
    CacheEditEdit,
    CompactionPlan,
    DigestBlock,
    Edit,
    ElideEdit,
    InjectDigestEdit,
    ProviderCompactEdit,
)
from gobtui.core.model import ItemKind, Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies import STRATEGIES, plan_for
from tests.adapters.rewrite_checks import check_rewritten
from tests.builders.claude import envelope
from tests.builders.common import rehydrate
from tests.builders.sessions import codex_work_session

Copy = Callable[..., Path]
ORACLES = [("claude-branch.jsonl", Provider.CLAUDE), ("codex-window.jsonl", Provider.CODEX)]
CLAUDE_FIXTURES = [
    "claude/daaain__claude-code-log__edge_cases.jsonl",
    "claude/jazzyalex__agent-sessions__schema_drift.jsonl",
    "claude/jazzyalex__agent-sessions__small.jsonl",
    "claude/kvsankar__agent-history__session-01.jsonl",
    "claude/kvsankar__agent-history__session_with_compaction.jsonl",
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/"
    "agent-acompact-e1f845.jsonl",
    "claude/marot__spotter__short.jsonl",
    "claude/marot__spotter__tool_heavy.jsonl",
]
CODEX_FIXTURES = [
    "codex/jazzyalex__agent-sessions__codex_050_legacy.jsonl",
    "codex/jazzyalex__agent-sessions__codex_053_rate_limit.jsonl",
    "codex/jazzyalex__agent-sessions__small.jsonl",
    "codex/kvsankar__agent-history__session-01.jsonl",
    "codex/kvsankar__agent-history__session_with_compaction.jsonl",
    "codex/madshn__localpush__rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
    "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    "codex/madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
]
LOW = PolicyConfig(
    trigger_tokens=1, floor_tokens=0, min_savings_tokens=0, keep_recent_tool_outputs=1
)
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def plan_of(*edits: Edit) -> CompactionPlan:
    return CompactionPlan(
        strategy="test",
        rationale="test",
        edits=list(edits),
        context_tokens_before=1000,
        context_tokens_after=10,
    )


def elide(lines: list[int], template: str = "[elided]") -> ElideEdit:
    return ElideEdit(line_indexes=lines, stub_template=template)


def card(covers: int = 1) -> InjectDigestEdit:
    return InjectDigestEdit(
        digest=DigestBlock(goal="ship it", files_touched=["src/a.py"], covers_items=covers)
    )


def write(tmp_path: Path, name: str, records: list[Any], ending: bytes = b"\n") -> Path:
    path = tmp_path / name
    lines = [r if isinstance(r, bytes) else orjson.dumps(r) for r in records]
    path.write_bytes(ending.join(lines) + ending)
    return path


def pointer(doc: Any, path: str, value: Any = None, set_it: bool = False) -> Any:
    """Read (or set) the value at a JSON pointer."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    last: Any = int(parts[-1]) if isinstance(doc, list) else parts[-1]
    if set_it:
        doc[last] = value
    return doc[last]


def load(copy: Copy, relative: str, provider: Provider) -> tuple[Path, bytes, Any]:
    path = copy(relative)
    return path, path.read_bytes(), parse_transcript(provider, str(path))


# -- the dialect oracle ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "provider"), ORACLES)
def test_oracle_elision_changes_exactly_the_manifest_pointers(
    fixture_copy: Copy, fixtures_dir: Path, name: str, provider: Provider
) -> None:
    manifest = json.loads((fixtures_dir / "oracle" / "dialects-manifest.json").read_text())
    entry = next(f for f in manifest["fixtures"] if f["file"] == name)
    _, data, transcript = load(fixture_copy, f"oracle/{name}", provider)
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    changed = sorted({change["line"] for change in entry["changes"]})

    out = apply_plan(data, provider, plan_of(elide(changed)), transcript)

    src, dst = split_lines(data), split_lines(out)
    assert len(dst) == len(src)
    for index, (before, after) in enumerate(zip(src, dst, strict=True)):
        if index not in changed:
            assert after == before
            continue
        expected = orjson.loads(before)
        for change in entry["changes"]:
            if change["line"] == index:
                assert pointer(expected, change["pointer"]) != change["value"]
                pointer(expected, change["pointer"], change["value"], set_it=True)
        assert orjson.loads(after) == expected
        assert after.endswith(b"\n") and b"\n" not in after[:-1]


@pytest.mark.parametrize(
    ("name", "provider", "expected"),
    [
        ("claude-branch.jsonl", Provider.CLAUDE, {3: "Read:304"}),
        ("codex-window.jsonl", Provider.CODEX, {3: "compacted:300", 7: "read:304"}),
    ],
)
def test_stub_names_the_items_label_and_the_outputs_bytes(
    fixture_copy: Copy, name: str, provider: Provider, expected: dict[int, str]
) -> None:
    _, data, transcript = load(fixture_copy, f"oracle/{name}", provider)
    out = apply_plan(data, provider, plan_of(elide(sorted(expected), "{kind}:{bytes}")), transcript)
    dst = split_lines(out)
    for line, stub in expected.items():
        assert orjson.dumps(stub) in dst[line]


# -- every fixture, every strategy -------------------------------------------------------------


def _fixture_ids(relative: str) -> str:
    return relative.split("/")[-1][:48]


@pytest.mark.parametrize(
    ("relative", "provider"),
    [(r, Provider.CLAUDE) for r in CLAUDE_FIXTURES] + [(r, Provider.CODEX) for r in CODEX_FIXTURES],
    ids=_fixture_ids,
)
def test_every_strategy_plan_applies_cleanly(
    fixture_copy: Copy, tmp_path: Path, relative: str, provider: Provider
) -> None:
    path = fixture_copy(relative)
    if provider is Provider.CODEX:  # the sanitized outputs back to their size: elidable again
        path.write_bytes(rehydrate(path.read_bytes()))
    data = path.read_bytes()
    transcript = parse_transcript(provider, str(path))
    protected = protected_lines(transcript, LOW.keep_recent_tool_outputs)
    applied: list[str] = []
    for strategy in STRATEGIES:
        plan = plan_for(strategy, transcript, LOW)
        if not isinstance(plan, CompactionPlan):
            continue
        assert admit(plan, transcript, LOW).admitted, strategy
        if plan.is_control:
            with pytest.raises(RewriteError) as refused:
                apply_plan(data, provider, plan, transcript)
            assert refused.value.code is RewriteCode.CONTROL_EDIT
            continue
        out = apply_plan(data, provider, plan, transcript)
        assert out == apply_plan(data, provider, plan, transcript)  # deterministic
        check_rewritten(
            data, out, provider, plan, transcript, tmp_path / f"{strategy}.jsonl", protected
        )
        applied.append(strategy)
    elidable = [  # outputs and inputs: thinking can be all the turn in progress's own
        i
        for i in transcript.items
        if i.elidable and i.line_index not in protected and i.kind is not ItemKind.REASONING
    ]
    if elidable:  # wherever there is something to elide, elide and the card strategies do it
        assert {"elide", "cache_aware", "compacted"} <= set(applied)
    assert data == (path.read_bytes())  # the source is never written


# -- the state card ----------------------------------------------------------------------------


def _envelope(kind: str, uuid: str, parent: str | None, ts: int, **extra: Any) -> dict[str, Any]:
    stamp = f"2026-01-01T00:00:{ts:02d}.000Z"
    cwd = extra.pop("cwd", "/live")
    return envelope(kind, parent, "s-1", cwd, uuid=uuid, timestamp=stamp, **extra)


def _claude_tree(tmp_path: Path, ending: bytes = b"\n") -> Path:
    """u1 -> a1 -> r1 -> a2 (the live leaf, named by last-prompt); `dead` hangs off a1 later."""
    big = "z" * 5000
    records = [
        _envelope("user", "u1", None, 1, message={"role": "user", "content": "Fix it."}),
        _envelope(
            "assistant",
            "a1",
            "u1",
            2,
            message={
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
            },
        ),
        _envelope(
            "user",
            "r1",
            "a1",
            3,
            permissionMode="acceptEdits",
            promptId="p-1",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big}],
            },
            toolUseResult={"stdout": big},
        ),
        _envelope(
            "assistant",
            "a2",
            "r1",
            4,
            message={"role": "assistant", "content": "Done.", "usage": {"input_tokens": 7}},
        ),
        _envelope(
            "user",
            "dead",
            "a1",
            5,
            cwd="/dead",
            permissionMode="plan",
            message={"role": "user", "content": "abandoned"},
        ),
        {"type": "mode", "mode": "plan-mode", "sessionId": "s-1"},
        {"type": "last-prompt", "lastPrompt": "Fix it.", "leafUuid": "a2", "sessionId": "s-1"},
    ]
    return write(tmp_path, "tree.jsonl", records, ending)


def test_claude_card_hangs_off_the_live_leaf_with_its_context(tmp_path: Path) -> None:
    path = _claude_tree(tmp_path)
    data = path.read_bytes()
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    plan = plan_of(elide([2]), card())
    out = apply_plan(data, Provider.CLAUDE, plan, transcript)

    user, last_prompt, mode = (orjson.loads(line) for line in split_lines(out)[7:])
    assert user["parentUuid"] == "a2"  # the leaf last-prompt names, not the newer dead record
    assert user["cwd"] == "/live" and user["permissionMode"] == "acceptEdits"
    assert user["sessionId"] == "s-1" and user["version"] == "2.1.39"
    assert user["timestamp"] == "2026-01-01T00:00:05.000Z"  # the file's newest
    assert UUID4.fullmatch(user["uuid"]) and UUID4.fullmatch(user["promptId"])
    assert user["promptId"] != "p-1"
    assert DigestBlock.parse(user["message"]["content"]) == plan.digest
    assert last_prompt == {
        "type": "last-prompt",
        "lastPrompt": user["message"]["content"],
        "leafUuid": user["uuid"],
        "sessionId": "s-1",
    }
    assert mode == {"type": "mode", "mode": "plan-mode", "sessionId": "s-1"}
    # the elided record keeps its structured UI copy (the reference leaves it too)
    assert orjson.loads(split_lines(out)[2])["toolUseResult"] == {"stdout": "z" * 5000}

    after_path = tmp_path / "after.jsonl"
    check_rewritten(data, out, Provider.CLAUDE, plan, transcript, after_path)
    after = parse_transcript(Provider.CLAUDE, str(after_path))
    card_item = after.items[-1]
    assert card_item.uuid == user["uuid"] and card_item.parent_uuid == "a2" and card_item.active
    assert [i.active for i in after.items[:-1]] == [i.active for i in transcript.items]


def test_card_ids_follow_the_source_and_the_plan(tmp_path: Path) -> None:
    path = _claude_tree(tmp_path)
    data = path.read_bytes()
    transcript = parse_transcript(Provider.CLAUDE, str(path))

    def card_uuid(plan: CompactionPlan, source: bytes = data) -> str:
        out = apply_plan(source, Provider.CLAUDE, plan, transcript)
        return str(orjson.loads(split_lines(out)[7])["uuid"])

    first = card_uuid(plan_of(elide([2]), card(1)))
    assert first == card_uuid(plan_of(elide([2]), card(1)))
    assert first != card_uuid(plan_of(elide([2]), card(2)))
    assert first != card_uuid(plan_of(elide([2]), card(1)), data.replace(b"Fix it.", b"Fix that"))


def test_claude_card_without_a_mode_record_writes_normal(tmp_path: Path) -> None:
    path = _claude_tree(tmp_path)
    kept = [line for line in split_lines(path.read_bytes()) if b'"type":"mode"' not in line]
    path.write_bytes(b"".join(kept))
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    out = apply_plan(path.read_bytes(), Provider.CLAUDE, plan_of(elide([2]), card()), transcript)
    assert orjson.loads(split_lines(out)[-1]) == {
        "type": "mode",
        "mode": "normal",
        "sessionId": "s-1",
    }


def test_codex_card_is_a_user_message_in_the_newest_envelope(
    fixture_copy: Copy, tmp_path: Path
) -> None:
    path = fixture_copy(CODEX_FIXTURES[5])
    path.write_bytes(rehydrate(path.read_bytes()))
    data = path.read_bytes()
    transcript = parse_transcript(Provider.CODEX, str(path))
    plan = plan_for("cache_aware", transcript, LOW)
    assert isinstance(plan, CompactionPlan) and plan.digest is not None
    out = apply_plan(data, Provider.CODEX, plan, transcript)
    last_stamp = orjson.loads(split_lines(data)[-1])["timestamp"]
    card, usage = (orjson.loads(line) for line in split_lines(out)[-2:])
    assert card == {
        "timestamp": last_stamp,
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": plan.digest.render()}],
        },
    }
    # then the fork's own usage: what Codex decides on resume whether to compact from
    assert plan.projection is not None
    assert usage["type"] == "event_msg" and usage["payload"]["type"] == "token_count"
    last = usage["payload"]["info"]["last_token_usage"]
    assert last["total_tokens"] == plan.projection.context_tokens_after


def test_codex_card_carries_an_ordinal_where_records_do(fixture_copy: Copy) -> None:
    _, data, transcript = load(fixture_copy, "oracle/codex-window.jsonl", Provider.CODEX)
    lines = split_lines(data)
    (record,) = rewrite_codex.card_records(lines, transcript, "card", b"seed")
    assert record["ordinal"] == len(lines) == 11
    assert "timestamp" not in record  # none of the oracle's records has one


# -- line endings, torn tails ------------------------------------------------------------------


@pytest.mark.parametrize(("ending", "final"), [(b"\r\n", True), (b"\n", False), (b"\r\n", False)])
def test_line_endings_and_final_newline_are_kept(
    tmp_path: Path, ending: bytes, final: bool
) -> None:
    path = _claude_tree(tmp_path, ending)
    data = path.read_bytes()
    if not final:
        data = data[: -len(ending)]
        path.write_bytes(data)
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    for plan in (plan_of(elide([2])), plan_of(elide([2]), card())):
        out = apply_plan(data, Provider.CLAUDE, plan, transcript)
        check_rewritten(data, out, Provider.CLAUDE, plan, transcript, tmp_path / "out.jsonl")
        assert split_lines(out)[2].endswith(ending)
        if ending == b"\r\n":
            assert out.count(b"\n") == out.count(b"\r\n")


@pytest.mark.parametrize(
    "tail", [b'{"type":"user","mess', b"\0" * 65_536], ids=["torn", "nul-padding"]
)
@pytest.mark.parametrize("provider", [Provider.CLAUDE, Provider.CODEX])
def test_an_unfinished_last_line_refuses_every_plan_alike(
    tail: bytes, provider: Provider, tmp_path: Path
) -> None:
    """A writer caught mid-line, or a crash's NUL padding: elide and cliff once published a
    fork ending in it while a card's strategies refused. One rule now: every plan refuses."""
    if provider is Provider.CLAUDE:
        path = _claude_tree(tmp_path)
    else:
        path = codex_work_session(30_000, "torn").write(tmp_path / "sessions")
    data = path.read_bytes() + tail
    path.write_bytes(data)
    transcript = parse_transcript(provider, str(path))
    elidable = [item.line_index for item in transcript.items if item.elidable][:1]
    for plan in (plan_of(elide(elidable), card()), plan_of(elide(elidable))):
        with pytest.raises(RewriteError) as refused:
            apply_plan(data, provider, plan, transcript)
        assert refused.value.code is RewriteCode.TORN_TAIL
        with pytest.raises(RewriteError) as again:
            SourceRewriter(data, provider, transcript).apply(plan)
        assert again.value.code is RewriteCode.TORN_TAIL


# -- parts of one output, several outputs of one line ------------------------------------------


def _results_line(tmp_path: Path, contents: list[Any]) -> tuple[Path, bytes, Any]:
    blocks = [
        {"type": "tool_result", "tool_use_id": f"t{i}", "content": c}
        for i, c in enumerate(contents)
    ]
    calls = [
        {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}
        for i in range(len(contents))
    ]
    path = write(
        tmp_path,
        "parts.jsonl",
        [
            _envelope("assistant", "a1", None, 1, message={"role": "assistant", "content": calls}),
            _envelope("user", "r1", "a1", 2, message={"role": "user", "content": blocks}),
        ],
    )
    return path, path.read_bytes(), parse_transcript(Provider.CLAUDE, str(path))


def test_each_output_gets_its_own_stub_and_short_ones_stay(tmp_path: Path) -> None:
    contents = [
        "a" * 400,
        "ok",
        [{"type": "text", "text": "b" * 300}, {"type": "text", "text": "c"}],
    ]
    _, data, transcript = _results_line(tmp_path, contents)
    out = apply_plan(data, Provider.CLAUDE, plan_of(elide([1], "<{bytes}>")), transcript)
    blocks = orjson.loads(split_lines(out)[1])["message"]["content"]
    assert [b["content"] for b in blocks] == [
        "<400>",
        "ok",  # a stub would be longer than this output
        [{"type": "text", "text": "<301>"}, {"type": "text", "text": ""}],
    ]


def test_a_stub_longer_than_every_part_is_refused(tmp_path: Path) -> None:
    _, data, transcript = _results_line(tmp_path, ["x" * 90, "y" * 90, "z" * 90])
    assert transcript.items[1].elidable  # 270 bytes in all
    edit = ElideEdit(line_indexes=[1], per_item_stubs={1: "s" * 96})
    with pytest.raises(RewriteError) as refused:
        apply_plan(data, Provider.CLAUDE, plan_of(edit), transcript)
    assert refused.value.code is RewriteCode.GREW


def test_claude_images_become_a_line_naming_them(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + struct.pack(">II", 1280, 800)
    data64 = base64.b64encode(png + b"\x00" * 3000).decode()
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": data64},
    }
    _, data, transcript = _results_line(tmp_path, [[{"type": "text", "text": "q" * 900}, image]])
    assert transcript.items[1].image_bytes == len(data64) and transcript.items[1].elidable
    out = apply_plan(data, Provider.CLAUDE, plan_of(elide([1], "<{bytes}>")), transcript)
    [block] = orjson.loads(split_lines(out)[1])["message"]["content"]
    assert block["content"] == [
        {"type": "text", "text": "<900>"},
        {"type": "text", "text": "[image removed by gobtui: image/png, 3.0 KB, 1280x800]"},
    ]


@pytest.mark.parametrize(
    ("head", "size"),
    [
        (b"GIF89a" + struct.pack("<HH", 32, 16), (32, 16)),
        (
            b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08"
            + struct.pack(">HH", 480, 640)
            + b"\x03",
            (640, 480),
        ),
        (
            b"RIFF\x00\x00\x00\x00WEBPVP8X"
            + bytes(8)
            + (99).to_bytes(3, "little")
            + (49).to_bytes(3, "little"),
            (100, 50),
        ),
        (b"not a picture", None),
    ],
)
def test_image_dimensions_come_from_the_header(head: bytes, size: tuple[int, int] | None) -> None:
    assert dimensions(base64.b64encode(head + bytes(64)).decode()) == size


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "provider", "plan", "code"),
    [
        (
            "claude-branch.jsonl",
            Provider.CLAUDE,
            plan_of(elide([10])),
            RewriteCode.LINE_OUT_OF_RANGE,
        ),
        ("claude-branch.jsonl", Provider.CLAUDE, plan_of(elide([2])), RewriteCode.NOT_ELIDABLE),
        ("claude-branch.jsonl", Provider.CLAUDE, plan_of(elide([0])), RewriteCode.NOT_ELIDABLE),
        ("claude-branch.jsonl", Provider.CODEX, plan_of(elide([3])), RewriteCode.PROVIDER_MISMATCH),
        (
            "claude-branch.jsonl",
            Provider.CLAUDE,
            plan_of(elide([3]), elide([3])),
            RewriteCode.DUPLICATE_LINE,
        ),
        (
            "claude-branch.jsonl",
            Provider.CLAUDE,
            plan_of(card(), card()),
            RewriteCode.MULTIPLE_DIGESTS,
        ),
        ("claude-branch.jsonl", Provider.CLAUDE, plan_of(elide([3]), card()), RewriteCode.GREW),
        (
            "claude-branch.jsonl",
            Provider.CLAUDE,
            plan_of(CacheEditEdit(tool_use_ids=["call"])),
            RewriteCode.CONTROL_EDIT,
        ),
        (
            "codex-window.jsonl",
            Provider.CODEX,
            plan_of(ProviderCompactEdit(control="codex: compact")),
            RewriteCode.CONTROL_EDIT,
        ),
        ("codex-window.jsonl", Provider.CODEX, plan_of(elide([9])), RewriteCode.IMAGE_OUTPUT),
        ("codex-window.jsonl", Provider.CODEX, plan_of(elide([2])), RewriteCode.NOT_ELIDABLE),
    ],
)
def test_refusals_are_coded_one_liners_without_content(
    fixture_copy: Copy, name: str, provider: Provider, plan: CompactionPlan, code: RewriteCode
) -> None:
    path = fixture_copy(f"oracle/{name}")
    data = path.read_bytes()
    transcript = parse_transcript(
        Provider.CLAUDE if name.startswith("claude") else Provider.CODEX, str(path)
    )
    with pytest.raises(RewriteError) as refused:
        apply_plan(data, provider, plan, transcript)
    assert refused.value.code is code
    message = str(refused.value)
    assert message.startswith(code.value) and "\n" not in message
    assert not any(word in message for word in ("é", "DDD", "xxx", "ppp", "Preserve", "Goal"))


def test_a_line_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.jsonl", [{"type": "user", "sessionId": "s"}, b"{not json"])
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    with pytest.raises(RewriteError) as refused:
        apply_plan(path.read_bytes(), Provider.CLAUDE, plan_of(elide([1])), transcript)
    assert refused.value.code is RewriteCode.NOT_JSON


# -- identity ----------------------------------------------------------------------------------


def test_claude_identity_rewrites_every_session_id_only(fixture_copy: Copy, tmp_path: Path) -> None:
    _, data, _ = load(fixture_copy, CLAUDE_FIXTURES[5], Provider.CLAUDE)
    new_id = "11111111-2222-4333-8444-555555555555"
    out = bytes(rewrite_identity(data, Provider.CLAUDE, new_id))  # built in a bytearray
    rewritten = 0
    for before, after in zip(split_lines(data), split_lines(out), strict=True):
        record = decode_line(before.strip())
        if isinstance(record, dict) and "sessionId" in record:
            record["sessionId"] = new_id
            assert orjson.loads(after) == record  # uuid / parentUuid untouched
            rewritten += 1
        else:
            assert after == before
    assert rewritten > 1000
    assert rewrite_identity(out, Provider.CLAUDE, new_id) == out
    fork = tmp_path / f"{new_id}.jsonl"
    fork.write_bytes(out)
    assert parse_transcript(Provider.CLAUDE, str(fork)).session_id == new_id


def test_codex_identity_rewrites_every_session_meta(tmp_path: Path) -> None:
    records = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "old", "cwd": "/w"}},
        {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "id": "old"}},
        {"timestamp": "t", "type": "session_meta", "payload": {"session_id": "old-2"}},
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "x", "session_id": "old"}},
    ]
    path = write(tmp_path, "rollout.jsonl", records)
    data = path.read_bytes()
    out = bytes(rewrite_identity(data, Provider.CODEX, "new-id"))
    src, dst = split_lines(data), split_lines(out)
    assert orjson.loads(dst[0])["payload"] == {"id": "new-id", "cwd": "/w"}
    assert orjson.loads(dst[2])["payload"] == {"session_id": "new-id"}
    assert (dst[1], dst[3]) == (src[1], src[3])
    path.write_bytes(out)
    assert parse_transcript(Provider.CODEX, str(path)).session_id == "new-id"


@pytest.mark.parametrize("bad", ["", "../evil", "a/b", "a b", "x" * 129, "ü"])
def test_identity_refuses_ids_that_are_not_id_shaped(bad: str) -> None:
    with pytest.raises(RewriteError) as refused:
        rewrite_identity(b"{}\n", Provider.CLAUDE, bad)
    assert refused.value.code is RewriteCode.BAD_SESSION_ID


# -- payload texts, line splitting -------------------------------------------------------------


def test_payload_texts_joins_parts_and_cuts_on_characters(fixture_copy: Copy) -> None:
    _, claude, _ = load(fixture_copy, "oracle/claude-branch.jsonl", Provider.CLAUDE)
    parts = orjson.loads(split_lines(claude)[3])["message"]["content"][1]["content"]
    whole = "".join(p["text"] for p in parts)
    assert payload_texts(claude, Provider.CLAUDE, [0, 3, 99], 10**6) == {3: whole}
    assert payload_texts(claude, Provider.CLAUDE, [3], 5) == {3: whole[:2]}  # "é" is 2 bytes

    _, codex, _ = load(fixture_copy, "oracle/codex-window.jsonl", Provider.CODEX)
    texts = payload_texts(codex, Provider.CODEX, [1, 3, 7, 9], 10**6)
    history = orjson.loads(split_lines(codex)[3])["payload"]["replacement_history"]
    assert texts == {3: history[3]["output"], 7: "x" * 300 + "tail"}  # 9 holds an image


def test_payload_texts_unwraps_custom_tool_json(tmp_path: Path) -> None:
    wrapped = orjson.dumps({"output": "inner text", "metadata": {"exit_code": 0}}).decode()
    payload = {"type": "custom_tool_call_output", "call_id": "c", "output": wrapped}
    path = write(
        tmp_path, "r.jsonl", [{"timestamp": "t", "type": "response_item", "payload": payload}]
    )
    assert payload_texts(path.read_bytes(), Provider.CODEX, [0], 100) == {0: "inner text"}


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", []),
        (b"a", [b"a"]),
        (b"a\n", [b"a\n"]),
        (b"a\r\nb", [b"a\r\n", b"b"]),
        (b"\n\nx\n", [b"\n", b"\n", b"x\n"]),
    ],
)
def test_split_lines(data: bytes, lines: list[bytes]) -> None:
    assert split_lines(data) == lines


@pytest.mark.parametrize(
    ("relative", "provider"),
    [(CLAUDE_FIXTURES[0], Provider.CLAUDE), (CLAUDE_FIXTURES[5], Provider.CLAUDE)]
    + [(r, Provider.CODEX) for r in CODEX_FIXTURES[:3]],
    ids=_fixture_ids,
)
def test_split_lines_indexes_as_the_reader_does(
    fixture_copy: Copy, relative: str, provider: Provider
) -> None:
    _, data, transcript = load(fixture_copy, relative, provider)
    lines = split_lines(data)
    assert b"".join(lines) == data
    for item in transcript.items:
        record = decode_line(lines[item.line_index].strip())
        assert isinstance(record, dict)
        if item.uuid is not None:
            assert record.get("uuid") == item.uuid
