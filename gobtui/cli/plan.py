"""`plan` and `eval`, and the parser of every planning command (`tune`, `explain`, `presets`
and `policy-check` are .policy_commands)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import PlanningError
from gobtui.cli.common import (
    Target,
    add_limit_options,
    load_target,
    plan_target,
    planning_failed,
    print_json,
    progress_bar,
    resolve_policy,
    resolve_target,
    strategy_named,
    token_count,
)
from gobtui.cli.compacted_flag import add_flag, preview, requested
from gobtui.cli.dispatch import CliError
from gobtui.cli.policy_commands import (
    cmd_explain,
    cmd_policy_check,
    cmd_presets,
    cmd_tune,
    window_tokens,
)
from gobtui.core.context_words import fills_words
from gobtui.core.edits import CompactionPlan, NoPlan
from gobtui.core.evaluation import EvalRow, RowStatus
from gobtui.core.model import Provider
from gobtui.core.policy import (
    POLICY_PROVIDER_NAMES,
    QuotaPressure,
)
from gobtui.core.strategies.external import EXTENSION_IDS
from gobtui.view_models import format as fmt
from gobtui.view_models.eval_rows import known_recall


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    def limits(parser: argparse.ArgumentParser) -> None:
        add_limit_options(parser)
        parser.add_argument("--json", action="store_true", help="machine-readable output")

    plan = commands.add_parser(
        "plan", parents=[common], help="what one strategy would cut from a session"
    )
    plan.add_argument("session", help="session id prefix or transcript path")
    plan.add_argument("--strategy", metavar="S", help="strategy id (default: the policy's)")
    plan.add_argument("--preset", metavar="P", help="a named preset")
    limits(plan)
    add_flag(plan, "preview")
    plan.set_defaults(handler=cmd_plan)

    evaluate = commands.add_parser(
        "eval", parents=[common], help="every strategy on a session, side by side"
    )
    evaluate.add_argument(
        "session", nargs="?", help="session id prefix or transcript path (or --corpus)"
    )
    evaluate.add_argument(
        "--corpus",
        metavar="DIR",
        help="every transcript under DIR: median cut and retention per strategy",
    )
    evaluate.add_argument("--strategy", metavar="S", action="append", help="only these")
    limits(evaluate)
    evaluate.set_defaults(handler=cmd_eval)

    tune_cmd = commands.add_parser(
        "tune", parents=[common], help="the adaptive trigger and floor for a session"
    )
    tune_cmd.add_argument("session", help="session id prefix or transcript path")
    tune_cmd.add_argument("--json", action="store_true", help="print JSON")
    tune_cmd.set_defaults(handler=cmd_tune)

    explain = commands.add_parser(
        "explain", parents=[common], help="the occupancy model behind the numbers"
    )
    explain.add_argument(
        "session", nargs="?", help="a session (id prefix or path): what fills its context"
    )
    explain.add_argument(
        "--provider",
        choices=[p.value for p in Provider],
        default="claude",
        help="its config.toml layer and default window apply (default claude)",
    )
    explain.add_argument("--preset", metavar="P", help="a named preset")
    explain.add_argument("--window", type=window_tokens, metavar="N", help="context window")
    explain.add_argument("--json", action="store_true", help="print JSON")
    explain.set_defaults(handler=cmd_explain, trigger=None, floor=None)

    presets = commands.add_parser("presets", help="the named presets")
    presets.add_argument("--json", action="store_true", help="print JSON")
    presets.set_defaults(handler=cmd_presets)

    check = commands.add_parser("policy-check", help="what to do at a context size")
    check.add_argument(
        "--provider",
        choices=POLICY_PROVIDER_NAMES,
        required=True,
        help="the provider (devin: a numeric policy, answered with Devin's own /compact)",
    )
    check.add_argument("--context-tokens", type=token_count, required=True, metavar="N")
    check.add_argument("--session", metavar="ID", help="apply that session's config layer")
    check.add_argument("--session-active", action="store_true")
    check.add_argument("--quota-pressure", choices=[q.value for q in QuotaPressure])
    check.add_argument("--preset", metavar="P", help="a named preset")
    check.add_argument(
        "--window",
        type=window_tokens,
        metavar="N",
        help="the session's context window: a trigger above 90%% of it is lowered, as plan does",
    )
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(handler=cmd_policy_check, trigger=None, floor=None)


def _plan_json(plan: CompactionPlan, codes: list[str]) -> dict[str, Any]:
    data = plan.model_dump(mode="json")
    data["admission"] = {"admitted": not codes, "codes": codes}
    return data


def cmd_plan(args: argparse.Namespace) -> int:
    target = resolve_target(args, args.session)
    compacted = requested(args, target)
    planned = plan_target(args, target)
    strategy, live = planned.strategy, planned.live
    outcome = planned.outcome
    result = outcome.result
    codes = [code.value for code in outcome.admission.codes] if outcome.admission else []
    adapted = planned.adapted
    built = (
        preview(planned.session, result)
        if compacted and isinstance(result, CompactionPlan) and not codes
        else None
    )
    if args.json:
        data = (
            result.model_dump(mode="json")
            if isinstance(result, NoPlan)
            else _plan_json(result, codes)
        )
        if built is not None:
            data["experimental_compacted"] = asdict(built)
        if adapted.adaptive:
            data["adaptive"] = adapted.as_json()
        print_json(data)
        return 1 if codes else 0
    print(_heading(target, live, args.live_secs))
    if (line := adapted.line()) is not None:
        print(f"  {line}")
    if isinstance(result, NoPlan):
        print(f"no plan ({result.reason_code.value}) with {strategy}:")
        print(
            f"  context {fmt.tokens(result.context_tokens_before)}, trigger "
            f"{fmt.tokens(result.effective_trigger_tokens)}, floor "
            f"{fmt.tokens(result.target_context_tokens)}, minimum savings "
            f"{fmt.tokens(result.min_savings_tokens)}"
        )
        if result.projected_context_tokens_after is not None:
            print(f"  the proposal reached {fmt.tokens(result.projected_context_tokens_after)}")
        if result.why:
            print(f"  {result.why}")
        return 0
    _print_plan(result, planned.session.record_number)
    if built is not None:
        print(
            f"  as one synthetic compacted record (experimental): {built.bytes_before:,} -> "
            f"{built.bytes_after:,} bytes, a replacement history of {built.history_items} "
            "items; it verifies"
        )
    first = planned.session.live_first_record
    if first > 1:
        print(f"  (read from record {first:,}, the newest compaction; the rest is kept as it is)")
    if outcome.admission and not outcome.admission.admitted:
        print(f"refused by admission: {outcome.admission.message}")
        return 1
    return 0


def _print_plan(plan: CompactionPlan, number: Callable[[int], int]) -> None:
    """`number`: a line of the text planned as the file's record number (1-based)."""
    share = plan.est_savings / plan.context_tokens_before if plan.context_tokens_before else 0.0
    print(
        f"{plan.strategy}: {fmt.tokens(plan.context_tokens_before)} -> "
        f"{fmt.tokens(plan.context_tokens_after)} tokens (saves {fmt.tokens(plan.est_savings)}, "
        f"{fmt.percent(share)})"
    )
    print(f"  {plan.rationale}")
    projection = plan.projection
    if projection is not None:
        print(
            "  "
            + fmt.client_words(
                projection.client_compacts,
                projection.client_context_tokens,
                projection.client_threshold_tokens,
            )
        )
    for edit in plan.edits:
        if edit.op == "elide":
            lines = edit.line_indexes
            first, last = number(lines[0]), number(lines[-1])
            print(f"  elide {len(lines)} outputs (records {first:,}..{last:,})")
        elif edit.op == "inject_digest":
            card = edit.digest.render()
            print(f"  inject a state card ({len(card.encode())} bytes):")
            for line in card.splitlines():
                print(f"    {line}")
        elif edit.op == "provider_compact":
            print(f"  ask the provider to compact: {edit.control}")
        else:
            print(f"  drop {len(edit.tool_use_ids)} tool results at the API layer (cache_edit)")


