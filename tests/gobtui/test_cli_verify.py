"""`gobtui verify`: exit codes 0/1/2, the text and --json outputs, on copies of real files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

import gobtui.cli.dispatch
import gobtui.cli.verify
from gobtui.cli.dispatch import main
from gobtui.core.verify import VerifyReport

Run = Callable[..., tuple[int, str, str]]
MESSAGE = "a custom_tool_call_output response item of a shape outside the supported set"


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
    assert out.splitlines() == [
        "claude-branch.jsonl: Claude, 10 records, 1,790 bytes: 0 errors, 0 warnings (clean)",
        "safe to resume: no finding",
    ]


def test_warnings_only_exit_0(run: Run, fixture_copy: Callable[..., Path]) -> None:
    path = fixture_copy("oracle/codex-window.jsonl")
    code, out, _ = run(str(path))
    assert code == 0
    assert out.splitlines() == [
        "rec 10      warning  unsupported_response_item  "
        "a custom_tool_call_output response item of a shape outside the supported set",
        "codex-window.jsonl: Codex, 11 records, 2,862 bytes: 0 errors, 1 warning "
        "(ok, with warnings)",
        "safe to resume: 1 warning(s), none of which stops the client from resuming it",
    ]


def test_repeated_findings_are_one_line_with_their_count_and_lines(
    run: Run, fixture_copy: Callable[..., Path]
) -> None:
    """A genuine Codex file with 40 warnings of a few kinds: one line per kind, naming the
    item type, how many and from which line to which; then whether it is safe to resume."""
    path = fixture_copy(
        "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    )
    code, out, _ = run(str(path))
    lines = out.splitlines()
    assert code == 0 and lines[-2].endswith("0 errors, 40 warnings (ok, with warnings)")
    assert (
        lines[-1]
        == "safe to resume: 40 warning(s), none of which stops the client from resuming it"
    )
    grouped = lines[:-2]
    assert len(grouped) < 40 and len(grouped) == len(set(grouped))
    counts = [int(m.group(1)) if (m := re.search(r" ×(\d+)  ", line)) else 1 for line in grouped]
    assert sum(counts) == 40
    for line in grouped:
        assert re.match(
            r"recs? \S+ +warning  unsupported_response_item( ×\d+)?  a \w+ response item", line
        ), line
    data = orjson.loads(run(str(path), "--json")[1])
    assert len(data["findings"]) == 40  # the JSON keeps every finding, and the groups
    assert sum(g["count"] for g in data["groups"]) == 40
    assert data["resume_verdict"] == lines[-1]


def test_an_error_finding_exits_1(run: Run, fixture_copy: Callable[..., Path]) -> None:
    path = fixture_copy("codex/kvsankar__agent-history__session_with_compaction.jsonl")
    code, out, _ = run(str(path))
    assert code == 1
    first, summary, verdict = out.splitlines()
    assert first.split()[2:4] == ["error", "malformed_compacted"]
    assert summary.endswith("1 error, 0 warnings (errors: a resume would break or lose context)")
    assert verdict.startswith("not safe to resume: 1 error(s) (malformed_compacted)")


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
                "message": MESSAGE,
            }
        ],
        "errors": 0,
        "warnings": 1,
        "records": 11,
        "bytes": path.stat().st_size,
        "ok": True,
        "clean": False,
        "groups": [
            {
                "severity": "warning",
                "code": "unsupported_response_item",
                "message": MESSAGE,
                "count": 1,
                "first_line": 9,
                "last_line": 9,
            }
        ],
        "resume_verdict": "safe to resume: 1 warning(s), none of which stops the client from "
        "resuming it",
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
