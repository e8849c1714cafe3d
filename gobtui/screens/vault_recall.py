"""`r` in the vault: the state cards every snapshot holds, searched by words.

Empty query: every card, newest first. A query ranks cards by case-insensitive hits over all
their fields. Each result shows the card's goal and summary and the snapshot it comes from;
enter opens that snapshot's records at the card's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from gobtui.adapters.vault.recovery import recall
from gobtui.controllers.messages import CardsRecalled, VaultFailed
from gobtui.controllers.publishing import publishing_of
from gobtui.core.limits import VAULT_VIEW_RECALL_LIMIT
from gobtui.core.record_number import shown
from gobtui.core.vault.errors import VaultError
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import RecallHit, RecallResult
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.help import RECALL_LEGEND
from gobtui.screens.worker_errors import UNEXPECTED_CODE, WorkerErrors, screen_work
from gobtui.view_models import format as fmt
from gobtui.view_models.vault_rows import age
from gobtui.widgets.palette import BandStyles, band_styles
from gobtui.widgets.record_pairs import clean


class RecallScreen(WorkerErrors, Screen[None]):
    AUTO_FOCUS = "#recall-query"
    HELP_LEGEND = RECALL_LEGEND
    HELP_LEGEND_TITLE = "Reading the cards"
    BINDINGS = [
        Binding("escape", "close", "Back", tooltip="Back to the vault", id="recall.close"),
        Binding(
            "slash",
            "query",
            "Query",
            tooltip="Back to the query: new words, enter to recall again",
            id="recall.query",
        ),
        Binding(
            "down",
            "results",
            "Results",
            show=False,
            tooltip="From the query to the results",
            id="recall.results",
        ),
    ]

    def __init__(
        self,
        clock: Callable[[], float],
        entries: list[IndexEntry],
        projects: Mapping[str, str],
    ) -> None:
        super().__init__()
        self.clock = clock
        self.entries = {e.sha256: e for e in reversed(entries)}  # the newest entry per id wins
        self.projects = projects
        self.result: RecallResult | None = None
        self.error: str | None = None
        self.query_text: str | None = None
        self._focus_results = False
        self._request = 0

    def compose(self) -> ComposeResult:
        yield Static(id="recall-title")
        yield Input(
            placeholder="recall: words of a goal, file, error… (enter)",
            id="recall-query",
            compact=True,
        )
        yield OptionList(id="recall-results")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.call_after_refresh(self._run, None)  # `loading` needs the list mounted

    def _run(self, query: str | None) -> None:
        self._request += 1
        self.query_text = query
        self.result = None
        self.query_one(OptionList).loading = True
        self._render_title()
        self._recall(self._request, query)

    @screen_work("recall")
    def _recall(self, request: int, query: str | None) -> None:
        try:
            vault = publishing_of(self.app).open_vault()
            result = recall(vault, query, VAULT_VIEW_RECALL_LIMIT)
        except VaultError as error:
            self.post_message(VaultFailed(request, "recall", str(error), error.code, error.damaged))
            return
        self.post_message(CardsRecalled(request, result))

    @on(CardsRecalled)
    def _recalled(self, message: CardsRecalled) -> None:
        if message.request != self._request:
            return
        self.result, self.error = message.result, None
        options = self.query_one(OptionList)
        options.loading = False
        options.clear_options()
        styles = band_styles(self.app)
        options.add_options(
            Option(self._card_text(hit, styles), id=str(k))
            for k, hit in enumerate(message.result.results)
        )
        if options.option_count:
            options.highlighted = 0
            if self._focus_results:  # a submitted query moves on to its results
                options.focus()  # (the title follows the focus: on_descendant_focus)
        self._focus_results = False
        self._render_title()

    def on_descendant_focus(self) -> None:
        """The title's `/ new query` says where the focus is: it follows it (a focus moves
        after the refresh that asked for it, later still on a loaded machine)."""
        if self.is_mounted:
            self._render_title()

    @on(VaultFailed)
    def _failed(self, message: VaultFailed) -> None:
        if message.request != self._request:
            return
        self.error = message.error
        options = self.query_one(OptionList)
        options.loading = False
        options.clear_options()  # never a partial list
        self._render_title()
        title = "The vault cannot be read" if message.damaged else "Cannot recall"
        self.app.push_screen(ErrorScreen(title, message.error, code=message.code))

    def _card_text(self, hit: RecallHit, styles: BandStyles) -> Text:
        card = hit.card
        entry = self.entries.get(hit.snapshot_sha256)
        who = self.projects.get(hit.path) or self.projects.get(hit.session_id)
        label = clean(entry.strategy) if entry is not None and entry.strategy else "snapshot"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{who or fmt.short_id(hit.session_id)}", style="bold")
        text.append(f" · {label} {hit.snapshot_sha256[:8]} · {age(self.clock(), hit.ts)}")
        text.append(f" · record {shown(hit.record_index)}")
        if hit.hits:
            text.append(f" · {fmt.plural(hit.hits, 'hit')}", styles.accent)
        for name, value in (("goal", card.goal), ("summary", card.summary or card.current_work)):
            if value:
                text.append(f"\n  {name}: ", styles.muted)
                text.append(clean(value))
        if card.files_touched:
            text.append("\n  files: ", styles.muted)
            text.append(clean(", ".join(card.files_touched[:4])))
        return text

    def _render_title(self) -> None:
        styles = band_styles(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("RECALL ", style="reverse bold")
        query = f"“{fmt.ellipsize(self.query_text, 24)}”" if self.query_text else "every card"
        text.append(f" {query}", style="bold")
        if self.error is not None:
            text.append(f" · cannot recall: {self.error}", styles.alert)
        elif self.result is None:
            text.append(" · reading every snapshot…", styles.muted)
        else:
            r = self.result
            cards = fmt.plural(r.cards_matched, "card")
            text.append(f" · {cards} in {fmt.plural(r.snapshots_scanned, 'snapshot')}")
            if r.truncated:
                text.append(f" (best {len(r.results)} shown)")
            if not r.results:
                text.append(" · none (cards live in forks)", styles.muted)
            if self.focused is not self.query_one("#recall-query", Input):
                text.append(" · / new query", styles.muted)
        self.query_one("#recall-title", Static).update(text)

    @on(Input.Submitted, "#recall-query")
    def _submitted(self, event: Input.Submitted) -> None:
        self._focus_results = True  # once they arrive: the list cannot take focus while loading
        self._run(event.value.strip() or None)

    def action_results(self) -> None:
        self.query_one(OptionList).focus()

    def action_query(self) -> None:
        box = self.query_one("#recall-query", Input)
        self.set_focus(box)  # now: the words typed right after `/` must reach the box
        box.select_all()

    @on(OptionList.OptionSelected, "#recall-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        from gobtui.screens.vault_records import VaultRecordsScreen

        if self.result is None or event.option.id is None:
            return
        hit = self.result.results[int(event.option.id)]
        entry = self.entries.get(hit.snapshot_sha256)
        if entry is None:
            self.notify("That snapshot is no longer in the index (reload the vault).")
            return
        project = self.projects.get(hit.path) or self.projects.get(hit.session_id)
        self.app.push_screen(
            VaultRecordsScreen(entry, project, self.clock, record=hit.record_index)
        )

    def action_close(self) -> None:
        self.dismiss(None)

    def worker_failed(self, group: str, message: str) -> None:
        what = {"recall": "recall"}.get(group, group)
        self.post_message(VaultFailed(self._request, what, message, UNEXPECTED_CODE, False))