def cmd_eval(args: argparse.Namespace) -> int:
    if (args.session is None) == (args.corpus is None):
        raise CliError("eval takes a session or --corpus DIR (one of them)")
    given = [strategy_named(name) for name in args.strategy or []]
    extension = next((name for name in given if name in EXTENSION_IDS), None)
    if extension is not None:
        raise CliError(
            f"eval compares the built-in strategies; {extension} runs a preset's command or "
            "plugin: see what it proposes with `gobtui plan <session> --preset NAME`"
        )
    names = list(dict.fromkeys(given)) or None  # a strategy named twice is one row
    if args.corpus is not None:
        from gobtui.cli.corpus import cmd_eval_corpus

        return cmd_eval_corpus(args, names)
    target = resolve_target(args, args.session)
    resolved = resolve_policy(args, target.provider, target.session_id, window=target.window)
    live = target.live(args.live_secs, time.time())
    with progress_bar("eval") as progress:
        progress(0, 1, "reading")
        session = load_target(target)
        try:
            rows = evaluate_session(session, resolved.policy, names, live, progress)
        except PlanningError as error:
            raise planning_failed(error) from None
    if args.json:
        print_json(rows)
        return 0
    print(_heading(target, live, args.live_secs))
    print(fills_words(session.composition))
    print(
        f"{'strategy':<12} {'status':<8} {'after':>7} {'saved':>7} {'prefix':>7} "
        f"{'valid':<5} {'recall':>6} {'ms':>7}"
    )
    for row in rows:
        print(_eval_line(row))
    return 0


def _heading(target: Target, live: bool, live_secs: float) -> str:
    """The session's line; a live one says so, since auto then asks the provider instead of
    rewriting the file."""
    line = f"{target.provider.label} {target.session_id}  {target.path}"
    if live:
        line += f"  (live: written in the last {live_secs:g} s; auto uses the provider's controls)"
    return line


def _eval_line(row: EvalRow) -> str:
    after = fmt.tokens(row.context_tokens_after) if row.context_tokens_after is not None else "-"
    valid = {True: "yes", False: "NO", None: "-"}[row.valid]
    shown = known_recall(row)
    recall = f"{shown:.0%}" if shown is not None else "-"
    status = row.status.value if row.status is not RowStatus.NO_PLAN else "no plan"
    mark = " ★" if row.best else ""
    note = row.error or (row.reason_code if row.status is not RowStatus.PLAN else "")
    if row.client_compacts and not note:
        note = "the client compacts it on resume"
    return (
        f"{row.strategy:<12} {status:<8} {after:>7} {fmt.tokens(row.est_reclaimed):>7} "
        f"{fmt.tokens(row.prefix_tokens):>7} {valid:<5} {recall:>6} {row.duration_ms:>7.0f}"
        f"{mark}{'  ' + note if note else ''}"
    )
