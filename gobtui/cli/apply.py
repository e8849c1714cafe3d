"""`apply`, `fork` and `undo`: publish a new sibling transcript; the source is never written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gobtui.adapters.config.paths import data_dir
from gobtui.adapters.publish.publisher import Publisher, PublishError, PublishErrorCode
from gobtui.adapters.sessions.select import SelectError, check_selector
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.common import (
    add_limit_options,
    file_named,
    homes_of,
    load_target,
    one_file,
    plan_target,
    print_json,
    progress_bar,
    recorded_file,
    require_direct,
    resolve_target,
    snapshots_of,
)
from gobtui.cli.compacted_flag import add_flag, requested
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.vault_common import vault_exit
from gobtui.core.edits import NoPlan, NoPlanReason
from gobtui.core.receipt import Receipt
from gobtui.core.vault.errors import VaultError
from gobtui.core.vault.index import IndexEntry
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes

EXIT_REFUSED = Exit.REFUSED


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    apply = commands.add_parser(
        "apply", parents=[common], help="publish a compacted fork of a session"
    )
    apply.add_argument("session", help="session id prefix or transcript path")
    apply.add_argument("--strategy", metavar="S", help="strategy id (default: the policy's)")
    apply.add_argument("--preset", metavar="P", help="a named preset")
    add_limit_options(apply)
    apply.add_argument("--yes", action="store_true", help="do not ask before writing")
    apply.add_argument("--json", action="store_true", help="print the receipt as JSON")
    add_flag(apply, "publish")
    apply.set_defaults(handler=cmd_apply)

    fork = commands.add_parser(
        "fork", parents=[common], help="copy a session under a new id (no compaction)"
    )
    fork.add_argument("session", help="session id prefix or transcript path")
    fork.add_argument("--yes", action="store_true", help="do not ask before writing")
    fork.add_argument("--json", action="store_true", help="print the receipt as JSON")
    fork.set_defaults(handler=cmd_fork)

    undo = commands.add_parser(
        "undo", parents=[common], help="restore a vault snapshot into a new fork"
    )
    undo.add_argument("session", help="session id (or prefix) whose snapshot to restore")
    undo.add_argument("--sha", metavar="S", help="snapshot id or prefix (default: the newest)")
    undo.add_argument("--yes", action="store_true", help="do not ask before writing")
    undo.add_argument("--json", action="store_true", help="print JSON")
    undo.set_defaults(handler=cmd_undo)


def open_vault() -> Vault:
    return Vault(data_dir() / "vault")


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise CliError(
            f"stdin is not a terminal, so nothing was asked or written: add --yes to "
            f"{question.rstrip('?')}"
        )
    answer = input(f"{question} [y/N] ").strip().lower()
    if answer not in {"y", "yes"}:
        raise CliError("cancelled; nothing was written", EXIT_REFUSED)


def _print_receipt(receipt: Receipt, as_json: bool, earlier: bool = False) -> None:
    """The receipt; `earlier` when an earlier run published it and nothing was written."""
    strategy = receipt.strategy
    if receipt.selected_strategy:  # auto: what it chose
        strategy += f": {receipt.selected_strategy}"
    if as_json:
        print_json(receipt)
        return
    # a fork or an undo copies the bytes as they are: no saving to show
    saved = receipt.reclaimed_bytes
    change = f" (-{human_bytes(saved)})" if saved > 0 else ""
    if earlier:
        print(f"already published from these bytes (nothing written): {receipt.path}")
    else:
        print(f"published {receipt.path}")
    print(
        f"  {receipt.kind.value} of {receipt.source_session_id} ({strategy}): "
        f"{receipt.bytes_before:,} -> {receipt.bytes_after:,} bytes{change}"
    )
    print(f"  snapshot {receipt.snapshot_manifest_sha256[:16]}  source untouched")
    projection = receipt.projection
    if projection is not None:
        print(f"  context {fmt.tokens(projection.context_tokens_before)} -> "
              f"{fmt.tokens(projection.context_tokens_after)} tokens (projected); "
              + fmt.client_words(projection.client_compacts, projection.client_context_tokens,
                                 projection.client_threshold_tokens))  # fmt: skip
    print(f"  resume with: {receipt.resume_text}")


def _publish_error(error: PublishError) -> CliError:
    code = {
        PublishErrorCode.IO: Exit.IO,
        PublishErrorCode.DAMAGED_RECEIPT: Exit.DAMAGED,
    }.get(error.code, EXIT_REFUSED)
    if error.vault_code is not None:  # as the vault commands say it (gobtui.cli.vault)
        code = vault_exit(error.vault_code)
    return CliError(f"{error} [{error.code.value}]", code)


def below_trigger_step(context_tokens: int) -> tuple[int, int]:
    """A trigger under the session's context (and a floor under it) that plans it now."""
    trigger = max(1_000, (context_tokens - 1_000) // 1_000 * 1_000)
    return trigger, trigger // 2


def cmd_apply(args: argparse.Namespace) -> int:
    target = resolve_target(args, args.session)
    require_direct(target)
    compacted = requested(args, target)
    planned = plan_target(args, target)
    live, session = planned.live, planned.session
    outcome = planned.outcome
    result = outcome.result
    if isinstance(result, NoPlan):
        said = (
            f"nothing to apply: no plan ({result.reason_code.value}); context "
            f"{result.context_tokens_before:,}, trigger {result.effective_trigger_tokens:,}"
        )
        if result.reason_code is NoPlanReason.BELOW_TRIGGER:
            trigger, floor = below_trigger_step(result.context_tokens_before)
            said += (
                f"; to compact it now anyway: gobtui apply {target.session_id} "
                f"--trigger {trigger} --floor {floor}"
            )
        elif result.why:
            said += f"; {result.why}"
        raise CliError(said, EXIT_REFUSED)
    if outcome.plan is None:
        message = outcome.admission.message if outcome.admission else "refused"
        raise CliError(f"plan refused by admission: {message}", EXIT_REFUSED)
    plan = outcome.plan
    if plan.is_control:
        raise CliError(
            f"{plan.strategy} asks the provider to compact ({plan.edits[0].op}); run it in the "
            "agent, or pick a file strategy with --strategy",
            EXIT_REFUSED,
        )
    if live:  # as the dashboard says before its `a`: what the agent writes next is not in it
        print(
            f"gobtui: warning: {target.session_id} is live (written in the last "
            f"{args.live_secs:g} s); records written after this plan are not in the fork",
            file=sys.stderr,
        )
    publisher = Publisher(open_vault())
    earlier = publisher.published(session, plan, compacted=compacted)
    if earlier is not None:  # the same plan of the same bytes: its fork is there, as written
        _print_receipt(earlier, args.json, earlier=True)
        return 0
    if (line := planned.adapted.line()) is not None and not args.json:
        print(line)
    article = "an" if plan.strategy[:1] in "aeiou" else "a"
    shape = " (one synthetic compacted record, experimental)" if compacted else ""
    _confirm(
        f"publish {article} {plan.strategy} fork{shape} of {target.session_id} beside {target.path} "
        f"({fmt.tokens(plan.context_tokens_before)} -> {fmt.tokens(plan.context_tokens_after)} "
        "tokens; the original is snapshotted and left untouched)?",
        args.yes,
    )
    try:
        with progress_bar("snapshot") as progress:
            receipt = publisher.apply(
                session,
                plan,
                planned.adapted.policy,
                lambda done, total: progress(done, total, ""),
                planned.adapted.reasons,
                compacted=compacted,
            )
    except PublishError as error:
        raise _publish_error(error) from None
    _print_receipt(receipt, args.json)
    return 0


def cmd_fork(args: argparse.Namespace) -> int:
    target = resolve_target(args, args.session)
    require_direct(target)
    session = load_target(target)
    _confirm(
        f"copy session {session.session_id} under a new id beside {target.path} "
        "(the original is snapshotted and left untouched)?",
        args.yes,
    )
    try:
        receipt = Publisher(open_vault()).fork(session)
    except PublishError as error:
        raise _publish_error(error) from None
    _print_receipt(receipt, args.json)
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    vault = open_vault()
    try:
        check_selector(args.session)  # "" would be a prefix of every session in the vault
    except SelectError as error:
        raise CliError(str(error)) from None
    if args.sha is not None and not args.sha.strip():
        raise CliError("empty --sha: give a snapshot id or prefix, or leave --sha out")
    homes = homes_of(args)
    try:
        indexed = vault.entries(checked=False)  # ids only; the history below is checked
        ids = {e.session_id for e in indexed if e.session_id.startswith(args.session)}
        gone = recorded_file(indexed, args.session) if not ids else None
        file = Path(gone.path) if gone is not None else file_named(args.session)
        if gone is not None:
            ids = {gone.session_id}
        elif not ids:
            ids = {resolve_target(args, args.session).session_id}
        if len(ids) > 1:
            raise CliError(
                f"{args.session!r} matches {len(ids)} sessions: {', '.join(sorted(ids))}"
            )
        history = snapshots_of(vault, ids.pop(), file)
        if file is None:
            history = one_file(history, args.session, homes)
        if not history:
            raise CliError(f"no snapshot of {args.session!r} in the vault")
        entry = history[0] if args.sha is None else _pick_snapshot(history, args.sha)
    except VaultError as error:
        raise CliError(str(error), vault_exit(error.code)) from None
    _confirm(
        f"restore snapshot {entry.sha256[:16]} ({entry.bytes:,} bytes, {entry.strategy}) into a "
        f"new fork beside {entry.path}?",
        args.yes,
    )
    try:
        receipt = Publisher(vault).undo(entry.sha256, _cwd_of_file(args, entry.path))
    except PublishError as error:
        raise _publish_error(error) from None
    _print_receipt(receipt, args.json)
    return 0


def _cwd_of_file(args: argparse.Namespace, path: str) -> str | None:
    """The working directory of the session at `path`, when it is still there to say."""
    try:
        target = resolve_target(args, path)
    except CliError:
        return None
    return target.summary.cwd if target.summary is not None else None


def _pick_snapshot(history: list[IndexEntry], sha: str) -> IndexEntry:
    """The newest entry of the one snapshot id in `history` (newest first) starting with `sha`.

    The same file snapshotted twice (say `snapshot`, then `apply`) gives two entries with one
    id: they are the same snapshot, so ids are matched, not entries.
    """
    prefix = sha.strip().lower()
    newest: dict[str, IndexEntry] = {}
    for entry in history:
        if entry.sha256.startswith(prefix):
            newest.setdefault(entry.sha256, entry)
    if len(newest) != 1:
        raise CliError(f"--sha {sha!r} matches {len(newest)} snapshots of this session")
    return next(iter(newest.values()))
