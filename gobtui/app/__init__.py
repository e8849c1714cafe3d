"""The Textual app and its one factory, `make_app`, shared by the CLI, tests and screenshots."""

from __future__ import annotations

import asyncio
import gc
import shutil
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.theme import Theme

from gobtui.adapters.config.paths import Homes, cache_dir, resolve_homes
from gobtui.adapters.publish.receipt_feed import ReceiptFeed
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.store import SessionStore
from gobtui.adapters.sessions.watcher import watch_roots
from gobtui.app.board_feed import BoardFeed
from gobtui.app.process import end_when_stuck, exit_on_signals, terminal_check
from gobtui.controllers.auto_prepare import AutoPrepare
from gobtui.controllers.commands import EDGE_KEYS, BindingCommands, SessionCommands
from gobtui.controllers.messages import (
    ApplyAlreadyPublished,
    ApplyDeclined,
    ApplyPlanned,
    ForkPublished,
    PublishFailed,
    ScanFailed,
    SessionsChanged,
)
from gobtui.controllers.publishing import PublishController
from gobtui.core.model import SessionSummary
from gobtui.core.sanitize import one_line, terminal_safe
from gobtui.screens.help import HelpScreen
from gobtui.screens.sessions import SessionsScreen
from gobtui.screens.worker_errors import WorkerErrors, screen_work
from gobtui.services.config_reload import ConfigWatch
from gobtui.services.published_forks import PublishedForks
from gobtui.services.resume import ClientRunner, resume_of, run_client
from gobtui.services.run_settings import AppConfig
from gobtui.view_models import format as fmt

if TYPE_CHECKING:  # the demo generator is imported only when a demo runs
    from gobtui.adapters.config.ui_state import RememberedChoices
    from gobtui.core.receipt import Receipt
    from gobtui.demo.home import DemoHome
    from gobtui.demo.live import DemoAppender


def styles_dir() -> Path:
    """The TCSS files: gobtui/styles, installed or linked to the top-level styles/ folder."""
    return Path(__file__).parent.parent / "styles"


STYLES = styles_dir()


