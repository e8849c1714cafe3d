"""`--experimental-compacted` of `plan` and `apply`: a Codex fork whose elided prefix is one
synthetic `compacted` record (adapters.providers.codex.compacted) instead of the portable
card fork. Codex only; the plan must elide and carry a state card (strategy compacted, the
default under the flag)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from gobtui.adapters.planning.load import LoadedSession
from gobtui.adapters.providers.codex.compacted import history_items
from gobtui.adapters.providers.interface import RewriteError
from gobtui.adapters.providers.registry import verify_checks
from gobtui.adapters.rewrite.lines import Overlay
from gobtui.cli.common import Target
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.core.edits import CompactionPlan
from gobtui.core.model import Provider
from gobtui.core.verify import accepts, added_findings, verify

FLAG = "--experimental-compacted"
STRATEGY = "compacted"


def add_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        FLAG,
        dest="experimental_compacted",
        action="store_true",
        help=f"Codex: {what} the elided prefix as one synthetic compacted record "
        "(experimental; default strategy compacted)",
    )


def requested(args: argparse.Namespace, target: Target) -> bool:
    """Whether the flag was given (refused with one line, exit 2, for a Claude session);
    with no --strategy or --preset it picks the compacted strategy."""
    if not getattr(args, "experimental_compacted", False):
        return False
    if target.provider is not Provider.CODEX:
        raise CliError(
            f"{FLAG} writes a Codex compacted record; {target.session_id} is a "
            f"{target.provider.value} session",
            Exit.USAGE,
        )
    if not args.strategy and not getattr(args, "preset", None):
        args.strategy = STRATEGY
    return True


@dataclass(frozen=True)
class Preview:
    bytes_before: int
    bytes_after: int
    history_items: int


def preview(session: LoadedSession, plan: CompactionPlan) -> Preview:
    """The compacted-record fork built and verified in memory, as apply would publish it;
    CliError (exit 1) with the reason when it cannot be built safely."""
    try:
        overlay = session.rewriter.overlay(plan, compacted=True)
    except RewriteError as error:
        raise CliError(f"cannot write a compacted record: {error}", Exit.REFUSED) from None
    candidate = session.rewriter.materialize(overlay)
    report, baseline = (
        verify(candidate, verify_checks(session.provider)),
        session.source_checks.report(),
    )
    if not accepts(report, baseline):
        codes = ", ".join(added_findings(report, baseline))
        raise CliError(
            f"cannot write a compacted record: it does not verify ({codes})", Exit.REFUSED
        )
    return Preview(
        len(session.source_bytes), session.whole_size(len(candidate)), _history_items(overlay)
    )


def _history_items(overlay: Overlay) -> int:
    """The length of the replacement history the overlay's compacted record carries."""
    return history_items(
        [line for piece in overlay.replaced.values() for line in piece.splitlines()]
    )
