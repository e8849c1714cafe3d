"""install-hooks / uninstall-hooks on real settings files, and `gobtui hook <event>` run as
the clients run it (a subprocess, the payload on stdin) on corpus transcripts in real homes."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.config.paths import data_dir
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.dispatch import main
from tests.builders.sessions import claude_work_session, codex_work_session

SETTINGS: dict[str, Any] = {
    "model": "opus",
    "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}]},
}


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    codex.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude, codex


def run(capsys: pytest.CaptureFixture[str], code: int, *argv: str) -> str:
    assert main(list(argv)) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.out if code == 0 else captured.err


def test_install_shows_first_then_merges_keeps_a_copy_and_uninstall_gives_it_back(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    claude, codex = homes
    settings = claude / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    settings.chmod(0o644)
    shown = run(capsys, 0, "install-hooks")
    assert f"would write {settings}" in shown and f"would write {codex / 'hooks.json'}" in shown
    assert "--yes" in shown and json.loads(settings.read_text()) == SETTINGS
    assert not (codex / "hooks.json").exists()

    written = run(capsys, 0, "install-hooks", "--yes")
    assert f"wrote {settings}" in written and "trust" in written
    doc = json.loads(settings.read_text())
    assert doc["model"] == "opus" and doc["hooks"]["Stop"] == SETTINGS["hooks"]["Stop"]
    commands = [
        g["hooks"][0]["command"] for g in doc["hooks"]["PreCompact"] + doc["hooks"]["SessionStart"]
    ]
    assert [c.split()[-2:] for c in commands] == [
        ["hook", "pre-compact"],
        ["hook", "session-start"],
    ]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o644  # its mode is kept
    (backup,) = claude.glob("settings.json.gobtui-bak-*")
    assert json.loads(backup.read_text()) == SETTINGS
    codex_doc = json.loads((codex / "hooks.json").read_text())
    assert codex_doc["hooks"]["SessionStart"][0]["matcher"] == "^compact$"
    assert "already installed" in run(capsys, 0, "install-hooks", "--yes")

    before_uninstall = settings.read_text()
    shown = run(capsys, 0, "uninstall-hooks", "--provider", "claude")
    assert "would write" in shown and "hook pre-compact" in shown and "say done" not in shown
    assert settings.read_text() == before_uninstall
    removed = run(capsys, 0, "uninstall-hooks", "--yes", "--provider", "claude")
    assert "removes claude:PreCompact, claude:SessionStart" in removed
    assert json.loads(settings.read_text()) == SETTINGS
    assert json.loads((codex / "hooks.json").read_text()) == codex_doc  # not asked: untouched


def test_settings_it_cannot_edit_safely_are_refused_in_one_line(
    homes: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude, _ = homes
    settings = claude / "settings.json"
    settings.write_text('{"hooks": {"PreCompact": "not a list"}}')
    error = run(capsys, 2, "install-hooks", "--yes", "--provider", "claude")
    assert "not a list of matcher groups" in error and error.count("\n") == 1
    settings.write_text("{broken")
    assert "not valid JSON" in run(capsys, 2, "install-hooks", "--yes", "--provider", "claude")
    assert settings.read_text() == "{broken"
    real = tmp_path / "dotfiles-settings.json"
    real.write_text("{}")
    settings.unlink()
    settings.symlink_to(real)
    assert "symlink" in run(capsys, 2, "install-hooks", "--yes", "--provider", "claude")
    assert real.read_text() == "{}" and settings.is_symlink()


def hook(event: str, payload: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gobtui.cli", "hook", event],
        input=payload, capture_output=True, env=dict(os.environ), timeout=120,
    )  # fmt: skip


def payload(path: Path, session_id: str, **more: Any) -> bytes:
    return json.dumps({"session_id": session_id, "transcript_path": str(path), **more}).encode()


def test_a_native_compaction_is_snapshotted_and_the_new_context_gets_a_pointer(
    homes: tuple[Path, Path],
) -> None:
    claude, codex = homes
    session = claude_work_session(30_000, "hooks")
    path = session.write(claude / "projects")
    before = path.read_bytes()
    pre = hook(
        "pre-compact",
        payload(path, session.session_id, hook_event_name="PreCompact", trigger="auto"),
    )
    assert pre.returncode == 0 and pre.stdout == b""
    (entry,) = Vault().history(session.session_id)
    assert (
        entry.strategy == "pre-compact"
        and entry.source_sha256 == hashlib.sha256(before).hexdigest()
    )
    assert path.read_bytes() == before  # the transcript is only read

    with path.open("a") as grown:  # the client rewrites its context after compacting
        grown.write('{"type":"system","subtype":"compact_boundary"}\n')
    start = hook("session-start", payload(path, session.session_id, source="compact"))
    assert start.returncode == 0
    context = json.loads(start.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert f"snapshot {entry.sha256[:12]}" in context["additionalContext"]
    assert f"gobtui search-snapshot {entry.sha256}" in context["additionalContext"]
    labels = [e.strategy for e in Vault().history(session.session_id)]
    assert labels == ["post-compact", "pre-compact"]
    events = [json.loads(line) for line in (data_dir() / "events.jsonl").read_text().splitlines()]
    assert [(e["action"], e["outcome"]) for e in events] == [
        ("provider_compact", "planned"),
        ("provider_compact", "applied"),
    ]
    # a plain start (not after a compaction) adds nothing
    assert hook("session-start", payload(path, session.session_id, source="startup")).stdout == b""

    rollout = codex_work_session(30_000, "hooks")
    codex_path = rollout.write(codex / "sessions")
    assert hook("pre-compact", payload(codex_path, rollout.session_id)).returncode == 0
    (codex_entry,) = Vault().history(rollout.session_id)
    assert codex_entry.provider.value == "codex"


@pytest.mark.parametrize(
    "raw",
    [b"", b"[1, 2", b"\xff\xfe", b"[]", b'{"session_id": 5}', b"9" * 10, b'{"a":' * 3000],
)
def test_unexpected_payloads_are_logged_and_never_block_the_agent(
    homes: tuple[Path, Path], raw: bytes
) -> None:
    done = hook("pre-compact", raw)
    assert done.returncode == 0 and done.stdout == b"" and b"Traceback" not in done.stderr
    log = (data_dir() / "hooks.log").read_text()
    assert log.count("\n") == 1 and "skipped: payload_" in log
    assert not (data_dir() / "vault").exists()


def test_a_transcript_outside_the_homes_or_behind_a_symlink_is_not_read(
    homes: tuple[Path, Path], tmp_path: Path
) -> None:
    claude, _ = homes
    session = claude_work_session(20_000, "outside")
    outside = session.write(tmp_path / "elsewhere")
    assert hook("pre-compact", payload(outside, session.session_id)).returncode == 0
    linked = claude / "projects" / "p" / f"{session.session_id}.jsonl"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(outside)
    assert hook("pre-compact", payload(linked, session.session_id)).returncode == 0
    assert hook("no-such-event", payload(outside, session.session_id)).returncode == 0
    reasons = [
        line.split("skipped: ")[1] for line in (data_dir() / "hooks.log").read_text().splitlines()
    ]
    assert reasons == [
        "transcript_outside_provider_homes",
        "transcript_not_a_regular_file",
        "unknown_event",
    ]
    assert Vault().entries() == []


def test_the_hook_command_is_not_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert "install-hooks" in listed and "SUPPRESS" not in listed
    assert not any(line.split()[:1] == ["hook"] for line in listed.splitlines())
