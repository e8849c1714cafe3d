"""Codex's verify checks (adapters.providers.codex.verify, reached through the registry):
ordinals, compacted windows, supported shapes, pairing."""

from __future__ import annotations

from typing import Any

import pytest

import gobtui.adapters.providers.codex.verify as codex_module
from gobtui.adapters.providers.codex.verify import supported_item
from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.model import Provider
from gobtui.core.verify import verify
from tests.builders.codex import call, compacted, item, output
from tests.builders.common import as_jsonl
from tests.core.verify_cases import check

CODEX = Provider.CODEX


def run(*records: dict[str, Any] | bytes) -> list[tuple[str, str, int | None]]:
    return check(as_jsonl(*records), CODEX)


def message(role: str, content: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


def test_a_clean_rollout() -> None:
    assert (
        run(
            {"timestamp": "t", "ordinal": 1, "type": "session_meta", "payload": {"id": "s"}},
            item(message("user", []), ordinal=2),
            item(call("c1"), ordinal=3),
            item(output("c1"), ordinal=4),
            {"timestamp": "t", "ordinal": 5, "type": "token_usage_record", "payload": {}},
            {"ordinal": 6, **compacted(call("c9"), output("c9"))},
        )
        == []
    )


# -- ordinals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ordinal", [b"-1", b'"3"', b"1.5", b"2.0", b"true", b"null", b"18446744073709551616"]
)
def test_invalid_ordinal(ordinal: bytes) -> None:
    line = b'{"type":"x","ordinal":' + ordinal + b"}"
    assert run(item(message("user", "hi"), ordinal=0), line) == [("invalid_ordinal", "error", 1)]


def test_the_largest_ordinal_is_valid() -> None:
    assert run({"type": "x", "ordinal": 2**64 - 1}) == []


def test_non_monotonic_ordinal() -> None:
    report = verify(
        as_jsonl(
            item(message("user", "a"), ordinal=1),
            item(message("user", "b"), ordinal=3),
            {"type": "event_msg", "payload": {}},  # no ordinal: skipped over
            item(message("user", "c"), ordinal=2),
            item(message("user", "d"), ordinal=2),  # equal is fine
        ),
        verify_checks(CODEX),
    )
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("non_monotonic_ordinal", "warning", 3)
    ]
    assert report.findings[0].message == "ordinal is lower than the ordinal of record 2"


# -- record shapes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload", [{"type": "compaction"}, {"replacement_history": "nope"}, "text", None]
)
def test_malformed_compacted(payload: object) -> None:
    assert run({"type": "compacted", "payload": payload}) == [("malformed_compacted", "error", 0)]


def test_missing_payload_of_a_compacted_record() -> None:
    assert run({"type": "compacted"}) == [("malformed_compacted", "error", 0)]


@pytest.mark.parametrize("payload", [None, [], "text", 3])
def test_invalid_response_item(payload: object) -> None:
    assert run({"type": "response_item", "payload": payload}) == [
        ("invalid_response_item", "error", 0)
    ]
    assert run({"type": "response_item"}) == [("invalid_response_item", "error", 0)]


SUPPORTED = [
    message("user", "plain"),
    message("developer", []),
    message("assistant", [{"type": "output_text", "text": "a"}, {"type": "text", "text": "b"}]),
    message("system", [{"type": "input_text", "text": "a"}]),
    call("c"),
    {"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": "x"},
    {"type": "local_shell_call", "id": "c", "action": {"command": ["ls"]}},
    {"type": "function_call_output", "tool_call_id": "c", "output": "x"},
    {"type": "function_call_output", "call_id": "c", "output": "x", "id": "fc_1",
     "internal_chat_message_metadata_passthrough": {}},
    {"type": "custom_tool_call_output", "call_id": "c",
     "output": [{"type": "input_text", "text": "x"}]},
    {"type": "reasoning", "summary": [], "encrypted_content": "opaque"},
    {"type": "agent_message", "message": "hi"},
]  # fmt: skip

UNSUPPORTED = [
    message("user", [{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "u"}]),
    message("user", [{"type": "output_text", "text": "a", "annotations": []}]),
    message("tool", "x"),
    {"type": "message", "role": "user"},
    message("user", None),
    {"type": "function_call", "name": "shell"},  # no id
    {"type": "function_call", "call_id": 7, "id": "c"},  # the first present key decides
    {"type": "function_call", "call_id": ""},
    {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "x"}]},
    {"type": "function_call_output", "call_id": "c", "output": "x", "status": "done"},
    {"type": "custom_tool_call_output", "call_id": "c", "output": "x"},
    {"type": "custom_tool_call_output", "call_id": "c",
     "output": [{"type": "output_text", "text": "x"}]},
    {"type": "custom_tool_call_output", "call_id": "c",
     "output": [{"type": "input_text", "text": "x"}, {"type": "image", "data": "d"}]},
    {"type": "custom_tool_call_output", "call_id": "c", "output": []},
    {"type": "web_search_call", "action": {}, "status": "completed"},
    {"type": "compaction", "encrypted_content": "opaque"},
    {"type": ["message"], "role": ["user"], "content": "x"},
    {"role": "user", "content": "x"},
]  # fmt: skip


