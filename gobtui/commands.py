"""Command palette: find a session by project, title or id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Provider

from core.board import BoardRow, SortKey, sort_rows

if TYPE_CHECKING:
    from gobtui.app import GobtuiApp

DISCOVER_LIMIT = 12


def _label(row: BoardRow) -> str:
    s = row.summary
    return f"{row.project} · {s.title or '(no title)'} · {s.session_id[:8]}"


class SessionCommands(Provider):
    def _rows(self) -> list[BoardRow]:
        app: GobtuiApp = self.app  # type: ignore[assignment]
        return sort_rows(app.sessions_screen.rows.values(), SortKey.ACTIVITY)

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        for row in self._rows()[:DISCOVER_LIMIT]:
            yield DiscoveryHit(
                _label(row),
                partial(self._select, row.key),
                help=f"{row.summary.provider.value} · {row.summary.model or ''}",
            )

    async def search(self, query: str) -> AsyncIterator[Hit]:
        matcher = self.matcher(query)
        for row in self._rows():
            s = row.summary
            haystack = f"{_label(row)} {s.session_id} {s.cwd or ''}"
            score = matcher.match(haystack)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(_label(row)),
                    partial(self._select, row.key),
                    help=f"{s.provider.value} · {s.model or ''} · go to session",
                )

    def _select(self, path: str) -> None:
        app: GobtuiApp = self.app  # type: ignore[assignment]
        app.sessions_screen.select_session(path)
