"""Keys every table of rows shares: home and end go to the first and the last row.

DataTable binds them to moving between columns; in our tables the cursor is a whole row, so
they did nothing there.
"""

from __future__ import annotations

from textual.binding import Binding


def row_edge_bindings(scope: str) -> list[Binding]:
    """home and end for a DataTable of rows, with ids `<scope>.first` and `<scope>.last`."""
    return [
        Binding("home", "scroll_top", "First", show=False, id=f"{scope}.first"),
        Binding("end", "scroll_bottom", "Last", show=False, id=f"{scope}.last"),
    ]
