"""The Textual app and its one factory, `make_app`, shared by the CLI, tests and screenshots."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from contextlib import suppress
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import App, InvalidThemeError, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.theme import Theme
from textual.worker import get_current_worker

from gobtui.adapters.config.paths import Homes, cache_dir, resolve_homes
from gobtui.adapters.providers.full_parse import gc_paused
from gobtui.adapters.publish.receipt_feed import ReceiptFeed
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.store import SessionStore
from gobtui.adapters.sessions.watcher import watch_changes, watch_roots
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
    SessionsScanned,
)
from gobtui.controllers.publishing import PublishController
from gobtui.core.alerts import AlertChannel, AlertEvent
from gobtui.core.fork_id import published_size
from gobtui.core.limits import COMPLETE_MAX_BYTES, SHUTDOWN_GRACE_SECS
from gobtui.core.model import Coverage, SessionSummary
from gobtui.core.sanitize import one_line, terminal_safe
from gobtui.core.status import Status
from gobtui.screens.help import HelpScreen
from gobtui.screens.sessions import SessionsScreen
from gobtui.screens.worker_errors import WorkerErrors, screen_work
from gobtui.services.config_reload import ConfigWatch
from gobtui.services.published_forks import CARD_FORK_LABEL, COPY_LABEL, PublishedForks, twin_of
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
    return Path(__file__).parent / "styles"


STYLES = styles_dir()

HISTORY_BATCH_FILES = 64
HISTORY_BATCH_BYTES = 32 * 1024 * 1024


class GobtuiApp(WorkerErrors, App[None]):
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
    """Checked every second; False ends the app (see _terminal_check)."""

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
            self.terminal_alive = _terminal_check()
            _exit_on_signals(self)
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
            _end_when_stuck(self)

    # --- workers ---------------------------------------------------------------------------

    @screen_work("scan")
    def scan_sessions(self) -> None:
        try:
            with gc_paused():  # thousands of summaries, all kept: nothing for the GC to find
                summaries = self.store.scan(self.config.clock())
        except OSError as error:  # a home that vanished or cannot be read
            self.post_message(ScanFailed(str(error)))
            return
        receipts = self.receipt_feed.new()  # (only once the scan is done)
        self.post_message(SessionsScanned(summaries, receipts=receipts))

    @screen_work("history")
    def complete_history(self) -> None:
        """Read whole, in the background, the files first summarised from head and tail,
        so sparklines and compaction marks cover the whole session. Smallest first; then
        those that appeared meanwhile (a fork just published, a new session), each once."""
        worker = get_current_worker()
        tried: set[str] = set()
        while not worker.is_cancelled:
            pending = [
                p for p in self.store.partial_paths() if p not in tried and self._completable(p)
            ]
            if not pending:
                break
            tried.update(pending)
            while pending and not worker.is_cancelled:
                # Batches bounded in files and bytes: each one re-nests the store once and
                # reaches the board as one message.
                batch: list[str] = []
                size = 0
                while pending and len(batch) < HISTORY_BATCH_FILES and size < HISTORY_BATCH_BYTES:
                    path = pending.pop(0)
                    batch.append(path)
                    summary = self.store.get(path)
                    size += summary.bytes if summary is not None else 0
                changes = self.store.complete(batch)
                if changes.changed or changes.removed:
                    self.post_message(SessionsChanged(changes.changed, changes.removed))
        if worker.is_cancelled:
            return
        self.call_from_thread(self.history_complete.set)

    def _completable(self, path: str) -> bool:
        summary = self.store.get(path)
        return summary is not None and summary.bytes <= COMPLETE_MAX_BYTES

    def _complete_new(self, summaries: list[SessionSummary]) -> None:
        """Once the first pass is done, a file summarised from head and tail since (a new
        session, a fork just published) is read whole too; during it, the pass takes it."""
        if not self.history_complete.is_set():
            return
        if any(
            s.coverage is Coverage.HEAD_TAIL and s.bytes <= COMPLETE_MAX_BYTES for s in summaries
        ):
            self.history_complete.clear()
            self.complete_history()

    @screen_work("watcher", thread=False)
    async def watch_sessions(self) -> None:
        roots = watch_roots(self.homes)
        async for changes in watch_changes(
            self.store, roots, stop_event=self._stop_watch, now=self.config.clock
        ):
            self.post_message(SessionsChanged(changes.changed, changes.removed))

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

    # --- messages --------------------------------------------------------------------------

    @on(SessionsScanned)
    def _scanned(self, message: SessionsScanned) -> None:
        if not self.sessions_screen.loaded:
            # What start-up built (modules, styles, widgets, the summaries) lives as long as
            # the app: out of the GC's sight, so that filling the board does not set off a
            # full collection scanning all of it (a large share of a big board's first paint).
            # Given back to it when the app ends (on_unmount).
            gc.freeze()
        for receipt in message.receipts:
            self.forks.note(receipt)
        self.sessions_screen.replace_all(self.forks.mark(message.summaries), self.config.clock())
        if self.config.watch:
            self.watch_sessions()

    @on(SessionsScreen.FirstPaint)
    def _first_paint(self) -> None:
        self.call_after_refresh(self.first_paint.set)
        # Only once the board is on screen: reading histories competes for the GIL.
        self.call_after_refresh(self.complete_history)

    @on(SessionsChanged)
    def _changed(self, message: SessionsChanged) -> None:
        self._know_arrivals(message.summaries)
        crossed, waiting = self.sessions_screen.merge(
            self.forks.mark(message.summaries), message.removed, self.config.clock()
        )
        for row in waiting:
            title = one_line(row.summary.title or row.summary.session_id)[:48]
            self.alert(
                AlertEvent.WAITING,
                "Waiting for you"
                if row.status is Status.WAITING
                else "Maybe waiting for an approval",
                f"{row.project}: {title}",
            )
        self.sessions_changed.publish(message)
        self._complete_new(message.summaries)
        for row in crossed:
            tokens = row.summary.context_tokens or 0
            self.alert(
                AlertEvent.TRIGGER,
                "Context trigger crossed",
                f"{row.project}: {tokens:,} tokens, over its {row.trigger_tokens:,} trigger",
                severity="warning",
            )

    def _know_arrivals(self, summaries: list[SessionSummary]) -> None:
        """Sessions that appear while the board runs may be forks published beside it (by
        the CLI, another board, a client's own fork): known by a receipt (an intent names
        the fork before it is written), a state card, or their content, before their row is
        built, so that a fork never shows as a session waiting for its user."""
        screen = self.sessions_screen
        if not screen.loaded:
            return
        arrivals = [s for s in summaries if s.path not in screen.summaries]
        if not arrivals:
            return
        self._read_receipts()  # (rows of others they name, already shown, relabelled too)
        for summary in arrivals:
            if self.forks.labels.get(summary.session_id) is not None:
                continue
            if published_size(summary.session_id) is not None:
                continue  # its id says it is a fork, and at what size it was published
            if summary.has_state_card:
                self.forks.note_seen(summary, CARD_FORK_LABEL)
                continue
            source = twin_of(summary, screen.summaries.values())
            if source is not None:
                self.forks.note_seen(summary, COPY_LABEL, source.path)

    def _config_changed(self) -> None:
        """config.toml was edited: its triggers, keys, alerts and theme are used from now on;
        a file that does not load is named, and the board keeps what it had."""
        assert self.config_watch is not None
        reloaded = self.config_watch.reload(self.sessions_screen.policy)
        if isinstance(reloaded, str):
            self.notify(
                f"{reloaded}. The board keeps the settings it had: fix the file (or restart).",
                title="config.toml not used",
                severity="error",
                timeout=12,
            )
            return
        if reloaded.keymap != self.config.keymap:
            self.set_keymap(reloaded.keymap)
        if reloaded.theme and reloaded.theme != self.config.theme:
            with suppress(InvalidThemeError):
                self.theme = reloaded.theme
        self.config.keymap, self.config.alerts = reloaded.keymap, reloaded.alerts
        self.config.theme, self.config.policy = reloaded.theme or self.config.theme, reloaded.policy
        self.sessions_screen.set_policy(reloaded.policy)
        self.notify(
            "Read again: triggers, keys, alerts and theme follow it now.", title="config.toml"
        )

    def _read_receipts(self) -> None:
        """New receipts (the CLI published beside the board): their forks' rows relabelled."""
        noted = self.receipt_feed.new()
        for receipt in noted:
            self.forks.note(receipt)
        if noted:
            self._relabel({receipt.session_id for receipt in noted})

    def _relabel(self, session_ids: set[str]) -> None:
        """The rows of these sessions marked again from what is now known of forks."""
        screen = self.sessions_screen
        paths = [path for path, s in screen.summaries.items() if s.session_id in session_ids]
        raw = [summary for path in paths if (summary := self.store.get(path)) is not None]
        if raw:
            screen.merge(self.forks.mark(raw), [], self.config.clock())

    def alert(
        self, event: AlertEvent, title: str, text: str, *, severity: SeverityLevel = "information"
    ) -> None:
        """Tell the user on the channels the config gives this event (toast, bell, tmux)."""
        channels = self.config.alerts.channels(event)
        if AlertChannel.TOAST in channels:
            self.notify(text, title=title, severity=severity, timeout=8)
        if AlertChannel.BELL in channels:
            self.bell()
        if AlertChannel.TMUX in channels:
            self._tmux_message(f"gobtui: {title}: {text}")

    @work(thread=True, group="alerts", exit_on_error=False)
    def _tmux_message(self, text: str) -> None:
        from gobtui.adapters.terminal.tmux import display_message

        display_message(terminal_safe(text), env=self.config.environ)

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


