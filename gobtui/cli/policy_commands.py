"""`tune`, `explain`, `presets` and `policy-check`: what a policy decides, for a session or
for figures given (registered with the planning commands in .plan)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gobtui.adapters.sessions.select import SelectError, check_selector
from gobtui.cli.common import (
    Target,
    load_target,
    policy_config,
    print_json,
    resolve_policy,
    resolve_target,
    token_count,
)
from gobtui.cli.dispatch import CliError, error_line
from gobtui.cli.exits import Exit
from gobtui.core.composition import PartKind
from gobtui.core.context_words import composition_object, reclaimable
from gobtui.core.model import Provider
from gobtui.core.policy import (
    PRESETS,
    QuotaPressure,
    capped_to_window,
    policy_provider,
    tune,
)
from gobtui.core.strategies.common import elidable_tokens
from gobtui.core.thresholds import client_compact_threshold
from gobtui.services.adaptive import checked_policy, tuner_preview
from gobtui.services.planning_state import tuned_for
from gobtui.view_models import format as fmt

MIN_WINDOW_TOKENS = 10_000
"""The smallest `explain --window`: no supported model has a smaller context window, and


trigger at 25,000,000 %)."""


def window_tokens(text: str) -> int:
    return token_count(text, low=MIN_WINDOW_TOKENS)


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
