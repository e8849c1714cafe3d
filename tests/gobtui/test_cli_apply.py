"""apply, undo and fork through the CLI on a real fixture copied into a temporary home."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.providers.registry import parse_transcript
from gobtui.cli.dispatch import main
from gobtui.core.model import Provider
from tests.gobtui.corpus_home import SPOTTER, place_spotter

LOW = ["--trigger", "20000", "--floor", "5000"]
IDLE_SINCE = 1_700_000_000


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The genuine spotter session when ../shared/fixtures is there, else a corpus session of
    the same id (a long debugging session over the trigger): the suite runs in any clone."""
    home = tmp_path / "claude"
    project = home / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    target = project / f"{SPOTTER}.jsonl"
    place_spotter(target)
    os.utime(target, (IDLE_SINCE, IDLE_SINCE))  # an idle session, as file plans are for
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return target


def receipt_of(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(list(argv)) == 0, capsys.readouterr().err
    data = orjson.loads(capsys.readouterr().out)
    assert isinstance(data, dict)
    return data


def test_apply_then_undo_then_resume_commands(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = source.read_bytes()
    applied = receipt_of(
        capsys, "apply", SPOTTER[:8], "--strategy", "elide", *LOW, "--yes", "--json"
    )
    fork = Path(str(applied["path"]))
    assert fork.is_file() and fork.parent == source.parent
    assert applied["completed"] is True
    assert applied["resume_command"] == f"claude --resume {applied['session_id']}"
    assert int(str(applied["bytes_after"])) < int(str(applied["bytes_before"])) == len(original)
    assert parse_transcript(Provider.CLAUDE, str(fork)).session_id == applied["session_id"]
    assert source.read_bytes() == original

    # The fork is a session like any other: it is found by its id.
    assert main(["verify", str(applied["session_id"])]) == 0
    capsys.readouterr()

    undone = receipt_of(capsys, "undo", SPOTTER, "--yes", "--json")
    restored = Path(str(undone["path"]))
    assert restored.is_file() and restored not in (source, fork)
    assert undone["snapshot_manifest_sha256"] == applied["snapshot_manifest_sha256"]
    assert undone["resume_command"] == f"claude --resume {undone['session_id']}"
    assert len(restored.read_bytes()) == len(original)
    assert source.read_bytes() == original

    # An apply of the same plan again returns the same receipt.
    again = receipt_of(capsys, "apply", SPOTTER, "--strategy", "elide", *LOW, "--yes", "--json")
    assert again == applied


def test_apply_text_names_the_fork_and_resume_command(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", str(source), "--strategy", "elide", *LOW, "--yes"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("published ") and " && claude --resume " in out  # (from its folder)
    assert "source untouched" in out
    assert re.search(r"bytes \(-[0-9.]+ (B|KB|MB)\)", out)  # what it saved
    # The same plan of the same bytes again: nothing is asked (no --yes) and nothing written.
    assert main(["apply", str(source), "--strategy", "elide", *LOW]) == 0
    again = capsys.readouterr().out
    assert again.startswith("already published from these bytes (nothing written): ")


def test_fork_text_shows_no_saving(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fork", str(source), "--yes"]) == 0
    out = capsys.readouterr().out
    size = source.stat().st_size
    assert f"{size:,} -> " in out and "(-" not in out  # a plain copy saves nothing


def test_apply_without_yes_off_a_terminal_writes_nothing(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SPOTTER, "--strategy", "elide", *LOW]) == 2
    err = capsys.readouterr().err
    assert "add --yes" in err and err.count("\n") == 1
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]


def test_apply_below_trigger_has_nothing_to_apply(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SPOTTER, "--yes"]) == 1
    err = capsys.readouterr().err
    assert "no plan (below_trigger)" in err and err.count("\n") == 1
    # ... and says what would plan it now; that step does publish a fork.
    step = re.search(
        r"to compact it now anyway: gobtui (apply \S+ --trigger \d+ --floor \d+)$", err.strip()
    )
    assert step is not None, err
    assert main([*step.group(1).split(), "--yes"]) == 0
    assert "resume with: " in capsys.readouterr().out


def test_fork_asks_first_and_prints_where_to_resume(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fork is asked as apply and undo are (--yes answers), and its receipt says how to
    resume it from the session's directory, as the board's `c` copies it."""
    assert main(["fork", SPOTTER]) == 2  # off a terminal, nothing asked: nothing written
    assert "add --yes" in capsys.readouterr().err
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]
    assert main(["fork", SPOTTER, "--yes"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "resume with:" in line)
    forked = receipt_of(capsys, "fork", SPOTTER, "--yes", "--json")  # the same: answered again
    cwd = parse_transcript(Provider.CLAUDE, str(source)).summary
    assert cwd is not None and cwd.cwd
    assert forked["resume_line"] == f"cd {cwd.cwd} && claude --resume {forked['session_id']}"
    assert line.strip() == f"resume with: {forked['resume_line']}"


def test_apply_of_a_control_strategy_is_refused(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SPOTTER, "--strategy", "sawtooth", *LOW, "--yes"]) == 1
    assert "asks the provider to compact" in capsys.readouterr().err


def test_fork_copies_under_a_new_id(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forked = receipt_of(capsys, "fork", SPOTTER, "--yes", "--json")
    path = Path(str(forked["path"]))
    assert forked["kind"] == "fork" and path.is_file()
    text = path.read_bytes().replace(str(forked["session_id"]).encode(), SPOTTER.encode())
    assert text == source.read_bytes()


def test_undo_of_an_unknown_session_is_one_line(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["undo", "ffffffff", "--yes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ffffffff" in err


def test_undo_by_sha_of_a_snapshot_taken_twice(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`snapshot` then `apply` of the unchanged file: two index entries, one snapshot id."""
    assert main(["snapshot", SPOTTER, "--json"]) == 0
    snapped = str(orjson.loads(capsys.readouterr().out)["sha256"])
    applied = receipt_of(capsys, "apply", SPOTTER, "--strategy", "elide", *LOW, "--yes", "--json")
    assert applied["snapshot_manifest_sha256"] == snapped
    first = receipt_of(capsys, "undo", SPOTTER, "--sha", snapped[:8], "--yes", "--json")
    assert first["snapshot_manifest_sha256"] == snapped and first["kind"] == "undo"
    again = receipt_of(capsys, "undo", SPOTTER[:8], "--sha", snapped.upper(), "--yes", "--json")
    assert again == first  # the same snapshot: the same undo, answered from its receipt


def test_undo_of_a_path_restores_that_file_s_snapshot(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "elsewhere" / source.name  # the same session id in another file
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes() + b'{"type":"mode","mode":"plan"}\n')
    assert main(["snapshot", str(source), "--json"]) == 0
    mine = str(orjson.loads(capsys.readouterr().out)["sha256"])
    assert main(["snapshot", str(copy), "--json"]) == 0
    theirs = str(orjson.loads(capsys.readouterr().out)["sha256"])
    restored = receipt_of(capsys, "undo", str(source), "--yes", "--json")
    assert restored["snapshot_manifest_sha256"] == mine != theirs
    assert Path(str(restored["path"])).parent == source.parent
    copy.unlink()  # the usual reason to undo: the file is gone; its recorded path still names it
    again = receipt_of(capsys, "undo", str(copy), "--yes", "--json")
    assert again["snapshot_manifest_sha256"] == theirs
    assert Path(str(again["path"])).parent == copy.parent


def test_applying_a_file_plan_to_a_live_session_warns(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the agent writes after the plan is not in the fork: said, as the dashboard says."""
    argv = ["apply", SPOTTER, *LOW, "--yes", "--json"]
    assert main([*argv, "--strategy", "micro"]) == 0
    assert "is live" not in capsys.readouterr().err
    os.utime(source)  # written just now
    assert main([*argv, "--strategy", "elide"]) == 0
    assert "is live" in capsys.readouterr().err


def test_an_id_two_files_hold_means_the_one_in_the_homes(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two copies of a transcript, in two homes: by id, snapshot and undo take the copy in the
    homes named; with neither copy there, the id is ambiguous and a path must say which."""
    other = tmp_path / "other" / "projects" / "-elsewhere"
    other.mkdir(parents=True)
    copy = other / source.name
    copy.write_bytes(source.read_bytes()[:4096].rsplit(b"\n", 1)[0] + b"\n")
    other_home = str(tmp_path / "other")
    theirs = receipt_of(capsys, "snapshot", SPOTTER, "--claude-home", other_home, "--json")
    assert theirs["path"] == str(copy.resolve())
    mine = receipt_of(capsys, "snapshot", SPOTTER, "--json")  # the home of CLAUDE_CONFIG_DIR
    assert mine["path"] == str(source.resolve()) and mine["sha256"] != theirs["sha256"]
    undone = receipt_of(capsys, "undo", SPOTTER, "--yes", "--json")
    assert undone["snapshot_manifest_sha256"] == mine["sha256"]
    assert Path(str(undone["path"])).parent == source.parent
    undone = receipt_of(capsys, "undo", SPOTTER, "--claude-home", other_home, "--yes", "--json")
    assert undone["snapshot_manifest_sha256"] == theirs["sha256"]
    assert Path(str(undone["path"])).parent == copy.parent
    nowhere = tmp_path / "empty"
    nowhere.mkdir()
    assert main(["undo", SPOTTER, "--claude-home", str(nowhere), "--yes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2 files" in err and "path" in err


@pytest.mark.parametrize(
    "command", [["snapshot", SPOTTER], ["history", SPOTTER], ["undo", SPOTTER, "--yes"]]
)
def test_a_named_home_that_does_not_exist_is_a_usage_error_for_vault_commands(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    assert main(["snapshot", SPOTTER]) == 0  # the vault knows the session already
    capsys.readouterr()
    assert main([*command, "--claude-home", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["undo", SPOTTER, "--sha", "", "--yes"], "empty --sha"),
        (["undo", SPOTTER, "--sha", "  ", "--yes"], "empty --sha"),
        (["undo", "", "--yes"], "empty session selector"),
    ],
)
def test_undo_refuses_empty_selectors(
    source: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["snapshot", SPOTTER]) == 0
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gobtui: error: {message}") and err.count("\n") == 1
    assert sorted(p.name for p in source.parent.iterdir()) == [source.name]  # nothing restored


def test_a_resumed_fork_is_left_alone_and_the_error_says_what_to_do(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    applied = receipt_of(capsys, "apply", SPOTTER, "--strategy", "elide", *LOW, "--yes", "--json")
    fork, fork_id = Path(str(applied["path"])), str(applied["session_id"])
    turn = {"type": "user", "sessionId": fork_id, "message": {"role": "user", "content": "go"}}
    with fork.open("ab") as handle:  # the user resumed the fork
        handle.write(orjson.dumps(turn) + b"\n")
    resumed = fork.read_bytes()
    assert main(["apply", SPOTTER, "--strategy", "elide", *LOW, "--yes"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"gobtui: error: the fork {fork} published by this apply was resumed since (it grew); "
        "it is left as it is. Apply again after the source changes, or compact the fork "
        f"itself: gobtui apply {fork_id} [needs_recovery]\n"
    )
    assert fork.read_bytes() == resumed
    forked = receipt_of(capsys, "fork", fork_id, "--yes", "--json")  # the way forward works
    assert forked["source_session_id"] == fork_id and Path(str(forked["path"])).is_file()


def test_detect_shows_an_elide_fork_at_its_projected_context(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compacted fork's latest usage says its own projected context: detect (as the board)
    shows that until the resumed session reports usage of its own."""
    applied = receipt_of(capsys, "apply", SPOTTER, "--strategy", "elide", *LOW, "--yes", "--json")
    fork_id = str(applied["session_id"])

    def detected(session_id: str) -> dict[str, object]:
        assert main(["detect", "--all", "--json", "--no-cache"]) == 0
        rows = orjson.loads(capsys.readouterr().out)
        return next(row for row in rows if row["session_id"] == session_id)

    source_row, fork_row = detected(SPOTTER), detected(fork_id)
    assert source_row["context_state"] == "reported" and source_row["context_tokens"]
    projection = applied["projection"]
    assert isinstance(projection, dict)
    restated = projection["context_tokens_after"] - projection["calibration"]["tail_tokens"]
    assert fork_row["context_state"] == "reported"
    assert fork_row["context_tokens"] == restated < source_row["context_tokens"]
    assert not fork_row["over_trigger"]
    assert str(fork_row["title"]).startswith("elide fork · ")
    # Resumed: the agent's next answer reports the fork's own usage.
    fork = Path(str(applied["path"]))
    last = next(
        record["uuid"]
        for record in map(orjson.loads, reversed(fork.read_bytes().splitlines()))
        if record.get("type") in ("user", "assistant") and record.get("uuid")
    )
    answer = {
        "type": "assistant",
        "uuid": "resumed-1",
        "parentUuid": last,
        "sessionId": fork_id,
        "timestamp": "2026-11-29T10:00:00.000Z",
        "message": {
            "id": "msg_resumed",
            "model": "claude-opus-4-6",
            "role": "assistant",
            "content": [{"type": "text", "text": "Back."}],
            "usage": {
                "input_tokens": 30_000,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 5,
            },
        },
    }
    with fork.open("ab") as handle:
        handle.write(orjson.dumps(answer) + b"\n")
    resumed = detected(fork_id)
    assert resumed["context_state"] == "reported" and resumed["context_tokens"] == 30_005


def test_a_plan_of_a_fork_starts_from_its_projected_context(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copied last usage once made a fork look as full as its source; its restated one says
    what the apply projected, so a plan of the fork starts there."""
    applied = receipt_of(capsys, "apply", SPOTTER, "--strategy", "elide", *LOW, "--yes", "--json")
    before, after = applied["context_tokens_before"], applied["context_tokens_after"]
    assert isinstance(after, int) and isinstance(before, int) and after < before
    fork = Path(str(applied["path"]))
    parsed = parse_transcript(Provider.CLAUDE, str(fork))
    assert parsed.summary is not None and parsed.summary.context_tokens == after  # no tail here
    fork_id = str(applied["session_id"])
    plan = receipt_of(capsys, "plan", fork_id, "--strategy", "elide", *LOW, "--json")
    assert plan["context_tokens_before"] == after
    source_plan = receipt_of(capsys, "plan", SPOTTER, "--strategy", "elide", *LOW, "--json")
    assert source_plan["context_tokens_before"] == before


def test_an_apply_whose_receipt_was_lost_adopts_its_identical_fork(
    source: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same edits make the same fork, whichever strategy named them: with the receipt
    gone (another data folder), applying them again adopts the identical file."""
    planned = main(["plan", SPOTTER, *LOW, "--json"])
    assert planned == 0
    auto = orjson.loads(capsys.readouterr().out)
    picked = str(auto["rationale"]).split()[2]  # "auto: selected <strategy> ..."
    first = receipt_of(capsys, "apply", SPOTTER, "--strategy", picked, *LOW, "--yes", "--json")
    fork = Path(str(first["path"]))
    published = fork.read_bytes()
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(tmp_path / "other-data"))
    again = receipt_of(capsys, "apply", SPOTTER, *LOW, "--yes", "--json")  # auto: same edits
    assert again["path"] == first["path"] and again["strategy"] == "auto"
    assert fork.read_bytes() == published  # adopted, not rewritten


def test_recall_finds_the_card_of_each_published_fork_without_a_manual_snapshot(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forks = [
        receipt_of(capsys, "apply", SPOTTER[:8], "--strategy", name, *LOW, "--yes", "--json")
        for name in ("structured", "middle")
    ]
    assert main(["recall", "--json"]) == 0
    recalled = orjson.loads(capsys.readouterr().out)
    assert {hit["session_id"] for hit in recalled["results"]} == {f["session_id"] for f in forks}
    # the source (the same bytes both times: one snapshot) and the two forks
    assert recalled["cards_matched"] == 2 and recalled["snapshots_scanned"] == 3
    for fork in forks:  # the snapshot is the fork as published
        assert main(["history", str(fork["session_id"]), "--json"]) == 0
        (entry,) = orjson.loads(capsys.readouterr().out)
        assert entry["strategy"] == "published" and entry["path"] == fork["path"]


def test_diff_of_a_source_and_its_fork_lists_what_the_fork_changed(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every record carries the session id the fork renamed, so byte for byte almost all
    differ; with the identity set aside, the diff lists only what the fork changed."""
    applied = receipt_of(capsys, "apply", SPOTTER, "--strategy", "elide", *LOW, "--yes", "--json")
    vault_rows = orjson.loads(_run(capsys, "vault", "--json"))
    by_label = {row["strategy"]: row["sha256"] for row in vault_rows}
    src, fork = by_label["elide"], by_label["published"]
    data = orjson.loads(_run(capsys, "diff", src[:12], fork[:12], "--json"))
    changes = data["changes"]
    assert changes["unpaired"] is None
    assert data["unchanged"] < changes["kept"]  # identity set aside, far more pair up
    assert changes["counts"].get("stubbed", 0) > 0
    changed = len(changes["changes"])
    assert changed == sum(changes["counts"].values())
    assert changes["kept"] + changed >= changes["records_b"]
    assert changes["kept"] > changed  # an elide changes few records
    text = _run(capsys, "diff", src[:12], fork[:12])
    assert f"what B changed (session ids set aside): {changes['kept']} records kept" in text
    assert " stubbed " in text
    fork_id = applied["session_id"]
    assert isinstance(fork_id, str) and fork_id not in text  # records are numbered, never quoted
    # numbered as the files number them, from 1: the last one appended is b's last record
    listed = [line.split()[1:4:2] for line in text.splitlines() if line.startswith("  rec ")]
    numbers = [[str(c["record_a"] or "-"), str(c["record_b"] or "-")] for c in changes["changes"]]
    assert listed == numbers[: len(listed)]
    assert all(
        c["record_b"] is None or c["record_b"] <= changes["records_b"] for c in changes["changes"]
    )


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out
