"""A background job that raises what nobody foresaw is one line in the screen that asked,
never the end of the dashboard (gobtui.screens.worker_errors): the real app under Pilot, the
failure injected where the worker calls into the adapters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gobtui.adapters.vault.vault import Vault
from gobtui.app import GobtuiApp
from gobtui.dialogs.error import ErrorScreen
from gobtui.screens.plan_preview import PlanPreviewScreen
from gobtui.screens.vault import VaultScreen
from gobtui.services.planning_state import PreviewPlanner
from tests.gobtui.pilot_helpers import select, until


def _raise(error: Exception) -> Callable[..., Any]:
    def fail(*_args: Any, **_kwargs: Any) -> Any:
        raise error

    return fail


async def test_a_vault_that_raises_is_an_error_modal_and_the_app_goes_on(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Vault, "reading", _raise(RuntimeError("disk on fire\nsecond line")))
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("v")
        await until(lambda: isinstance(app.screen, ErrorScreen), pilot)
        error = app.screen
        assert isinstance(error, ErrorScreen)
        assert (error.message, error.code) == ("disk on fire", "unexpected")
        await pilot.press("escape")
        vault = app.screen
        assert isinstance(vault, VaultScreen)
        assert vault.loaded and vault.entries == [] and vault.error == "disk on fire"
        await pilot.press("escape")
        assert app.screen is app.sessions_screen and app.is_running


async def test_a_plan_that_raises_is_the_previews_one_line(
    demo_app_factory: Callable[..., GobtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PreviewPlanner, "preview", _raise(KeyError("usage")))
    app = demo_app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await select(app, "ledgerly")
        await pilot.press("p")
        await until(lambda: isinstance(app.screen, PlanPreviewScreen), pilot)
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        await until(lambda: preview.error is not None, pilot)
        assert preview.error == "'usage'" and app.is_running