@pytest.mark.parametrize("payload", SUPPORTED)
def test_supported_shapes(payload: dict[str, Any]) -> None:
    assert supported_item(payload)


@pytest.mark.parametrize("payload", UNSUPPORTED)
def test_unsupported_response_item(payload: dict[str, Any]) -> None:
    assert not supported_item(payload)
    found = run(item(message("user", "hi")), item(payload))
    assert found[0] == ("unsupported_response_item", "warning", 1)
    # An unsupported call or output may also be unpaired; nothing else is said about it.
    assert {f[0] for f in found} <= {"unsupported_response_item", "unpaired_tool_call",
                                     "orphaned_tool_result"}  # fmt: skip


def test_unsupported_items_in_the_replacement_history_point_at_its_line() -> None:
    image = message("user", [{"type": "input_image", "image_url": "u"}])
    assert run(item(message("user", "hi")), compacted(message("user", "a"), image, image)) == [
        ("unsupported_response_item", "warning", 1),
        ("unsupported_response_item", "warning", 1),
    ]


def test_a_superseded_window_is_not_checked() -> None:
    image = message("user", [{"type": "input_image", "image_url": "u"}])
    assert run(item(image), item(call("lost")), compacted(message("user", "summary"))) == []


# -- pairing over the effective context ----------------------------------------------------


def test_unpaired_tool_call() -> None:
    assert run(item(call("c1")), item(message("user", "next"))) == [
        ("unpaired_tool_call", "warning", 0)
    ]


def test_an_unpaired_call_in_the_replacement_history() -> None:
    assert run(compacted(call("c7"))) == [("unpaired_tool_call", "warning", 0)]


def test_orphaned_tool_result() -> None:
    assert run(item(message("user", "hi")), item(output("c9"))) == [
        ("orphaned_tool_result", "warning", 1)
    ]


def test_an_output_before_its_call_answers_nothing() -> None:
    assert run(item(output("c1")), item(call("c1"))) == [
        ("orphaned_tool_result", "warning", 0),
        ("unpaired_tool_call", "warning", 1),
    ]


def test_order_counts_inside_one_replacement_history() -> None:
    assert run(compacted(output("c1"), call("c1"))) == [
        ("orphaned_tool_result", "warning", 0),
        ("unpaired_tool_call", "warning", 0),
    ]


def test_an_output_in_a_superseded_window_answers_nothing() -> None:
    assert run(item(output("c1")), compacted(call("c1"))) == [("unpaired_tool_call", "warning", 1)]


def test_a_call_in_the_history_is_answered_by_a_later_record() -> None:
    assert run(compacted(call("c1")), item(output("c1"))) == []


def test_duplicate_tool_call_id() -> None:
    report = verify(
        as_jsonl(item(call("c1")), item(call("c1")), item(output("c1"))), verify_checks(CODEX)
    )
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("duplicate_tool_call_id", "error", 1)
    ]
    assert report.findings[0].message == "tool call id already used by record 1 of the live context"


def test_a_repeated_call_needs_an_output_of_its_own() -> None:
    assert run(item(call("c1")), item(output("c1")), item(call("c1"))) == [
        ("duplicate_tool_call_id", "error", 2),
        ("unpaired_tool_call", "warning", 2),
    ]


def test_duplicate_tool_result() -> None:
    report = verify(
        as_jsonl(item(call("c1")), item(output("c1")), item(output("c1"))), verify_checks(CODEX)
    )
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("duplicate_tool_result", "warning", 2)
    ]
    assert report.findings[0].message == "tool output id already answered by record 2"


def test_call_identity_aliases() -> None:
    by_tool_call_id = {"type": "function_call_output", "tool_call_id": "c1", "output": "x"}
    by_id = {"type": "custom_tool_call", "id": "c2", "name": "x", "input": "y"}
    answer = {"type": "custom_tool_call_output", "call_id": "c2",
              "output": [{"type": "input_text", "text": "z"}]}  # fmt: skip
    assert run(item(call("c1")), item(by_tool_call_id), item(by_id), item(answer)) == []


# -- limits --------------------------------------------------------------------------------


def test_transcript_limit_of_a_replacement_history(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex_module, "VERIFY_MAX_CONTEXT_ITEMS", 2)
    report = verify(
        as_jsonl(item(call("old")), compacted(call("a"), call("b"), call("c"))),
        verify_checks(CODEX),
    )
    # The oversized window is not read; the one before it is superseded all the same.
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("transcript_limit", "error", 1)
    ]
    assert report.findings[0].message == "replacement history item limit exceeded: 3 > 2"


def test_transcript_limit_of_the_effective_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex_module, "VERIFY_MAX_CONTEXT_ITEMS", 2)
    data = as_jsonl(
        item(call("a"), ordinal=0),
        item(call("b"), ordinal=1),
        item(call("c"), ordinal=2),
        item(call("d"), ordinal=1),  # past the limit: not checked any more
    )
    report = verify(data, verify_checks(CODEX))
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("transcript_limit", "error", 2)
    ]
    assert report.findings[0].message == "effective context item limit exceeded: 3 > 2"
