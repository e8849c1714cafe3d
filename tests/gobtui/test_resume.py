"""gobtui.services.resume: the resume command, where it runs, and a failing client's own words."""

from __future__ import annotations

import sys
from pathlib import Path

from gobtui.core.model import Provider, SessionSummary
from gobtui.services.resume import error_line, resume_of, run_client


def summary(cwd: str | None, provider: Provider = Provider.CLAUDE) -> SessionSummary:
    return SessionSummary(provider=provider, session_id="abc-1", path="/x.jsonl", cwd=cwd)


def test_the_copied_command_changes_to_the_sessions_directory(tmp_path: Path) -> None:
    odd = tmp_path / "my project; rm -rf ~"
    odd.mkdir()
    resume = resume_of(summary(str(odd)))
    assert (resume.cwd, resume.gone) == (str(odd), None)
    assert resume.copy_text() == f"cd '{odd}' && claude --resume abc-1"
    codex = resume_of(summary(None, Provider.CODEX))
    assert codex.copy_text() == "codex resume abc-1" and codex.cwd is None


def test_a_directory_that_is_gone_is_said_not_used(tmp_path: Path) -> None:
    resume = resume_of(summary(str(tmp_path / "deleted")))
    assert resume.cwd is None and resume.gone == str(tmp_path / "deleted")
    assert resume.copy_text().startswith(f"cd {tmp_path / 'deleted'} && ")


def test_a_failing_client_is_reported_by_its_first_error_line(tmp_path: Path) -> None:
    script = (
        "import sys; print('starting', file=sys.stderr); "
        "print('Error: No conversation found with session ID: x', file=sys.stderr); sys.exit(3)"
    )
    ran = run_client([sys.executable, "-c", script], str(tmp_path))
    assert ran.code == 3
    assert ran.error == "Error: No conversation found with session ID: x"
    ok = run_client([sys.executable, "-c", "import os; print(os.getcwd())"], str(tmp_path))
    assert ok.code == 0 and ok.error is None


def test_error_line_falls_back_to_the_last_line() -> None:
    assert error_line("") is None
    assert error_line("one\nthe end\n\n") == "the end"
    assert error_line("x" * 500) == "x" * 200


def test_a_directory_holding_escapes_is_not_copied() -> None:
    resume = resume_of(summary("/srv/look \x1b]52;c;UFdORUQ=\x07 \u202eevil"))
    assert resume.copy_text() == "claude --resume abc-1"
