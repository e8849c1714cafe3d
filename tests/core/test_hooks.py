"""core.hooks: merging gobtui's hook entries into a client's settings and taking them out
again, and what a hook payload must hold."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gobtui.core.hooks import (
    HOOK_POINTS,
    HookEvent,
    HookPayload,
    HookSettingsError,
    HookSkip,
    hook_command,
    install_into,
    is_ours,
    read_payload,
    remove_from,
)
from gobtui.core.model import Provider

EXE = "/opt/my tools/bin/gobtui"
CLAUDE = [p for p in HOOK_POINTS if p.provider is Provider.CLAUDE]
USER: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreCompact": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send x"}]}],
        "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}],
    },
}


def ours(doc: dict[str, Any]) -> list[str]:
    return [
        handler["command"]
        for groups in doc.get("hooks", {}).values()
        for group in groups
        for handler in group["hooks"]
        if is_ours(handler)
    ]


def test_install_adds_ours_after_the_users_and_keeps_everything_else() -> None:
    before = copy.deepcopy(USER)
    merged = install_into(USER, CLAUDE, EXE)
    assert before == USER  # the input is not edited in place
    assert merged.changed == ["claude:PreCompact", "claude:SessionStart"]
    doc = merged.doc
    assert doc["model"] == "opus" and doc["permissions"] == USER["permissions"]
    assert doc["hooks"]["Stop"] == USER["hooks"]["Stop"]
    assert doc["hooks"]["PreCompact"][0] == USER["hooks"]["PreCompact"][0]  # theirs first
    assert doc["hooks"]["SessionStart"] == [
        {
            "matcher": "compact",
            "hooks": [{"type": "command", "command": hook_command(EXE, HookEvent.SESSION_START)}],
        }
    ]
    assert ours(doc) == [
        "'/opt/my tools/bin/gobtui' hook pre-compact",
        "'/opt/my tools/bin/gobtui' hook session-start",
    ]
    again = install_into(doc, CLAUDE, "/elsewhere/gobtui")
    assert again.changed == [] and again.doc == doc
    assert again.unchanged == ["claude:PreCompact", "claude:SessionStart"]


def test_uninstall_takes_out_only_ours_and_gives_back_the_users_document() -> None:
    installed = install_into(USER, CLAUDE, EXE).doc
    removed = remove_from(installed, Provider.CLAUDE)
    assert removed.doc == USER
    assert removed.changed == ["claude:PreCompact", "claude:SessionStart"]
    assert remove_from(USER, Provider.CLAUDE).changed == []
    alone = remove_from(install_into({}, CLAUDE, EXE).doc, Provider.CLAUDE)
    assert alone.doc == {}


def test_a_handler_that_only_mentions_gobtui_is_not_ours() -> None:
    for command in (
        "echo gobtui hook pre-compact later",
        "notgobtui hook pre-compact",
        "gobtui mcp",
    ):
        assert not is_ours({"type": "command", "command": command})
    for command in ("gobtui hook pre-compact", "/usr/bin/gobtui hook session-start"):
        assert is_ours({"type": "command", "command": command})


@pytest.mark.parametrize(
    "doc", [[], "text", {"hooks": []}, {"hooks": {"PreCompact": {"matcher": ""}}}]
)
def test_a_document_of_another_shape_is_refused(doc: Any) -> None:
    with pytest.raises(HookSettingsError):
        install_into(doc, CLAUDE, EXE)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([], HookSkip.NOT_JSON),
        ({"transcript_path": "/a.jsonl"}, HookSkip.NO_SESSION),
        ({"session_id": "../../etc", "transcript_path": "/a.jsonl"}, HookSkip.NO_SESSION),
        ({"session_id": "s" * 129, "transcript_path": "/a.jsonl"}, HookSkip.NO_SESSION),
        ({"session_id": "abc-1", "transcript_path": "relative.jsonl"}, HookSkip.NO_TRANSCRIPT),
        ({"session_id": "abc-1", "transcript_path": 7}, HookSkip.NO_TRANSCRIPT),
        (
            {"session_id": "abc-1", "transcript_path": "/a.jsonl", "source": "compact"},
            HookPayload("abc-1", "/a.jsonl", "compact"),
        ),
        (
            {"session_id": "abc-1", "transcript_path": "/a.jsonl", "source": 3},
            HookPayload("abc-1", "/a.jsonl", ""),
        ),
    ],
)
def test_a_payload_is_read_or_refused_with_a_reason(value: Any, expected: object) -> None:
    assert read_payload(value) == expected
