"""`plan`, `eval`, `tune`, `explain`, `presets` and `policy-check`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import PlanningError
from gobtui.adapters.sessions.select import SelectError, check_selector
from gobtui.cli.common import (
    Target,
    add_limit_options,
    load_target,
    plan_target,
    planning_failed,
    policy_config,
    print_json,
    progress_bar,
    resolve_policy,
    resolve_target,
    strategy_named,
    token_count,
)
from gobtui.cli.compacted_flag import add_flag, preview, requested
from gobtui.cli.dispatch import CliError, error_line
from gobtui.cli.exits import Exit
from gobtui.core.composition import PartKind
from gobtui.core.context_words import composition_object, fills_words, reclaimable
from gobtui.core.edits import CompactionPlan, NoPlan
from gobtui.core.evaluation import EvalRow, RowStatus
from gobtui.core.model import Provider
from gobtui.core.policy import (
    POLICY_PROVIDER_NAMES,
    PRESETS,
    QuotaPressure,
    capped_to_window,
    policy_provider,
    tune,
)
from gobtui.core.strategies.common import elidable_tokens
from gobtui.core.strategies.external import EXTENSION_IDS
from gobtui.core.thresholds import client_compact_threshold
from gobtui.services.adaptive import checked_policy, tuner_preview
from gobtui.services.planning_state import tuned_for
from gobtui.view_models import format as fmt
from gobtui.view_models.eval_rows import known_recall

MIN_WINDOW_TOKENS = 10_000
"""The smallest `explain --window`: no supported model has a smaller context window, and
below it the trigger and floor percentages mean nothing (a 1-token window put the default
trigger at 25,000,000 %)."""


def window_tokens(text: str) -> int:
    return token_count(text, low=MIN_WINDOW_TOKENS)


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


def _window(target: Target) -> int | None:
    return target.summary.context_window if target.summary else None


def cmd_tune(args: argparse.Namespace) -> int:
    """What the adaptive tuner makes of one session, and what decides it now: with adaptive
    on they are the same (plan, apply, watch and the board use the tuner's figures); off,
    the tuner's are a preview of turning it on, beside the one trigger everything uses."""
    target = resolve_target(args, args.session)
    session = load_target(target)
    transcript = session.transcript
    window = _window(target) or (transcript.summary.context_window if transcript.summary else None)
    resolved = resolve_policy(args, target.provider, target.session_id, window=window)
    policy = resolved.policy
    context = transcript.context_tokens()
    tuned = tuner_preview(
        policy, provider=target.provider, session_id=target.session_id, path=str(target.path),
        window=window, context_tokens=context, elidable_tokens=elidable_tokens(transcript),
    )  # fmt: skip
    used = tuned.policy if policy.adaptive else policy
    if args.json:
        print_json(
            {
                "session_id": target.session_id,
                "provider": target.provider.value,
                "context_window": window,
                "context_tokens": context,
                "adaptive": policy.adaptive,
                "base_trigger_tokens": policy.trigger_tokens,
                "base_floor_tokens": policy.floor_tokens,
                "trigger_tokens": used.effective_trigger(),
                "floor_tokens": used.floor_tokens,
                "tuned": {
                    "trigger_tokens": tuned.policy.trigger_tokens,
                    "floor_tokens": tuned.policy.floor_tokens,
                    "reasons": [reason.value for reason in tuned.reasons],
                    "reasons_words": tuned.words(),
                },
            }
        )
        return 0
    configured = (
        f"trigger {fmt.tokens(policy.trigger_tokens)}, floor {fmt.tokens(policy.floor_tokens)}"
    )
    figures = f"trigger {fmt.tokens(tuned.policy.trigger_tokens)}, floor {fmt.tokens(tuned.policy.floor_tokens)}"
    why = tuned.words() or ["nothing to change"]
    if policy.adaptive:
        print(f"adaptive is on: plan, apply, watch and the board use {figures}")
        print(f"  (configured {configured})")
        for words in why:
            print(f"  because {words}")
        return 0
    print(f"adaptive is off: plan, apply, watch and the board use {configured}")
    print(f"with adaptive = true they would use {figures}")
    for words in why:
        print(f"  because {words}")
    print("\n# to let the tuner decide for this session, in config.toml:")
    print(f"[sessions.{fmt.toml_string(target.session_id)}]\nadaptive = true")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    if args.session:
        return _explain_session(args)
    provider = Provider(args.provider)
    window = args.window
    if window is None:
        window = provider.traits.default_window
    resolved = resolve_policy(args, provider, None)
    configured = resolved.policy.effective_trigger()
    # As plan and the board use it: lowered to where the provider compacts by itself.
    policy = capped_to_window(resolved.policy, provider, window)
    trigger, floor = policy.effective_trigger(), policy.floor_tokens
    provider_fires = client_compact_threshold(provider, window)
    tuned = tune(policy, window, 0, None, [])
    if args.json:
        print_json(
            {
                "provider": provider.value,
                "window_tokens": window,
                "layers": list(resolved.layers),
                "policy_trigger_tokens": configured,
                "trigger_tokens": trigger,
                "floor_tokens": floor,
                "provider_compacts_at_tokens": provider_fires,
                "cycle_reclaims_tokens": trigger - floor,
                "average_occupancy_tokens": (trigger + floor) // 2,
                "adaptive": policy.adaptive,
                "tuned": {
                    "trigger_tokens": tuned.trigger,
                    "floor_tokens": tuned.floor,
                    "reasons": [reason.value for reason in tuned.reasons],
                    "reasons_words": [reason.words for reason in tuned.reasons],
                },
            }
        )
        return 0
    print(
        f"policy ({', '.join(resolved.layers) or 'defaults'}), {provider.label}, window {window:,}"
    )
    print(f"  trigger {trigger:,} tokens ({trigger / window:.0%} of the window)")
    if trigger < configured:
        print(f"          (the policy's {configured:,}, lowered to fire before the client does)")
    print(f"  floor   {floor:,} tokens ({floor / window:.0%})")
    print(
        f"  the client compacts by itself at {provider_fires:,} ({provider_fires / window:.0%} of the window)"
    )
    print("\nthe sawtooth: occupancy climbs from the floor to the trigger, one compaction")
    print("brings it back to about the floor, and the cycle repeats.")
    print(f"  each cycle reclaims about {trigger - floor:,} tokens")
    print(f"  average occupancy about {(trigger + floor) // 2:,} tokens")
    if trigger > provider_fires:
        print("  the trigger is above the provider's own threshold: the provider wins")
    if policy.adaptive:
        print("\nadaptive is on: each session's trigger is the tuner's (gobtui tune SESSION);")
        print(
            f"with no history and nothing known of its items: trigger {tuned.trigger:,}, floor {tuned.floor:,}"
        )
    else:
        print(
            f"\nadaptive is off; with adaptive = true the tuner would use trigger {tuned.trigger:,}, floor {tuned.floor:,}"
        )
    for reason in tuned.reasons:
        print(f"  because {reason.words}")
    print("\nrewriting before the prompt-cache prefix invalidates the cache: cache_aware and")
    print("auto prefer plans whose first cut comes late (savings x prefix share cubed).")
    return 0


def _explain_session(args: argparse.Namespace) -> int:
    """What fills one session's context, by kind, and what a fork could reclaim of it."""
    target = resolve_target(args, args.session)
    resolved = resolve_policy(args, target.provider, target.session_id, window=target.window)
    session = load_target(target)
    comp = session.composition
    reach = reclaimable(session.transcript, resolved.policy, comp)

    adapted = tuned_for(session, resolved.policy)
    if args.json:
        print_json(
            {"session_id": target.session_id, "composition": composition_object(comp, reach)}
        )
        return 0
    print(f"{target.provider.label} {target.session_id}")
    if (line := adapted.line()) is not None:
        print(f"  {line}")
    fit = "no usage to fit" if comp.fit_error is None else f"fit error {comp.fit_error:.1%}"
    print(f"  context {comp.reported:,} tokens, {comp.points} usage records ({fit})")
    for part in comp.parts:
        share = part.tokens / comp.reported if comp.reported else 0.0
        where = "no fork reaches it" if not part.reachable else (
            f"a fork could reclaim {fmt.tokens(reach.get(part.kind, 0))}"
        )  # fmt: skip
        cost = "" if part.kind is PartKind.FIXED else f", {part.coefficient:g} per estimated token"
        print(
            f"  {part.kind.words:<22} {fmt.tokens(part.tokens):>6} {fmt.percent(share):>5}"
            f"  {where}{cost}"
        )
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    """Every preset; one that does not load is listed with its error (and exit 2)."""
    config = policy_config()
    rows: list[dict[str, Any]] = []
    broken: list[dict[str, Any]] = []
    for name in config.preset_names():
        builtin = PRESETS.get(name)
        try:
            picked = argparse.Namespace(preset=name)
            resolved = resolve_policy(picked, Provider.CLAUDE, None, config)
        except CliError as error:
            broken.append({"name": name, "builtin": builtin is not None, "error": str(error)})
            continue
        rows.append(
            {
                "name": name,
                "strategy": resolved.strategy,
                "trigger_tokens": resolved.policy.trigger_tokens,
                "floor_tokens": resolved.policy.floor_tokens,
                "keep_recent_tool_outputs": resolved.policy.keep_recent_tool_outputs,
                "builtin": builtin is not None,
                "description": builtin.description if builtin else f"from {config.path}",
            }
        )
    if args.json:
        print_json(rows + broken)
        return int(Exit.USAGE) if broken else 0
    for row in rows:
        print(
            f"{row['name']:<16} {row['strategy']:<11} trigger "
            f"{fmt.tokens(int(row['trigger_tokens'])):>5}  floor "
            f"{fmt.tokens(int(row['floor_tokens'])):>4}"
        )
        print(f"  {row['description']}")
    for row in broken:
        print(f"gobtui: error: {error_line(row['error'])}", file=sys.stderr)
    return int(Exit.USAGE) if broken else 0


def cmd_policy_check(args: argparse.Namespace) -> int:
    if args.session is not None:
        # An empty --session would silently match no config layer: refuse it as plan does.
        try:
            check_selector(args.session)
        except SelectError as error:
            raise CliError(str(error)) from None
    provider = policy_provider(args.provider)
    assert provider is not None  # argparse took one of its names
    resolved = resolve_policy(args, provider, args.session, window=args.window)
    policy = resolved.policy
    if args.quota_pressure:
        policy = policy.model_copy(update={"quota_pressure": QuotaPressure(args.quota_pressure)})
    decision = checked_policy(provider, args.session, args.context_tokens, args.session_active,
                              policy, resolved.strategy, args.window)  # fmt: skip
    if args.json:
        print_json(decision)
        return 0
    what = decision.action.value
    extra = decision.control or decision.strategy or ""
    print(
        f"{what}{' ' + extra if extra else ''}  (context {decision.context_tokens:,}, "
        f"trigger {decision.effective_trigger_tokens:,}, floor {decision.floor_tokens:,})"
    )
    for reason in decision.tune_reasons:
        print(f"  adaptive: {reason.words}")
    return 0
