"""A fork published with another data dir is labelled a fork on the board and in `detect`,
by the state card it holds: no receipt is needed. Where the receipt is, it still names what
made the fork."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.publish.operations import published_receipts
from gobtui.adapters.sessions.store import SessionStore
from gobtui.cli.dispatch import main
from gobtui.services.published_forks import CARD_FORK_LABEL, PublishedForks

SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"
LOW = ["--trigger", "20000", "--floor", "5000"]
IDLE_SINCE = 1_700_000_000
NOW = 1_800_000_000.0


@pytest.fixture
def home(tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    project = home / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    target = project / f"{SPOTTER}.jsonl"
    shutil.copyfile(fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}.jsonl", target)
    os.utime(target, (IDLE_SINCE, IDLE_SINCE))  # an idle session, as file plans are for
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0, capsys.readouterr().err
    return orjson.loads(capsys.readouterr().out)


def published_in(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, object]:
    """`gobtui apply` with `data` as its data dir: the receipt."""
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(data))
    receipt = run_json(capsys, "apply", SPOTTER, "--strategy", "middle", *LOW, "--yes", "--json")
    assert isinstance(receipt, dict)
    return receipt


def detect_titles(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    rows = run_json(capsys, "detect", "--all", "--json", "--no-cache")
    assert isinstance(rows, list)
    return {str(row["session_id"]): str(row["title"]) for row in rows}


def test_detect_labels_a_fork_published_with_another_data_dir(
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data_a, data_b = tmp_path / "a" / "data", tmp_path / "b" / "data"
    receipt = published_in(data_a, capsys, monkeypatch)
    fork_id = str(receipt["session_id"])

    monkeypatch.setenv("GOBTUI_DATA_DIR", str(data_b))  # another gobtui: no receipt here
    assert published_receipts() == []
    titles = detect_titles(capsys)
    assert titles[fork_id].startswith(f"{CARD_FORK_LABEL} · ")
    assert not titles[SPOTTER].startswith(f"{CARD_FORK_LABEL} · ")  # its source is no fork
    assert titles[fork_id].removeprefix(f"{CARD_FORK_LABEL} · ") == titles[SPOTTER]

    monkeypatch.setenv("GOBTUI_DATA_DIR", str(data_a))  # where the receipt is, it says more
    assert detect_titles(capsys)[fork_id].startswith("middle fork · ")


def test_the_board_marks_a_card_fork_without_a_receipt(
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the dashboard does with every scan (GobtuiApp.forks.mark), on real summaries."""
    data_a = tmp_path / "a" / "data"
    receipt = published_in(data_a, capsys, monkeypatch)
    summaries = SessionStore(Homes(claude=home, codex=None), None, max_age_secs=None).scan(NOW)
    fork = next(s for s in summaries if s.session_id == receipt["session_id"])
    source = next(s for s in summaries if s.session_id == SPOTTER)

    nothing_here = PublishedForks()  # as the app starts with another data dir's receipts
    assert nothing_here.is_fork(fork) and nothing_here.label_of(fork) == CARD_FORK_LABEL
    assert not nothing_here.is_fork(source) and nothing_here.label_of(source) is None
    marked = {s.session_id: s for s in nothing_here.mark(summaries)}
    assert marked[fork.session_id].title == f"{CARD_FORK_LABEL} · {fork.title}"
    assert marked[SPOTTER] is source  # untouched

    with_receipts = PublishedForks(published_receipts(data_a))
    assert with_receipts.label_of(fork) == "middle fork"
