"""The receipts of a data dir as they come, for a board left open (gobtui.app)."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.paths import data_dir

if TYPE_CHECKING:  # the receipt model (and the plan model under it) loads once one is read
    from ...core.receipt import Receipt


class ReceiptFeed:
    """The receipts of a data dir as they come, for a board left open: each receipt file is
    read once per change, and a pass costs one stat of the folder when nothing moved.
    Intents count too: an intent names its fork before the fork is written, so the fork is
    labelled from the moment it appears (its path is the proof it was published)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root
        self._folder_stamp: int | None = None
        self._seen: dict[str, tuple[int, int]] = {}

    def new(self) -> list[Receipt]:
        """The receipts written or rewritten since the last call, oldest first."""
        directory = (self._root or data_dir()) / "operations"
        try:
            stamp = os.stat(directory).st_mtime_ns
        except OSError:
            return []
        if stamp == self._folder_stamp:
            return []
        self._folder_stamp = stamp
        found: list[Receipt] = []
        from .operations import PublishError, read_receipt

        for path in sorted(directory.glob("*.json")):
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            mark = (st.st_mtime_ns, st.st_size)
            if self._seen.get(path.name) == mark:
                continue
            self._seen[path.name] = mark
            with suppress(PublishError, OSError):
                receipt = read_receipt(path)
                if receipt is not None:
                    found.append(receipt)
        return sorted(found, key=lambda receipt: receipt.created_ts)
