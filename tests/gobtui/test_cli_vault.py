"""The vault commands end to end on real fixtures, in the temporary data dir of conftest."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

import gobtui.cli.dispatch
from gobtui.adapters.config.paths import data_dir
from gobtui.cli.dispatch import main
from gobtui.cli.exits import Exit
from gobtui.core.edits import DigestBlock

Copy = Callable[..., Path]
SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca"
CODEX = "codex/madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
CODEX_ID = "019c8a70-dda7-7f33-98ea-f30553347322"

DAMAGED = Exit.DAMAGED  # stored state failed a check (gobtui.cli.exits)


@pytest.fixture(autouse=True)
def vault_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until the lead lists vault in COMMAND_MODULES."""
    monkeypatch.setattr(gobtui.cli.dispatch, "COMMAND_MODULES", ("vault",))


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def call(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return call


def as_json(out: str) -> Any:
    return orjson.loads(out)


@pytest.fixture
def short(fixture_copy: Copy) -> Path:
    return fixture_copy("claude/marot__spotter__short.jsonl")


def test_snapshot_then_list_history_show(run: Run, short: Path) -> None:
    code, out, _ = run("snapshot", str(short), "--json")
    assert code == 0
    first = as_json(out)
    assert first["session_id"] == SHORT_ID and first["provider"] == "claude"
    assert first["bytes"] == short.stat().st_size and first["strategy"] == "manual"
    with short.open("ab") as handle:
        handle.write(b'{"type":"user","message":{"content":"more"}}\n')
    code, out, _ = run("snapshot", SHORT_ID[:8], "--label", "second")  # a vault id prefix
    assert code == 0 and out.startswith("snapshot ")
    code, out, _ = run("vault", "--json")
    listed = as_json(out)
    assert [e["strategy"] for e in listed] == ["second", "manual"]
    code, out, _ = run("history", SHORT_ID, "--json")
    assert [e["sha256"] for e in as_json(out)] == [e["sha256"] for e in listed]
    code, out, _ = run("vault")
    assert code == 0 and len(out.splitlines()) == 3 and listed[0]["sha256"][:12] in out
    assert out.splitlines()[-1].startswith("listed from the index: lines checksummed")
    code, out, _ = run("show", listed[1]["sha256"][:10], "--json")
    shown = as_json(out)
    assert code == 0 and shown["verified"] is True and shown["records"] == 15
    assert shown["types"]["user"] == 4 and shown["entry"] == listed[1]
    code, out, _ = run("show", SHORT_ID)  # a session: its newest snapshot
    assert code == 0 and listed[0]["sha256"] in out and "verified" in out
    code, out, _ = run("vault", "--stats", "--json")
    assert as_json(out)["snapshots"] == 2 and as_json(out)["sessions"] == 1


def test_a_path_names_that_file_s_snapshots_not_its_session_id_s(
    run: Run, short: Path, tmp_path: Path
) -> None:
    """Two files holding one session id (a copy of a transcript): a path picks its own."""
    copy = tmp_path / "elsewhere" / short.name
    copy.parent.mkdir()
    copy.write_bytes(short.read_bytes() + b'{"type":"mode","mode":"plan"}\n')
    mine = as_json(run("snapshot", str(short), "--json")[1])
    theirs = as_json(run("snapshot", str(copy), "--json")[1])
    assert mine["session_id"] == theirs["session_id"] == SHORT_ID
    code, out, _ = run("history", str(short), "--json")
    assert code == 0 and [e["sha256"] for e in as_json(out)] == [mine["sha256"]]
    code, out, _ = run("vault", str(copy), "--json")
    assert code == 0 and [e["sha256"] for e in as_json(out)] == [theirs["sha256"]]
    code, out, _ = run("show", str(short), "--json")
    assert code == 0 and as_json(out)["entry"]["sha256"] == mine["sha256"]  # not the newest
    code, out, _ = run("history", SHORT_ID, "--json")  # the id: both files' snapshots
    assert [e["sha256"] for e in as_json(out)] == [theirs["sha256"], mine["sha256"]]
    copy.unlink()  # gone from disk, still named by the path the vault recorded
    for command in ("history", "vault"):
        code, out, err = run(command, str(copy), "--json")
        assert code == 0, err
        assert [e["sha256"] for e in as_json(out)] == [theirs["sha256"]]
    code, out, _ = run("show", str(copy), "--json")
    assert code == 0 and as_json(out)["entry"]["sha256"] == theirs["sha256"]
    code, _, err = run("history", str(tmp_path / "never" / short.name))
    assert code == 2 and err.count("\n") == 1


def test_snapshot_of_a_discovered_session_by_id_prefix(
    run: Run, short: Path, tmp_path: Path
) -> None:
    home = tmp_path / "claude"
    project = home / "projects" / "-home-marco-projects-spotter"
    project.mkdir(parents=True)
    (project / f"{SHORT_ID}.jsonl").write_bytes(short.read_bytes())
    code, out, err = run("snapshot", SHORT_ID[:8], "--claude-home", str(home), "--json")
    assert code == 0, err
    entry = as_json(out)
    assert entry["path"] == str((project / f"{SHORT_ID}.jsonl").resolve())
    assert entry["session_id"] == SHORT_ID


def test_diff_prune_and_recall(run: Run, short: Path) -> None:
    run("snapshot", str(short))
    card = DigestBlock(goal="start phoenix", errors=["mix phx.server exits"], covers_items=3)
    record = {"type": "user", "message": {"role": "user", "content": card.render()}}
    with short.open("ab") as handle:
        handle.write(orjson.dumps(record) + b"\n")
    run("snapshot", str(short))
    old, new = (e["sha256"] for e in reversed(as_json(run("vault", "--json")[1])))
    code, out, _ = run("diff", old[:8], new[:8], "--json")
    diff = as_json(out)
    assert code == 0 and len(diff["added"]) == 1 and diff["removed"] == []
    code, out, _ = run("diff", old[:8], new[:8])
    assert "+1 added, -0 removed, 15 unchanged" in out
    code, out, _ = run("recall", "--query", "PHOENIX", "--json")
    recalled = as_json(out)
    assert code == 0 and recalled["results"][0]["card"]["goal"] == "start phoenix"
    assert recalled["results"][0]["snapshot_sha256"] == new
    code, out, _ = run("recall", "--query", "phoenix")
    assert code == 0 and "[gobtui state card]" in out and "goal: start phoenix" in out
    code, out, _ = run("prune", "--keep", "1")
    assert code == 0 and "would drop 1 of 2" in out and "--yes" in out
    assert len(as_json(run("vault", "--json")[1])) == 2
    code, out, _ = run("prune", "--keep", "1", "--yes", "--json")
    assert code == 0 and as_json(out)["dropped_entries"] == 1 and not as_json(out)["dry_run"]
    assert [e["sha256"] for e in as_json(run("vault", "--json")[1])] == [new]


def test_search_and_read_snapshot(run: Run, fixture_copy: Copy) -> None:
    source = fixture_copy(CODEX)
    code, out, _ = run("snapshot", str(source), "--json")
    entry = as_json(out)
    assert code == 0 and entry["session_id"] == CODEX_ID and entry["provider"] == "codex"
    sha = entry["sha256"]
    code, out, _ = run("search-snapshot", sha, "--query", "token_count", "--json")
    found = as_json(out)
    assert code == 0 and found["matched_records"] > 0
    first = found["matches"][0]["record_index"]  # (JSON: the reference's 0-based index)
    shown = first + 1  # what the text output, the board and verify call this record
    code, out, _ = run("search-snapshot", sha, "--query", "token_count")
    assert f"record {shown:>6} " in out.splitlines()[0]
    code, out, err = run("read-snapshot", sha, "--record", str(shown), "--max-bytes", "64")
    line = source.read_bytes().splitlines()[first]
    assert code == 0 and out == line[:64].decode() + "\n"
    assert "untrusted archived data" in err and "--offset 64" in err
    assert err.startswith(f"record {shown} of {sha[:12]}")
    code, out, _ = run("read-snapshot", sha, "--record", str(shown), "--offset", "64", "--json")
    page = as_json(out)
    assert page["content"].encode() == line[64:] and page["next_offset"] is None
    code, out, _ = run("search-snapshot", sha, "--query", "token_count")
    assert code == 0 and "records match" in out and "token_count" not in out
    code, out, _ = run("search-snapshot", sha[:10], "--query", "token_count", "--json")
    assert code == 0 and as_json(out) == found  # a prefix, as show, diff and undo take
    code, out, _ = run("read-snapshot", sha[:10], "--record", str(shown), "--offset", "64")
    assert code == 0 and out.encode() == line[64:] + b"\n"
    records = len(source.read_bytes().splitlines())
    code, _, err = run("read-snapshot", sha, "--record", str(records + 1))
    assert code != 0 and f"record {records + 1} is out of range" in err and f"has {records}" in err
    code, _, err = run("read-snapshot", sha, "--record", str(records))
    assert code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["search-snapshot", "abcd1234", "--query", "x"],
        ["read-snapshot", "0" * 64, "--record", "0", "--max-bytes", "3"],
        ["prune", "--keep", "0"],
        ["history", "no-such-session"],
        ["show", "ffffffff"],
        ["recall", "--query", ""],
    ],
)
def test_bad_input_exits_2_with_one_line(run: Run, short: Path, args: list[str]) -> None:
    run("snapshot", str(short))
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.startswith("gobtui: error: ") and err.count("\n") == 1


