"""The layers, read from the sources: core is pure, adapters never reach up into the app, no
import runs in a circle, and everything is imported under the one installed name, gobtui."""

from __future__ import annotations

import graphlib
import sys
from collections.abc import Mapping
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


BELOW_THE_APP = ("gobtui", "gobtui.core", "gobtui.adapters")
"""What every floor of the app may import: the package's own __init__ (its version), core and
adapters (whose own layering the tests above check)."""
APP_FLOORS: dict[str, tuple[str, ...]] = {
    "gobtui.view_models": (),
    "gobtui.services": ("gobtui.view_models",),
    "gobtui.demo": (),
    "gobtui.widgets": ("gobtui.view_models", "gobtui.services"),
    "gobtui.dialogs": ("gobtui.view_models", "gobtui.services", "gobtui.widgets"),
    "gobtui.controllers": (
        "gobtui.view_models",
        "gobtui.services",
        "gobtui.widgets",
        "gobtui.dialogs",
    ),
    "gobtui.screens": (
        "gobtui.view_models",
        "gobtui.services",
        "gobtui.widgets",
        "gobtui.dialogs",
        "gobtui.controllers",
    ),
    "gobtui.app": (
        "gobtui.view_models",
        "gobtui.services",
        "gobtui.demo",
        "gobtui.widgets",
        "gobtui.dialogs",
        "gobtui.controllers",
        "gobtui.screens",
    ),
    "gobtui.cli": ("gobtui.view_models", "gobtui.services", "gobtui.demo", "gobtui.app"),
}
"""gobtui/ by role, bottom up: each floor and the floors below it that it may import (besides
itself and BELOW_THE_APP). The UI-free view models and services; the demo home; Textual's
widgets and dialogs; the controllers that drive the app; the screens; the app; and the CLI,
beside the app, which reaches only the UI-free floors and the app (to launch it)."""
TEXTUAL_FREE = ("gobtui.view_models", "gobtui.services", "gobtui.demo")
"""Floors the CLI, the MCP server and tests use without a terminal: no Textual."""


def _floor(module: str) -> str:
    """gobtui.screens.vault -> gobtui.screens; gobtui.app -> gobtui.app; gobtui -> gobtui."""
    return ".".join(module.split(".")[:2])


def _app_modules() -> dict[str, Path]:
    return {n: p for n, p in MODULES.items() if _floor(n) not in BELOW_THE_APP}


def back_up_arrows(modules: Mapping[str, Path] | None = None) -> list[str]:
    """Each import (type-only ones included) from a floor to one it may not reach."""
    found = []
    for name, path in (_app_modules() if modules is None else modules).items():
        floor = _floor(name)
        allowed = (floor, *BELOW_THE_APP, *APP_FLOORS.get(floor, ()))
        for line, target in imports_of(name, path):
            if target.split(".")[0] == "gobtui" and _floor(target) not in allowed:
                found.append(f"{name}:{line} {floor} -> {target}")
    return found


def floor_graph() -> dict[str, set[str]]:
    """Floor -> the other floors of the app it imports (type-only imports included)."""
    edges: dict[str, set[str]] = {}
    for name, path in _app_modules().items():
        for _, target in imports_of(name, path):
            owner = _owner(target)
            if owner and _floor(owner) not in (_floor(name), *BELOW_THE_APP):
                edges.setdefault(_floor(name), set()).add(_floor(owner))
    return edges


def test_every_module_of_the_app_sits_on_a_floor() -> None:
    """A new folder or loose module at the top of gobtui/ is given its place here first."""
    assert {_floor(n) for n in _app_modules()} == set(APP_FLOORS)


def test_the_floors_are_stated_bottom_up() -> None:
    """A floor may name only floors stated before it, so the allowed imports cannot circle."""
    order = list(APP_FLOORS)
    for index, (floor, below) in enumerate(APP_FLOORS.items()):
        assert set(below) <= set(order[:index]), floor


def test_no_floor_of_the_app_imports_one_above_it() -> None:
    found = back_up_arrows()
    assert not found, found


def test_the_floors_of_the_app_import_in_no_circle() -> None:
    graphlib.TopologicalSorter(floor_graph()).prepare()


@pytest.mark.parametrize("floor", TEXTUAL_FREE)
def test_the_ui_free_floors_import_no_textual(floor: str) -> None:
    found = [
        f"{path.relative_to(REPO)}:{line} {target}"
        for name, path in MODULES.items()
        if _floor(name) == floor
        for line, target in imports_of(name, path)
        if target.split(".")[0] == "textual"
    ]
    assert not found, found


def test_an_import_up_a_floor_is_caught(tmp_path: Path) -> None:
    """The check reads real imports, a type-only one too, and relative ones resolved."""
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "from typing import TYPE_CHECKING\n"
        "from ..view_models import format\n"
        "from ..controllers.messages import FillsReady\n"
        "if TYPE_CHECKING:\n"
        "    from gobtui.app import GobtuiApp\n"
    )
    found = back_up_arrows({"gobtui.services.sneaky": sneaky})
    assert [f.rpartition(" -> ")[2] for f in found] == ["gobtui.controllers.messages", "gobtui.app"]
    assert "gobtui.screens" in floor_graph()["gobtui.app"]
