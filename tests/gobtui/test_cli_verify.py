"""`gobtui verify`: exit codes 0/1/2, the text and --json outputs, on copies of real files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

import gobtui.cli.dispatch
import gobtui.cli.verify
from gobtui.cli.dispatch import main
from gobtui.core.verify import VerifyReport

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """main([...]) with the verify module registered, and what it printed."""
    monkeypatch.setattr(gobtui.cli.dispatch, "COMMAND_MODULES", ("verify",))

    def invoke(*args: str) -> tuple[int, str, str]:
        code = main(["verify", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_clean_transcript_exits_0(run: Run, fixture_copy: Callable[..., Path]) -> None:
    path = fixture_copy("oracle/claude-branch.jsonl")
    code, out, err = run(str(path))
    assert (code, err) == (0, "")
    assert (
        out
        == "claude-branch.jsonl: Claude, 10 records, 1,790 bytes: 0 errors, 0 warnings (clean)\n"
    )


def test_warnings_only_exit_0(run: Run, fixture_copy: Callable[..., Path]) -> None:
    path = fixture_copy("oracle/codex-window.jsonl")
    code, out, _ = run(str(path))
    assert code == 0
    assert out.splitlines() == [
        "line 9      warning  unsupported_response_item  "
        "response item shape is outside the supported set",
        "codex-window.jsonl: Codex, 11 records, 2,862 bytes: 0 errors, 1 warning "
        "(ok, with warnings)",
    ]


def test_a_finding_repeated_on_one_line_is_one_line(
    run: Run, fixture_copy: Callable[..., Path]
) -> None:
    path = fixture_copy(
        "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    )
    code, out, _ = run(str(path))
    lines = out.splitlines()
    assert code == 0 and lines[-1].endswith("0 errors, 40 warnings (ok, with warnings)")
    assert [line for line in lines if line.startswith("line 1787 ")] == [
        "line 1787   warning  unsupported_response_item  "
        "response item shape is outside the supported set (×5)"
    ]
    assert len(lines) == len(set(lines))


def test_an_error_finding_exits_1(run: Run, fixture_copy: Callable[..., Path]) -> None:
    path = fixture_copy("codex/kvsankar__agent-history__session_with_compaction.jsonl")
    code, out, _ = run(str(path))
    assert code == 1
    first, summary = out.splitlines()
    assert first.split()[2:4] == ["error", "malformed_compacted"]
    assert summary.endswith("1 error, 0 warnings (errors: a resume would break or lose context)")


def test_json_report(run: Run, fixture_copy: Callable[..., Path]) -> None:
    path = fixture_copy("oracle/codex-window.jsonl")
    code, out, _ = run(str(path), "--json")
    assert code == 0
    data = orjson.loads(out)
    assert data == {
        "provider": "codex",
        "findings": [
            {
                "severity": "warning",
                "line_index": 9,
                "code": "unsupported_response_item",
                "message": "response item shape is outside the supported set",
            }
        ],
        "errors": 0,
        "warnings": 1,
        "records": 11,
        "bytes": path.stat().st_size,
        "ok": True,
        "clean": False,
    }
    assert VerifyReport.model_validate(data).findings[0].line_index == 9


def test_json_report_of_a_failing_transcript_exits_1(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    record = b'{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s"}\n'
    path.write_bytes(record * 2)
    code, out, _ = run(str(path), "--json")
    assert code == 1
    data = orjson.loads(out)
    assert (data["ok"], data["errors"], data["findings"][0]["code"]) == (
        False,
        1,
        "duplicate_uuid",
    )


def test_a_session_continued_from_another_file_is_a_warning(run: Run, tmp_path: Path) -> None:
    # Its first parentUuid names a record of the file it continues: the client resumes it.
    path = tmp_path / "continued.jsonl"
    path.write_bytes(b'{"type":"user","uuid":"u","parentUuid":"gone","sessionId":"s"}\n')
    code, out, _ = run(str(path), "--json")
    assert code == 0
    data = orjson.loads(out)
    assert (data["ok"], data["warnings"], data["findings"][0]["code"]) == (
        True,
        1,
        "broken_parent_chain",
    )


def test_an_oversized_file_is_not_read(
    run: Run, fixture_copy: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gobtui.cli.verify, "VERIFY_MAX_BYTES", 100)
    path = fixture_copy("oracle/claude-branch.jsonl")
    code, out, _ = run(str(path), "--json")
    assert code == 1
    data = orjson.loads(out)
    assert [f["code"] for f in data["findings"]] == ["transcript_limit"]
    assert (data["bytes"], data["records"]) == (1790, 0)


def test_missing_path_exits_2(run: Run, tmp_path: Path) -> None:
    code, out, err = run(str(tmp_path / "nope.jsonl"))
    assert (code, out) == (2, "")
    assert err == f"gobtui: error: no such file: {tmp_path / 'nope.jsonl'}\n"


def test_directory_exits_2(run: Run, tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path))
    assert code == 2
    assert err.count("\n") == 1 and "is a directory" in err


@pytest.mark.parametrize("content", [b"", b"hello\n", b'{"kind":"unknown"}\n[1,2]\n'])
def test_unknown_provider_exits_2(run: Run, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "what.jsonl"
    path.write_bytes(content)
    code, out, err = run(str(path))
    assert (code, out) == (2, "")
    assert (
        err.startswith("gobtui: error: ")
        and ("is not a Claude Code or Codex transcript" in err or "is empty" in err)
        and err.count("\n") == 1
    )


def test_unreadable_file_exits_2(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "locked.jsonl"
    path.write_bytes(b'{"type":"user","sessionId":"s"}\n')
    path.chmod(0)
    try:
        with path.open("rb"):
            pytest.skip("file permissions are not enforced for this user (root)")
    except PermissionError:
        pass
    try:
        code, _, err = run(str(path))
    finally:
        path.chmod(0o600)
    assert code == 2
    assert err.startswith("gobtui: error: cannot read") and err.count("\n") == 1


def test_provider_is_sniffed_past_records_that_name_none(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "late.jsonl"
    path.write_bytes(b'{"type":"x"}\n\n{bad\n{"type":"session_meta","payload":{"id":"s"}}\n')
    code, out, _ = run(str(path), "--json")
    assert orjson.loads(out)["provider"] == "codex"
    assert code == 1  # the "{bad" line in the middle is invalid JSON
