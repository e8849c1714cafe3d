"""`watch`: the dashboard's watcher without a screen. One line (or JSON object) per decision
that is news; live sessions are only told what their provider should do."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime

from gobtui.cli.common import homes_of
from gobtui.cli.dispatch import _session_policies
from gobtui.cli.safe_output import write_json_line
from gobtui.core.limits import WATCH_INTERVAL_SECS
from gobtui.core.model import Provider
from gobtui.core.watch import WatchDecision
from gobtui.services.watching import HeadlessWatch, WatchSettings
from gobtui.view_models import format as fmt

MIN_INTERVAL = 1.0
MAX_INTERVAL = 24 * 3600.0


def interval_secs(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not MIN_INTERVAL <= value <= MAX_INTERVAL:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an interval: seconds, {MIN_INTERVAL:g} to {MAX_INTERVAL:g}"
        )
    return value


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    watch = commands.add_parser(
        "watch", parents=[common], help="prepare forks for idle sessions over their trigger"
    )
    watch.add_argument(
        "--interval",
        metavar="S",
        type=interval_secs,
        default=WATCH_INTERVAL_SECS,
        help=f"seconds between passes (default {WATCH_INTERVAL_SECS})",
    )
    watch.add_argument("--dry-run", action="store_true", help="decide, but write nothing")
    watch.add_argument(
        "--active-only", action="store_true", help="only files written in the last 180 s"
    )
    watch.add_argument("--once", action="store_true", help="one pass, then exit")
    watch.add_argument("--provider", choices=[p.value for p in Provider])
    watch.add_argument("--json", action="store_true", help="one JSON object per line")
    watch.set_defaults(handler=cmd_watch)


def decision_line(decision: WatchDecision) -> str:
    when = datetime.fromtimestamp(decision.ts).strftime("%H:%M:%S")
    context = f"{fmt.tokens(decision.context_tokens)}/{fmt.tokens(decision.trigger_tokens)}"
    what = decision.decision.value.replace("_", " ")
    if decision.strategy:
        what += f" {decision.strategy}"
    if decision.context_tokens_after is not None:
        what += f" -> {fmt.tokens(decision.context_tokens_after)}"
    if decision.control:
        what += f": run {decision.control} in the session"
    tail = f"  {decision.resume_command}" if decision.resume_command else ""
    detail = f"  ({decision.detail})" if decision.detail and not tail else ""
    return (
        f"{when}  {decision.provider.value:<6} {decision.session_id[:8]:<8} "
        f"{fmt.ellipsize(decision.project, 16):<16} {context:>13}  {what}{tail}{detail}"
    )


def cmd_watch(args: argparse.Namespace) -> int:
    homes = homes_of(args)
    _session_policies()  # a broken config.toml is one line now, not an error each pass
    settings = WatchSettings(
        dry_run=args.dry_run,
        active_only=args.active_only,
        all_sessions=args.all,
        provider=Provider(args.provider) if args.provider else None,
        live_secs=args.live_secs,
        use_cache=not getattr(args, "no_cache", False),
    )
    watch = HeadlessWatch(homes, settings)
    try:
        first = True
        while True:
            for decision in watch.pass_once():
                if args.json:
                    write_json_line(decision.model_dump(mode="json"))
                else:
                    print(decision_line(decision), flush=True)
            if first:
                mode = "dry run: nothing is written" if args.dry_run else "forks are published"
                every = "one pass" if args.once else f"every {args.interval:g} s; ctrl+c stops"
                print(
                    f"gobtui watch: {watch.sessions_seen} sessions, {len(watch.reported)} over "
                    f"their trigger ({mode}; {every})",
                    file=sys.stderr,
                    flush=True,
                )
                first = False
            if args.once:
                return 0
            time.sleep(args.interval)
    finally:
        watch.close()
