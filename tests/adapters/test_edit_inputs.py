"""Finished edits' inputs as elision candidates: the content a Claude Edit/Write/MultiEdit or a
Codex patch carried is in the file once the edit was made, so a plan may stub it; the newest
edit of each file, a failed edit and the protected tail stay whole. Real files, the real
parse, plan and rewrite, and the fork verified."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.adapters.providers.codex.inputs import patched_paths
from gobtui.adapters.providers.registry import parse_transcript, verify_checks
from gobtui.adapters.rewrite.apply import apply_plan
from gobtui.core.admission import protected_lines
from gobtui.core.edits import INPUT_STUB
from gobtui.core.model import Provider, Transcript, TranscriptItem
from gobtui.core.paths import call_paths
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies.common import candidates
from gobtui.core.verify import verify
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession
from tests.builders.common import stable_uuid

POLICY = PolicyConfig(trigger_tokens=20_000, floor_tokens=2_000, keep_recent_tool_outputs=2)
CODE = "\n".join(f"    total_{n} = round(line.amount * rate, 2)  # step {n}" for n in range(40))
NOISE = "\n".join(f"worker {n}: queue depth nominal" for n in range(900))
STUB_HEAD = INPUT_STUB.partition("{bytes}")[0]


def _inputs(transcript: Transcript) -> list[TranscriptItem]:
    return [item for item in transcript.items if item.elidable and item.elides_input]


def _records(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _claude_session(tmp_path: Path) -> Path:
    session = ClaudeSession(stable_uuid("edit-inputs", "claude"))
    session.prompt("round the totals per line item")
    a, b = "/home/dev/shop/totals.py", "/home/dev/shop/cart.py"
    session.tool("Edit", {"file_path": a, "old_string": CODE, "new_string": CODE + "\n"}, "ok")
    session.tool("Write", {"file_path": b, "content": CODE}, "File created successfully")
    session.tool(
        "Edit",
        {"file_path": a, "old_string": "missing " + CODE, "new_string": CODE},
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        is_error=True,
    )
    session.tool(
        "MultiEdit",
        {"file_path": a, "edits": [{"old_string": CODE, "new_string": CODE + " "}] * 2},
        "Applied 2 edits",
    )
    session.tool("Edit", {"file_path": b, "old_string": CODE, "new_string": "pass"}, "ok")
    for turn in range(6):
        session.tool("Bash", {"command": f"tail -n 900 /var/log/w{turn}.log"}, NOISE)
    session.say("Done with the totals.", final=True)
    return session.write(tmp_path / "projects")


def test_claude_edit_inputs_become_candidates_once_made_and_newest_per_file_stays(
    tmp_path: Path,
) -> None:
    transcript = parse_transcript(Provider.CLAUDE, str(_claude_session(tmp_path)))
    inputs = _inputs(transcript)
    # the failed edit carries content no file holds: not elidable
    assert [item.label for item in inputs] == ["Edit", "Write", "MultiEdit", "Edit"]
    assert all(item.elidable_parts == 1 for item in inputs)
    # the summary shows the call by its path, not its content
    assert all("old_string" not in (item.summary or "") for item in inputs)
    first_a, only_b_write, multi_a, last_b = inputs
    protected = protected_lines(transcript, POLICY.keep_recent_tool_outputs)
    assert multi_a.line_index in protected and last_b.line_index in protected
    chosen = {item.line_index for item in candidates(transcript, POLICY)}
    assert {first_a.line_index, only_b_write.line_index} <= chosen
    assert not chosen & {multi_a.line_index, last_b.line_index}


def test_a_claude_fork_stubs_the_content_and_keeps_the_call(tmp_path: Path) -> None:
    path = _claude_session(tmp_path)
    session = load_session(path, Provider.CLAUDE)
    plan = plan_session(session, "compacted", POLICY).plan
    assert plan is not None and plan.digest is not None
    transcript = parse_transcript(Provider.CLAUDE, str(path))
    first_a = _inputs(transcript)[0]
    assert first_a.line_index in plan.elided_lines
    data = path.read_bytes()
    fork = apply_plan(data, Provider.CLAUDE, plan, transcript)
    before = _records(data)[first_a.line_index]
    after = _records(fork)[first_a.line_index]
    old_call, new_call = before["message"]["content"][0], after["message"]["content"][0]
    assert new_call["id"] == old_call["id"] and new_call["name"] == "Edit"
    assert new_call["input"]["file_path"] == "/home/dev/shop/totals.py"
    assert new_call["input"]["old_string"].startswith(STUB_HEAD)
    assert str(len(CODE) * 2 + 1) in new_call["input"]["old_string"]
    assert new_call["input"]["new_string"] == ""
    assert json.dumps(CODE)[1:-1].encode() in fork  # the newest edit of each file is whole
    assert verify(fork, verify_checks(Provider.CLAUDE)).ok
    # the card names the edited file, and none of what the edit wrote
    card = plan.digest
    assert "/home/dev/shop/totals.py" in card.files_touched
    assert "round(line.amount" not in card.render()


def _codex_session(tmp_path: Path) -> Path:
    session = CodexSession(stable_uuid("edit-inputs", "codex"))
    session.meta()
    session.turn("round the totals per line item")
    body = "\n".join(f"-    old_{n} = 1\n+    new_{n} = 2" for n in range(40))
    session.patch("/home/dev/api/totals.py", body)
    heredoc = (
        "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: api/cart.py\n@@\n"
        + body
        + "\n*** End Patch\nPATCH"
    )
    session.tool(
        "shell",
        {"command": ["bash", "-lc", heredoc]},
        '{"output":"bash: warning: here-document\\nSuccess. Updated the following files:\\n'
        'M api/cart.py\\n","metadata":{"exit_code":0}}',
    )
    session.tool(
        "shell",
        {"command": ["bash", "-lc", heredoc.replace("cart", "tax")]},
        "error: Failed to find expected lines in api/tax.py",
    )
    session.patch("/home/dev/api/totals.py", body.replace("new", "newer"))
    session.tool(
        "shell",
        {"command": ["bash", "-lc", heredoc + " "]},
        "Success. Updated the following files:",
    )
    for turn in range(6):
        session.shell(f"tail -n 900 /var/log/w{turn}.log", NOISE)
    session.answer("Done with the totals.")
    return session.write(tmp_path / "sessions")


def test_codex_applied_patches_become_candidates_and_failed_ones_do_not(tmp_path: Path) -> None:
    transcript = parse_transcript(Provider.CODEX, str(_codex_session(tmp_path)))
    inputs = _inputs(transcript)
    assert [item.label for item in inputs] == ["apply_patch", "shell", "apply_patch", "shell"]
    assert inputs[0].summary == "apply_patch(*** Update File: /home/dev/api/totals.py)"
    chosen = {item.line_index for item in candidates(transcript, POLICY)}
    # the older patch of each file is a candidate; the newest of each is not
    assert chosen & {item.line_index for item in inputs} == {
        inputs[0].line_index,
        inputs[1].line_index,
    }


def test_a_codex_fork_keeps_the_patch_file_lines_and_valid_arguments(tmp_path: Path) -> None:
    path = _codex_session(tmp_path)
    transcript = parse_transcript(Provider.CODEX, str(path))
    custom, shell = _inputs(transcript)[:2]
    plan = plan_session(load_session(path, Provider.CODEX), "compacted", POLICY).plan
    assert plan is not None
    assert {custom.line_index, shell.line_index} <= set(plan.elided_lines)
    fork = apply_plan(path.read_bytes(), Provider.CODEX, plan, transcript)
    records = _records(fork)
    patch = records[custom.line_index]["payload"]["input"]
    lines = patch.split("\n")
    assert lines[:2] == ["*** Begin Patch", "*** Update File: /home/dev/api/totals.py"]
    assert lines[2].startswith(STUB_HEAD) and lines[3:] == ["*** End Patch"]
    arguments = json.loads(records[shell.line_index]["payload"]["arguments"])
    script = arguments["command"][2].split("\n")
    assert script[0] == "apply_patch <<'PATCH'" and script[-1] == "PATCH"
    assert "*** Update File: api/cart.py" in script and "+    new_3 = 2" not in script
    assert verify(fork, verify_checks(Provider.CODEX)).ok


def test_a_patchs_file_lines_are_the_paths_of_its_call() -> None:
    """Codex's patch notation is read in one place (codex.inputs): a file it names is a path
    of the call even when nothing else would take it for one (no folder, no extension)."""
    patch = "*** Begin Patch\n*** Update File: Makefile\n@@\n-a\n+b\n*** Add File: docs/x.md\n"
    assert patched_paths(patch) == ["Makefile", "docs/x.md"]
    assert call_paths({"input": patch}, patched_paths) == ("Makefile", "docs/x.md")
    assert call_paths({"input": patch}) == ("docs/x.md",)  # core knows no provider's notation
