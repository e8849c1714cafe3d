"""Theme colours as Rich styles, so cells drawn as Rich Text follow every theme (ANSI ones too)."""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from rich.style import Style
from textual.app import App
from textual.color import Color

from core.board import Band


@dataclass(frozen=True)
class BandStyles:
    ok: Style
    warn: Style
    alert: Style
    muted: Style
    accent: Style

    def for_band(self, band: Band) -> Style:
        return {Band.OK: self.ok, Band.WARN: self.warn, Band.ALERT: self.alert}.get(
            band, self.muted
        )


def _style(variables: dict[str, str], name: str, fallback: str) -> Style:
    value = variables.get(name, fallback)
    try:
        return Style(color=Color.parse(value).rich_color)
    except Exception:  # an unparsable theme value must not break drawing
        return Style(color=fallback)


_BY_APP: WeakKeyDictionary[App[object], tuple[str, BandStyles]] = WeakKeyDictionary()
"""The styles of each app's current theme: working out the theme's variables takes ~4 ms,
and the board asks every second."""


def band_styles(app: App[object]) -> BandStyles:
    known = _BY_APP.get(app)
    if known is not None and known[0] == app.theme:
        return known[1]
    variables = app.get_css_variables()
    styles = BandStyles(
        ok=_style(variables, "success", "green"),
        warn=_style(variables, "warning", "yellow"),
        alert=_style(variables, "error", "red"),
        muted=_style(variables, "text-muted", "bright_black"),
        accent=_style(variables, "accent", "cyan"),
    )
    _BY_APP[app] = (app.theme, styles)
    return styles
