"""Auto-prepare in the dashboard: the headless watcher's passes (gobtui.services.watching) while the
user has it on. Off by default, since it writes forks: an idle session over its trigger gets
a verified fork (the source is never touched), a live one is only reported with its
provider's control.

One pass at a time runs in a thread worker, the first at once when it is turned on, then
every WATCH_INTERVAL_SECS; each pass re-scans the homes with its own store (the board's
store belongs to the app's event loop). What a pass found is the watcher line's; a fork it
published is a toast with its resume command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import App
from textual.timer import Timer

from gobtui.core.limits import WATCH_INTERVAL_SECS
from gobtui.core.sanitize import terminal_safe
from gobtui.core.watch_codes import WatchCode

if TYPE_CHECKING:
    from gobtui.adapters.config.paths import Homes
    from gobtui.core.watch import WatchDecision
    from gobtui.services.watching import HeadlessWatch

PREPARED = (WatchCode.PUBLISHED, WatchCode.ALREADY_PUBLISHED)
SKIP_WORDS = {
    WatchCode.NO_PLAN: "nothing to cut",
    WatchCode.REFUSED: "plan refused",
    WatchCode.HELD: "published lately",
    WatchCode.RETRY_WAIT: "retry later",
    WatchCode.UNRESUMED_FORK: "unresumed fork",
    WatchCode.WOULD_PUBLISH: "dry run",
    WatchCode.FAILED: "failed",
}
"""Why a session over its trigger got no fork in a pass, in the watcher line's words."""


@dataclass
class WatcherState:
    on: bool = False
    running: bool = False
    last_pass: float | None = None
    over: int = 0
    """Sessions over their trigger in the last pass."""
    ready: int = 0
    """... of which have a verified fork waiting (prepared now or earlier)."""
    live: int = 0
    """... of which are live: only their provider's control was reported."""
    prepared: int = 0
    """Forks this dashboard published since auto-prepare was turned on."""
    failed: int = 0
    error: str = ""
    skipped: dict[WatchCode, int] = field(default_factory=dict)
    """Over their trigger, neither ready nor live, in the last pass: how many, by why."""


def watcher_line(state: WatcherState, compact: bool) -> Text:
    """The board's watcher line: whether auto-prepare is on, and what its last pass found."""
    text = Text()
    if not state.on:
        text.append("auto-prepare off", "dim")
        hint = (
            " · A: on"
            if compact
            else " · A turns it on: idle sessions over their trigger get a verified fork"
        )
        text.append(hint, "dim")
        return text
    text.append("auto-prepare ON", "bold")
    if state.error:
        text.append(f" · pass failed: {terminal_safe(state.error)[:60]}", "bold")
    elif state.last_pass is None:
        text.append(" · first pass…")
    else:
        when = datetime.fromtimestamp(state.last_pass).strftime("%H:%M:%S")
        if compact:
            text.append(f" · {when} · {state.over} over · {state.ready} ready · {state.live} live")
        else:
            text.append(
                f" · {when}: {state.over} over trigger, {state.ready} fork ready, {state.live} live"
            )
        skipped = sum(state.skipped.values())
        if skipped and compact:
            text.append(f" · {skipped} skipped")
        elif skipped:
            why = ", ".join(f"{n} {SKIP_WORDS[code]}" for code, n in sorted(state.skipped.items()))
            text.append(f" · skipped: {why}")
        if state.prepared:
            text.append(f" · {state.prepared} prepared", "bold")
        if state.failed:
            text.append(f" · {state.failed} failed", "bold")
    if state.running and state.last_pass is not None:
        text.append(" · pass running…")
    text.append(" · A: off" if compact else " · A turns it off")
    return text


class AutoPrepare:
    """The app's auto-prepare switch and its passes."""

    def __init__(
        self,
        app: App[Any],
        homes: Homes,
        clock: Callable[[], float],
        use_cache: bool,
        all_sessions: bool,
    ) -> None:
        self.app = app
        self.homes = homes
        self.clock = clock
        self.use_cache = use_cache
        self.all_sessions = all_sessions
        self.state = WatcherState()
        self.listeners: list[Callable[[WatcherState], None]] = []
        self._watch: HeadlessWatch | None = None
        self._timer: Timer | None = None

    def toggle(self) -> bool:
        if self.state.on:
            self.stop()
        else:
            self.start()
        return self.state.on

    def start(self) -> None:
        from gobtui.services.watching import HeadlessWatch, WatchSettings

        settings = WatchSettings(all_sessions=self.all_sessions, use_cache=self.use_cache)
        self._watch = HeadlessWatch(self.homes, settings, clock=self.clock)
        self.state = WatcherState(on=True)
        self._timer = self.app.set_interval(WATCH_INTERVAL_SECS, self.run_pass)
        self.run_pass()

    def stop(self, *, quiet: bool = False) -> None:
        """Turn it off; `quiet` (the app closing) tells no listener."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        watch, self._watch = self._watch, None
        if watch is not None and not self.state.running:
            watch.close()
        self.state = WatcherState()
        if not quiet:
            self._changed()

    def run_pass(self) -> None:
        if self._watch is None or self.state.running:
            return  # one pass at a time: a slow one is not stacked on
        self.state.running = True
        self._changed()
        watch = self._watch
        self.app.run_worker(
            lambda: self._pass(watch), thread=True, group="auto-prepare", exit_on_error=False
        )

    def _pass(self, watch: HeadlessWatch) -> None:
        try:
            news = watch.pass_once()
        except Exception as error:  # a pass that fails is said on the line, never a crash
            self.app.call_from_thread(self._failed, watch, str(error) or type(error).__name__)
            return
        self.app.call_from_thread(self._done, watch, news, list(watch.current))

    def _failed(self, watch: HeadlessWatch, message: str) -> None:
        if watch is not self._watch:  # turned off (and maybe on again) while this pass ran
            watch.close()
            return
        self.state.running = False
        self.state.error = message.splitlines()[0] if message else "error"
        self._changed()

    def _done(
        self, watch: HeadlessWatch, news: list[WatchDecision], current: list[WatchDecision]
    ) -> None:
        if watch is not self._watch:  # turned off (and maybe on again) while this pass ran:
            watch.close()  # the running flag is the new watcher's, not this pass's
            return
        state = self.state
        state.running = False
        state.error = ""
        state.last_pass = self.clock()
        state.over = len(current)
        state.ready = sum(1 for d in current if d.decision in PREPARED)
        state.live = sum(1 for d in current if d.decision is WatchCode.PROVIDER_COMPACT)
        state.skipped = {}
        for d in current:
            if d.decision in SKIP_WORDS:
                state.skipped[d.decision] = state.skipped.get(d.decision, 0) + 1
        for decision in news:
            if decision.decision is WatchCode.PUBLISHED:
                state.prepared += 1
                self.app.notify(
                    f"{terminal_safe(decision.project)}: resume with "
                    f"{terminal_safe(decision.resume_command or '')}",
                    title="Fork prepared",
                )
            elif decision.decision is WatchCode.FAILED:
                state.failed += 1
                self.app.notify(
                    f"{terminal_safe(decision.project)}: {terminal_safe(decision.detail or '')[:120]}",
                    title="Auto-prepare failed",
                    severity="warning",
                )
        self._changed()

    def _changed(self) -> None:
        for listener in self.listeners:
            listener(self.state)
