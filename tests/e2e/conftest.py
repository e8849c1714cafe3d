"""Fixtures of the real-client suite: the installed clients, originals resumed once per
worker, and the table of figures printed at the end of the run."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.clients import Clients, ClientUnavailable, ensure_clients, npm
from tests.e2e.harness import Resumed
from tests.e2e.suite import RESULTS_DIR


@pytest.fixture(scope="session")
def clients() -> Clients:
    if npm() is None:
        pytest.skip("npm is not on PATH: the real-client suite needs it to install the clients")
    try:
        return ensure_clients()
    except ClientUnavailable as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def originals() -> Iterator[dict[str, Resumed]]:
    """Each session resumed as it is, once per worker, to judge its forks against."""
    yield {}


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
    write("real clients: loaded, compacted (original/fork), history tokens, projected vs measured")
    write(f"{'session':<36} {'variant':<11} {'load':<4} {'comp':<5} {'hist orig':>9} "
          f"{'hist fork':>9} {'pred':>7} {'meas':>7} {'err':>6} {'secs':>5}  outcome")  # fmt: skip
    for row in sorted(rows, key=lambda r: (r["session"], r["variant"])):
        err = ""
        if row["predicted_after"] and row["measured_after"]:
            err = f"{100 * (row['predicted_after'] - row['measured_after']) / row['measured_after']:+.1f}%"
        comp = (
            ("C" if row["original_compacted"] else "-")
            + "/"
            + ("C" if row["fork_compacted"] else "-")
        )
        write(
            f"{row['session'][:36]:<36} {row['variant']:<11} {'yes' if row['loaded'] else 'no':<4} "
            f"{comp:<5} {row['original_history_tokens']:>9} {row['fork_history_tokens']:>9} "
            f"{row['predicted_after'] or '':>7} {row['measured_after'] or '':>7} {err:>6} "
            f"{row['seconds']:>5}  {row['outcome'][:60]}"
        )
