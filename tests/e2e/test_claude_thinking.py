"""A fork that breaks a thinking block's prefix gets the provider's 400, with the real Claude
Code against the checking server: one early tool output of a driven session is stubbed while
every thinking block is kept. As a control, the same stubbed copy less every thinking-only
record after the stubbed one (each child re-parented onto the removed record's parent)
resumes with no 400: the check can fail, and this is the shape of a fix."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.e2e.cases import DRIVEN
from tests.e2e.clients import Clients
from tests.e2e.harness import Home, resume_claude

SOURCE = DRIVEN / "edits-failure.jsonl"
STUB = "[output elided]"
MIN_OUTPUT_BYTES = 256


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _content(record: dict[str, Any]) -> list[Any]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _is_thinking_only(record: dict[str, Any]) -> bool:
    blocks = _content(record)
    return bool(blocks) and all(
        isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking") for b in blocks
    )


def stubbed_copy(records: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]], int]:
    """A copy under a new session id whose first big tool output is stubbed: (id, records,
    index of the stubbed record)."""
    session_id = str(uuid.uuid4())
    copied = [{**r, "sessionId": session_id} if "sessionId" in r else dict(r) for r in records]
    for index, record in enumerate(copied):
        results = [
            b for b in _content(record) if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if results and len(json.dumps(results[0].get("content"))) > MIN_OUTPUT_BYTES:
            message = dict(record["message"])
            message["content"] = [{**results[0], "content": STUB}]
            copied[index] = {**record, "message": message}
            return session_id, copied, index
    raise AssertionError("the driven session has no tool output to stub")


def without_later_thinking(records: list[dict[str, Any]], after: int) -> list[dict[str, Any]]:
    """The records less every thinking-only record after index `after`, each child of a
    removed record re-parented onto the removed record's own parent."""
    removed = {r["uuid"]: r.get("parentUuid") for r in records[after + 1 :] if _is_thinking_only(r)}

    def parent(uid: str | None) -> str | None:
        while uid in removed:
            uid = removed[uid]
        return uid

    kept = []
    for record in records:
        if record.get("uuid") in removed:
            continue
        if record.get("parentUuid") in removed:
            record = {**record, "parentUuid": parent(record["parentUuid"])}
        kept.append(record)
    return kept


def _place(home: Home, session_id: str, records: list[dict[str, Any]]) -> Path:
    folder = home.claude / "projects" / "-tmp-gobtui-drive-edits-failure"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    # Compact, as the client writes them (written with spaces, it found no such session).
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    path.write_text("".join(lines), encoding="utf-8")
    return Path(path)


def test_a_stubbed_output_under_kept_thinking_gets_a_400(clients: Clients, tmp_path: Path) -> None:
    records = _records(SOURCE)
    session_id, stubbed, at = stubbed_copy(records)
    assert sum(_is_thinking_only(r) for r in stubbed[at + 1 :]) > 0
    home = Home(tmp_path / "stubbed")
    _place(home, session_id, stubbed)
    resumed = resume_claude(clients, home, session_id, "reject")
    assert resumed.requests, f"the client sent nothing: {resumed.finished.first_error()}"
    assert resumed.rejected, "the checking server accepted a fork whose prefix it never signed"
    assert "Invalid `signature` in `thinking` block" in resumed.rejected[0]
    assert resumed.rejected[0].startswith("messages.")


def test_the_same_stub_without_the_later_thinking_resumes(clients: Clients, tmp_path: Path) -> None:
    records = _records(SOURCE)
    session_id, stubbed, at = stubbed_copy(records)
    fixed = without_later_thinking(stubbed, at)
    assert len(fixed) < len(stubbed)
    assert not any(_is_thinking_only(r) for r in fixed[at + 1 :])
    home = Home(tmp_path / "fixed")
    _place(home, session_id, fixed)
    resumed = resume_claude(clients, home, session_id, "reject")
    assert not resumed.rejected, resumed.rejected[:1]
    assert resumed.loaded, resumed.finished.first_error()
    sent = json.dumps(resumed.history_request.body.get("messages", []))
    assert STUB in sent  # the stubbed output is what the client sent, not a fallback
    assert "thinking" in sent  # the thinking before the stub is kept
