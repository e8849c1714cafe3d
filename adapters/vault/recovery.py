"""Recovery from the vault: recall state cards, search one snapshot, read one record's page.

All three are read-only and verify every chunk they read. Search answers with references
(record index, hash, size, hit count) and never with content; reading content is a separate,
explicit request whose answer is marked untrusted archived data.
"""

from __future__ import annotations

import hashlib

import orjson

from ...core.card_text import CARD_PREFILTER
from ...core.edits import DigestBlock
from ...core.limits import (
    VAULT_QUERY_MAX_BYTES,
    VAULT_QUERY_MIN_BYTES,
    VAULT_READ_DEFAULT_BYTES,
    VAULT_READ_MAX_BYTES,
    VAULT_READ_MIN_BYTES,
    VAULT_RECALL_DEFAULT_LIMIT,
    VAULT_RECALL_MAX_LIMIT,
    VAULT_SEARCH_DEFAULT_RESULTS,
    VAULT_SEARCH_MAX_RESULTS,
)
from ...core.model import Provider
from ...core.vault.errors import VaultError, VaultErrorCode, require_sha256
from ...core.vault.records import card_hits, count_string_matches, may_match, rank_recall, utf8_page
from ...core.vault.reports import RecallHit, RecallResult, RecordPage, SearchMatch, SearchResult
from ..providers.registry import provider_of
from .vault import Vault


def recall(
    vault: Vault,
    query: str | None = None,
    limit: int = VAULT_RECALL_DEFAULT_LIMIT,
    session_id: str | None = None,
    *,
    with_prompt: bool = True,
    with_text: bool = True,
    snapshot: str | None = None,
) -> RecallResult:
    """State cards found in the snapshots (of one session, or one snapshot, or all), best
    matches first.

    With a query, only cards with at least one case-insensitive hit count; without one, every
    card, newest first. A card seen in several snapshots (versions of one file) is reported
    once, from the newest snapshot holding it. `with_prompt=False` (MCP) matches the query
    only against the fields that caller is shown; `with_text=False` (MCP without
    --allow-transcript-content) shows and matches only what is not transcript text
    (DigestBlock.without_transcript_text).
    """
    if query is not None:
        _query_bytes(query)
    _bounded("--limit", limit, 1, VAULT_RECALL_MAX_LIMIT)
    found: list[RecallHit] = []
    seen_cards: set[tuple[str, str]] = set()
    scanned: set[str] = set()
    with vault.reading() as reader:
        for entry in reader.entries():  # newest first
            if session_id is not None and entry.session_id != session_id:
                continue
            if snapshot is not None and entry.sha256 != snapshot:
                continue
            if entry.sha256 in scanned:
                continue
            scanned.add(entry.sha256)
            for index, line in reader.records(entry.sha256):
                if CARD_PREFILTER not in line:
                    continue
                card = _card_of(line, entry.provider)
                if card is None:
                    continue
                if not with_text:
                    card = card.without_transcript_text()
                key = (entry.session_id, hashlib.sha256(line).hexdigest())
                hits = card_hits(card, query, with_prompt)
                if key in seen_cards or (query and not hits):
                    continue
                seen_cards.add(key)
                found.append(
                    RecallHit(
                        snapshot_sha256=entry.sha256,
                        ts=entry.ts,
                        provider=entry.provider,
                        session_id=entry.session_id,
                        path=entry.path,
                        record_index=index,
                        hits=hits,
                        card=card,
                    )
                )
    results, matched = rank_recall(found, limit)
    return RecallResult(
        query=query,
        snapshots_scanned=len(scanned),
        cards_matched=matched,
        truncated=matched > len(results),
        results=results,
    )


def _card_of(line: bytes, provider: Provider) -> DigestBlock | None:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    text = provider_of(provider).card_text(record)
    return DigestBlock.parse(text) if text is not None else None


def search(
    vault: Vault, sha: str, query: str, limit: int = VAULT_SEARCH_DEFAULT_RESULTS
) -> SearchResult:
    """Records of one snapshot (full id) whose decoded JSON strings hold `query` literally.

    Case-sensitive, non-overlapping counts, recursing into arrays and objects (so Codex
    replacement histories are searched). Lines that are not JSON are counted as unsearchable.
    """
    require_sha256(sha)
    needle = _query_bytes(query)
    _bounded("--limit", limit, 1, VAULT_SEARCH_MAX_RESULTS)
    matches: list[SearchMatch] = []
    matched = unsearchable = 0
    with vault.reading() as reader:
        manifest = reader.manifest(sha)
        for index, line in reader.records(sha, manifest):
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                unsearchable += 1
                continue
            if not may_match(line, needle):
                continue
            count = count_string_matches(value, query)
            if not count:
                continue
            matched += 1
            if len(matches) < limit:
                matches.append(
                    SearchMatch(
                        record_index=index,
                        record_sha256=hashlib.sha256(line).hexdigest(),
                        record_bytes=len(line),
                        match_count=count,
                    )
                )
    return SearchResult(
        snapshot_sha256=sha,
        source_sha256=manifest.source_sha256,
        matches=matches,
        matched_records=matched,
        unsearchable_records=unsearchable,
        truncated=matched > len(matches),
    )


def read_record(
    vault: Vault,
    sha: str,
    record: int,
    offset: int = 0,
    max_bytes: int = VAULT_READ_DEFAULT_BYTES,
) -> RecordPage:
    """A UTF-8 page of one physical record (its line without the newline).

    The whole snapshot is reconstructed and verified on every call, not only the record.
    """
    require_sha256(sha)
    _bounded("--record", record, 0, None)
    _bounded("--offset", offset, 0, None)
    _bounded("--max-bytes", max_bytes, VAULT_READ_MIN_BYTES, VAULT_READ_MAX_BYTES)
    wanted: bytes | None = None
    total = 0
    with vault.reading() as reader:
        manifest = reader.manifest(sha)
        for index, line in reader.records(sha, manifest):
            total = index + 1
            if index == record:
                wanted = line
    if wanted is None:
        raise VaultError(
            VaultErrorCode.NOT_FOUND,
            f"record {record} is out of range: snapshot {sha[:12]} has {total} records",
        )
    try:
        wanted.decode("utf-8")
    except UnicodeDecodeError:
        raise VaultError(VaultErrorCode.NOT_UTF8, f"record {record} is not valid UTF-8") from None
    content, next_offset = utf8_page(wanted, offset, max_bytes)
    return RecordPage(
        snapshot_sha256=sha,
        source_sha256=manifest.source_sha256,
        record_index=record,
        record_sha256=hashlib.sha256(wanted).hexdigest(),
        record_bytes=len(wanted),
        offset=offset,
        next_offset=next_offset,
        content=content,
    )


def _query_bytes(query: str) -> bytes:
    try:
        data = query.encode("utf-8")
    except UnicodeEncodeError:
        data = b""
    if not VAULT_QUERY_MIN_BYTES <= len(data) <= VAULT_QUERY_MAX_BYTES:
        raise VaultError(
            VaultErrorCode.INVALID_INPUT,
            f"a query must be {VAULT_QUERY_MIN_BYTES}..{VAULT_QUERY_MAX_BYTES} UTF-8 bytes",
        )
    return data


def _bounded(name: str, value: int, low: int, high: int | None) -> None:
    if value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f"at least {low}"
        raise VaultError(VaultErrorCode.INVALID_INPUT, f"{name} must be {span}, got {value}")
