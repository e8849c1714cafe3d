"""The text a fork puts where it cut something out: apart from the plan models, as the
parsers weigh stubs on every read (and a `detect` loads no models)."""

from __future__ import annotations

DEFAULT_STUB = "[output elided by gobtui: {bytes} bytes]"
INPUT_STUB = "[finished edit elided by gobtui: {bytes} bytes; the file holds the result]"
"""What replaces the content of a finished edit's input (TranscriptItem.elides_input); the
call's file path stays beside it (a patch keeps its file lines)."""
