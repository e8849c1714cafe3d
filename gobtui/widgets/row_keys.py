"""Keys every table of rows shares: home/g and end/G go to the first and the last row, j and
k move down and up (as in less and vim).

DataTable binds home and end to moving between columns; in our tables the cursor is a whole
row, so they did nothing there.
"""

from __future__ import annotations

from textual.binding import Binding


def row_edge_bindings(scope: str) -> list[Binding]:
    """For a DataTable of rows, with ids `<scope>.first`, `.last`, `.down` and `.up`."""
    return [
        Binding("home,g", "scroll_top", "First", show=False, id=f"{scope}.first"),
        Binding("end,G", "scroll_bottom", "Last", show=False, id=f"{scope}.last"),
        Binding("j", "cursor_down", "Down", show=False, id=f"{scope}.down"),
        Binding("k", "cursor_up", "Up", show=False, id=f"{scope}.up"),
    ]
