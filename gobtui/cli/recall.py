"""`context-pack` and `delta`: budgeted recall from the vault's cards, snapshots and events,
for a harness to inject at session start, after compaction, or on each heartbeat.

Without --json the injectable text is printed (nothing when nothing fits), then one line on
stderr with what was used and left out; --json prints the whole answer. The local CLI is the
trusted lane: --include-private adds the cards' goals and the transcript paths.
"""

from __future__ import annotations

import argparse
import sys
import time

from gobtui.adapters.recall.verbs import heartbeat, pack
from gobtui.cli.common import print_json
from gobtui.cli.dispatch import CliError
from gobtui.cli.events import span_secs
from gobtui.cli.exits import Exit
from gobtui.cli.vault_common import vault_errors
from gobtui.core.limits import PACK_MAX_BUDGET_TOKENS
from gobtui.core.recall.model import (
    CURSOR_TOKEN_PREFIX,
    LOCAL_CALLER,
    ContextPack,
    Delta,
    RecallError,
    RecallErrorCode,
)


def budget(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= PACK_MAX_BUDGET_TOKENS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a budget: tokens, 1 to {PACK_MAX_BUDGET_TOKENS}"
        )
    return value


def since_arg(text: str) -> str | float:
    """A cursor token from an earlier delta, or a span back from now (30m, 2h, 7d)."""
    if text.strip().startswith(CURSOR_TOKEN_PREFIX + ":"):
        return text.strip()
    return time.time() - span_secs(text)


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = commands.add_parser(
        "context-pack", help="a budget-packed pack of what the vault knows about some entities"
    )
    p.add_argument(
        "--entities", required=True, metavar="A,B", help="comma-separated: ids, projects, terms"
    )
    p.add_argument("--budget-tokens", required=True, type=budget, metavar="N")
    p.add_argument(
        "--include-private", action="store_true", help="add card goals and transcript paths"
    )
    p.add_argument("--json", action="store_true", help="the whole answer as JSON")
    p.set_defaults(handler=cmd_context_pack)
    d = commands.add_parser(
        "delta", help="what is new in the vault since this caller's session last asked"
    )
    d.add_argument(
        "--session-id",
        required=True,
        metavar="S",
        help="your session's id, the name of your cursor (its first delta establishes it)",
    )
    d.add_argument(
        "--only-session",
        action="store_true",
        help="only what the vault holds of session S (an archived session's id or prefix)",
    )
    d.add_argument("--budget-tokens", required=True, type=budget, metavar="N")
    d.add_argument(
        "--since",
        type=since_arg,
        metavar="T",
        help="a span (30m, 2d) or an earlier delta's cursor: read from there, cursor untouched",
    )
    d.add_argument(
        "--include-private", action="store_true", help="add card goals and transcript paths"
    )
    d.add_argument("--json", action="store_true", help="the whole answer as JSON")
    d.set_defaults(handler=cmd_delta)


def _refused(error: RecallError) -> CliError:
    code = Exit.USAGE if error.code is not RecallErrorCode.UNKNOWN_SESSION else Exit.REFUSED
    return CliError(str(error), code)


def _show(answer: ContextPack | Delta, summary: str, as_json: bool) -> int:
    if as_json:
        print_json(answer)
        return 0
    if answer.text:
        print(answer.text)
    print(summary, file=sys.stderr)
    return 0


def cmd_context_pack(args: argparse.Namespace) -> int:
    try:
        with vault_errors():
            answer = pack(
                args.entities.split(","), args.budget_tokens, include_private=args.include_private
            )
    except RecallError as error:
        raise _refused(error) from None
    summary = (
        f"context pack: {len(answer.items)} items from {answer.matched_sessions} sessions, "
        f"{answer.budget_used} of {answer.budget_tokens} tokens, {answer.dropped_count} left out"
    )
    return _show(answer, summary, args.json)


def cmd_delta(args: argparse.Namespace) -> int:
    try:
        with vault_errors():
            answer = heartbeat(
                args.session_id,
                LOCAL_CALLER,
                args.budget_tokens,
                since=args.since,
                include_private=args.include_private,
                only_session=args.only_session,
            )
    except RecallError as error:
        raise _refused(error) from None
    more = ", more to come" if answer.has_more else ""
    summary = (
        f"delta ({answer.cursor_status.value}): {len(answer.items)} items, "
        f"{answer.budget_used} of {answer.budget_tokens} tokens{more}; cursor {answer.cursor}"
    )
    return _show(answer, summary, args.json)
