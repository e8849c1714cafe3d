"""The built wheel: what it holds, and that the dashboard starts from it with its styles.

The wheel is built from a copy of this checkout (pip, isolated, as `pip install .` and pipx
build it: a copy, so no build/ folder left by an earlier build can add stale files) and unpacked into a temporary folder that a fresh interpreter imports gobtui from, in a
folder far from the checkout, so nothing of the checkout's tree can stand in for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNBUILT = shutil.ignore_patterns(
    ".git", ".venv", ".e2e", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
    ".hypothesis", ".corpus", "results", "__snapshots__", "screenshots",
)  # fmt: skip
"""What a build never reads (and the big folders a checkout gathers)."""

STARTS = """
import asyncio, pathlib, sys
import gobtui.app
from gobtui.app import make_app
from gobtui.services.run_settings import AppConfig

assert not pathlib.Path(gobtui.app.__file__).is_relative_to(sys.argv[1]), gobtui.app.__file__

async def main():
    config = AppConfig(demo=True, demo_root=pathlib.Path(sys.argv[2]), demo_ticks=False,
                       watch=False, use_cache=False, clock=lambda: 1_795_000_000.0)
    app = make_app(config)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.first_paint.wait()
        await pilot.pause()
        board = app.screen.query_one("DataTable")
        print("rows", board.row_count, "css", app.CSS_PATH, app.stylesheet.rules != [])

asyncio.run(main())
"""


def _packages_on_disk() -> set[str]:
    """Every folder with an __init__.py, named as installed: core/ and adapters/ inside gobtui."""
    found = set()
    for top in ("core", "adapters", "styles", "gobtui"):
        for init in (REPO / top).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO).parts
            found.add(".".join(parts if top == "gobtui" else ("gobtui", *parts)))
    return found


def test_the_top_level_folders_are_linked_into_the_package() -> None:
    """The checkout imports gobtui.core from core/ itself, as the wheel installs it."""
    for name in ("core", "adapters", "styles"):
        link = REPO / "gobtui" / name
        assert link.is_symlink() and link.resolve() == REPO / name, link


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"
    shutil.copytree(REPO, source, ignore=UNBUILT, symlinks=True)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=600, cwd=out,
    )  # fmt: skip
    if built.returncode != 0 and "No matching distribution" in built.stderr:
        pytest.skip(f"pip could not fetch the build backend: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr[-2000:]
    assert "warning" not in built.stderr.lower(), built.stderr[-2000:]
    [path] = out.glob("gobtui-*.whl")
    return path


def test_the_wheel_holds_every_package_the_styles_and_no_tests(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    # setuptools' finder (pyproject) follows the links: every package of the tree, none listed
    packaged = {
        n.removesuffix("/__init__.py").replace("/", ".")
        for n in names
        if n.endswith("/__init__.py")
    }
    assert packaged == _packages_on_disk()
    assert "gobtui/styles/app.tcss" in names
    assert "gobtui/app/__init__.py" in names and "gobtui/core/model.py" in names
    assert "gobtui/adapters/providers/claude/parse.py" in names
    # One namespace: nothing but gobtui and its metadata at the top of site-packages.
    tops = {n.split("/")[0] for n in names}
    assert tops == {"gobtui", next(t for t in tops if t.endswith(".dist-info"))}, tops


def test_the_dashboard_starts_from_the_wheel_with_its_styles(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOBTUI_")}
    env.update(
        PYTHONPATH=str(site), GOBTUI_DATA_DIR=str(tmp_path / "data"),
        GOBTUI_CACHE_DIR=str(tmp_path / "cache"), GOBTUI_CONFIG=str(tmp_path / "none.toml"),
    )  # fmt: skip
    ran = subprocess.run(
        [sys.executable, "-c", STARTS, str(REPO), str(tmp_path / "demo")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    words = ran.stdout.split()
    assert words[0] == "rows" and int(words[1]) > 0, ran.stdout
    assert Path(words[3]) == site / "gobtui" / "styles" / "app.tcss" and words[4] == "True"


def test_a_checkout_without_symlinks_says_so(tmp_path: Path) -> None:
    """A clone whose links were written as files (core.symlinks=false) fails with a sentence
    naming the cause, not with a puzzling import error."""
    package = tmp_path / "gobtui"
    package.mkdir()
    shutil.copy(REPO / "gobtui" / "__init__.py", package / "__init__.py")
    for name in ("core", "adapters", "styles"):
        (package / name).write_text(f"../{name}")  # what git writes for a link it cannot make
    ran = subprocess.run(
        [sys.executable, "-c", "import gobtui.core.model"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert ran.returncode != 0
    last = ran.stderr.strip().splitlines()[-1]
    assert "is a file, not a link to ../core" in last and "core.symlinks=true" in last