class GobtuiApp(WorkerErrors, BoardFeed):
    CSS_PATH = STYLES / "app.tcss"
    TITLE = "gobtui"
    COMMANDS = App.COMMANDS | {SessionCommands, BindingCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Quit gobtui", id="app.quit"),
        Binding(
            "question_mark",
            "help",
            "Help",
            tooltip="Help: every key of this screen, and how to read it",
            id="app.help",
        ),
    ]

    def __init__(
        self,
        config: AppConfig,
        *,
        homes: Homes,
        store: SessionStore,
        demo_home: DemoHome | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.homes = homes
        self.store = store
        self.demo_home = demo_home
        self.appender: DemoAppender | None = None
        if demo_home is not None:
            from gobtui.demo.live import DemoAppender

            self.appender = DemoAppender(demo_home, config.demo_seed)
        self.first_paint = asyncio.Event()
        self.history_complete = asyncio.Event()
        """Set once every head+tail summary has been read whole (see complete_history)."""
        self.sessions_screen = SessionsScreen(
            config.policy,
            config.clock,
            demo=demo_home is not None,
            searched=tuple(fmt.display_path(str(root)) for root in watch_roots(homes)),
        )
        self.runner: ClientRunner = run_client
        self.held_keys: list[events.Key] | None = None
        """Keys typed while a question is being prepared (hold_keys)."""
        self._stop_watch = asyncio.Event()
        self.sessions_changed: Signal[SessionsChanged] = Signal(self, "sessions-changed")
        """Republishes every SessionsChanged (the plan screens watch their own session)."""
        self.publishing = PublishController(self, self)
        """Apply and undo: plans, confirms, publishes forks, keeps the last receipts."""
        self.forks = PublishedForks()
        """The forks gobtui published: their rows say so (gobtui.services.published_forks)."""
        self.config_watch = ConfigWatch(config.config_file) if config.config_file else None
        """config.toml, compared each second: a change is used at once (_config_changed)."""
        self.receipt_feed = ReceiptFeed()
        """New receipts (of this board or of the CLI beside it), read as they come."""
        self.forks_published: Signal[Receipt] = Signal(self, "forks-published")
        """Every fork an apply or undo published (the detail pane and vault screen listen)."""
        self.auto_prepare = AutoPrepare(
            self, homes, config.clock, config.use_cache, config.max_age_secs is None
        )
        """The watcher's auto-prepare switch (off until the user turns it on)."""

    terminal_alive: Callable[[], bool] = staticmethod(lambda: True)
    """Checked every second; False ends the app (see gobtui.app.process.terminal_check)."""

    def get_default_screen(self) -> Screen[None]:
        return self.sessions_screen

    def on_mount(self) -> None:
        if self.config.theme:
            self.theme = self.config.theme
        if self.config.remember_theme:
            # After the start's own theme is set: the signal is published on the next call.
            self.call_next(self.theme_changed_signal.subscribe, self, self._theme_picked)
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        self.scan_sessions()
        if not self.is_headless:
            self.terminal_alive = terminal_check()
            exit_on_signals(self)
        self.set_interval(1.0, self._tick)
        if self.appender is not None and self.config.demo_ticks:
            self.set_interval(1.0, self._demo_tick)

    def _theme_picked(self, theme: Theme) -> None:
        from gobtui.adapters.config.ui_state import save_theme

        save_theme(theme.name, self.config.environ)

    @cached_property
    def remembered(self) -> RememberedChoices:
        """The plan preview's choices kept between runs (ui-state.json), read once."""
        from gobtui.adapters.config.ui_state import RememberedChoices
        from gobtui.services.planning_state import STRATEGY_IDS

        return RememberedChoices(self.config.environ, STRATEGY_IDS)

    async def on_unmount(self) -> None:
        self._stop_watch.set()
        self.auto_prepare.stop(quiet=True)
        gc.unfreeze()  # (see _scanned) what this app left behind can be collected again
        if not self.is_headless:
            end_when_stuck(self)

    @screen_work("demo")
    def _demo_append(self) -> None:
        if self.appender is not None:
            self.appender.tick(self.config.clock())

    def _demo_tick(self) -> None:
        self._demo_append()

    def _tick(self) -> None:
        if not self.terminal_alive():
            # The terminal hung up (its tmux pane or window closed) and no SIGHUP reached us,
            # as when started through make: Textual would read its end of file forever.
            self.exit()
            return
        if self.is_running:  # not while shutting down: the screens are being taken apart
            if self.sessions_screen.loaded:
                self._read_receipts()
            if self.config_watch is not None and self.config_watch.changed():
                self._config_changed()
            self.sessions_screen.tick(self.config.clock())

    @screen_work("jump")
    def jump_to_pane(self, summary: SessionSummary) -> None:
        """Select the tmux pane the session's client runs in, or say why there is none."""
        from gobtui.adapters.terminal.tmux import jump_to_session

        result = jump_to_session(
            Path(summary.path), summary.cwd, provider=summary.provider, env=self.config.environ
        )
        name = one_line(summary.title or summary.session_id)[:40]
        if result.ok:
            self.call_from_thread(self.notify, terminal_safe(result.sentence), title=name)
        else:
            self.call_from_thread(
                self.notify,
                terminal_safe(f"No pane to jump to: {result.sentence}."),
                title=name,
                severity="warning",
            )

    def worker_failed(self, group: str, message: str) -> None:
        """A background job of the app's own failed (WorkerErrors): the scan's failure is
        the board's to say; any other is a toast, so the board stays up and says so."""
        if group == "scan":
            self.post_message(ScanFailed(message))
            return
        what = "watching for changes stopped" if group == "watcher" else f"{group} failed"
        self.notify(message, title=what, severity="error", timeout=10)

    @on(ScanFailed)
    def _scan_failed(self, message: ScanFailed) -> None:
        self.notify(message.error, title="Scan failed", severity="error", timeout=10)

    @on(ApplyPlanned)
    def _apply_planned(self, message: ApplyPlanned) -> None:
        self.publishing.planned(message.request)

    @on(ApplyAlreadyPublished)
    def _apply_already_published(self, message: ApplyAlreadyPublished) -> None:
        self.publishing.already_published(message.receipt, message.source_path)

    @on(ApplyDeclined)
    def _apply_declined(self, message: ApplyDeclined) -> None:
        self.publishing.declined(message.label, message.reason)

    @on(ForkPublished)
    def _fork_published(self, message: ForkPublished) -> None:
        # Mostly before the fork's row arrives; when the watcher was quicker, it is relabelled.
        self.forks.note(message.receipt)
        self._relabel({message.receipt.session_id})
        self.publishing.published(message.receipt, message.source_path)
        self.forks_published.publish(message.receipt)

    @on(PublishFailed)
    def _publish_failed(self, message: PublishFailed) -> None:
        self.publishing.failed(message.title, message.error, message.code)

    def last_fork(self, path: str) -> Receipt | None:
        """The last fork published from the session at `path` in this run, if any."""
        return self.publishing.last_fork(path)

    def fork_line(self, path: str) -> str | None:
        """The resume command of the last fork of the session at `path`: published by this
        board, beside it (its receipt), or seen appear as its copy."""
        return self.forks.fork_line(path)  # (this board's forks are noted there too)

    # --- actions ---------------------------------------------------------------------------

    def action_help_quit(self) -> None:
        """ctrl+c: say which key quits (Textual's own hint is markup, and toasts here are
        plain text)."""
        quits = [a.binding for a in self.active_bindings.values() if a.binding.action == "quit"]
        quits.sort(key=lambda binding: binding.id != "app.quit")  # ours (q) before ctrl+q
        keys = [self.get_key_display(binding) for binding in quits]
        if keys:
            self.notify(f"Press {keys[0]} to quit gobtui.", title="Do you want to quit?")

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        on_board = self.screen is self.sessions_screen
        things = "sessions" if on_board else "rows"
        rows: list[tuple[str, str]] = [("↑↓ j k pgup pgdn", f"Move through the {things}")]
        seen: set[str] = set()
        edges = False
        for active in self.screen.active_bindings.values():
            binding = active.binding
            # Ours all carry an id; the table's cursor keys are summed up in the first rows.
            if binding.id is None or not binding.description:
                continue
            if binding.id.endswith(EDGE_KEYS):
                if not edges:
                    edges = True
                    rows.append(("home g, end G", f"The first, the last of the {things}"))
                continue
            if binding.action in seen:
                continue
            seen.add(binding.action)
            rows.append((self.get_key_display(binding), binding.tooltip or binding.description))
        rows.append(("ctrl+p", "Command palette: sessions, themes, actions"))
        legend = getattr(self.screen, "HELP_LEGEND", None)
        title = getattr(self.screen, "HELP_LEGEND_TITLE", None)
        self.push_screen(HelpScreen(rows, legend=legend, legend_title=title))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        # The board's own actions are its bindings (commands.BindingCommands).
        yield SystemCommand("Rescan sessions", "Read the homes again", self.scan_sessions)

    # --- keys typed ahead of a question -----------------------------------------------------

    def hold_keys(self) -> None:
        """Keep the keys typed from now on until release_keys(): `a` plans before it asks, and
        a `y` typed at once must answer the question, as a slow typist's would, not fall on
        the board while the plan is being made."""
        if self.held_keys is None:
            self.held_keys = []

    def release_keys(self) -> None:
        """Hand the held keys on, to the screen now in front (the question, or the board)."""
        keys, self.held_keys = self.held_keys or [], None
        for key in keys:
            self.post_message(events.Key(key.key, key.character))

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self.held_keys is not None:
                self.held_keys.append(event)
                return
            # Where the key goes now; if the focus has moved by the time it comes back up
            # unhandled (see _on_key), it was typed ahead of that move.
            event._gobtui_focus = self.focused  # type: ignore[attr-defined]
        await super().on_event(event)

    async def _on_key(self, event: events.Key) -> None:
        """A key that comes back up unhandled after the focus moved (a burst: `/dov` reaches
        the board's table before the `/` that focuses the filter box is handled) goes to the
        focused widget, as a slow typist's would, instead of falling on the board's keys."""
        if self.held_keys is not None:  # forwarded before the hold began: held all the same
            event.prevent_default()
            self.held_keys.append(events.Key(event.key, event.character))
            return
        sent_to = getattr(event, "_gobtui_focus", None)
        if sent_to is not None and self.focused is not None and sent_to is not self.focused:
            event.prevent_default()  # App's own handler would run the board's binding
            self.post_message(events.Key(event.key, event.character))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast goes through here: its text is made safe to show (core.sanitize) and
        never read as markup (a title such as "[@click=app.quit]" is text)."""
        super().notify(
            terminal_safe(message, multiline=True),
            title=one_line(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def resume_session(self, summary: SessionSummary) -> None:
        """Hand the terminal to `claude --resume` / `codex resume` in the session's working
        directory, then come back."""
        resume = resume_of(summary)
        client = resume.argv[0]
        if shutil.which(client) is None and self.runner is run_client:
            self.copy_to_clipboard(resume.copy_text())
            self.notify(
                f"{client} is not on PATH; the resume command was copied instead.",
                severity="warning",
            )
            return
        if resume.gone is not None:
            self.notify(
                f"The session's directory {resume.gone} is gone; resuming from here.",
                severity="warning",
            )
        try:
            with self.suspend():
                ran = self.runner(resume.argv, resume.cwd)
        except Exception as error:  # SuspendNotSupported, or the command failed to start
            self.notify(f"Could not resume: {error}", severity="error")
            return
        if ran.code:
            said = f": {ran.error}" if ran.error else ""
            self.notify(f"{client} exited with {ran.code}{said}", severity="warning")
        self.refresh()


def make_app(config: AppConfig) -> GobtuiApp:
    """Build the app for a config. Raises adapters.config.paths.HomeError for a missing named home."""
    demo_home = None
    claude_home, codex_home = config.claude_home, config.codex_home
    environ = config.environ
    if config.demo:
        from gobtui.demo.home import build_demo_home, default_demo_root

        root = config.demo_root or default_demo_root()
        demo_home = build_demo_home(root, seed=config.demo_seed, now=config.clock())
        claude_home, codex_home = str(demo_home.claude_home), str(demo_home.codex_home)
    homes = resolve_homes(claude_home, codex_home, environ)
    cache = SummaryCache(cache_dir() / "cursors") if config.use_cache and not config.demo else None
    store = SessionStore(homes, cache, max_age_secs=config.max_age_secs)
    return GobtuiApp(config, homes=homes, store=store, demo_home=demo_home)
