"""The one line an interrupted run ends with, said once however many ctrl+c come.

Import-light (the console script's entry imports it before anything heavy): os, sys and
contextlib only, all loaded by the interpreter's start-up already.
"""

from __future__ import annotations

import os
import sys
from contextlib import suppress

INTERRUPTED = 130
"""gobtui.cli.exits.Exit.INTERRUPTED (not imported: this module stays import-light)."""
LINE = b"gobtui: interrupted\n"

_said = False


def said() -> bool:
    return _said


def say_interrupted() -> int:
    """Write the line (once); 130."""
    global _said
    if not _said:
        _said = True  # before the write: a ctrl+c that lands after it finds the line said
        with suppress(OSError, ValueError):
            sys.stderr.flush()  # what the command wrote before goes first
        with suppress(OSError):
            os.write(2, LINE)  # unbuffered: no stream state can hold it back
    return INTERRUPTED
