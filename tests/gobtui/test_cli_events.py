"""`gobtui events` reads what a real apply recorded, filters by session and span, and refuses
a span it cannot read on one line."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.publish.events import append_event
from gobtui.cli.dispatch import main
from gobtui.core.model import Provider
from gobtui.core.telemetry import EventAction, EventOutcome, TelemetryEvent
from tests.gobtui.corpus_home import LOW, SESSION, source

__all__ = ["source"]  # a fixture, used by name


def event(session_id: str, ts: float) -> TelemetryEvent:
    return TelemetryEvent(
        ts=ts,
        provider=Provider.CODEX,
        session_id=session_id,
        source_identity_sha256="a" * 64,
        strategy="micro",
        action=EventAction.TRANSCRIPT_COMPACT,
        outcome=EventOutcome.APPLIED,
        trigger_tokens=100_000,
        context_tokens_before=150_000,
        context_tokens_after=60_000,
        est_reclaimed_tokens=90_000,
        items_covered=12,
        duration_ms=3.0,
    )


def json_of(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    assert main(list(argv)) == 0, capsys.readouterr().err
    data = orjson.loads(capsys.readouterr().out)
    assert isinstance(data, list)
    return data


def test_an_apply_and_an_undo_are_listed_oldest_first(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", SESSION[:8], "--strategy", "elide", *LOW, "--yes", "--json"]) == 0
    assert main(["undo", SESSION, "--yes", "--json"]) == 0
    capsys.readouterr()
    listed = json_of(capsys, "events", "--json")
    assert [(e["session_id"], e["action"], e["outcome"]) for e in listed] == [
        (SESSION, "transcript_compact", "applied"),
        (SESSION, "undo", "applied"),
    ]
    assert listed[0]["schema"] == "gobtui/compaction-events-v1"
    before, after = int(str(listed[0]["context_tokens_before"])), listed[0]["context_tokens_after"]
    assert before > int(str(after)) > 0

    assert main(["events"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["when", "prov", "session"]
    assert len(lines) == 3 and SESSION[:8] in lines[1] and "elide" in lines[1]
    assert "undo" in lines[2]


def test_session_and_since_filter(capsys: pytest.CaptureFixture[str]) -> None:
    now = time.time()
    append_event(event("old-session", now - 3 * 3_600))
    append_event(event("new-session", now - 60))
    append_event(event("new-other", now - 30))
    assert [e["session_id"] for e in json_of(capsys, "events", "--since", "30m", "--json")] == [
        "new-session",
        "new-other",
    ]
    assert [e["session_id"] for e in json_of(capsys, "events", "--session", "new-s", "--json")] == [
        "new-session"
    ]
    assert json_of(capsys, "events", "--session", "old", "--since", "2h", "--json") == []
    assert main(["events", "--session", "nobody"]) == 0
    assert capsys.readouterr().out == "no events match\n"


def test_no_events_file_is_an_empty_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["events"]) == 0
    assert capsys.readouterr().out == "no events\n"


@pytest.mark.parametrize("span", ["soon", "-5m", "3y", ""])
def test_a_span_it_cannot_read_is_one_line(span: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["events", f"--since={span}"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "not a span" in err and len(err.splitlines()) == 1


def test_a_hostile_session_id_reaches_the_terminal_clean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    append_event(event("evil\x1b]0;pwned\x07\u202e", time.time()))
    assert main(["events"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
