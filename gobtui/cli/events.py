"""`events`: what apply and undo recorded in events.jsonl, newest last, as lines or JSON."""

from __future__ import annotations

import argparse
import re
import time
from datetime import datetime

from gobtui.adapters.publish.events import read_events
from gobtui.cli.common import print_json
from gobtui.core.telemetry import TelemetryEvent
from gobtui.view_models import format as fmt

SPAN_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
SPAN = re.compile(r"^(\d{1,9})([smhdw]?)$")


def span_secs(text: str) -> float:
    """An argparse type: `90`, `90s`, `30m`, `2h`, `7d` or `1w` as seconds."""
    match = SPAN.match(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a span: write a number and a unit, e.g. 90s, 30m, 2h, 7d"
        )
    return float(int(match.group(1)) * SPAN_UNITS[match.group(2) or "s"])


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    events = commands.add_parser("events", help="what apply and undo recorded (events.jsonl)")
    events.add_argument("--session", metavar="S", help="only this session id (or a prefix)")
    events.add_argument(
        "--since", metavar="SPAN", type=span_secs, help="only the last SPAN (e.g. 30m, 2h, 7d)"
    )
    events.add_argument("--json", action="store_true", help="machine-readable output")
    events.set_defaults(handler=cmd_events)


def selected(
    events: list[TelemetryEvent], session: str | None, since_ts: float | None
) -> list[TelemetryEvent]:
    return [
        event
        for event in events
        if (session is None or event.session_id.startswith(session))
        and (since_ts is None or event.ts >= since_ts)
    ]


def _line(event: TelemetryEvent) -> str:
    when = datetime.fromtimestamp(event.ts).strftime("%Y-%m-%d %H:%M:%S")
    change = (
        f"{fmt.tokens(event.context_tokens_before)} -> {fmt.tokens(event.context_tokens_after)}"
    )
    error = f"  [{event.error_code}]" if event.error_code else ""
    return (
        f"{when}  {event.provider.value:<6} {event.session_id[:8]:<8}  "
        f"{event.action.value:<18} {event.outcome.value:<7}  {event.strategy:<10} "
        f"{change:>15}  -{fmt.tokens(event.est_reclaimed_tokens)}{error}"
    )


def cmd_events(args: argparse.Namespace) -> int:
    since_ts = None if args.since is None else time.time() - args.since
    events = selected(read_events(), args.session, since_ts)
    if args.json:
        print_json([event.model_dump(mode="json", by_alias=True) for event in events])
        return 0
    if not events:
        print("no events" + ("" if args.session is None and args.since is None else " match"))
        return 0
    print(
        f"{'when':<19}  {'prov':<6} {'session':<8}  {'action':<18} {'outcome':<7}  "
        f"{'strategy':<10} {'context':>15}  reclaimed"
    )
    for event in events:
        print(_line(event))
    return 0