def test_a_missing_required_option_is_a_usage_error(run: Run) -> None:
    with pytest.raises(SystemExit) as exit_:
        run("read-snapshot", "0" * 64)
    assert exit_.value.code == 2


def test_snapshot_refuses_non_transcripts_and_long_labels(
    run: Run, short: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    code, _, err = run("snapshot", str(notes))
    assert code == 2 and "not a Claude Code or Codex transcript" in err
    for label, why in (
        ("x" * 129, "the label is over 128 characters"),
        ("two\nlines", "the label holds control characters"),
        (os.fsdecode(b"\xff\xfe"), "the label is not valid UTF-8"),  # argv's undecodable bytes
    ):
        code, _, err = run("snapshot", str(short), "--label", label)
        assert (code, err) == (2, f"gobtui: error: bad label: {why}\n")
    assert not (data_dir() / "vault" / "index.jsonl").exists()


def test_a_damaged_vault_exits_4_and_names_the_chunk(run: Run, short: Path) -> None:
    entry = as_json(run("snapshot", str(short), "--json")[1])
    vault = data_dir() / "vault"
    chunk = as_json((vault / "manifests" / entry["sha256"]).read_bytes())["chunks"][0]
    path = vault / "chunks" / chunk
    os.chmod(path, 0o600)
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF
    path.write_bytes(bytes(data))
    for args in (
        ["show", entry["sha256"][:8]],
        ["search-snapshot", entry["sha256"], "--query", "x"],
        ["recall"],
        ["prune"],
    ):
        code, out, err = run(*args)
        assert code == DAMAGED and out == ""
        assert err.startswith(f"gobtui: error: vault damaged: chunk {chunk}")
        assert err.rstrip().endswith("repair required") and err.count("\n") == 1


def test_a_damaged_index_exits_4(run: Run, short: Path) -> None:
    run("snapshot", str(short))
    with (data_dir() / "vault" / "index.jsonl").open("ab") as handle:
        handle.write(b"garbage\n")
    code, _, err = run("vault")
    assert code == DAMAGED and "vault damaged: index line 2 is invalid" in err
    code, _, err = run("snapshot", str(short))
    assert code == DAMAGED and "repair required" in err


def test_empty_vault_outputs(run: Run) -> None:
    assert run("vault") == (0, "the vault is empty\n", "")
    assert as_json(run("vault", "--json")[1]) == []
    code, out, _ = run("recall")
    assert code == 0 and "no state cards found in 0 snapshots" in out
    assert not (data_dir() / "vault").exists()


def test_a_dangling_index_entry_stops_the_listings_and_prune(run: Run, short: Path) -> None:
    """QA's repro: two snapshots, then line 1's sha256 gets another first hex digit (which
    the line's checksum catches)."""
    run("snapshot", str(short))
    with short.open("ab") as handle:
        handle.write(b'{"type":"user","message":{"content":"more"}}\n')
    run("snapshot", str(short))
    index = data_dir() / "vault" / "index.jsonl"
    lines = index.read_bytes().split(b"\n")
    sha = orjson.loads(lines[0])["sha256"]
    wrong = ("0" if sha[0] != "0" else "1") + sha[1:]
    lines[0] = lines[0].replace(sha.encode(), wrong.encode())
    index.write_bytes(b"\n".join(lines))
    damaged = index.read_bytes()
    manifests = sorted(os.listdir(data_dir() / "vault" / "manifests"))
    for args in (
        ["vault"],
        ["vault", "--json"],
        ["vault", SHORT_ID],
        ["history", SHORT_ID],
        ["vault", "--stats"],
        ["prune", "--keep", "1", "--yes"],
    ):
        code, out, err = run(*args)
        assert (code, out) == (DAMAGED, ""), args
        assert err == (
            f"gobtui: error: vault damaged: index line 1 fails its checksum "
            f"(snapshot {wrong[:12]}); repair required\n"
        )
    assert index.read_bytes() == damaged
    assert sorted(os.listdir(data_dir() / "vault" / "manifests")) == manifests


def test_an_empty_session_selector_is_refused(run: Run, short: Path) -> None:
    run("snapshot", str(short))
    for args in (["snapshot", ""], ["show", ""], ["history", ""], ["vault", ""], ["recall", ""]):
        assert run(*args) == (2, "", "gobtui: error: empty session selector\n"), args


def test_a_damaged_index_line_is_described_in_plain_words(run: Run, short: Path) -> None:
    run("snapshot", str(short))
    with (data_dir() / "vault" / "index.jsonl").open("ab") as handle:
        handle.write(b"[1, 2]\n")
    code, _, err = run("vault")
    assert code == DAMAGED
    assert err == (
        "gobtui: error: vault damaged: index line 2 is invalid: not a JSON object; "
        "repair required\n"
    )


# --- integrity: what listings check, deep stats, repair, leftovers -----------------------------


def _vault_dir() -> Path:
    return data_dir() / "vault"


def _two_snapshots(run: Run, short: Path) -> list[Any]:
    run("snapshot", str(short))
    with short.open("ab") as handle:
        handle.write(b'{"type":"user","message":{"content":"more"}}\n')
    run("snapshot", str(short))
    entries: list[Any] = as_json(run("vault", "--json")[1])
    return entries


def test_stats_say_what_they_check_and_deep_finds_a_flipped_chunk_byte(
    run: Run, short: Path
) -> None:
    newest, _ = _two_snapshots(run, short)
    chunk = as_json((_vault_dir() / "manifests" / newest["sha256"]).read_bytes())["chunks"][0]
    path = _vault_dir() / "chunks" / chunk
    data = bytearray(path.read_bytes())
    data[7] ^= 0x04
    path.write_bytes(bytes(data))
    code, out, _ = run("vault", "--stats")
    assert code == 0 and "chunks not re-hashed (--deep re-hashes them)" in out
    code, out, err = run("vault", "--stats", "--deep")
    assert code == 1
    assert "checked    every snapshot read back" in out
    assert f"DAMAGED    {newest['sha256'][:12]}: chunk {chunk} fails its hash check" in out
    assert err.startswith("1 damaged snapshot: ")
    code, out, _ = run("vault", "--stats", "--deep", "--json")
    stats = as_json(out)
    assert code == 1 and stats["verification"] == "chunks"
    assert [d["sha256"] for d in stats["damaged"]] == [newest["sha256"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["vault", "--deep"], "--deep goes with --stats"),
        (["vault", "--yes"], "--yes goes with --repair"),
        (["vault", "--repair", "--stats"], "--repair takes no session and no --stats"),
    ],
)
def test_vault_flags_that_do_not_go_together_exit_2(
    run: Run, args: list[str], message: str
) -> None:
    assert run(*args) == (2, "", f"gobtui: error: {message}\n")


