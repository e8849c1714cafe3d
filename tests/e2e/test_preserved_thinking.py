"""The model server's preserved-thinking check, without the clients: a block it signed
verifies when sent back as it was; changing an earlier message, leaving out a thinking block
between others or moving one fails with the provider's 400; cache markers, string content and
a streaming split of one message into several records do not count; "drop" mode (or a request
asking for drop_block) drops the invalid blocks instead."""

from __future__ import annotations

import base64
import copy
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.e2e.harness import prefix_change
from tests.e2e.model_server import (
    REPLY,
    Mode,
    Request,
    Script,
    Step,
    Turn,
    invalid_thinking,
    model_server,
)

SCRIPT = Script(
    (
        Turn(
            "unit",
            (
                Step("Bash", {"command": "seq 1 3"}),
                Step("Read", {"file_path": "/project/a.py"}),
                Step("Bash", {"command": "false"}),
            ),
            "Decision: keep it. TODO: test it.",
        ),
    )
)
PROMPT = "[[drive:unit]] go"


def post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(
        f"{url}/v1/messages?beta=true", json.dumps(body).encode(),
        {"content-type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def assemble(stream: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The content blocks of a streamed response, put together as a client does, and the
    message_start message."""
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    start: dict[str, Any] = {}
    for line in stream.splitlines():
        if not line.startswith("data: "):
            continue
        event = json.loads(line[6:])
        if event["type"] == "message_start":
            start = event["message"]
        elif event["type"] == "content_block_start":
            blocks.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            delta, block = event["delta"], blocks[event["index"]]
            if delta["type"] == "signature_delta":
                block["signature"] += delta["signature"]
            elif delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    return blocks, start


def converse(url: str) -> list[dict[str, Any]]:
    """The whole scripted turn, played against the server: each request must be accepted."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    while True:
        status, stream = post(url, {"model": "m", "stream": True, "messages": messages})
        assert status == 200, stream
        blocks, _start = assemble(stream)
        messages.append({"role": "assistant", "content": blocks})
        tool = next((b for b in blocks if b["type"] == "tool_use"), None)
        if tool is None:
            return messages
        result = {"type": "tool_result", "tool_use_id": tool["id"], "content": "output " * 80}
        messages.append({"role": "user", "content": [result]})


@pytest.fixture(scope="module")
def conversation() -> list[dict[str, Any]]:
    with model_server("reject", SCRIPT) as (url, recorder):
        messages = converse(url)
        assert recorder.rejections == 0
    return messages


def answer(mode: Mode, messages: list[dict[str, Any]], **extra: Any) -> tuple[int, str, Any]:
    """(status, body, recorder) of one request of `messages` to a server in `mode`."""
    with model_server(mode) as (url, recorder):
        status, body = post(url, {"model": "m", "stream": True, "messages": messages, **extra})
        return status, body, recorder


def test_the_scripted_agent_signs_its_thinking_and_the_blocks_verify(
    conversation: list[dict[str, Any]],
) -> None:
    thinking = [
        b for m in conversation if m["role"] == "assistant" for b in m["content"]
        if b["type"] == "thinking"
    ]  # fmt: skip
    assert len(thinking) == 4  # three tool steps and the final text
    assert all(
        b["thinking"] == "" and len(base64.b64decode(b["signature"])) > 1_800 for b in thinking
    )
    assert conversation[-1]["content"][-1]["text"] == "Decision: keep it. TODO: test it."
    assert invalid_thinking(conversation) == []
    status, body, recorder = answer("reject", conversation)
    assert (status, recorder.rejections) == (200, 0) and REPLY in body


def test_a_changed_earlier_message_gets_the_providers_400(
    conversation: list[dict[str, Any]],
) -> None:
    changed = copy.deepcopy(conversation)
    changed[2]["content"][0]["content"] = "[stub]"  # the first tool output
    assert invalid_thinking(changed) == [
        "messages.3.content.0", "messages.5.content.0", "messages.7.content.0",
    ]  # fmt: skip
    status, body, recorder = answer("reject", changed)
    assert status == 400
    assert json.loads(body) == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.3.content.0: Invalid `signature` in `thinking` block. The block "
            "is bound to a different conversation. Remove the block, or set "
            '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".',
        },
    }
    assert recorder.rejections == 1 and recorder.rejected[0].startswith("messages.3.content.0:")


