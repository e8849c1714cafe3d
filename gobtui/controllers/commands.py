"""Command palette: find a session by project, title or id; every binding of the screen in
front; the plan preview's strategies; the actions a screen lists in PALETTE_ACTIONS."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Matcher, Provider
from textual.content import Content
from textual.markup import escape

from gobtui.core.board import BoardRow, SortKey, sort_rows
from gobtui.core.sanitize import one_line

DISCOVER_LIMIT = 12


class _Board(Protocol):
    @property
    def rows(self) -> Mapping[str, BoardRow]: ...
    def select_session(self, path: str) -> None: ...


class _BoardHost(Protocol):
    """The gobtui app as the session commands see it (they never name its class)."""

    @property
    def sessions_screen(self) -> _Board: ...


def _label(row: BoardRow) -> str:
    s = row.summary
    return one_line(f"{row.project} · {s.title or '(no title)'} · {s.session_id[:8]}")


def _highlighted(matcher: Matcher, text: str) -> Content:
    """`text` as it is, its fuzzy match highlighted: Matcher.highlight would read it as
    markup, and a title such as "[REDACTED len=1]" is not."""
    content = Content(text)
    score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets if score else ():
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class SessionCommands(Provider):
    def _board(self) -> _Board:
        return cast(_BoardHost, self.app).sessions_screen

    def _rows(self) -> list[BoardRow]:
        return sort_rows(self._board().rows.values(), SortKey.ACTIVITY)

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        for row in self._rows()[:DISCOVER_LIMIT]:
            yield DiscoveryHit(
                Content(_label(row)),  # plain text: a title is not markup
                partial(self._select, row.key),
                help=escape(one_line(f"{row.summary.provider.value} · {row.summary.model or ''}")),
                text=_label(row),
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
                    _highlighted(matcher, _label(row)),
                    partial(self._select, row.key),
                    text=_label(row),
                    help=escape(one_line(f"{s.provider.value} · {s.model or ''} · go to session")),
                )

    def _select(self, path: str) -> None:
        self._board().select_session(path)


class ActionCommands(Provider):
    """A provider over a fixed list of (label, callback, help) built by `_commands`."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        raise NotImplementedError

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        for label, callback, help_text in self._commands():
            yield DiscoveryHit(Content(label), callback, text=label, help=escape(help_text))

    async def search(self, query: str) -> AsyncIterator[Hit]:
        matcher = self.matcher(query)
        for label, callback, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                yield Hit(
                    score,
                    _highlighted(matcher, label),
                    callback,
                    text=label,
                    help=escape(help_text),
                )


class PlanCommands(ActionCommands):
    """On the plan preview: switch strategy by name, toggle the diff mode or the trigger."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from gobtui.services.planning_state import STRATEGY_IDS

        screen = self.screen
        found: list[tuple[str, Callable[[], object], str]] = []
        set_strategy = getattr(screen, "set_strategy", None)
        if set_strategy is not None:
            for name in STRATEGY_IDS:
                found.append(
                    (f"Strategy: {name}", partial(set_strategy, name), "Plan with this strategy")
                )
        return found  # (its keys are in the palette as bindings: BindingCommands)


EDGE_KEYS = (".first", ".last", ".down", ".up")
"""Cursor bindings: moving through rows is no command."""


class BindingCommands(ActionCommands):
    """Every binding of the screen in front (its own, its focused widget's, the app's): the
    palette is built from the bindings, so its words and keys cannot drift from them."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        found: list[tuple[str, Callable[[], object], str]] = []
        seen: set[str] = set()
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if binding.id is None or binding.id.endswith(EDGE_KEYS) or binding.action in seen:
                continue
            label = one_line(binding.tooltip or binding.description)
            if not label or not active.enabled:
                continue
            seen.add(binding.action)
            shown = self.app.get_key_display(binding) or key
            found.append(
                (label, partial(self.app.run_action, binding.action, active.node), f"key: {shown}")
            )
        return found


class ScreenCommands(ActionCommands):
    """The current screen's PALETTE_ACTIONS: (label, action name, help) triples."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        screen = self.screen
        found: list[tuple[str, Callable[[], object], str]] = []
        for label, action, help_text in getattr(screen, "PALETTE_ACTIONS", []):
            method = getattr(screen, f"action_{action}", None)
            if method is not None:
                found.append((label, method, help_text))
        return found
