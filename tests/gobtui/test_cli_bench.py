"""`gobtui bench`: every strategy over the sessions of real homes (the project's corpus), as
CSV rows whose hashes and figures can be checked against an independent plan."""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
from pathlib import Path

import pytest

from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.cli.bench import _rows_of
from gobtui.cli.common import resolve_policy
from gobtui.cli.dispatch import main
from gobtui.core.bench import COLUMNS, ExecutionState, Failure
from gobtui.core.edits import CompactionPlan
from gobtui.core.model import Provider
from gobtui.core.strategies import STRATEGIES
from tests.builders.sessions import claude_work_session, codex_work_session

LOW = ["--trigger", "20000", "--floor", "5000"]
IDLE_SINCE = 1_700_000_000


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[Provider, Path]:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    paths = {
        Provider.CLAUDE: claude_work_session(60_000, "bench").write(claude / "projects"),
        Provider.CODEX: codex_work_session(60_000, "bench").write(codex / "sessions"),
    }
    for path in paths.values():
        os.utime(path, (IDLE_SINCE, IDLE_SINCE))
    return paths


def test_bench_writes_a_row_per_session_and_strategy_that_an_independent_plan_confirms(
    homes: dict[Provider, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.csv"
    assert main(["bench", "--all", *LOW, "--output", str(out)]) == 0
    assert capsys.readouterr().err.startswith(f"bench: 2 sessions, {2 * len(STRATEGIES)} rows")
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert tuple(table[0]) == COLUMNS and len(table) == 2 * len(STRATEGIES)
    for provider, path in homes.items():
        rows = {row["strategy"]: row for row in table if row["provider"] == provider.value}
        assert set(rows) == set(STRATEGIES)
        source = hashlib.sha256(path.read_bytes()).hexdigest()
        assert {row["source_sha256"] for row in rows.values()} == {source}
        structured = rows["structured"]
        assert structured["execution_state"] == ExecutionState.CANDIDATE_VERIFIED.value
        assert structured["failure"] == "" and structured["verify_errors"] == "0"
        assert (
            int(structured["calibrated_savings"]) > 0 and 0 <= float(structured["retention"]) <= 1
        )
        # the result hash is the candidate's: the same plan applied independently
        session = load_session(path, provider)
        args = argparse.Namespace(trigger=20_000, floor=5_000, preset=None, strategy=None)
        policy = resolve_policy(args, provider, session.session_id).policy
        plan = plan_session(session, "structured", policy).result
        assert isinstance(plan, CompactionPlan)
        assert (
            structured["result_sha256"] == hashlib.sha256(session.rewriter.apply(plan)).hexdigest()
        )
        assert int(structured["projected_savings"]) == plan.est_savings
    assert main(["bench", "--all", *LOW]) == 0  # no --output: the CSV on stdout
    assert capsys.readouterr().out.splitlines()[0] == ",".join(COLUMNS)


def test_bench_never_writes_over_a_file_and_says_when_there_is_nothing(
    homes: dict[Provider, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken.csv"
    taken.write_text("mine\n")
    assert main(["bench", "--all", "--output", str(taken)]) == 2
    assert "exists" in capsys.readouterr().err and taken.read_text() == "mine\n"
    for path in homes.values():
        path.unlink()
    assert main(["bench", "--all"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("gobtui: error: no sessions found") and error.count("\n") == 1


def test_a_session_that_cannot_be_read_is_a_failed_row(tmp_path: Path) -> None:
    gone = tmp_path / "vanished.jsonl"  # listed, then removed before bench reached it
    args = argparse.Namespace(trigger=None, floor=None, preset=None, strategy=None)
    (row,) = _rows_of(args, gone, "abc-123", Provider.CLAUDE)
    assert (
        row.failure is Failure.LOAD_FAILED and row.execution_state is ExecutionState.SESSION_FAILED
    )
    assert row.session_id == "abc-123" and "cannot read" in row.error and row.strategy == ""
