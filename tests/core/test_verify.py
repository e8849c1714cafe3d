"""core.verify: the generic line checks, the report, the oracle and every real fixture."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gobtui.core.verify.report as report_module
from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.limits import VERIFY_MAX_RECORDS
from gobtui.core.model import Provider
from gobtui.core.verify import Finding, FindingCode, Severity, VerifyReport, oversize_report, verify
from gobtui.core.verify.findings import RULES, FindingSink, LimitKind
from tests.builders.claude import assistant, tool_result, tool_use, user
from tests.builders.codex import call, compacted, item, output
from tests.builders.common import as_jsonl
from tests.core.verify_cases import check, triples

CLAUDE, CODEX = Provider.CLAUDE, Provider.CODEX
OK_LINE = b'{"type":"user"}'


# -- generic codes, each on a minimal transcript -------------------------------------------


def test_empty() -> None:
    assert check(b"", CLAUDE) == [("empty", "warning", None)]


def test_blank_lines() -> None:
    data = OK_LINE + b"\n\n   \n\t\r\n" + OK_LINE + b"\n"
    assert check(data, CLAUDE) == [
        ("blank_line", "warning", 1),
        ("blank_line", "warning", 2),
        ("blank_line", "warning", 3),
    ]


def test_a_single_newline_is_one_blank_line_not_an_empty_file() -> None:
    assert check(b"\n", CODEX) == [("blank_line", "warning", 0)]


def test_unicode_whitespace_line_is_blank() -> None:
    data = OK_LINE + b"\n\xc2\xa0\n"  # a no-break space only
    assert check(data, CLAUDE) == [("blank_line", "warning", 1)]


def test_partial_tail() -> None:
    assert check(OK_LINE + b'\n{"type":"assist', CLAUDE) == [("partial_tail", "warning", 1)]


def test_partial_tail_even_with_a_final_newline() -> None:
    # The reference judges by position only: one bad line, the last one.
    assert check(OK_LINE + b'\n{"type":"assist\n', CLAUDE) == [("partial_tail", "warning", 1)]


def test_tail_torn_inside_a_utf8_character_is_a_partial_tail() -> None:
    data = OK_LINE + b'\n{"type":"user","text":"caf\xc3'
    assert check(data, CLAUDE) == [("partial_tail", "warning", 1)]


def test_invalid_json_in_the_middle() -> None:
    assert check(b"{bad json\n" + OK_LINE + b"\n", CLAUDE) == [("invalid_json", "error", 0)]


def test_a_bad_tail_after_other_bad_lines_is_an_error_too() -> None:
    data = b"{bad\n" + OK_LINE + b"\n{bad"
    assert check(data, CLAUDE) == [("invalid_json", "error", 0), ("invalid_json", "error", 2)]


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"user","n":NaN}',
        b'{"type":"user","n":Infinity}',
        b'{"type":"user","n":1e400}',
        b'{"type":"user","s":"\\ud800"}',
        b'{"type":"user"} {"type":"user"}',
    ],
)
def test_not_json_even_if_a_lenient_parser_reads_it(line: bytes) -> None:
    assert check(line + b"\n" + OK_LINE + b"\n", CLAUDE) == [("invalid_json", "error", 0)]


def test_integers_beyond_64_bits_are_valid_json() -> None:
    # JavaScript writes such literals; orjson reads them as floats, as serde_json does.
    data = b'{"type":"user","n":123456789012345678901}\n'
    assert check(data, CLAUDE) == []
    assert verify(data, verify_checks(CLAUDE)).records == 1


def test_invalid_utf8() -> None:
    data = OK_LINE + b'\n{"type":"user","text":"\xff"}\n' + b"{bad\n"
    report = verify(data, verify_checks(CLAUDE))
    assert triples(report) == [("invalid_utf8", "error", None)]  # nothing else is worth saying
    assert report.findings[0].message == RULES[FindingCode.INVALID_UTF8][1].format(
        len(OK_LINE) + 1 + len(b'{"type":"user","text":"')
    )
    assert report.records == 0


def test_invalid_utf8_drops_what_earlier_lines_found() -> None:
    data = b"\n[1]\n" + as_jsonl(user("u", "gone")) + b'{"type":"user","text":"\xc3\x28"}\n'
    assert check(data, CLAUDE) == [("invalid_utf8", "error", None)]


@pytest.mark.parametrize(
    "line", [b"[1,2]", b'"text"', b"3", b"null", b'{"no":"type"}', b'{"type":5}']
)
def test_invalid_record(line: bytes) -> None:
    assert check(OK_LINE + b"\n" + line + b"\n", CLAUDE) == [("invalid_record", "error", 1)]


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"user","type":"user"}',
        b'{"type":"user","message":{"role":"user","role":"assistant"}}',
        b'{"type":"user","message":{"content":[{"a":1,"b":2,"a":1}]}}',
        b'{ "type" : "user", "x" : 1, "x" : 1 }',  # not orjson's spelling: the slow path
        b'{"type":"user","n":123456789012345678901,"n":1}',  # beyond orjson: the slow path
    ],
)
def test_ambiguous_json(line: bytes) -> None:
    assert check(OK_LINE + b"\n" + line + b"\n" + OK_LINE + b"\n", CLAUDE) == [
        ("ambiguous_json", "error", 1)
    ]


def test_ambiguous_json_stays_an_error_on_the_last_line() -> None:
    data = OK_LINE + b'\n{"type":"user","type":"user"}'
    assert check(data, CLAUDE) == [("ambiguous_json", "error", 1)]


def test_the_same_key_in_sibling_objects_is_not_ambiguous() -> None:
    line = b'{ "type": "user", "a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 1}] }'
    assert check(line + b"\n", CLAUDE) == []


def test_transcript_limit_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_module, "VERIFY_MAX_BYTES", 20)
    data = OK_LINE + b"\n" + OK_LINE + b"\n"  # 32 bytes
    report = verify(data, verify_checks(CLAUDE))
    assert triples(report) == [("transcript_limit", "error", None)]
    assert report.findings[0].message == "byte limit exceeded: 32 > 20"
    assert oversize_report(32, CLAUDE).findings == report.findings


def test_transcript_limit_records() -> None:
    over = b'{"type":"x"}\n' * (VERIFY_MAX_RECORDS + 1)
    report = verify(over, verify_checks(CODEX))
    assert triples(report) == [("transcript_limit", "error", None)]
    assert report.findings[0].message == (
        f"record limit exceeded: {VERIFY_MAX_RECORDS + 1} > {VERIFY_MAX_RECORDS}"
    )
    at_limit = b'{"type":"x"}\n' * VERIFY_MAX_RECORDS
    assert check(at_limit, CODEX) == []


def test_bad_utf8_is_reported_before_the_record_limit() -> None:
    over = b"\xff\n" + b"{}\n" * VERIFY_MAX_RECORDS
    assert check(over, CODEX) == [("invalid_utf8", "error", None)]


def test_every_code_has_one_fixed_rule() -> None:
    assert set(RULES) == set(FindingCode)
    errors = {c.value for c, (severity, _) in RULES.items() if severity is Severity.ERROR}
    assert errors == {
        "transcript_limit", "invalid_utf8", "invalid_record", "ambiguous_json", "invalid_json",
        "invalid_uuid", "invalid_parent_uuid", "missing_chain_head", "thinking_after_change",
        "duplicate_uuid", "duplicate_tool_call_id", "orphaned_tool_use",
        "invalid_ordinal", "malformed_compacted", "invalid_response_item",
    }  # fmt: skip


# -- the report ----------------------------------------------------------------------------


def test_report_counts_and_flags() -> None:
    clean = verify(as_jsonl(user("u", None)), verify_checks(CLAUDE))
    assert (clean.ok, clean.clean, clean.records, clean.errors, clean.warnings) == (
        True, True, 1, 0, 0,
    )  # fmt: skip
    warned = verify(as_jsonl(user("u", None)) + b"\n", verify_checks(CLAUDE))
    assert (warned.ok, warned.clean, warned.warnings) == (True, False, 1)
    failed = verify(as_jsonl(user("u", None), user("u", None)), verify_checks(CLAUDE))
    assert (failed.ok, failed.clean, failed.errors) == (False, False, 1)
    continued = verify(
        as_jsonl(user("u", "gone")), verify_checks(CLAUDE)
    )  # a parent in another file
    assert (continued.ok, continued.clean, continued.warnings) == (True, False, 1)


def test_records_counts_json_values_only() -> None:
    data = as_jsonl(user("u", None), b"[1]", b'{"type":"x","type":"x"}') + b"\n{bad\n{bad\n"
    assert verify(data, verify_checks(CLAUDE)).records == 2


def test_report_json_shape() -> None:
    report = verify(as_jsonl(user("u", "gone")), verify_checks(CLAUDE))
    data = orjson.loads(report.model_dump_json())
    assert set(data) == {"provider", "findings", "errors", "warnings", "records", "bytes", "ok",
                         "clean", "groups", "resume_verdict"}  # fmt: skip
    assert data["findings"] == [
        {
            "severity": "warning",
            "line_index": 0,
            "code": "broken_parent_chain",
            "message": "parentUuid matches no uuid on an earlier line (a session continued "
            "from another file, or a parent that was never written)",
        }
    ]
    assert VerifyReport.model_validate(data) == report


def test_findings_are_sorted_by_line() -> None:
    # Linkage findings come in file order, pairing findings at the end: the report sorts.
    data = as_jsonl(
        assistant("a", None, tool_use("t1")),  # 0: orphaned_tool_use, found last
        user("b", "gone"),  # 1: broken_parent_chain
        b"{bad",  # 2
        user("c", "a"),  # 3: the leaf, so "a" is on the live branch
    )
    assert check(data, CLAUDE) == [
        ("orphaned_tool_use", "error", 0),
        ("broken_parent_chain", "warning", 1),
        ("invalid_json", "error", 2),
    ]


def test_sink_sorts_whole_file_findings_last_and_keeps_line_order_stable() -> None:
    sink = FindingSink()
    sink.add(FindingCode.BLANK_LINE, 5)
    sink.add(FindingCode.TRANSCRIPT_LIMIT, None, LimitKind.BYTES, 9, 8)
    sink.add(FindingCode.UNSUPPORTED_RESPONSE_ITEM, 2)
    sink.add(FindingCode.INVALID_ORDINAL, 2)
    sink.add(FindingCode.EMPTY, 0)
    got = [(f.code.value, f.line_index) for f in sink.findings()]
    assert got == [
        ("empty", 0),
        ("unsupported_response_item", 2),
        ("invalid_ordinal", 2),
        ("blank_line", 5),
        ("transcript_limit", None),
    ]


# -- no transcript content in any message --------------------------------------------------

SECRET = "hunter2-Zx9"


def secret_transcripts() -> list[tuple[bytes, Provider]]:
    """Transcripts that trigger many codes, the secret in every id, key and text."""
    s = SECRET
    claude = (
        as_jsonl(
            user(s, None, s),
            user(s, s + "x", [{"type": "text", "text": s}]),
            assistant(s + "a", s, tool_use(s, s)),
            user(s + "r", s + "a", tool_result(s + "other")),
            {"type": "last-prompt", "leafUuid": s + "missing"},
            {"type": "user", "uuid": s + "\x01", "parentUuid": 5},
            {"type": "last-prompt", "leafUuid": ""},
            b'{"type":"user","' + s.encode() + b'":1,"' + s.encode() + b'":2}',
            b"[" + json.dumps(s).encode() + b"]",
        )
        + json.dumps({"type": s}).encode()[:-3]
    )
    codex = as_jsonl(
        {"type": "compacted", "payload": {"replacement_history": s}},
        item(call(s), ordinal=5),
        item(output(s, s), ordinal=3),
        item(call(s), ordinal=-1),
        item(output(s + "y", s)),
        item(output(s + "y", s)),
        item({"type": "message", "role": "user", "content": [{"type": "image", "data": s}]}),
        {"type": "response_item", "payload": s},
    )
    return [(claude, CLAUDE), (codex, CODEX)]


@pytest.mark.parametrize("index", [0, 1])
def test_no_message_quotes_the_transcript(index: int) -> None:
    data, provider = secret_transcripts()[index]
    report = verify(data, verify_checks(provider))
    assert len({f.code for f in report.findings}) >= 7
    assert SECRET not in report.model_dump_json()


# -- properties ----------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = ["type", "uuid", "parentUuid", "message", "role", "content", "id", "tool_use_id",
        "call_id", "payload", "ordinal", "replacement_history", "leafUuid", "isSidechain",
        "output", "text", "agentId"]  # fmt: skip
TYPES = ["user", "assistant", "last-prompt", "progress", "response_item", "compacted",
         "tool_use", "tool_result", "function_call", "function_call_output", "message",
         "custom_tool_call_output", "input_text", "image"]  # fmt: skip
# Records built from the words the checks look at, so the checks really run on them.
shaped_values = st.recursive(
    json_scalars | st.sampled_from(TYPES) | st.sampled_from(["u", "a", "t1"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=16,
)
records = st.dictionaries(st.sampled_from(KEYS), shaped_values, max_size=6)


def _sorted_by_line(findings: list[Finding]) -> bool:
    keys = [(f.line_index is None, f.line_index or 0) for f in findings]
    return keys == sorted(keys)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(records | st.sampled_from([b"", b"{bad", b"[]"]) | json_values, max_size=12),
    st.sampled_from(list(Provider)),
)
def test_any_transcript_verifies_sorted_and_consistent(
    lines: list[Any], provider: Provider
) -> None:
    data = b"\n".join(line if isinstance(line, bytes) else orjson.dumps(line) for line in lines)
    report = verify(data, verify_checks(provider))
    assert _sorted_by_line(report.findings)
    assert report.errors + report.warnings == len(report.findings)
    assert all(f.line_index is None or 0 <= f.line_index < len(lines) for f in report.findings)
    assert all(RULES[f.code][0] is f.severity for f in report.findings)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=5), st.booleans())
def test_duplicate_keys_are_found_whatever_the_spelling(
    obj: dict[str, Any], ascii_escaped: bool
) -> None:
    body = {"type": "x", "v": [obj]}
    spelled = json.dumps(body, ensure_ascii=True) if ascii_escaped else orjson.dumps(body).decode()
    assert check(spelled.encode() + b"\n", CODEX) == []
    key = next(iter(obj))
    if ascii_escaped:  # the slow path: a spelling orjson does not write
        inner = json.dumps(obj)
        line = '{"type": "x", "v": [' + inner[:-1] + ", " + json.dumps(key) + ": 0}]}"
    else:  # orjson's own spelling: only the dropped key breaks the round trip
        inner = orjson.dumps(obj).decode()
        line = '{"type":"x","v":[' + inner[:-1] + "," + orjson.dumps(key).decode() + ":0}]}"
    assert check(line.encode() + b"\n", CODEX) == [("ambiguous_json", "error", 0)]


def test_helpers_build_what_the_checks_read() -> None:
    # Guards the shared builders: a paired call/output and a compacted window verify clean.
    assert check(as_jsonl(item(call("c")), item(output("c")), compacted(call("d"), output("d"))),
                 CODEX) == []  # fmt: skip
    assert check(as_jsonl(assistant("a", None, tool_use("t")), user("u", "a", tool_result("t"))),
                 CLAUDE) == []  # fmt: skip


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("web_search_call", "web_search_call"),
        ("\x1b[31mred", "unnamed"),
        ("[@click=app.quit]", "unnamed"),
        ("x" * 41, "unnamed"),
        (7, "unnamed"),
        (None, "unnamed"),
    ],
)
def test_a_finding_names_an_item_type_only_when_it_is_an_identifier(
    value: object, shown: str
) -> None:
    from gobtui.core.verify.findings import item_type

    assert item_type(value) == shown