def test_a_thinking_block_left_out_between_others_invalidates_the_later_ones(
    conversation: list[dict[str, Any]],
) -> None:
    dropped = copy.deepcopy(conversation)
    del dropped[3]["content"][0]  # the second thinking block of four
    assert invalid_thinking(dropped) == ["messages.5.content.0", "messages.7.content.0"]
    assert answer("reject", dropped)[0] == 400
    last_left_out = copy.deepcopy(conversation)
    del last_left_out[7]["content"][0]  # the last one: nothing after it was bound to it
    assert invalid_thinking(last_left_out) == []


def test_a_moved_thinking_block_fails(conversation: list[dict[str, Any]]) -> None:
    moved = copy.deepcopy(conversation)
    moved[3]["content"].reverse()  # the thinking block now after its tool call
    assert invalid_thinking(moved)[0] == "messages.3.content.1"
    status, body, _recorder = answer("reject", moved)
    assert status == 400 and "messages.3.content.1: Invalid `signature`" in body


def test_cache_markers_string_content_and_split_messages_do_not_count(
    conversation: list[dict[str, Any]],
) -> None:
    marked = copy.deepcopy(conversation)
    marked[0]["content"] = [
        {"type": "text", "text": PROMPT, "cache_control": {"type": "ephemeral"}}
    ]
    marked[4]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    # One response's blocks as separate messages of one role, as a client's records are.
    split = marked[:3] + [
        {"role": "assistant", "content": [block]} for block in marked[3]["content"]
    ] + marked[4:]  # fmt: skip
    assert invalid_thinking(split) == []
    status, _body, recorder = answer("reject", split)
    assert (status, recorder.rejections) == (200, 0)


def test_drop_mode_drops_the_invalid_blocks_and_lists_them(
    conversation: list[dict[str, Any]],
) -> None:
    changed = copy.deepcopy(conversation)
    changed[4]["content"][0]["content"] = "[stub]"
    status, body, recorder = answer("drop", changed)
    assert status == 200 and recorder.rejections == 0
    assert recorder.dropped == ["messages.5.content.0", "messages.7.content.0"]
    _blocks, start = assemble(body)
    assert [t["location"] for t in start["input_transformations"]] == recorder.dropped
    # A request that asks for drop_block is answered so in "reject" mode too.
    binding = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    status, _body, recorder = answer("reject", changed, thinking=binding)
    assert status == 200 and recorder.rejections == 0 and len(recorder.dropped) == 2


def test_record_mode_checks_nothing(conversation: list[dict[str, Any]]) -> None:
    changed = copy.deepcopy(conversation)
    changed[2]["content"][0]["content"] = "[stub]"
    status, _body, recorder = answer("record", changed)
    assert status == 200 and not recorder.rejected and not recorder.dropped


def test_prefix_change_names_the_first_changed_message_and_the_thinking_around_it(
    conversation: list[dict[str, Any]],
) -> None:
    def request(messages: list[dict[str, Any]]) -> Request:
        return Request("POST", "/v1/messages", {}, b"", {"messages": messages})

    changed = copy.deepcopy(conversation)
    changed[4]["content"][0]["content"] = "[stub]"
    change = prefix_change(request(conversation), request(changed))
    assert (change.message, change.thinking_before, change.thinking_after) == (4, 2, 2)
    same = prefix_change(request(conversation), request(conversation))
    assert (same.message, same.thinking_before, same.thinking_after) == (None, 4, 0)
