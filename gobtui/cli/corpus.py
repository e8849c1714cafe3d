"""`gobtui eval --corpus DIR`: every strategy over every transcript under a folder, and the
median cut and retention per strategy (core.corpus)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gobtui.adapters.files.jsonl import decode_line
from gobtui.adapters.files.regular import regular_file
from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import PlanningError, load_session
from gobtui.adapters.providers.registry import sniff_record
from gobtui.cli.common import print_json, progress_bar, resolve_policy
from gobtui.cli.dispatch import CliError
from gobtui.core.corpus import StrategyFigures, strategy_figures
from gobtui.core.evaluation import EvalRow
from gobtui.core.model import Provider
from gobtui.core.sanitize import one_line
from gobtui.core.strategies import STRATEGIES

SNIFF_LINES = 8
"""The first lines read to tell which provider wrote a file."""


def transcripts(folder: Path) -> list[tuple[Path, Provider]]:
    """Every *.jsonl file under `folder` (symlinks not followed) that a provider wrote."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(root, name)
            if name.endswith(".jsonl") and not path.is_symlink():
                provider = _provider_of(path)
                if provider is not None:
                    found.append((path, provider))
    return found


def _provider_of(path: Path) -> Provider | None:
    try:
        with regular_file(path) as handle:
            for _ in range(SNIFF_LINES):
                record = decode_line(handle.readline().strip())
                if type(record) is dict and (provider := sniff_record(record)) is not None:
                    return provider
    except OSError:
        return None
    return None


def cmd_eval_corpus(args: argparse.Namespace, names: list[str] | None) -> int:
    folder = Path(args.corpus)
    if not folder.is_dir():
        raise CliError(f"{folder} is not a folder")
    files = transcripts(folder)
    if not files:
        raise CliError(f"no Claude Code or Codex transcript under {folder}")
    rows: dict[str, list[EvalRow]] = {}
    failed: list[tuple[str, str]] = []
    with progress_bar("eval") as progress:
        for done, (path, provider) in enumerate(files):
            progress(done, len(files), one_line(path.name))
            try:
                session = load_session(path, provider)
                policy = resolve_policy(args, provider, session.session_id).policy
                rows[str(path)] = evaluate_session(session, policy, names)
            except (PlanningError, CliError) as error:
                failed.append((str(path), one_line(str(error))))
        progress(len(files), len(files), "done")
    figures = strategy_figures(rows, names or list(STRATEGIES))
    if args.json:
        print_json(
            {
                "sessions": len(rows),
                "failed": [{"path": p, "error": e} for p, e in failed],
                "strategies": [f.model_dump(mode="json") for f in figures],
            }
        )
        return 0
    print(f"{len(rows)} sessions under {one_line(str(folder))}" + _failed_note(failed))
    print(
        f"{'strategy':<12} {'planned':>7} {'cut':>6} {'retention':>9} {'worst':>6}  worst session"
    )
    for line in _lines(figures):
        print(line)
    return 0


def _failed_note(failed: list[tuple[str, str]]) -> str:
    return f"; {len(failed)} could not be planned: {failed[0][1]}" if failed else ""


def _share(value: float | None) -> str:
    return f"{value:.1%}" if value is not None else "-"


def _lines(figures: list[StrategyFigures]) -> list[str]:
    return [
        f"{f.strategy:<12} {f.planned:>7} {_share(f.median_cut):>6} "
        f"{_share(f.median_retention):>9} {_share(f.worst_retention):>6}  "
        f"{one_line(Path(f.worst_session).name) if f.worst_session else ''}"
        for f in figures
    ]
