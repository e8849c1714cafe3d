"""core.verify.SourceChecks: a candidate verified line by line gives verify()'s very report.

Candidates are drawn from generated Claude and Codex files and from every shared fixture:
some lines replaced (by other lines of the file, edited records, blank, broken, ambiguous or
non-UTF-8 lines, pieces that are not one whole line), some lines appended (card-like records
hanging off the leaf, records reusing ids, tool calls and results, last-prompt heads).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobtui.adapters.providers.claude.verify import ClaudeChecker
from gobtui.adapters.providers.registry import verify_checks
from gobtui.adapters.providers.rewrite_records import split_lines
from gobtui.core.model import Provider
from gobtui.core.verify import SourceChecks, verify
from gobtui.core.verify import report as report_module
from gobtui.core.verify import source as source_module
from tests.builders.claude import assistant, tool_result, tool_use, user
from tests.builders.generated import claude_files, codex_files
from tests.conftest import SHARED_FIXTURES

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
FIXTURES = sorted(
    (f"{kind}/{path.name}", Provider.CLAUDE if kind == "claude" else Provider.CODEX)
    for kind in ("claude", "codex")
    for path in (SHARED_FIXTURES / kind).glob("*.jsonl")
)


def _records(lines: list[bytes]) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if type(value) is dict:
            found.append(value)
    return found


PIECE_KINDS = (
    *("copy", "edit", "card", "prompt", "mode", "call", "result", "reuse", "codex"),
    *("blank", "broken", "ambiguous", "utf8", "spaced", "two_lines", "list"),
)


@st.composite
def pieces(draw: st.DrawFn, lines: list[bytes], final: bool = False) -> bytes:
    """One new line for a candidate (its "\\n" dropped now and then when `final`)."""
    records = _records(lines)
    uuids = [r["uuid"] for r in records if type(r.get("uuid")) is str] or ["u-none"]
    ids = [
        b.get("id") or b.get("tool_use_id")
        for r in records
        if type(r.get("message")) is dict and type(r["message"].get("content")) is list
        for b in r["message"]["content"]
        if type(b) is dict and (b.get("id") or b.get("tool_use_id"))
    ] or ["toolu_x"]
    kind = draw(st.sampled_from(PIECE_KINDS))
    fresh = draw(st.sampled_from(["n-1", "n-2", "n-3"]))
    record: Any
    if kind == "copy" and lines:
        piece = draw(st.sampled_from(lines))
        return piece if piece.endswith(b"\n") else piece + b"\n"
    if kind == "edit" and records:
        record = dict(draw(st.sampled_from(records)))
        record[draw(st.sampled_from(["note", "uuid", "parentUuid", "type"]))] = draw(
            st.sampled_from([fresh, None, 7, draw(st.sampled_from(uuids))])
        )
    elif kind == "card":
        record = {
            "parentUuid": draw(st.sampled_from([*uuids, None, fresh])),
            "type": "user",
            "message": {"role": "user", "content": "[gobtui state card]\ngoal: x"},
            "uuid": fresh,
        }
    elif kind == "prompt":
        record = {"type": "last-prompt", "leafUuid": draw(st.sampled_from([fresh, *uuids, ""]))}
    elif kind == "mode":
        record = {"type": "mode", "mode": "normal", "isSidechain": draw(st.booleans())}
    elif kind == "call":
        record = {
            "type": "assistant",
            "uuid": fresh,
            "parentUuid": draw(st.sampled_from(uuids)),
            "message": {
                "id": "m-new",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": draw(st.sampled_from(ids)), "name": "x"}],
            },
        }
    elif kind == "result":
        record = {
            "type": "user",
            "uuid": fresh,
            "parentUuid": draw(st.sampled_from([*uuids, fresh])),
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": draw(st.sampled_from(ids))}],
            },
        }
    elif kind == "reuse":
        record = {"type": "user", "uuid": draw(st.sampled_from(uuids)), "parentUuid": fresh}
    elif kind == "codex":
        record = {
            "type": "response_item",
            "ordinal": draw(st.integers(-1, 5)),
            "payload": draw(
                st.sampled_from(
                    [
                        {"type": "message", "role": "user", "content": []},
                        {"type": "function_call", "call_id": "c1", "name": "x"},
                        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
                        {"type": "compaction"},
                    ]
                )
            ),
        }
    elif kind == "blank":
        return draw(st.sampled_from([b"\n", b"  \n", b"\xe2\x80\x83\n"]))
    elif kind == "broken":
        return b'{"type": "user", \n'
    elif kind == "ambiguous":
        return b'{"type":"user","type":"assistant"}\n'
    elif kind == "utf8":
        return draw(st.sampled_from([b'{"a":"\xff"}\n', b'{"type":"x"}\xe2\x82\n']))
    elif kind == "spaced":
        return b'{ "type": "system", "uuid": "' + fresh.encode() + b'" }\r\n'
    elif kind == "two_lines":
        return b'{"type":"x"}\n{"type":"y"}\n'
    else:
        record = [1, 2]
    piece = orjson.dumps(record) + b"\n"
    if final and draw(st.booleans()):
        piece = piece[:-1]
    return piece


def _materialize(lines: list[bytes], replaced: dict[int, bytes], appended: list[bytes]) -> bytes:
    return b"".join(replaced.get(i, line) for i, line in enumerate(lines)) + b"".join(appended)


def check_candidates(data: bytes, provider: Provider, draw: st.DataObject) -> None:
    checks = SourceChecks(data, verify_checks(provider))
    assert checks.report() == verify(data, verify_checks(provider))
    lines = split_lines(data)
    for _ in range(3):  # candidates share the source's state and the memo of new lines
        replaced: dict[int, bytes] = {}
        if lines:
            for index in draw.draw(st.lists(st.integers(0, len(lines) - 1), max_size=4)):
                replaced[index] = draw.draw(pieces(lines, final=index == len(lines) - 1))
        count = draw.draw(st.integers(0, 4))
        appended = [draw.draw(pieces(lines, final=i == count - 1)) for i in range(count)]
        expected = verify(_materialize(lines, replaced, appended), verify_checks(provider))
        assert checks.candidate_report(replaced, appended) == expected
    assert checks.report() == verify(
        data, verify_checks(provider)
    )  # candidates leave the source's state


@SETTINGS
@given(files, st.data())
def test_candidates_of_generated_files(file: tuple[Provider, bytes], draw: st.DataObject) -> None:
    check_candidates(file[1], file[0], draw)


@pytest.mark.parametrize(("name", "provider"), FIXTURES)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(draw=st.data())
def test_candidates_of_fixtures(
    name: str, provider: Provider, fixtures_dir: Path, draw: st.DataObject
) -> None:
    check_candidates((fixtures_dir / name).read_bytes(), provider, draw)


def test_unchanged_and_card_like_candidates_reuse_the_source_pairing(
    fixture_copy: Callable[..., Path],
) -> None:
    data = fixture_copy("claude/marot__spotter__tool_heavy.jsonl").read_bytes()
    checks = SourceChecks(data, verify_checks(Provider.CLAUDE))
    source = checks.report()
    assert checks.candidate_report({}, []) == source
    leaf = [r for r in _records(split_lines(data)) if r.get("type") in ("user", "assistant")][-1]
    card = orjson.dumps(
        {"parentUuid": leaf["uuid"], "type": "user", "message": {"role": "user", "content": "c"}}
        | {"uuid": "card-1"}
    )
    prompt = orjson.dumps({"type": "last-prompt", "leafUuid": "card-1"})
    appended = [card + b"\n", prompt + b"\n"]
    expected = verify(data + b"".join(appended), verify_checks(Provider.CLAUDE))
    assert checks.candidate_report({}, appended) == expected
    assert checks._base is not None
    checker = checks._base.checker
    assert isinstance(checker, ClaudeChecker) and checker._pairing_memo is not None


def test_empty_and_oversized_sources_fall_back_to_verify() -> None:
    checks = SourceChecks(b"", verify_checks(Provider.CODEX))
    assert checks.report() == verify(b"", verify_checks(Provider.CODEX))
    added = [b'{"type":"response_item","payload":{"type":"reasoning"}}\n']
    assert checks.candidate_report({}, added) == verify(added[0], verify_checks(Provider.CODEX))


def _claude(*records: dict[str, Any]) -> list[bytes]:
    return [orjson.dumps({"sessionId": "s"} | r) + b"\n" for r in records]


def _call(uuid: str, parent: str | None, tool: str) -> dict[str, Any]:
    return assistant(uuid, parent, tool_use(tool), msg_id=f"m-{uuid}")


def _answer(uuid: str, parent: str, tool: str) -> dict[str, Any]:
    return user(uuid, parent, tool_result(tool))


# a -> b (calls t1) -> c (answers t1); a -> d (calls t2, never answered: a dead branch)
BRANCHES = _claude(
    user("a", None, "go"),
    _call("d", "a", "t2"),
    _call("b", "a", "t1"),
    _answer("c", "b", "t1"),
)


@pytest.mark.parametrize(
    "appended",
    [
        # the head moves to the dead branch: t2 becomes an orphaned call
        [{"type": "last-prompt", "leafUuid": "d"}],
        # a new leaf hanging off the dead branch
        [{"type": "user", "uuid": "n", "parentUuid": "d", "message": {"role": "user"}}],
        # a new record reusing a live uuid, re-parented onto the dead branch
        [{"type": "user", "uuid": "c", "parentUuid": "d", "message": {"role": "user"}}],
        # the card the rewriter appends: off the live leaf, then its head
        [
            {"type": "user", "uuid": "n", "parentUuid": "c", "message": {"role": "user"}},
            {"type": "last-prompt", "leafUuid": "n"},
        ],
    ],
)
def test_new_lines_that_move_the_live_branch(appended: list[dict[str, Any]]) -> None:
    data = b"".join(BRANCHES)
    checks = SourceChecks(data, verify_checks(Provider.CLAUDE))
    assert checks.report() == verify(data, verify_checks(Provider.CLAUDE))
    pieces = _claude(*appended)
    expected = verify(data + b"".join(pieces), verify_checks(Provider.CLAUDE))
    assert checks.candidate_report({}, pieces) == expected


def test_a_source_record_pointing_at_a_new_uuid() -> None:
    # e points at "n" (unknown: broken chain); an appended n joins e's branch to the head
    source = [
        *BRANCHES,
        *_claude({"type": "system", "uuid": "e", "parentUuid": "n"}),
        *_claude(_answer("f", "e", "t2")),
    ]
    data = b"".join(source)
    checks = SourceChecks(data, verify_checks(Provider.CLAUDE))
    pieces = _claude(
        {"type": "user", "uuid": "n", "parentUuid": "d", "message": {"role": "user"}},
        {"type": "last-prompt", "leafUuid": "f"},
    )
    expected = verify(data + b"".join(pieces), verify_checks(Provider.CLAUDE))
    assert checks.candidate_report({}, pieces) == expected
    assert [f.code.value for f in expected.findings] != [
        f.code.value for f in checks.report().findings
    ]


@pytest.mark.parametrize("bad_utf8", [False, True])
def test_candidates_of_a_source_over_the_record_limit(
    monkeypatch: pytest.MonkeyPatch, bad_utf8: bool
) -> None:
    """Over the record limit, a candidate is too: its report comes without reading (or
    copying) it, unless the source has bad UTF-8 somewhere (then it is verified in full)."""
    for module in (report_module, source_module):
        monkeypatch.setattr(module, "VERIFY_MAX_RECORDS", 5)
    lines = [
        b'{"type":"response_item","payload":{"type":"message","role":"user","content":"'
        + (b"\xff" if bad_utf8 and i == 2 else b"")
        + b"x" * 40
        + b'"}}\n'
        for i in range(8)
    ]
    data = b"".join(lines)
    checks = SourceChecks(data, verify_checks(Provider.CODEX))
    assert not checks.readable
    assert checks.report() == verify(data, verify_checks(Provider.CODEX))
    materialized: list[int] = []
    real = SourceChecks.materialize

    def counting(self: SourceChecks, *args: Any) -> bytes:
        materialized.append(1)
        return real(self, *args)

    monkeypatch.setattr(SourceChecks, "materialize", counting)
    small = b'{"type":"response_item","payload":{"type":"message","role":"user","content":"y"}}\n'
    for replaced, appended in (({}, []), ({1: small, 6: small}, []), ({3: small}, [small])):
        expected = verify(_materialize(lines, replaced, appended), verify_checks(Provider.CODEX))
        assert checks.candidate_report(replaced, appended) == expected
    assert len(materialized) == (3 if bad_utf8 else 0)


def test_a_source_over_the_byte_limit_whose_candidate_is_under_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    line = b'{"type":"response_item","payload":{"type":"message","role":"user","content":"%s"}}\n'
    lines = [line % (b"x" * 200), line % b"a", line % b"b"]
    data = b"".join(lines)
    for module in (report_module, source_module):
        monkeypatch.setattr(module, "VERIFY_MAX_BYTES", len(data) - 10)
    checks = SourceChecks(data, verify_checks(Provider.CODEX))
    assert not checks.readable
    replaced = {0: line % b"stub"}
    expected = verify(_materialize(lines, replaced, []), verify_checks(Provider.CODEX))
    assert checks.candidate_report(replaced, []) == expected
    assert "transcript_limit" not in {f.code.value for f in expected.findings}  # under it now
