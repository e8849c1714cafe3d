"""Apply and undo from the dashboard: plan, confirm, publish a fork, show where it went.

One controller per app, so a run outlives the screen it was started from (closing the plan
preview must not lose the receipt). Its workers belong to the app; they are never cancelled
half way (no `exclusive`), and a second request while one runs is refused with a notice.

    apply(summary)  -> plan in a thread      -> ApplyPlanned | ApplyDeclined
                                                | ApplyAlreadyPublished (no question asked)
    ApplyPlanned    -> ConfirmScreen          -> publish in a thread (snapshot progress)
    undo(entry)     -> ConfirmScreen          -> restore in a thread
    publish/restore -> ForkPublished (+ SessionsChanged for the new file) | PublishFailed

The heavy planning and publishing modules load on first use, not at start-up.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App

from gobtui.controllers.messages import (
    ApplyAlreadyPublished,
    ApplyDeclined,
    ApplyPlanned,
    ForkPublished,
    PublishFailed,
    SessionsChanged,
)
from gobtui.core.board import project_name
from gobtui.core.model import SessionSummary
from gobtui.widgets.publish_bar import PublishBar, PublishState

if TYPE_CHECKING:
    from gobtui.adapters.planning.load import LoadedSession
    from gobtui.adapters.sessions.store import SessionStore
    from gobtui.adapters.vault.vault import Vault
    from gobtui.core.board import BoardRow
    from gobtui.core.policy import PolicyConfig
    from gobtui.core.receipt import Receipt
    from gobtui.core.vault.index import IndexEntry
    from gobtui.services.apply_flow import ApplyRequest
    from gobtui.services.run_settings import AppConfig


def publishing_of(app: App[object]) -> PublishController:
    """The app's controller (screens reach it through here, typed)."""
    controller = getattr(app, "publishing", None)
    if not isinstance(controller, PublishController):
        raise RuntimeError("this app has no publishing controller")
    return controller


def one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class _Board(Protocol):
    @property
    def rows(self) -> Mapping[str, BoardRow]: ...


class PublishHost(Protocol):
    """What the controller needs of the gobtui app beside Textual's App (the app passes
    itself as both: the controller never names the app's class)."""

    @property
    def config(self) -> AppConfig: ...
    @property
    def store(self) -> SessionStore: ...
    @property
    def sessions_screen(self) -> _Board: ...
    def hold_keys(self) -> None: ...
    def release_keys(self) -> None: ...


