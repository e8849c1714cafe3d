"""Theme colours as Rich styles, so cells drawn as Rich Text follow every theme (ANSI ones too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from rich.style import Style
from textual.app import App
from textual.color import Color

from gobtui.core.board import Band


@dataclass(frozen=True)
class BandStyles:
    ok: Style
    warn: Style
    alert: Style
    muted: Style
    accent: Style
    primary: Style
    marker: Style
    """The trigger's mark on a bar: the accent, unless a band shares it (ansi-dark's accent is
    its green), then the text colour, bold."""

    def for_band(self, band: Band) -> Style:
        return {Band.OK: self.ok, Band.WARN: self.warn, Band.ALERT: self.alert}.get(
            band, self.muted
        )


def _style(variables: dict[str, str], name: str, fallback: str) -> Style:
    value = variables.get(name, fallback)
    if value.startswith("ansi_"):
        # An ANSI theme's colour is the terminal's own ("ansi_yellow": its yellow), not the
        # RGB Textual approximates it with.
        try:
            return Style(color=value.removeprefix("ansi_"))
        except Exception:
            pass
    try:
        return Style(color=Color.parse(value).rich_color)
    except Exception:  # an unparsable theme value must not break drawing
        return Style(color=fallback)


_BY_APP: WeakKeyDictionary[App[Any], tuple[str, BandStyles]] = WeakKeyDictionary()
"""The styles of each app's current theme, worked out once a theme: the board asks for them
every second."""


# App[Any]: App is invariant in its return type; widgets see App[object], callers GobtuiApp.
def band_styles(app: App[Any]) -> BandStyles:
    known = _BY_APP.get(app)
    if known is not None and known[0] == app.theme:
        return known[1]
    variables = app.get_css_variables()
    ok = _style(variables, "success", "green")
    warn = _style(variables, "warning", "yellow")
    accent = _style(variables, "accent", "cyan")
    styles = BandStyles(
        ok=ok,
        warn=warn,
        alert=_style(variables, "error", "red"),
        muted=_style(variables, "text-muted", "bright_black"),
        accent=accent,
        primary=_style(variables, "primary", "blue"),
        marker=Style(bold=True) if accent.color in (ok.color, warn.color) else accent,
    )
    _BY_APP[app] = (app.theme, styles)
    return styles
