"""The real-client suite's table of figures, printed at the end of a run that ran it.

A plugin of the root conftest: under xdist the controller never loads tests/e2e/conftest.py
(it collects nothing), and the controller is where the terminal summary is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

RESULTS_DIR = Path(__file__).resolve().parents[2] / ".e2e" / "results"
"""One JSON line a case, one file a worker (written by tests/e2e/suite.py)."""


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, or a run without xdist
        shutil.rmtree(RESULTS_DIR, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    rows = []
    for path in sorted(RESULTS_DIR.glob("*.jsonl")) if RESULTS_DIR.is_dir() else []:
        rows += [json.loads(line) for line in path.read_text().splitlines() if line]
    if not rows:
        return
    write = terminalreporter.write_line
    write("")
    write("real clients: loaded, compacted (original/fork), history tokens, projected vs measured;")
    write("  chg: the fork request's first message unlike the original's, thk: its thinking blocks")
    write("  before/after that change, 400: the checking server's rejections (original/fork)")
    write(f"{'session':<36} {'variant':<11} {'load':<4} {'comp':<5} {'hist orig':>9} "
          f"{'hist fork':>9} {'pred':>7} {'meas':>7} {'err':>6} {'chg':>4} {'thk':>7} "
          f"{'400':>5} {'secs':>5}  outcome")  # fmt: skip
    for row in sorted(rows, key=lambda r: (r["session"], r["variant"])):
        err = ""
        if row["predicted_after"] and row["measured_after"]:
            err = f"{100 * (row['predicted_after'] - row['measured_after']) / row['measured_after']:+.1f}%"
        comp = (
            ("C" if row["original_compacted"] else "-")
            + "/"
            + ("C" if row["fork_compacted"] else "-")
        )
        changed = row.get("first_changed_message")
        thinking = f"{row.get('thinking_before_change', 0)}/{row.get('thinking_after_change', 0)}"
        rejections = f"{row.get('original_rejections', 0)}/{row.get('rejections', 0)}"
        write(
            f"{row['session'][:36]:<36} {row['variant']:<11} {'yes' if row['loaded'] else 'no':<4} "
            f"{comp:<5} {row['original_history_tokens']:>9} {row['fork_history_tokens']:>9} "
            f"{row['predicted_after'] or '':>7} {row['measured_after'] or '':>7} {err:>6} "
            f"{'' if changed is None else changed:>4} {thinking:>7} {rejections:>5} "
            f"{row['seconds']:>5}  {row['outcome'][:60]}"
        )