class PublishController:
    def __init__(
        self, app: App[Any], host: PublishHost, vault: Callable[[], Vault] | None = None
    ) -> None:
        self.app = app
        self.host = host
        self._vault = vault
        self.state: PublishState | None = None
        """None while idle; otherwise what runs (planning, publishing, restoring)."""
        self._receipts: dict[str, Receipt] = {}

    # --- state -------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.state is not None

    def open_vault(self) -> Vault:
        if self._vault is not None:
            return self._vault()
        from gobtui.adapters.vault.vault import Vault

        return Vault()

    def last_fork(self, path: str) -> Receipt | None:
        """The last fork published from the session at `path` (board path or canonical)."""
        if not self._receipts:
            return None
        return self._receipts.get(path) or self._receipts.get(os.path.realpath(path))

    def _set_state(self, state: PublishState | None) -> None:
        self.state = state
        for bar in self.app.screen.query(PublishBar):
            bar.show_state(state)

    def _progress(self, what: str, done: int, total: int) -> None:
        if self.state is not None:
            self._set_state(PublishState(what, done, total))

    def _refuse_while_busy(self) -> bool:
        if self.busy:
            self.app.notify(
                "An apply or undo is already running; it finishes first.",
                severity="warning",
                markup=False,
            )
        return self.busy

    # --- apply -------------------------------------------------------------------------------

    def apply(
        self,
        summary: SessionSummary,
        *,
        live: bool,
        strategy: str | None = None,
        policy: PolicyConfig | None = None,
        session: LoadedSession | None = None,
    ) -> bool:
        """Plan (with the policy's strategy unless given), then ask; False when busy."""
        if self._refuse_while_busy():
            return False
        self.host.hold_keys()  # for the question the plan leads to (released below)
        self._set_state(PublishState(f"planning {project_name(summary)}…"))
        self.app.run_worker(
            partial(self._plan, summary, session, strategy, policy, live),
            thread=True,
            group="apply-plan",
            description="Planning the fork",
            exit_on_error=False,
        )
        return True

    def _plan(
        self,
        summary: SessionSummary,
        session: LoadedSession | None,
        strategy: str | None,
        policy: PolicyConfig | None,
        live: bool,
    ) -> None:
        from gobtui.adapters.planning.load import PlanningError
        from gobtui.services.apply_flow import NothingToApply, prepare_apply, session_label
        from gobtui.services.planning_state import load_for_plan, policy_for

        label = session_label(summary)
        try:
            if session is None:
                session = load_for_plan(summary)
            default_policy, default_strategy = policy_for(summary)
            request = prepare_apply(
                summary,
                session,
                strategy or default_strategy,
                policy or default_policy,
                live,
            )
        except (NothingToApply, PlanningError) as error:
            self.app.post_message(ApplyDeclined(label, str(error)))
        except Exception as error:  # the worker's edge: one line, never a traceback
            self.app.post_message(ApplyDeclined(label, one_line(error)))
        else:
            earlier = self._published_before(request)
            if earlier is not None:
                self.app.post_message(ApplyAlreadyPublished(earlier, summary.path))
            else:
                self.app.post_message(ApplyPlanned(request))

    def _published_before(self, request: ApplyRequest) -> Receipt | None:
        """The fork this very plan already made from these bytes, when it is still as it was
        published: asking again would only get the same receipt back."""
        from gobtui.adapters.publish.publisher import Publisher

        try:
            publisher = Publisher(self.open_vault(), clock=self.host.config.clock)
        except Exception:  # the vault's state is the apply's to report, not this check's
            return None
        return publisher.published(request.session, request.plan)

    def already_published(self, receipt: Receipt, source_path: str) -> None:
        self._set_state(None)
        self.host.release_keys()
        self._receipts[source_path] = receipt
        self._receipts[receipt.source_path] = receipt
        self.app.notify(
            f"Already published from these bytes — resume: {receipt.resume_text}",
            title=fmt_title(receipt),
            timeout=12,
            markup=False,
        )

    def planned(self, request: ApplyRequest) -> None:
        from gobtui.dialogs.confirm import ConfirmScreen
        from gobtui.services.apply_flow import apply_question

        self._set_state(None)
        self.state = PublishState("waiting for confirmation")  # a second `a` is still refused

        def answered(yes: bool | None) -> None:
            if not yes:
                self.state = None
                self.app.notify("Cancelled; nothing was written.", markup=False, timeout=3)
                return
            self._set_state(PublishState("snapshotting the source…", 0, request.source_bytes))
            self.app.run_worker(
                partial(self._publish, request),
                thread=True,
                group="publish",
                description="Publishing a fork",
                exit_on_error=False,
            )

        self.app.push_screen(ConfirmScreen("Apply", apply_question(request)), answered)
        self.app.call_after_refresh(self.host.release_keys)  # a `y` typed ahead answers it

    def declined(self, label: str, reason: str) -> None:
        self._set_state(None)
        self.host.release_keys()
        self.app.notify(
            f"No fork for {label}: {reason}",
            title="Nothing to apply",
            severity="warning",
            timeout=8,
            markup=False,
        )

    def _publish(self, request: ApplyRequest) -> None:
        from gobtui.adapters.publish.publisher import Publisher, PublishError

        def progress(done: int, total: int) -> None:
            what = "snapshotting the source…" if done < total else "writing the fork…"
            with suppress(RuntimeError):  # the app is shutting down: nobody is watching
                self.app.call_from_thread(self._progress, what, done, total)

        publisher = Publisher(self.open_vault(), clock=self.host.config.clock)
        try:
            receipt = publisher.apply(
                request.session, request.plan, request.policy, progress, request.tune_reasons
            )
        except PublishError as error:
            self.app.post_message(PublishFailed("Apply failed", str(error), error.code.value))
            return
        except Exception as error:
            self.app.post_message(PublishFailed("Apply failed", one_line(error), "error"))
            return
        self._announce(receipt, request.summary.path)

    # --- undo --------------------------------------------------------------------------------

    def undo(self, entry: IndexEntry, project: str | None, age: str) -> bool:
        """Ask, then restore the snapshot into a new fork; False when busy."""
        from gobtui.dialogs.confirm import ConfirmScreen
        from gobtui.services.apply_flow import undo_question

        if self._refuse_while_busy():
            return False
        self.state = PublishState("waiting for confirmation")

        def answered(yes: bool | None) -> None:
            if not yes:
                self.state = None
                self.app.notify("Cancelled; nothing was written.", markup=False, timeout=3)
                return
            self._set_state(PublishState(f"restoring snapshot {entry.sha256[:12]}…"))
            self.app.run_worker(
                partial(self._restore, entry, self._board_path(entry.path)),
                thread=True,
                group="publish",
                description="Restoring a snapshot",
                exit_on_error=False,
            )

        question = undo_question(entry, project, age)
        self.app.push_screen(ConfirmScreen("Undo", question, yes="Restore"), answered)
        return True

    def _board_path(self, canonical: str) -> str:
        """The board's spelling of a snapshot's canonical path (they differ under symlinks)."""
        rows = self.host.sessions_screen.rows
        if canonical in rows:
            return canonical
        return next((p for p in rows if os.path.realpath(p) == canonical), canonical)

    def _restore(self, entry: IndexEntry, source_path: str) -> None:
        from gobtui.adapters.publish.publisher import Publisher, PublishError

        publisher = Publisher(self.open_vault(), clock=self.host.config.clock)
        row = self.host.sessions_screen.rows.get(source_path)
        try:
            receipt = publisher.undo(entry.sha256, row.summary.cwd if row is not None else None)
        except PublishError as error:
            self.app.post_message(PublishFailed("Undo failed", str(error), error.code.value))
            return
        except Exception as error:
            self.app.post_message(PublishFailed("Undo failed", one_line(error), "error"))
            return
        self._announce(receipt, source_path)

    # --- outcome -----------------------------------------------------------------------------

    def _announce(self, receipt: Receipt, source_path: str) -> None:
        """From the worker: the receipt first, then the fork's row for the board."""
        app = self.app
        app.post_message(ForkPublished(receipt, source_path))
        try:
            changes = self.host.store.update_changes([receipt.path], self.host.config.clock())
        except OSError:  # the board picks the fork up on the next scan or watch event
            return
        if changes.changed or changes.removed:
            app.post_message(SessionsChanged(changes.changed, changes.removed))

    def published(self, receipt: Receipt, source_path: str) -> None:
        self._set_state(None)
        self._receipts[source_path] = receipt
        self._receipts[receipt.source_path] = receipt
        verb = "Fork published" if receipt.kind.value == "apply" else "Snapshot restored"
        self.app.notify(
            f"{verb} — resume: {receipt.resume_text}",
            title=fmt_title(receipt),
            timeout=12,
            markup=False,
        )

    def failed(self, title: str, error: str, code: str) -> None:
        from gobtui.dialogs.error import ErrorScreen

        self._set_state(None)
        self.app.push_screen(ErrorScreen(title, error, code=code, hint="nothing was overwritten"))


def fmt_title(receipt: Receipt) -> str:
    from gobtui.view_models.format import human_bytes

    saved = receipt.bytes_before - receipt.bytes_after
    if saved > 0:
        return f"{receipt.strategy}: −{human_bytes(saved)}, the original untouched"
    return f"{receipt.strategy}: the original untouched"
