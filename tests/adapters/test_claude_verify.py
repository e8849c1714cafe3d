"""Claude Code's verify checks (adapters.providers.claude.verify, reached through the registry):
linkage, the chain head, pairing on the live branch."""

from __future__ import annotations

from typing import Any

import pytest

from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.model import Provider
from gobtui.core.verify import verify
from gobtui.core.verify.ids import valid_id
from tests.builders.claude import assistant, tool_result, tool_use, user
from tests.builders.common import as_jsonl
from tests.core.verify_cases import check

CLAUDE = Provider.CLAUDE


def run(*records: dict[str, Any] | bytes) -> list[tuple[str, str, int | None]]:
    return check(as_jsonl(*records), CLAUDE)


def test_a_clean_conversation() -> None:
    assert (
        run(
            {"type": "summary", "summary": "s", "leafUuid": "u1"},
            user("u1", None),
            assistant("u2", "u1", tool_use("t1")),
            user("u3", "u2", tool_result("t1")),
            assistant("s1", "u3", "x", isSidechain=True),
            assistant("s2", "s1", "y", isSidechain=True),
            {"type": "attachment", "attachment": {"files": 1}},
            {"type": "last-prompt", "leafUuid": "u3"},
        )
        == []
    )


# -- linkage -------------------------------------------------------------------------------


@pytest.mark.parametrize("uuid", ["", 5, None, "a\x01b", "a\x85b", "x" * 257, "é" * 129])
def test_invalid_uuid(uuid: object) -> None:
    assert run(user("u", None), {"type": "user", "uuid": uuid}) == [("invalid_uuid", "error", 1)]


def test_valid_ids_at_the_bounds() -> None:
    assert valid_id("x" * 256) and valid_id("é" * 128) and valid_id("a b")
    assert not valid_id("x" * 257) and not valid_id("é" * 129) and not valid_id("\x7f")


@pytest.mark.parametrize("parent", [5, "", ["u"], "u\n"])
def test_invalid_parent_uuid(parent: object) -> None:
    record = {"type": "user", "uuid": "v", "parentUuid": parent}
    found = run(user("u", None), record)
    assert ("invalid_parent_uuid", "error", 1) in found
    # A string parent is looked up too (and found nowhere); nothing else is said.
    assert set(found) <= {
        ("invalid_parent_uuid", "error", 1),
        ("broken_parent_chain", "warning", 1),
    }


def test_invalid_parent_uuid_alone() -> None:
    assert run(user("u", None), {"type": "user", "uuid": "v", "parentUuid": 7}) == [
        ("invalid_parent_uuid", "error", 1)
    ]


def test_records_without_a_uuid_are_exempt_from_linkage() -> None:
    assert run({"type": "system", "parentUuid": "nope", "content": "x"}) == []


def test_broken_parent_chain() -> None:
    assert run(user("u1", None), assistant("u2", "gone")) == [("broken_parent_chain", "warning", 1)]


def test_a_parent_on_a_later_line_is_broken_too() -> None:
    assert run(user("child", "parent"), user("parent", None)) == [
        ("broken_parent_chain", "warning", 0)
    ]


def test_a_sidechain_may_parent_onto_any_earlier_record() -> None:
    assert run(user("u", None), assistant("a", "u"), user("s", "u", isSidechain=True)) == []


def test_duplicate_uuid() -> None:
    report = verify(
        as_jsonl(user("u", None), user("v", "u"), user("u", "v")), verify_checks(CLAUDE)
    )
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("duplicate_uuid", "error", 2)
    ]
    assert report.findings[0].message == "uuid already used by record 1"


# -- the chain head ------------------------------------------------------------------------


@pytest.mark.parametrize("leaf", [3, "", None])
def test_invalid_chain_head(leaf: Any) -> None:
    record = {"type": "last-prompt", "leafUuid": leaf}
    assert run(user("u", None), record) == [("invalid_chain_head", "warning", 1)]


def test_a_last_prompt_without_a_leaf_is_the_current_format() -> None:
    # Claude Code 2.1.97 and later write lastPrompt and sessionId only
    record = {"type": "last-prompt", "lastPrompt": "go on", "sessionId": "s"}
    assert run(user("u", None), record) == []


def test_missing_chain_head() -> None:
    assert run(user("u", None), {"type": "last-prompt", "leafUuid": "gone"}) == [
        ("missing_chain_head", "error", 1)
    ]


def test_only_the_last_named_head_counts() -> None:
    head = {"type": "last-prompt", "leafUuid": "gone"}
    assert run(user("u", None), head, {"type": "last-prompt", "leafUuid": "u"}) == []
    assert run(user("u", None), {"type": "last-prompt", "leafUuid": "u"}, head) == [
        ("missing_chain_head", "error", 2)
    ]


# -- pairing -------------------------------------------------------------------------------


def test_orphaned_tool_use() -> None:
    assert run(
        user("u1", None),
        assistant("u2", "u1", tool_use("t1")),
        user("u3", "u2", "next"),
    ) == [("orphaned_tool_use", "error", 1)]


def test_orphaned_tool_result() -> None:
    assert run(
        user("u1", None, tool_result("t9")),
        assistant("u2", "u1", "x"),
    ) == [("orphaned_tool_result", "warning", 0)]