def test_a_deleted_index_points_at_repair_which_rebuilds_it(run: Run, short: Path) -> None:
    entries = _two_snapshots(run, short)
    index = _vault_dir() / "index.jsonl"
    index.unlink()
    for args in (["vault"], ["history", SHORT_ID], ["vault", "--stats"], ["prune", "--yes"]):
        code, out, err = run(*args)
        assert (code, out) == (DAMAGED, ""), args
        assert err == (
            "gobtui: error: vault damaged: the index is missing but 2 manifests are present; "
            "gobtui vault --repair rebuilds it\n"
        )
    code, out, _ = run("vault", "--repair")
    assert code == 0 and not index.exists()
    assert "2 snapshots no valid line named, would be rebuilt:" in out
    assert "session_id, provider, record_count: from the snapshot's own records" in out
    assert "ts: from the manifest file's time" in out
    assert out.rstrip().endswith(
        "run again with --yes to write the 2 lines (the old index is kept beside it)"
    )
    code, out, _ = run("vault", "--repair", "--yes", "--json")
    report = as_json(out)
    assert code == 0 and report["entries"] == 2 and not report["dry_run"]
    assert {r["entry"]["session_id"] for r in report["recovered"]} == {SHORT_ID}
    listed = as_json(run("vault", "--json")[1])
    assert sorted(e["sha256"] for e in listed) == sorted(e["sha256"] for e in entries)
    assert {e["strategy"] for e in listed} == {"recovered"}
    code, out, _ = run("vault", "--repair")
    assert (code, out) == (
        0,
        "index: 2 lines read, 2 kept, 0 dropped\n"
        "nothing to repair: the index holds every snapshot that reads back\n",
    )


