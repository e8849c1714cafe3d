"""The state card keeps what matters, on real files planned as gobtui plans them.

Each Codex session hides one critical sentence (a prohibition, a pending effect, a revoked
approval, a warning) inside a big output of a tool named `read` that names no file: no file
view, so the sentence must reach the card. The Claude session's card lists paths as files,
no tool names as concepts, and no command output as decisions."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.core.edits import DigestBlock
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession
from tests.builders.common import stable_uuid

POLICY = PolicyConfig(trigger_tokens=30_000, floor_tokens=20_000)
NOISE = "\n".join(f"record {i}: queue depth nominal, shard {i % 7} healthy" for i in range(600))

CRITICAL = {
    "prohibition": ("Do NOT restart the ingest worker until the backfill finishes.", "constraints"),
    "pending": (
        "The refund for order 4411 is still pending; confirm it before retrying.",
        "open_tasks",
    ),
    "revoked": ("The deploy approval for prod was revoked by the release manager.", "constraints"),
    "warning": (
        "Never run the migration twice: the second run drops the ledger table.",
        "constraints",
    ),
}


def _card(path: Path, provider: Provider) -> DigestBlock:
    session = load_session(path, provider)
    plan = plan_session(session, "compacted", POLICY).plan
    assert plan is not None and plan.digest is not None
    return plan.digest


@pytest.mark.parametrize("case", sorted(CRITICAL))
def test_a_critical_sentence_inside_an_elided_output_reaches_the_card(
    case: str, tmp_path: Path
) -> None:
    sentence, field = CRITICAL[case]
    session = CodexSession(stable_uuid("card", case))
    session.meta()
    session.turn("check the ingest state before we touch anything")
    # Deep inside the output, not at its top: a head-only reading would miss nothing here,
    # but a tool name taken for a file view would.
    session.tool(
        "read", {"resource": "ops://ingest/state"}, NOISE[:4000] + f"\n{sentence}\n" + NOISE
    )
    session.answer("Noted.")
    for turn in range(12):
        session.turn(f"turn {turn}: tail the worker log")
        session.shell(f"tail -n 600 /var/log/worker-{turn}.log", NOISE)
        session.answer("Nothing new.")
    card = _card(session.write(tmp_path / "sessions"), Provider.CODEX)
    assert sentence in getattr(card, field), card.render()
    assert card.concepts == []


def test_a_claude_card_means_what_its_fields_say(tmp_path: Path) -> None:
    session = ClaudeSession(stable_uuid("card", "claude"))
    session.prompt("make the exporter stream its rows")
    session.tool("Read", {"file_path": "/home/dev/src/shop/shop/export.py"}, NOISE)
    session.tool("Grep", {"pattern": "def export", "output_mode": "content"}, NOISE)
    session.tool("Bash", {"command": "git status"}, "Changes not staged for commit:\n" + NOISE)
    session.tool(
        "Bash",
        {"command": "uv run pytest -q tests/test_export.py"},
        NOISE + "\nFAILED tests/test_export.py::test_stream - AssertionError: 3 != 4\n",
    )
    session.say("We decided to keep the CSV writer and stream through it.")
    for turn in range(12):
        session.prompt(f"turn {turn}: run the suite again")
        session.tool("Bash", {"command": "uv run pytest -q"}, NOISE + "\n14 passed, 0 failures")
        session.say(f"turn {turn}: green.", final=True)
    card = _card(session.write(tmp_path / "projects"), Provider.CLAUDE)
    text = card.render()
    assert card.concepts == [] and "concept:" not in text
    assert "/home/dev/src/shop/shop/export.py" in card.files_touched
    assert "tests/test_export.py" in card.files_touched
    assert all("(" not in path and " " not in path for path in card.files_touched)
    assert not any("Changes not staged" in line for line in card.decisions + card.files_touched)
    assert any("AssertionError: 3 != 4" in line for line in card.errors)
    assert not any("0 failures" in line for line in card.errors)
