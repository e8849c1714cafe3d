"""A fork is a fork by its own content, whatever data dir published it: a `watch` with
another data dir (no receipts of those forks) never compacts an unresumed fork again (a fork
of a fork), labels them forks, and takes one up once a client has written to it."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import config_path
from gobtui.cli.dispatch import main
from gobtui.core.fork_id import published_size
from tests.builders.sessions import claude_work_session, codex_work_session

LOW = ["--trigger", "20000", "--floor", "5000"]
LOW_POLICY = '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 5000\nstrategy = "elide"\n'
IDLE_SINCE = 1_700_000_000


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return orjson.loads(capsys.readouterr().out)


def watch_once(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["watch", "--once", "--json", "--all"]) == 0, capsys.readouterr().err
    return [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_another_data_dirs_watch_leaves_unresumed_forks_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    sources = [
        claude_work_session(60_000, "dirs").write(claude / "projects"),
        codex_work_session(60_000, "dirs").write(codex / "sessions"),
    ]
    for path in sources:
        os.utime(path, (IDLE_SINCE, IDLE_SINCE))
    forks: list[dict[str, object]] = []
    for path in sources:  # published with the first data dir
        for argv in (
            ("fork", str(path), "--yes"),
            ("apply", str(path), "--strategy", "structured", *LOW, "--yes"),
        ):
            receipt = run_json(capsys, *argv)
            assert isinstance(receipt, dict)
            forks.append(receipt)
    for fork in forks:
        size = Path(str(fork["path"])).stat().st_size
        assert published_size(str(fork["session_id"])) == size  # the id says it

    monkeypatch.setenv("GOBTUI_DATA_DIR", str(tmp_path / "other-data"))
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(LOW_POLICY)
    fork_ids = {str(fork["session_id"]) for fork in forks}
    decisions = watch_once(capsys)
    of_forks = [d for d in decisions if d["session_id"] in fork_ids]
    assert all(d["decision"] == "unresumed_fork" for d in of_forks), of_forks
    source_ids = {str(fork["source_session_id"]) for fork in forks}
    assert {d["session_id"] for d in decisions if d["decision"] == "published"} <= source_ids
    detected = run_json(capsys, "detect", "--all")
    assert isinstance(detected, list)
    rows = {row["session_id"]: row for row in detected}
    for fork_id in fork_ids:
        assert rows[fork_id]["title"].startswith("fork · ")
        assert rows[fork_id]["over_trigger"] is False  # an unresumed fork is never due

    # A client resumes the plain Claude fork: it is a session like any other from then on.
    resumed = Path(str(forks[0]["path"]))
    with resumed.open("ab") as handle:
        handle.write(
            b'{"type":"mode","mode":"normal","sessionId":"%s"}\n'
            % str(forks[0]["session_id"]).encode()
        )
    os.utime(resumed, (IDLE_SINCE + 60, IDLE_SINCE + 60))  # and is idle again since
    later = {d["session_id"]: d for d in watch_once(capsys)}
    assert later[forks[0]["session_id"]]["decision"] == "published"  # its own compacted fork
    assert not rows[str(forks[1]["session_id"])]["over_trigger"]
