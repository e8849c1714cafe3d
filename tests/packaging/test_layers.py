"""The layers, read from the sources: core is pure, adapters never reach up into the app, no
import runs in a circle, and everything is imported under the one installed name, gobtui."""

from __future__ import annotations

import graphlib
import sys
from pathlib import Path

import pytest

from tests.packaging.imports import REPO, imports_of, module_files

MODULES = module_files()
PURE_LIBRARIES = {"orjson", "pydantic"}
"""What core may import beside the standard library: data and encoding, no I/O of their own."""


def _owner(target: str) -> str | None:
    """The project module an import names (its longest known prefix), or None when foreign."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _graph(*, type_only: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        for _, target in imports_of(name, path, type_only=type_only):
            owner = _owner(target)
            # A package's own submodules load after it, so `from . import x` is no circle.
            if owner and owner != name and not owner.startswith(name + "."):
                edges.setdefault(name, set()).add(owner)
    return edges


def _capability(module: str) -> str:
    """gobtui.adapters.vault.fs belongs to gobtui.adapters.vault; gobtui.core.* to core."""
    parts = module.split(".")
    if parts[1:2] == ["adapters"] and len(parts) > 3:
        return ".".join(parts[:3])
    return ".".join(parts[:2]) if parts[1:2] in (["core"], ["adapters"]) else "gobtui"


@pytest.mark.parametrize("layer", ["gobtui.core", "gobtui.adapters"])
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    allowed = {"gobtui.core"} if layer == "gobtui.core" else {"gobtui.core", "gobtui.adapters"}
    found = []
    for name, path in MODULES.items():
        if not name.startswith(layer):
            continue
        for line, target in imports_of(name, path):
            top = target.split(".")[0]
            if top == "gobtui":
                if not any(target == a or target.startswith(a + ".") for a in allowed):
                    found.append(f"{path.relative_to(REPO)}:{line} {target}")
            elif layer == "gobtui.core":
                if top not in sys.stdlib_module_names | PURE_LIBRARIES | {"__future__"}:
                    found.append(f"{path.relative_to(REPO)}:{line} {target}")
            elif top in {"textual", "rich"}:
                found.append(f"{path.relative_to(REPO)}:{line} {target}")
    assert not found, found


def test_every_import_names_the_one_namespace() -> None:
    """No `import core` or `from adapters...`: those names are not installed."""
    names = {path: name for name, path in MODULES.items()}
    found = []
    for folder in ("core", "adapters", "gobtui", "tests", "bench"):
        for path in (REPO / folder).rglob("*.py"):
            if "__snapshots__" in path.parts:
                continue
            name = names.get(path) or ".".join(path.relative_to(REPO).with_suffix("").parts)
            for line, target in imports_of(name, path):
                if target.split(".")[0] in {"core", "adapters"}:
                    found.append(f"{path.relative_to(REPO)}:{line} {target}")
    assert not found, found


@pytest.mark.parametrize("type_only", [False, True], ids=["at-run-time", "type-only-included"])
def test_no_module_imports_in_a_circle(type_only: bool) -> None:
    """Not even through `if TYPE_CHECKING:`: a screen that must name the app's class to be
    typed is a screen that depends on the whole app (hosts are Protocols instead)."""
    graphlib.TopologicalSorter(_graph(type_only=type_only)).prepare()


def test_the_capabilities_import_one_way() -> None:
    """Between capability folders (adapters/providers, adapters/vault, ..., core, the app) the
    imports form no circle, type-only ones included."""
    edges: dict[str, set[str]] = {}
    for source, targets in _graph(type_only=True).items():
        for target in targets:
            if _capability(source) != _capability(target):
                edges.setdefault(_capability(source), set()).add(_capability(target))
    graphlib.TopologicalSorter(edges).prepare()
    assert "gobtui" not in set().union(*(edges.get(c, set()) for c in edges if c != "gobtui"))


def test_the_graph_is_read_from_every_module() -> None:
    """The checks above see the whole tree: each folder's modules and their relative imports."""
    assert Path(MODULES["gobtui.core.edits"]) == REPO / "core" / "edits.py"
    claude = MODULES["gobtui.adapters.providers.claude.parse"]
    assert "gobtui.core.model" in {
        t for _, t in imports_of("gobtui.adapters.providers.claude.parse", claude)
    }
    assert len([m for m in MODULES if m.startswith("gobtui.adapters.")]) > 30


APP_FLOORS = {
    "gobtui.view_models": ("gobtui.core", "gobtui.adapters", "gobtui.view_models"),
    "gobtui.services": ("gobtui.core", "gobtui.adapters", "gobtui.view_models", "gobtui.services"),
}
"""gobtui/ by role: what each folder below the app may import of gobtui (the app, its screens,
widgets and the CLI sit above them)."""


@pytest.mark.parametrize("floor", sorted(APP_FLOORS))
def test_the_apps_lower_floors_import_neither_up_nor_textual(floor: str) -> None:
    """View models and services are the app's UI-free parts: no Textual, nothing above them."""
    found = []
    for name, path in MODULES.items():
        if not name.startswith(floor + "."):
            continue
        for line, target in imports_of(name, path):
            top = target.split(".")[0]
            inside = top == "gobtui" and not target.startswith(APP_FLOORS[floor])
            if inside or top == "textual":
                found.append(f"{path.relative_to(REPO)}:{line} {target}")
    assert not found, found
