"""The reference's optional model scorers, which gobtui does not have: setting one is said.

The reference reads GOBSTOPPER_SCORER (llm, jev, apple) and GOBSTOPPER_EVAL_JUDGE; gobtui always
ranks with its deterministic heuristic. A user who set one for the reference should learn that,
once, on stderr, rather than compare two rankings they believe differ.
"""

from __future__ import annotations

from collections.abc import Mapping

from gobtui.core.sanitize import terminal_safe

SCORER_VARIABLES = ("GOBTUI_SCORER", "GOBSTOPPER_SCORER", "GOBSTOPPER_EVAL_JUDGE")
HEURISTIC_NAMES = frozenset({"", "heuristic", "deterministic", "none", "off", "0"})
SCORING_COMMANDS = frozenset({"plan", "apply", "fork", "eval", "tune", "watch", "bench", "mcp"})
"""The commands whose plans a scorer would have ranked."""


def scorer_note(environ: Mapping[str, str]) -> str | None:
    """The one stderr line for the first scorer variable naming a model scorer, else None."""
    for name in SCORER_VARIABLES:
        value = environ.get(name, "").strip()
        if value.lower() not in HEURISTIC_NAMES:
            shown = terminal_safe(value[:40])
            return (
                f"gobtui: {name}={shown}: that scorer is not available in gobtui; "
                "plans are ranked by the deterministic heuristic"
            )
    return None
