"""`gobtui bench [--all] [--output CSV]`: every strategy over every discovered session (the last
7 days, or --all), one CSV row per session and strategy; a session that cannot be read is a
row of its own. Nothing is written but the CSV: candidates are built and verified in memory.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

from gobtui.adapters.files.atomic import describe, publish_new
from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import PlanningError, load_session
from gobtui.adapters.sessions.select import load_summaries
from gobtui.cli.common import add_limit_options, homes_of, progress_bar, resolve_policy
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.core.bench import BenchRow, Failure, bench_row, failed_row, to_csv
from gobtui.core.model import Provider
from gobtui.core.sanitize import one_line
from gobtui.core.strategies import STRATEGIES


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    bench = commands.add_parser(
        "bench", parents=[common], help="every strategy over every session, as CSV"
    )
    bench.add_argument("--output", metavar="CSV", help="write a new file here (default: stdout)")
    add_limit_options(bench)
    bench.set_defaults(handler=cmd_bench, preset=None, strategy=None)


def _rows_of(
    args: argparse.Namespace, path: Path, summary_id: str, provider: Provider
) -> list[BenchRow]:
    """The session's rows, or one failed row saying why it could not be read."""
    try:
        session = load_session(path, provider)
        policy = resolve_policy(args, provider, session.session_id).policy
        live = time.time() - os.stat(path).st_mtime <= args.live_secs  # as plan reads it
        rows = evaluate_session(session, policy, list(STRATEGIES), live)
    except (PlanningError, CliError, OSError) as error:
        return [failed_row(summary_id, provider, str(path), one_line(str(error))[:300])]
    return [
        bench_row(session.session_id, provider, str(path), session.source_sha256, row)
        for row in rows
    ]


def cmd_bench(args: argparse.Namespace) -> int:
    homes = homes_of(args)
    output = Path(args.output) if args.output else None
    if output is not None and (output.exists() or output.is_symlink()):
        raise CliError(f"{output} exists; bench writes a new file, never over one")
    summaries = load_summaries(homes, all_sessions=args.all)
    if not summaries:
        raise CliError(
            "no sessions found" + ("" if args.all else " in the last 7 days (--all: any age)"),
            Exit.REFUSED,
        )
    rows: list[BenchRow] = []
    with progress_bar("bench") as progress:
        for done, summary in enumerate(summaries):
            progress(done, len(summaries), one_line(summary.session_id[:8]))
            rows += _rows_of(args, Path(summary.path), summary.session_id, summary.provider)
        progress(len(summaries), len(summaries), "done")
    text = to_csv(rows)
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            publish_new(output, text.encode("utf-8"), 0o644)
        except FileExistsError:
            raise CliError(f"{output} exists; bench writes a new file, never over one") from None
        except OSError as error:
            raise CliError(f"{output}: {describe(error)}", Exit.IO) from None
    failures = Counter(row.failure for row in rows if row.failure is not Failure.NONE)
    failed = ", ".join(f"{count} {failure.value}" for failure, count in sorted(failures.items()))
    where = f" to {output}" if output else ""
    print(
        f"bench: {len(summaries)} sessions, {len(rows)} rows{where}"
        + (f"; {failed}" if failed else ""),
        file=sys.stderr,
    )
    return 0
