"""The plan preview's header text: the figures of the shown plan, or why there is none.

Pure (a PlanPreview and the screen's switches in, rich Text out), so the screen only places it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from gobtui.services.planning_state import PlanPreview, PreviewFigures
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes
from gobtui.widgets.palette import BandStyles


@dataclass(frozen=True, slots=True)
class HeaderView:
    """What the header shows: the preview (None while planning) and the screen's switches."""

    preview: PlanPreview | None
    error: str | None
    strategy: str
    split: bool
    ignore_trigger: bool
    policy_trigger: int


def figures_text(view: HeaderView, styles: BandStyles) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    mode = "split" if view.split else "unified"
    if view.error is not None:
        text.append(f"cannot plan: {view.error}", styles.alert)
        text.append("\npress r to try again")
        return text
    if view.preview is None:
        text.append(f"planning with {view.strategy}…", styles.muted)
        text.append(f"\n{_trigger_text(view, None)} · {mode} diffs")
        return text
    f = view.preview.figures
    if f.no_plan_reason is not None:
        text.append(f"no plan: {fmt.no_plan_words(f.no_plan_reason)}", styles.warn)
        text.append(f" · context {fmt.tokens(f.context_before)}")
        if f.why:
            text.append(f"\n{f.why}", styles.muted)
        text.append(f"\n{_trigger_text(view, f)} · {mode} diffs")
        if f.adaptive:
            text.append(f"\n{f.adaptive}", styles.muted)
        if f.no_plan_reason == "below_trigger" and not view.ignore_trigger:
            text.append("\npress t to plan anyway (trigger lowered to the current context)")
        return text
    text.append(f"{fmt.tokens(f.context_before)} → {fmt.tokens(f.context_after)} tokens")
    text.append(f"  −{fmt.tokens(f.saved)} ({fmt.percent(f.saved_share)})", styles.ok)
    text.append(f" · prefix {fmt.tokens(f.prefix_tokens)}")
    if f.control is not None:  # the provider's summary decides what stays (as in eval)
        text.append(" · recall —")
    else:
        recall = fmt.percent(f.recall)
        text.append(f" · recall {f.probes_recalled}/{f.probes_total} ({recall})")
    text.append("\n")
    _verdicts(text, f, styles)
    if f.fills:
        text.append(f"\n{f.fills}", styles.muted)
    text.append(f"\n{_trigger_text(view, f)} · {mode} diffs · ")
    text.append(f.rationale, styles.muted)
    if f.adaptive:
        text.append(f"\n{f.adaptive}", styles.muted)
    return text


def _verdicts(text: Text, f: PreviewFigures, styles: BandStyles) -> None:
    if f.admitted is False:
        text.append(f"refused by admission: {f.admission_code}", styles.alert)
    else:
        text.append("admitted", styles.ok)
    if f.control is not None:
        text.append(f" · control plan: {f.control}, no file written")
        return
    if f.valid is True:
        text.append(" · verify ok", styles.ok)
    elif f.valid is False:
        text.append(f" · verify: {', '.join(f.findings) or 'failed'}", styles.alert)
    text.append(f" · {f.elided - f.left_out} stubbed")
    if f.left_out:
        text.append(f" · {f.left_out} thinking left out")
    text.append(f" · card {human_bytes(f.card_bytes)}")
    if f.added_records:
        text.append(f" (+{f.added_records} rec)")
    if f.client_compacts:
        text.append(" · the client will compact it", styles.alert)


def _trigger_text(view: HeaderView, f: PreviewFigures | None) -> str:
    trigger = fmt.tokens(f.effective_trigger) if f else fmt.tokens(view.policy_trigger)
    if view.ignore_trigger:
        return f"trigger ignored ({trigger})"
    return f"trigger {trigger}"
