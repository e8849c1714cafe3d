"""Recovery from the vault on real transcripts: recall state cards, search, read pages."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from gobtui.adapters.vault.recovery import read_record, recall, search
from gobtui.adapters.vault.vault import Vault
from gobtui.core.edits import DigestBlock
from gobtui.core.model import Provider
from gobtui.core.vault.errors import VaultError, VaultErrorCode
from gobtui.core.vault.index import IndexEntry

Copy = Callable[..., Path]
CLAUDE_SHORT = "claude/marot__spotter__short.jsonl"
CLAUDE_TOOLS = "claude/marot__spotter__tool_heavy.jsonl"
CODEX = "codex/madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
CODEX_ID = "019c8a70-dda7-7f33-98ea-f30553347322"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "vault", chunk_bytes=1024, lock_wait_secs=0)


def append(path: Path, *records: dict[str, Any]) -> None:
    with path.open("ab") as out:
        for record in records:
            out.write(orjson.dumps(record) + b"\n")


def claude_card(card: DigestBlock) -> dict[str, Any]:
    """A state card as gobtui injects it into a Claude transcript: a plain-string user record."""
    return {
        "parentUuid": "7d48cbd2-6615-4dd8-87f6-38f12b8167d6", "isSidechain": False,
        "userType": "external", "cwd": "/home/marco/projects/spotter",
        "sessionId": "55604662-cf2a-4331-851a-ec234028f8ca", "version": "2.1.38", "type": "user",
        "message": {"role": "user", "content": card.render()},
        "uuid": "00000000-0000-4000-8000-00000000card", "timestamp": "2026-02-10T22:00:00.000Z",
    }  # fmt: skip


def codex_user_card(card: DigestBlock) -> dict[str, Any]:
    return {
        "timestamp": "2026-02-23T13:00:00.000Z", "type": "response_item",
        "payload": {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": card.render()}]},
    }  # fmt: skip


def codex_compacted_card(card: DigestBlock) -> dict[str, Any]:
    first = {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": card.render()}]}  # fmt: skip
    later = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    return {
        "timestamp": "2026-02-23T13:05:00.000Z", "type": "compacted",
        "payload": {"message": "", "replacement_history": [first, later]},
    }  # fmt: skip


VAULT_CARD = DigestBlock(
    goal="Make the phoenix server start",
    summary="mix phx.server failed on a missing dep",
    files_touched=["mix.exs", "config/dev.exs"],
    decisions=["pin phoenix_live_view"],
    errors=["** (Mix) Could not start application spotter"],
    open_tasks=["rerun mix phx.server"],
    current_work="fixing deps in mix.exs",
    covers_items=9,
)


# --- recall ----------------------------------------------------------------------------------


def test_recall_finds_a_card_in_a_real_claude_transcript(vault: Vault, fixture_copy: Copy) -> None:
    source = fixture_copy(CLAUDE_SHORT)
    lines_before = source.read_bytes().count(b"\n")
    append(source, claude_card(VAULT_CARD))
    entry = vault.snapshot(source, Provider.CLAUDE, "55604662", "post-compact", 500.0)
    result = recall(vault, "MIX")
    assert result.snapshots_scanned == 1 and result.cards_matched == 1
    (hit,) = result.results
    assert hit.card == VAULT_CARD and hit.record_index == lines_before
    assert hit.snapshot_sha256 == entry.sha256 and hit.session_id == "55604662"
    assert hit.hits == 5  # summary, file mix.exs, the error, the todo, current work
    assert recall(vault, "nothing like this").results == []
    assert [h.hits for h in recall(vault).results] == [0]  # no query: every card


def test_recall_reads_both_codex_places_and_ignores_lookalikes(
    vault: Vault, fixture_copy: Copy
) -> None:
    source = fixture_copy(CODEX)
    portable = VAULT_CARD.model_copy(update={"goal": "codex portable card"})
    compacted = VAULT_CARD.model_copy(update={"goal": "codex compacted card"})
    lookalike = {
        "type": "response_item",
        "payload": {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": VAULT_CARD.render()}]},
    }  # fmt: skip
    append(source, codex_user_card(portable), lookalike, codex_compacted_card(compacted))
    vault.snapshot(source, Provider.CODEX, CODEX_ID, "manual", 500.0)
    result = recall(vault, "codex")
    assert sorted(h.card.goal for h in result.results) == [
        "codex compacted card", "codex portable card"]  # fmt: skip
    assert {h.record_index for h in result.results} == {19, 21}


def test_recall_ranks_by_hits_then_newest_and_reports_a_card_once(
    vault: Vault, fixture_copy: Copy
) -> None:
    a = fixture_copy(CLAUDE_SHORT, "a.jsonl")
    b = fixture_copy(CLAUDE_TOOLS, "b.jsonl")
    one_hit = VAULT_CARD.model_copy(update={"errors": [], "open_tasks": [], "current_work": "",
                                           "files_touched": [], "summary": "phx"})  # fmt: skip
    append(a, claude_card(VAULT_CARD))
    append(b, claude_card(one_hit))
    vault.snapshot(a, Provider.CLAUDE, "session-a", "manual", 100.0)
    vault.snapshot(b, Provider.CLAUDE, "session-b", "manual", 300.0)
    append(a, {"type": "user", "message": {"content": "later"}})
    newest_a = vault.snapshot(a, Provider.CLAUDE, "session-a", "manual", 200.0)
    result = recall(vault, "phx")
    # session-a's card sits in both of its snapshots: reported once, from the newest.
    assert [(h.session_id, h.hits) for h in result.results] == [("session-a", 2), ("session-b", 1)]
    assert result.results[0].snapshot_sha256 == newest_a.sha256
    assert result.snapshots_scanned == 3
    no_query = recall(vault)
    assert [h.session_id for h in no_query.results] == ["session-b", "session-a"]  # newest first
    limited = recall(vault, "phx", limit=1)
    assert limited.truncated and limited.cards_matched == 2 and len(limited.results) == 1
    assert [h.session_id for h in recall(vault, session_id="session-b").results] == ["session-b"]


def test_recall_validates_its_input(vault: Vault) -> None:
    calls: tuple[Callable[[], object], ...] = (
        lambda: recall(vault, ""),
        lambda: recall(vault, "x" * 1025),
        lambda: recall(vault, "q", limit=0),
    )
    for call in calls:
        with pytest.raises(VaultError) as caught:
            call()
        assert caught.value.code is VaultErrorCode.INVALID_INPUT


# --- search ----------------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    """Every decoded string value, walked with an explicit stack (independent of the adapter)."""
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return out


@pytest.fixture
def tools_snapshot(vault: Vault, fixture_copy: Copy) -> tuple[IndexEntry, Path]:
    source = fixture_copy(CLAUDE_TOOLS)
    with source.open("ab") as out:
        out.write(b"this line is not json, it mentions Bash\n")
    return vault.snapshot(source, Provider.CLAUDE, "tools", "manual", 1.0), source


def test_search_counts_literal_hits_in_string_values(
    vault: Vault, tools_snapshot: tuple[IndexEntry, Path]
) -> None:
    entry, source = tools_snapshot
    lines = source.read_bytes().splitlines()
    expected = {}
    for index, line in enumerate(lines[:-1]):
        count = sum(text.count("Bash") for text in _strings(json.loads(line)))
        if count:
            expected[index] = count
    result = search(vault, entry.sha256, "Bash", limit=50)
    assert result.unsearchable_records == 1
    assert result.matched_records == len(expected) > 0
    assert {m.record_index: m.match_count for m in result.matches} == expected
    for match in result.matches:
        line = lines[match.record_index]
        assert match.record_sha256 == hashlib.sha256(line).hexdigest()
        assert match.record_bytes == len(line)
    assert not result.truncated and result.source_sha256 == entry.source_sha256
    lower = sum(
        1 for line in lines[:-1] if any("bash" in text for text in _strings(json.loads(line)))
    )
    assert search(vault, entry.sha256, "bash", limit=50).matched_records == lower != len(expected)
    assert search(vault, entry.sha256, "BASH-nowhere").matched_records == 0


def test_search_is_case_sensitive_and_values_only(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    append(
        source,
        {"type": "user", "needle": 1, "message": {"content": "Needle needle"}},
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": "caf\u00e9 needle"}]},
        },
    )
    with source.open("ab") as out:
        out.write(b'{"type":"user","message":{"content":"escaped n\\u0065edle"}}\n')
    entry = vault.snapshot(source, Provider.CLAUDE, "s", "manual", 1.0)
    result = search(vault, entry.sha256, "needle")
    assert {m.record_index: m.match_count for m in result.matches} == {0: 1, 1: 1, 2: 1}
    assert search(vault, entry.sha256, "café").matched_records == 1


def test_search_never_returns_content_and_truncates(
    vault: Vault, tools_snapshot: tuple[IndexEntry, Path]
) -> None:
    entry, _ = tools_snapshot
    result = search(vault, entry.sha256, "toolu_", limit=2)
    dumped = result.model_dump_json()
    assert "toolu_" not in dumped and "Bash" not in dumped
    assert set(result.model_dump()) == {
        "snapshot_sha256", "source_sha256", "matches", "matched_records",
        "unsearchable_records", "truncated",
    }  # fmt: skip
    assert len(result.matches) == 2 and result.truncated and result.matched_records > 2


def test_search_refuses_prefixes_and_bad_bounds(
    vault: Vault, tools_snapshot: tuple[IndexEntry, Path]
) -> None:
    entry, _ = tools_snapshot
    calls: tuple[Callable[[], object], ...] = (
        lambda: search(vault, entry.sha256[:12], "Bash"),
        lambda: search(vault, str(Path("/tmp/x")), "Bash"),
        lambda: search(vault, entry.sha256, ""),
        lambda: search(vault, entry.sha256, "é" * 513),  # 1026 bytes
        lambda: search(vault, entry.sha256, "Bash", limit=51),
        lambda: search(vault, entry.sha256, "Bash", limit=0),
    )
    for call in calls:
        with pytest.raises(VaultError) as caught:
            call()
        assert caught.value.code is VaultErrorCode.INVALID_INPUT
    assert search(vault, entry.sha256, "é" * 512).matched_records == 0  # 1024 bytes is fine
    with pytest.raises(VaultError) as missing:
        search(vault, "f" * 64, "Bash")
    assert missing.value.code is VaultErrorCode.NOT_FOUND


def test_search_fails_closed_on_a_damaged_chunk(
    vault: Vault, tools_snapshot: tuple[IndexEntry, Path]
) -> None:
    entry, _ = tools_snapshot
    chunk = orjson.loads((vault.manifests_dir / entry.sha256).read_bytes())["chunks"][-1]
    path = vault.chunks_dir / chunk
    path.write_bytes(path.read_bytes()[:-1] + b"!")
    with pytest.raises(VaultError) as caught:
        search(vault, entry.sha256, "Bash")
    assert caught.value.code is VaultErrorCode.DAMAGED_CHUNK and chunk in str(caught.value)


# --- read ------------------------------------------------------------------------------------

MULTI = "é漢🎉 ok " * 40


def test_read_record_pages_a_multibyte_record_on_character_boundaries(
    vault: Vault, tmp_path: Path
) -> None:
    source = tmp_path / "s.jsonl"
    append(source, {"type": "user", "message": {"content": "first"}})
    append(source, {"type": "user", "message": {"content": MULTI}})
    entry = vault.snapshot(source, Provider.CLAUDE, "s", "manual", 1.0)
    line = source.read_bytes().splitlines()[1]
    for max_bytes in (4, 5, 7, 4096):
        offset: int | None = 0
        pages = []
        while offset is not None:
            page = read_record(vault, entry.sha256, 1, offset, max_bytes)
            assert len(page.content.encode()) <= max_bytes and page.content
            assert page.record_sha256 == hashlib.sha256(line).hexdigest()
            assert page.record_bytes == len(line) and page.offset == offset
            assert page.content_trust == "untrusted_archived_data"
            pages.append(page.content)
            offset = page.next_offset
        assert "".join(pages).encode() == line
        assert orjson.loads("".join(pages))["message"]["content"] == MULTI
    start = line.index("é".encode())
    with pytest.raises(VaultError) as inside:
        read_record(vault, entry.sha256, 1, start + 1, 16)
    assert inside.value.code is VaultErrorCode.INVALID_INPUT


def test_read_record_bounds_and_errors(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(b'{"a":1}\nnot utf8 \xff\xfe\n')
    entry = vault.snapshot(source, Provider.CODEX, "s", "manual", 1.0)
    assert read_record(vault, entry.sha256, 0).content == '{"a":1}'
    cases: dict[VaultErrorCode, Callable[[], object]] = {
        VaultErrorCode.NOT_FOUND: lambda: read_record(vault, entry.sha256, 2),
        VaultErrorCode.NOT_UTF8: lambda: read_record(vault, entry.sha256, 1),
    }
    for code, call in cases.items():
        with pytest.raises(VaultError) as caught:
            call()
        assert caught.value.code is code
    with pytest.raises(VaultError, match="has 2 records"):
        read_record(vault, entry.sha256, 5)
    bad_calls: tuple[Callable[[], object], ...] = (
        lambda: read_record(vault, entry.sha256, 0, max_bytes=3),
        lambda: read_record(vault, entry.sha256, 0, max_bytes=16_385),
        lambda: read_record(vault, entry.sha256, -1),
        lambda: read_record(vault, entry.sha256, 0, offset=-1),
        lambda: read_record(vault, entry.sha256, 0, offset=8),
        lambda: read_record(vault, entry.sha256[:20], 0),
    )
    for bad in bad_calls:
        with pytest.raises(VaultError) as caught:
            bad()
        assert caught.value.code is VaultErrorCode.INVALID_INPUT
    assert os.listdir(vault.tmp_dir) == []