def test_repair_finds_the_path_of_a_session_in_the_homes(
    run: Run, short: Path, tmp_path: Path
) -> None:
    home = tmp_path / "claude"
    project = home / "projects" / "-home-marco-projects-spotter"
    project.mkdir(parents=True)
    transcript = project / f"{SHORT_ID}.jsonl"
    transcript.write_bytes(short.read_bytes())
    run("snapshot", str(transcript))
    (_vault_dir() / "index.jsonl").write_bytes(b"")
    code, out, err = run("vault", "--repair", "--yes", "--claude-home", str(home))
    assert code == 0, err
    assert "path: from the session of that id in the homes" in out
    [entry] = as_json(run("vault", "--json")[1])
    assert entry["path"] == str(transcript.resolve()) and entry["session_id"] == SHORT_ID


def test_an_edited_path_or_session_stops_show_and_undo(
    run: Run, short: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before lines were bound, an edited path sent undo into another directory and an edited
    session id made show call another session verified."""
    monkeypatch.setattr(gobtui.cli.dispatch, "COMMAND_MODULES", ("vault", "apply"))
    newest, _ = _two_snapshots(run, short)
    index = _vault_dir() / "index.jsonl"
    good = index.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for field, value in (("path", str(elsewhere / short.name)), ("session_id", "another")):
        lines = good.splitlines(keepends=True)
        record = orjson.loads(lines[1])
        record[field] = value
        lines[1] = orjson.dumps(record) + b"\n"
        index.write_bytes(b"".join(lines))
        undo = ["undo", str(short), "--sha", newest["sha256"], "--yes"]
        for args in (["show", newest["sha256"][:10]], undo):
            code, out, err = run(*args)
            assert code == DAMAGED and out == "", (args, out, err)
            assert f"index line 2 fails its checksum (snapshot {newest['sha256'][:12]})" in err
    assert os.listdir(elsewhere) == []


def test_a_legacy_line_is_listed_and_shown_as_unbound(run: Run, short: Path) -> None:
    run("snapshot", str(short))
    index = _vault_dir() / "index.jsonl"
    record = orjson.loads(index.read_bytes())
    del record["line_sha256"]
    index.write_bytes(orjson.dumps(record) + b"\n")
    code, out, _ = run("vault")
    assert code == 0 and "(line without a checksum)" in out
    code, out, _ = run("show", record["sha256"][:10])
    assert code == 0 and "index line without a checksum" in out
    assert as_json(run("show", record["sha256"][:10], "--json")[1])["line_bound"] is False
    assert "1 line without a checksum" in run("vault", "--stats")[1]


def test_prune_removes_what_an_interrupted_prune_left_but_not_a_receipt_s_snapshot(
    run: Run, short: Path
) -> None:
    from gobtui.adapters.publish.operations import operations_dir, write_receipt
    from gobtui.core.model import Provider
    from gobtui.core.receipt import OperationKind, Receipt

    second, first = _two_snapshots(run, short)
    with short.open("ab") as handle:
        handle.write(b'{"type":"user","message":{"content":"third"}}\n')
    run("snapshot", str(short))
    receipt = Receipt(
        operation_id="c" * 64, kind=OperationKind.APPLY, provider=Provider.CLAUDE,
        strategy="elide", source_path=str(short), source_session_id=SHORT_ID, path="/f.jsonl",
        session_id="f", source_sha256="a" * 64, output_sha256="b" * 64,
        snapshot_manifest_sha256=first["sha256"], bytes_before=2, bytes_after=1,
        reclaimed_bytes=1, completed=True, created_ts=1.0, resume_command="claude --resume f",
    )  # fmt: skip
    write_receipt(operations_dir() / f"{'c' * 64}.json", receipt)
    index = _vault_dir() / "index.jsonl"
    # What a prune with --keep 1 that stopped after rewriting the index leaves behind.
    index.write_bytes(index.read_bytes().splitlines(keepends=True)[-1])
    code, out, _ = run("prune", "--keep", "1")
    assert code == 0
    assert "would drop 0 of 1 snapshots" in out and "1 manifests (1 named by no index line" in out
    assert "run again with --yes" in out
    code, out, _ = run("prune", "--keep", "1", "--yes", "--json")
    report = as_json(out)
    assert (report["manifests_removed"], report["orphan_manifests"]) == (1, 1)
    manifests = set(os.listdir(_vault_dir() / "manifests"))
    assert first["sha256"] in manifests and second["sha256"] not in manifests
