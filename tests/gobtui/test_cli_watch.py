"""`gobtui watch` on a real fixture in a temporary home: a dry run decides and writes nothing,
a real pass publishes a verified fork and leaves the source as it was, a second pass repeats
nothing, the apply hold keeps a new watch from forking the source again, and a live session is
only told its provider's control."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import config_path, data_dir
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.cli.dispatch import main
from gobtui.core.model import Provider
from tests.gobtui.corpus_home import SESSION, source

__all__ = ["source"]  # a fixture, used by name

LOW_POLICY = '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 5000\nstrategy = "elide"\n'


@pytest.fixture
def low_trigger() -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LOW_POLICY)


def decisions(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    assert main(["watch", "--once", "--json", "--all", *argv]) == 0, capsys.readouterr().err
    return [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]


def of_source(found: list[dict[str, object]]) -> dict[str, object]:
    (one,) = [d for d in found if d["session_id"] == SESSION]
    return one


def test_a_dry_run_decides_and_writes_nothing(
    source: Path, low_trigger: None, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in source.parent.iterdir())
    found = of_source(decisions(capsys, "--dry-run"))
    assert found["decision"] == "would_publish" and found["strategy"] == "elide"
    assert int(str(found["context_tokens_after"])) < int(str(found["context_tokens"]))
    assert sorted(p.name for p in source.parent.iterdir()) == before
    assert not (data_dir() / "events.jsonl").exists()


def test_a_pass_publishes_a_fork_then_says_nothing_new_and_the_hold_keeps_it(
    source: Path, low_trigger: None, capsys: pytest.CaptureFixture[str]
) -> None:
    original = source.read_bytes()
    found = of_source(decisions(capsys))
    assert found["decision"] == "published", found
    fork = Path(str(found["fork_path"]))
    assert fork.parent == source.parent and fork.is_file()
    assert found["resume_command"] == f"claude --resume {found['fork_session_id']}"
    assert parse_transcript(Provider.CLAUDE, str(fork)).session_id == found["fork_session_id"]
    assert source.read_bytes() == original
    assert main(["verify", str(found["fork_session_id"])]) == 0
    capsys.readouterr()
    events = [orjson.loads(line) for line in (data_dir() / "events.jsonl").read_bytes().split()]
    assert [(e["session_id"], e["outcome"]) for e in events] == [(SESSION, "applied")]

    # A new watch (a restart): the source was forked a moment ago, so it is held, and the
    # fork no client has resumed is left alone.
    again = decisions(capsys)
    assert of_source(again)["decision"] == "held"
    assert {d["decision"] for d in again if d["session_id"] != SESSION} <= {"unresumed_fork"}
    assert len(list(source.parent.iterdir())) == 2


def test_one_watch_reports_only_news(
    source: Path, low_trigger: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from gobtui.adapters.config.paths import resolve_homes
    from gobtui.services.watching import HeadlessWatch, WatchSettings

    homes = resolve_homes(None, None, os.environ)
    settings = WatchSettings(dry_run=True, all_sessions=True, use_cache=False)
    watch = HeadlessWatch(homes, settings)
    try:
        first = watch.pass_once()
        assert [d.decision.value for d in first] == ["would_publish"]
        assert watch.pass_once() == []  # nothing changed, nothing said
        with source.open("ab") as handle:  # the session grows (and is live now)
            handle.write(source.read_bytes().splitlines(keepends=True)[-1])
        (news,) = watch.pass_once()
        assert news.decision.value == "provider_compact" and news.control == "/compact"
    finally:
        watch.close()


def test_a_live_session_is_only_told_its_control(
    source: Path, low_trigger: None, capsys: pytest.CaptureFixture[str]
) -> None:
    now = time.time()
    os.utime(source, (now, now))
    original = source.read_bytes()
    found = of_source(decisions(capsys))
    assert (found["decision"], found["control"]) == ("provider_compact", "/compact")
    assert found["fork_path"] is None and len(list(source.parent.iterdir())) == 1
    assert source.read_bytes() == original
    events = [orjson.loads(line) for line in (data_dir() / "events.jsonl").read_bytes().split()]
    assert [(e["action"], e["outcome"], e["est_reclaimed_tokens"]) for e in events] == [
        ("provider_compact", "skipped", 0)
    ]


def test_the_text_lines_and_the_status_line(
    source: Path, low_trigger: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--once", "--dry-run", "--all"]) == 0
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    assert SESSION[:8] in line and "would publish elide ->" in line and "dry run" in line
    assert "1 sessions, 1 over their trigger (dry run: nothing is written; one pass)" in (
        captured.err
    )


def test_nothing_over_its_trigger_prints_nothing(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--once", "--all", "--provider", "codex"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "0 sessions, 0 over" in captured.err


@pytest.mark.parametrize("interval", ["0", "-3", "soon", "99999999"])
def test_an_interval_it_cannot_use_is_one_line(
    interval: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["watch", f"--interval={interval}"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "not an interval" in err and len(err.splitlines()) == 1


def test_a_broken_config_is_one_line_before_any_pass(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[policy\n")
    assert main(["watch", "--once"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gobtui: error:") and len(err.splitlines()) == 1
