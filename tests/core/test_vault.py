"""The vault's pure model and rules: the modules of core/vault/."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gobtui.core.edits import DigestBlock
from gobtui.core.limits import VAULT_CHUNK_BYTES, VAULT_INDEX_LINE_MAX_BYTES
from gobtui.core.model import Provider
from gobtui.core.vault.errors import VaultError, VaultErrorCode, check_label, require_sha256
from gobtui.core.vault.index import (
    IndexEntry,
    Manifest,
    parse_index,
    read_index,
    record_count_of,
    scan_index,
    validate_entry,
)
from gobtui.core.vault.records import (
    card_hits,
    count_string_matches,
    diff_records,
    may_match,
    rank_recall,
    utf8_page,
)
from gobtui.core.vault.reports import RecallHit
from gobtui.core.vault.streams import retained_by_stream, stream_count

SHA_A = "a" * 64
SHA_B = "b" * 64


def entry(**overrides: object) -> IndexEntry:
    fields: dict[str, object] = {
        "ts": 1_700_000_000.0, "sha256": SHA_A, "path": "/home/dev/s.jsonl",
        "session_id": "s-1", "provider": Provider.CLAUDE, "bytes": 10, "record_count": 2,
        "source_sha256": SHA_B, "strategy": "manual",
    }  # fmt: skip
    fields.update(overrides)
    return IndexEntry.model_validate(fields)


# --- manifest --------------------------------------------------------------------------------


def test_manifest_bytes_are_canonical_and_parse_back() -> None:
    manifest = Manifest(source_sha256=SHA_B, bytes=VAULT_CHUNK_BYTES + 1, chunks=[SHA_A, SHA_B])
    data = manifest.to_bytes()
    assert data.startswith(b'{"schema_version":3,"source_sha256":"' + SHA_B.encode())
    assert b" " not in data
    again = Manifest.from_bytes(data, "x" * 64)
    assert again == manifest and again.to_bytes() == data


@pytest.mark.parametrize(
    "data",
    [
        b"{not json",
        b'{"schema_version":2,"source_sha256":"' + SHA_B.encode() + b'","bytes":1,"chunks":[]}',
        b'{"schema_version":3,"source_sha256":"xyz","bytes":1,"chunks":["' + SHA_A.encode() + b'"]}',
        b'{"schema_version":3,"source_sha256":"' + SHA_B.encode() + b'","bytes":1,"chunks":["A"]}',
        # 3 bytes cannot come in 4 non-empty chunks, nor 2 MiB + 1 in 2 chunks.
        orjson.dumps({"schema_version": 3, "source_sha256": SHA_B, "bytes": 3, "chunks": [SHA_A] * 4}),
        orjson.dumps({"schema_version": 3, "source_sha256": SHA_B, "bytes": 2 * VAULT_CHUNK_BYTES + 1,
                      "chunks": [SHA_A] * 2}),
        orjson.dumps({"schema_version": 3, "source_sha256": SHA_B, "bytes": 1, "chunks": [SHA_A],
                      "extra": 1}),
    ],
)  # fmt: skip
def test_bad_manifests_are_damaged_manifest_errors_naming_it(data: bytes) -> None:
    with pytest.raises(VaultError) as caught:
        Manifest.from_bytes(data, "c" * 64)
    assert caught.value.code is VaultErrorCode.DAMAGED_MANIFEST
    assert caught.value.damaged
    assert "c" * 64 in str(caught.value)


# --- index entries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides",
    [
        {"sha256": "a" * 63},
        {"sha256": "A" * 64},
        {"source_sha256": "g" * 64},
        {"session_id": ""},
        {"session_id": "s" * 257},
        {"session_id": "bad\x1b[31m"},
        {"strategy": "x" * 129},
        {"strategy": "two\nlines"},
        {"path": "relative/s.jsonl"},
        {"ts": -1.0},
        {"ts": float("nan")},
        {"record_count": 100_001},
        {"bytes": -1},
        {"provider": "devin"},
    ],
)
def test_index_entry_validation_refuses(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        entry(**overrides)
    with pytest.raises(VaultError) as caught:
        validate_entry(**(entry().model_dump() | overrides))
    assert caught.value.code is VaultErrorCode.INVALID_INPUT


def _line(**changes: object) -> bytes:
    fields = entry().model_dump(mode="json")
    fields.update(changes)
    return orjson.dumps({k: v for k, v in fields.items() if v is not None})


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"[1, 2]", "not a JSON object"),
        (b"{garbage}", "not JSON"),
        (_line(sha256=None), "sha256 is missing"),
        (_line(sha256="abc"), "sha256 is not a 64-hex sha256"),
        (_line(bytes=-1), "bytes is out of range"),
        (_line(ts="soon"), "ts has the wrong type or value"),
        (_line(path="relative"), "path is not an absolute path"),
        (_line(strategy="a\tb"), "strategy holds control characters"),
        (_line(strategy="x" * 129), "strategy is over 128 characters"),
        (_line(colour="red"), "colour is not a known field"),
    ],
)
def test_a_bad_index_line_is_named_in_plain_words(line: bytes, why: str) -> None:
    good = entry().to_line()
    with pytest.raises(VaultError) as caught:
        parse_index(good + line + b"\n")
    assert caught.value.code is VaultErrorCode.DAMAGED_INDEX
    assert caught.value.message == f"index line 2 is invalid: {why}"


@pytest.mark.parametrize(
    ("label", "why"),
    [
        ("x" * 129, "the label is over 128 characters"),
        ("two\nlines", "the label holds control characters"),
        ("\udcff\udcfe", "the label is not valid UTF-8"),  # argv bytes b"\xff\xfe"
    ],
)
def test_check_label_says_what_is_wrong_with_the_label(label: str, why: str) -> None:
    with pytest.raises(VaultError) as caught:
        check_label(label)
    assert caught.value.code is VaultErrorCode.INVALID_INPUT
    assert caught.value.message == f"bad label: {why}"
    assert check_label("x" * 128) == "x" * 128 and check_label("") == ""


def test_index_entry_limits_are_inclusive() -> None:
    assert entry(session_id="s" * 256).session_id == "s" * 256
    assert entry(strategy="x" * 128).strategy == "x" * 128
    assert entry(strategy=None).strategy is None


def test_parse_index_round_trips_in_append_order() -> None:
    entries = [entry(ts=float(i), session_id=f"s{i}") for i in range(3)]
    data = b"".join(e.to_line() for e in entries)
    assert parse_index(data) == [e.bound() for e in entries]
    assert all(e.is_bound for e in parse_index(data))
    assert parse_index(b"") == []


@pytest.mark.parametrize(
    ("tail", "line"),
    [
        (b"{not json}\n", 3),
        (b"\n", 3),  # a blank line is not an entry either
        (b'{"ts": 1}\n', 3),
        (b"[1, 2]\n", 3),
    ],
)
def test_any_bad_index_line_damages_the_whole_index(tail: bytes, line: int) -> None:
    data = entry().to_line() * 2 + tail + entry().to_line()
    with pytest.raises(VaultError) as caught:
        parse_index(data)
    assert caught.value.code is VaultErrorCode.DAMAGED_INDEX
    assert f"index line {line} " in str(caught.value)


def test_an_interrupted_append_is_left_out_and_anything_else_unterminated_is_damage() -> None:
    good = entry().to_line()
    for cut in range(1, len(good)):  # every prefix an interrupted append can leave
        view = read_index(good + good[:cut])
        assert view.entries == [entry().bound()]
        assert (view.intact, view.torn) == (len(good), cut)
    for junk in (b"\x0b", b"x", b"}", b" ", b"{}"):  # a whole line, then not a newline
        with pytest.raises(VaultError, match="index line 2 has no newline and is not an inter"):
            read_index(good + good[:-1] + junk)
    with pytest.raises(VaultError, match="index line 1 has no newline"):
        read_index(b"garbage")
    long_line = b'{"pad":"' + b"x" * VAULT_INDEX_LINE_MAX_BYTES + b'"}\n'
    with pytest.raises(VaultError, match="index line 1 is too long"):
        parse_index(long_line)


def test_require_sha256_refuses_prefixes_and_paths() -> None:
    assert require_sha256(SHA_A) == SHA_A
    for bad in ("a" * 12, "/tmp/x", SHA_A.upper(), SHA_A + "0"):
        with pytest.raises(VaultError) as caught:
            require_sha256(bad)
        assert caught.value.code is VaultErrorCode.INVALID_INPUT


@pytest.mark.parametrize("data", [b"", b"\n", b"a", b"a\n", b"a\nb", b"a\n\n", b"\n\n\nx"])
def test_record_count_matches_physical_lines(data: bytes) -> None:
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    expected = 0 if not data else len(lines)
    assert record_count_of(data.count(b"\n"), len(data), data.endswith(b"\n")) == expected


@settings(max_examples=50, deadline=None)
@given(
    streams=st.lists(st.sampled_from(["a", "b", "c"]), max_size=30),
    keep=st.integers(min_value=1, max_value=4),
)
def test_retained_by_stream_keeps_the_newest_of_each_stream(streams: list[str], keep: int) -> None:
    entries = [entry(session_id=s, ts=float(i)) for i, s in enumerate(streams)]
    kept = retained_by_stream(entries, keep)
    assert stream_count(entries) == len(set(streams))
    for name in set(streams):
        positions = [i for i, s in enumerate(streams) if s == name]
        assert {p for p in kept if streams[p] == name} == set(positions[-keep:])


# --- records ---------------------------------------------------------------------------------


def test_diff_records_reports_hashes_and_type_counts() -> None:
    a = [("h1", "user"), ("h2", "assistant"), ("h3", "assistant")]
    b = [("h1", "user"), ("h3", "assistant"), ("h4", "user"), ("h4", "user")]
    diff = diff_records("A", "B", a, b)
    assert diff.added == ["h4"] and diff.removed == ["h2"]
    assert (diff.records_added, diff.records_removed) == (2, 1)  # h4 twice
    assert diff.unchanged == 2 and (diff.records_a, diff.records_b) == (3, 4)
    copies = diff_records("A", "B", a, [*a, ("h1", "user"), ("h1", "user")])
    assert copies.added == ["h1"] and copies.records_added == 2 and copies.unchanged == 3
    assert diff.types_a == {"assistant": 2, "user": 1}
    assert diff.types_b == {"assistant": 1, "user": 3}


@settings(max_examples=50, deadline=None)
@given(
    a=st.lists(st.sampled_from("pqrstu"), max_size=20),
    b=st.lists(st.sampled_from("pqrstu"), max_size=20),
)
def test_diff_records_counts_are_the_multiset_differences(a: list[str], b: list[str]) -> None:
    diff = diff_records("A", "B", [(h, "t") for h in a], [(h, "t") for h in b])
    more_b, more_a = Counter(b) - Counter(a), Counter(a) - Counter(b)
    assert set(diff.added) == set(more_b) and len(diff.added) == len(set(diff.added))
    assert set(diff.removed) == set(more_a)
    assert (diff.records_added, diff.records_removed) == (
        sum(more_b.values()),
        sum(more_a.values()),
    )
    assert diff.unchanged + diff.records_added == len(b)
    assert diff.unchanged + diff.records_removed == len(a)


def test_count_string_matches_counts_values_recursively_not_keys() -> None:
    record = {"needle": "a needle, needle", "n": [{"x": "needle"}, 3, None, "needleneedle"]}
    assert count_string_matches(record, "needle") == 5
    assert count_string_matches(record, "Needle") == 0
    assert count_string_matches({"aaaa": "aaaa"}, "aa") == 2  # non-overlapping, values only


def test_may_match_is_false_only_without_escapes_or_the_bytes() -> None:
    assert may_match(b'{"a":"xneedle"}', b"needle")
    assert not may_match(b'{"a":"xneedl"}', b"needle")
    assert may_match(b'{"a":"caf\\u00e9"}', "café".encode())  # escaped: must decode to know


# --- state cards -----------------------------------------------------------------------------

CARD = DigestBlock(
    goal="Ship the vault",
    summary="chunks and manifests",
    files_touched=["adapters/vault.py", "core/vault_model.py"],
    errors=["VAULT broke once"],
    open_tasks=["bench the vault"],
    current_work="recall",
    covers_items=12,
)


def test_card_hits_are_case_insensitive_over_every_field() -> None:
    assert card_hits(CARD, "vault") == 5  # goal, 2 files, the error, the todo
    assert card_hits(CARD, "RECALL") == 1
    assert card_hits(CARD, "absent") == 0
    assert card_hits(CARD, None) == 0


def _hit(hits: int, ts: float, record: int = 0) -> RecallHit:
    return RecallHit(
        snapshot_sha256=SHA_A, ts=ts, provider=Provider.CODEX, session_id="s", path="/s",
        record_index=record, hits=hits, card=CARD,
    )  # fmt: skip


def test_rank_recall_orders_by_hits_then_newest() -> None:
    hits = [_hit(1, 300.0), _hit(3, 100.0), _hit(3, 200.0), _hit(0, 900.0), _hit(3, 200.0, 7)]
    ranked, total = rank_recall(hits, 3)
    assert total == 5
    assert [(h.hits, h.ts, h.record_index) for h in ranked] == [
        (3, 200.0, 7),
        (3, 200.0, 0),
        (3, 100.0, 0),
    ]


# --- paging ----------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=60), max_bytes=st.integers(min_value=4, max_value=16))
def test_utf8_pages_cover_the_record_on_character_boundaries(text: str, max_bytes: int) -> None:
    data = text.encode("utf-8", "surrogatepass")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return  # lone surrogates are not UTF-8 records
    offset: int | None = 0
    pages = []
    while offset is not None:
        page, following = utf8_page(data, offset, max_bytes)
        assert len(page.encode()) <= max_bytes
        assert page or not data  # never stuck on an empty page before the end
        pages.append(page)
        assert following is None or following > offset
        offset = following
    assert "".join(pages) == text


def test_utf8_page_refuses_offsets_inside_a_character_and_bad_utf8() -> None:
    data = "é漢🎉".encode()
    assert utf8_page(data, 2, 4) == ("漢", 5)  # 3 + the first byte of 🎉 would split it
    assert utf8_page(data, len(data), 4) == ("", None)
    for offset in (1, 3, 4, 6, len(data) + 1, -1):
        with pytest.raises(VaultError) as caught:
            utf8_page(data, offset, 8)
        assert caught.value.code is VaultErrorCode.INVALID_INPUT
        inside = 0 <= offset <= len(data)
        assert ("inside a UTF-8 character" if inside else "out of range") in str(caught.value)
    with pytest.raises(VaultError) as bad:
        utf8_page(b"ok\xff", 0, 8)
    assert bad.value.code is VaultErrorCode.NOT_UTF8


def test_index_entry_json_is_stable() -> None:
    line = entry().to_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert list(json.loads(line)) == [
        "ts", "sha256", "path", "session_id", "provider", "bytes", "record_count",
        "source_sha256", "strategy", "line_sha256",
    ]  # fmt: skip
    assert json.loads(line)["provider"] == "claude"
    # The checksum is the sha256 of the canonical JSON of the other fields, in that order.
    body = orjson.dumps({k: v for k, v in json.loads(line).items() if k != "line_sha256"})
    assert json.loads(line)["line_sha256"] == hashlib.sha256(body).hexdigest()


# --- bound index lines -----------------------------------------------------------------------


EDITS: dict[str, object] = {
    "ts": 1_700_000_001.0, "sha256": "c" * 64, "path": "/home/dev/other.jsonl",
    "session_id": "s-2", "provider": "codex", "bytes": 11, "record_count": 3,
    "source_sha256": "d" * 64, "strategy": "elide",
}  # fmt: skip


@pytest.mark.parametrize("field", EDITS)
def test_an_edit_to_any_field_of_a_bound_line_fails_its_checksum(field: str) -> None:
    line = orjson.loads(entry().to_line())
    line[field] = EDITS[field]
    with pytest.raises(VaultError) as caught:
        parse_index(entry().to_line() + orjson.dumps(line) + b"\n")
    assert caught.value.code is VaultErrorCode.DAMAGED_INDEX
    assert (
        caught.value.message == f"index line 2 fails its checksum (snapshot {line['sha256'][:12]})"
    )


def test_every_single_bit_flip_of_a_bound_line_is_damage() -> None:
    good = entry().to_line()
    for position in range(len(good)):
        for bit in range(8):
            flipped = bytearray(good)
            flipped[position] ^= 1 << bit
            data = good + bytes(flipped) + good
            with pytest.raises(VaultError) as caught:
                parse_index(data)
            assert caught.value.code is VaultErrorCode.DAMAGED_INDEX, (position, bit)
            assert caught.value.message.startswith(("index line 2 ", "index line 3 ")), (
                position, bit, caught.value.message)  # fmt: skip


def test_a_legacy_line_without_a_checksum_reads_as_unbound() -> None:
    legacy = orjson.dumps(entry().model_dump(mode="json", exclude={"line_sha256"})) + b"\n"
    view = read_index(legacy + entry(session_id="s-2").to_line())
    assert [e.is_bound for e in view.entries] == [False, True]
    assert view.unbound == 1 and view.entries[0] == entry()
    with pytest.raises(VaultError, match="index line 1 is invalid: line_sha256 is not a 64-hex"):
        parse_index(_line(line_sha256="abc") + b"\n")


def test_scan_index_reports_each_line_on_its_own() -> None:
    good = entry().to_line()
    lines, torn = scan_index(good + b"{garbage}\n" + good + good[:9])
    assert [(n, isinstance(item, IndexEntry)) for n, _, item in lines] == [
        (1, True), (2, False), (3, True)]  # fmt: skip
    assert torn == 9 and lines[1][1] == b"{garbage}"
    lines, torn = scan_index(good + good[:-1] + b"\x0b")
    assert torn == 0 and isinstance(lines[-1][2], VaultError) and lines[-1][0] == 2