def test_a_result_before_its_use_pairs_nothing() -> None:
    assert run(
        user("u1", None, tool_result("t1")),
        assistant("u2", "u1", tool_use("t1")),
    ) == [("orphaned_tool_result", "warning", 0), ("interrupted_tool_use", "warning", 1)]


def test_duplicate_tool_call_id() -> None:
    report = verify(
        as_jsonl(
            user("u", None),
            assistant("a", "u", tool_use("t1")),
            user("r1", "a", tool_result("t1")),
            assistant("b", "r1", tool_use("t1")),
            user("r2", "b", tool_result("t1")),
        ),
        verify_checks(CLAUDE),
    )
    assert [(f.code, f.severity, f.line_index) for f in report.findings] == [
        ("duplicate_tool_call_id", "error", 3)
    ]
    assert report.findings[0].message == "tool call id already used by record 2 of the live context"


def test_duplicate_tool_call_id_inside_one_record() -> None:
    assert run(
        user("u", None),
        assistant("a", "u", tool_use("t1", "t1")),
        user("r", "a", tool_result("t1")),
    ) == [("duplicate_tool_call_id", "error", 1)]


def test_only_the_supported_envelope_pairs() -> None:
    # A tool_result in an assistant record, a tool_use under another role: neither counts.
    odd_result = assistant("r", "a", tool_result("t1"))
    odd_use = {"type": "assistant", "uuid": "a", "parentUuid": "u",
               "message": {"role": "user", "content": tool_use("t1")}}  # fmt: skip
    assert run(user("u", None), odd_use, odd_result) == []
    assert run(user("u", None), assistant("a", "u", tool_use("t1")), odd_result) == [
        ("interrupted_tool_use", "warning", 1)
    ]


# -- the live branch -----------------------------------------------------------------------


def test_pairing_ignores_a_dead_branch() -> None:
    # u -> a(t1) -> r(t1) -> x(t2, never answered); the session went on from r to z instead.
    records = [
        user("u", None),
        assistant("a", "u", tool_use("t1")),
        user("r", "a", tool_result("t1")),
        assistant("x", "r", tool_use("t2")),
        user("z", "r", "let us do something else"),
    ]
    assert run(*records) == []
    # The same call ending the live branch is an interrupted one (the client answers it).
    assert run(*records[:4]) == [("interrupted_tool_use", "warning", 3)]


def test_a_result_only_on_a_dead_branch_leaves_the_use_orphaned() -> None:
    assert run(
        user("u", None),
        assistant("a", "u", tool_use("t1")),
        user("side", "a", "abandoned"),
        user("res", "side", tool_result("t1")),  # hangs off a dead record
        user("live", "a", "the live turn"),
    ) == [("orphaned_tool_use", "error", 1)]


def test_parallel_tool_results_are_rescued_onto_the_live_branch() -> None:
    # One API response split into two records (same message.id), each result hanging off the
    # record holding its call; the next turn continues from the second result only.
    records = [
        user("u", None),
        assistant("a1", "u", tool_use("t1"), msg_id="m"),
        assistant("a2", "a1", tool_use("t2"), msg_id="m"),
        user("r1", "a1", tool_result("t1")),
        user("r2", "a2", tool_result("t2")),
        assistant("n", "r2", "done"),
    ]
    assert run(*records) == []


def test_streaming_siblings_share_the_live_message() -> None:
    # a2 is off the walk (the turn continues from a1) but is the same API message: live.
    assert run(
        user("u", None),
        assistant("a1", "u", "thinking", msg_id="m"),
        assistant("a2", "a1", tool_use("t1"), msg_id="m"),
        user("r", "a1", "next"),
    ) == [("orphaned_tool_use", "error", 2)]


def test_last_prompt_names_the_leaf() -> None:
    records = [
        user("u", None),
        assistant("a", "u", tool_use("t1")),  # unanswered
        user("b", "u", "another try"),
    ]
    assert run(*records) == []  # the newest record is the leaf: "a" is dead
    head = {"type": "last-prompt", "leafUuid": "a"}
    assert run(*records, head) == [("interrupted_tool_use", "warning", 1)]


def test_a_later_conversation_record_supersedes_the_last_prompt() -> None:
    head = {"type": "last-prompt", "leafUuid": "a"}
    records = [user("u", None), assistant("a", "u", tool_use("t1")), head, user("b", "u")]
    assert run(*records) == []


def test_sidechain_records_of_a_main_file_are_another_context() -> None:
    main = [
        user("u", None, isSidechain=False),
        assistant("s", "u", tool_use("t1"), isSidechain=True, agentId="x"),
        user("v", "u", "go on", isSidechain=False),
    ]
    assert run(*main) == []
    # In a subagent's own file every record is a sidechain one, and pairing applies.
    sub = [
        user("u", None, isSidechain=True, agentId="x"),
        assistant("s", "u", tool_use("t1"), isSidechain=True, agentId="x"),
        user("v", "s", "go on", isSidechain=True, agentId="x"),
    ]
    assert run(*sub) == [("orphaned_tool_use", "error", 1)]


def test_records_without_a_uuid_stay_in_the_live_context() -> None:
    bare_use = {"type": "assistant", "message": {"role": "assistant", "content": tool_use("t")}}
    assert run(user("u", None), bare_use) == [("interrupted_tool_use", "warning", 1)]
