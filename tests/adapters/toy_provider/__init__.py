"""A third provider, for the tests: one package of the contract's shape
(gobtui.adapters.providers.interface.ProviderPackage) over a tiny JSONL format of its own,
put in with one line: `registry.register(toy_provider)`.

Its records: {"toy": "session", "id", "cwd", "model", "window"} first, then "say" (who,
text), "call" (call, name, args), "result" (call, output), "usage" (context) and "compact"
(summary: the context starts again there)."""

from __future__ import annotations

import re
from pathlib import Path

from gobtui.adapters.files.jsonl import Record
from gobtui.adapters.providers.interface import RewriteHalf, TailState
from gobtui.adapters.providers.record_text import RecordText
from gobtui.core.conversation import EntryWriter
from gobtui.core.limits import CODEX_AUTOCOMPACT_SHARE
from gobtui.core.model import Provider, ProviderTraits, Transcript
from gobtui.core.verify.lines import RecordChecks

PROVIDER = Provider.extra(
    "toy",
    ProviderTraits(
        label="Toy",
        mark="T",
        resume="toy resume {session_id}",
        thinking=False,
        cache_edits=False,
        cached_input_apart=True,
        resends_reasoning=False,
        default_window=100_000,
        window_floor=False,
        compact_reserve=0,
        compact_share=CODEX_AUTOCOMPACT_SHARE,
        default_slope=1.0,
    ),
)
BOUNDARY_MARKER = b'"compact"'
SESSION_DIRS = ("toys",)
SESSION_MAX_DEPTH = 2


def file_layout(_parts: tuple[str, ...]) -> tuple[bool, tuple[str, ...] | None, bool]:
    return False, None, True


SNIFF_KEYS = (b'"toy"',)
CARD_KEY = "card"


def state_class() -> type[TailState]:
    from tests.adapters.toy_provider.state import ToyState

    return ToyState


def parse_transcript(path: str) -> Transcript:
    from tests.adapters.toy_provider.parse import parse_file

    return parse_file(path)


def parse_data(path: str, data: bytes, mtime_ns: int, *, part: bool) -> Transcript | None:
    from tests.adapters.toy_provider.parse import parse_bytes

    return parse_bytes(path, data, mtime_ns)  # one chain: a live part never reaches back


def is_boundary(record: Record) -> bool:
    return record.get("toy") == "compact"


def live_head(data: bytes) -> bytes:
    """The session line, which names the session a live part belongs to."""
    first = data[: data.find(b"\n") + 1]
    return first if b'"session"' in first else b""


def rewrite_half() -> RewriteHalf:
    from tests.adapters.toy_provider import rewrite

    return rewrite


def card_text(record: Record) -> str | None:
    text = record.get("text")
    if record.get("toy") == "say" and record.get(CARD_KEY) is True and type(text) is str:
        return text
    return None


def conversation_builder() -> EntryWriter:
    from tests.adapters.toy_provider.conversation import ToyConversation

    return ToyConversation()


def verify_checks() -> RecordChecks:
    from tests.adapters.toy_provider.verify import checks

    return checks(PROVIDER)


def record_text() -> RecordText:
    """Its text is in `text` and `output`; a call's input is its `args`."""
    return RecordText(
        text_keys=frozenset({"text", "output", "summary"}),
        labels={},
        role_types=frozenset(),
        quiet_keys=frozenset({"toy", "id", "call"}),
        tool_input=lambda node, key, value: (
            (str(node.get("name")), value) if node.get("toy") == "call" and key == "args" else None
        ),
    )


def owns(record: Record) -> bool:
    return type(record.get("toy")) is str


def record_type(record: Record) -> tuple[str, str | None] | None:
    kind = record.get("toy")
    return (kind, None) if isinstance(kind, str) and kind else None


def session_identity(record: Record) -> tuple[str, bool] | None:
    sid = record.get("id")
    return (sid, True) if record.get("toy") == "session" and isinstance(sid, str) and sid else None


_NAME = re.compile(r"[^A-Za-z0-9_-]")


def fork_path(source: Path, session_id: str, _now: float) -> Path:
    return source.with_name(f"{_NAME.sub('_', session_id)}.jsonl")