def _exit_on_signals(app: App[None]) -> None:
    """SIGHUP (its pane closed) and SIGTERM end the app as `q` does, so what runs after it
    (the demo's folder removed, the terminal restored) still runs."""
    loop = asyncio.get_running_loop()
    for name in ("SIGHUP", "SIGTERM"):
        number = getattr(signal, name, None)
        if number is not None:
            with suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, app.exit)


def _end_when_stuck(app: GobtuiApp) -> None:
    """The thread workers run in asyncio's default pool, which the interpreter joins as it
    exits: a long read (a cold home's first scan) would keep a closed dashboard alive, orphaned
    once its pane is gone, until it finished. After the grace the process ends regardless."""

    def end() -> None:
        with suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        if app.config.demo_root is not None:  # (what the CLI would remove after the app)
            shutil.rmtree(app.config.demo_root, ignore_errors=True)
        os._exit(app.return_code or 0)

    timer = threading.Timer(SHUTDOWN_GRACE_SECS, end)
    timer.daemon = True  # an app that ends in time ends as usual
    timer.start()


def _terminal_check() -> Callable[[], bool]:
    """Whether the terminal the app started on is still there: a hung-up terminal stops
    being a tty (os.isatty of its descriptor turns False)."""
    stdin = sys.__stdin__
    if stdin is None or not os.isatty(stdin.fileno()):
        return lambda: True  # no terminal to lose
    fd = stdin.fileno()
    return lambda: os.isatty(fd)
