"""What keeps the board true while the app runs: the first scan, the histories read whole
behind it, the watcher's changes, forks published beside the board, config.toml edited, and
the alerts these raise. A mixin of GobtuiApp, which sets the attributes it names."""

from __future__ import annotations

import asyncio
import gc
from contextlib import suppress
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, InvalidThemeError
from textual.notifications import SeverityLevel
from textual.signal import Signal
from textual.worker import get_current_worker

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.providers.full_parse import gc_paused
from gobtui.adapters.publish.receipt_feed import ReceiptFeed
from gobtui.adapters.sessions.store import SessionStore
from gobtui.adapters.sessions.watcher import watch_changes, watch_roots
from gobtui.controllers.messages import ScanFailed, SessionsChanged, SessionsScanned
from gobtui.core.alerts import AlertChannel, AlertEvent
from gobtui.core.fork_id import published_size
from gobtui.core.limits import COMPLETE_MAX_BYTES
from gobtui.core.model import Coverage, SessionSummary
from gobtui.core.sanitize import one_line, terminal_safe
from gobtui.core.status import Status
from gobtui.screens.sessions import SessionsScreen
from gobtui.screens.worker_errors import screen_work
from gobtui.services.published_forks import CARD_FORK_LABEL, COPY_LABEL, PublishedForks, twin_of

if TYPE_CHECKING:
    from gobtui.services.config_reload import ConfigWatch
    from gobtui.services.run_settings import AppConfig

HISTORY_BATCH_FILES = 64
HISTORY_BATCH_BYTES = 32 * 1024 * 1024


class BoardFeed(App[None]):
    config: AppConfig
    homes: Homes
    store: SessionStore
    sessions_screen: SessionsScreen
    forks: PublishedForks
    receipt_feed: ReceiptFeed
    config_watch: ConfigWatch | None
    first_paint: asyncio.Event
    history_complete: asyncio.Event
    sessions_changed: Signal[SessionsChanged]
    _stop_watch: asyncio.Event

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
