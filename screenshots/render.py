"""`make screenshots`: the README pictures, from the frozen demo home (the snapshot tests' data)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from gobtui.app import make_app
from gobtui.services.run_settings import AppConfig

FROZEN_NOW = 1_795_000_000.0
SHOTS: list[tuple[str, tuple[int, int], tuple[str, ...]]] = [
    ("sessions", (120, 36), ()),
    ("sessions-80x24", (80, 24), ()),
    ("sessions-by-occupancy", (120, 36), ("s", "down")),
    ("help", (80, 24), ("question_mark",)),
]


async def shoot(
    out: Path, name: str, size: tuple[int, int], keys: tuple[str, ...], home: Path
) -> Path:
    config = AppConfig(
        demo=True,
        demo_root=home / "demo",
        clock=lambda: FROZEN_NOW,
        watch=False,
        demo_ticks=False,
        use_cache=False,
        max_age_secs=None,
    )
    app = make_app(config)
    async with app.run_test(size=size) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=60)
        await asyncio.wait_for(app.history_complete.wait(), timeout=60)
        await pilot.press(*keys)
        await pilot.pause()
        path = out / f"{name}.svg"
        path.write_text(app.export_screenshot(title="gobtui"), encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gobtui-shots-") as tmp:
        os.environ["HOME"] = tmp  # paths show as ~/demo/..., whatever the folder
        for name, size, keys in SHOTS:
            print(asyncio.run(shoot(out, name, size, keys, Path(tmp))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
