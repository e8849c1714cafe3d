"""The provider registry: the one place that picks a provider's package by Provider
(each package's face: adapters.providers.interface.ProviderPackage)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...core.conversation import Entry, Record
from ...core.model import Provider, Transcript, TranscriptItem
from . import claude, codex
from .reader import TailState, cursor_of_fd

if TYPE_CHECKING:  # the package contract, for annotations (it names the rewriting stack)
    from .interface import ProviderPackage

_PACKAGES: dict[Provider, ProviderPackage] = {Provider.CLAUDE: claude, Provider.CODEX: codex}


def provider_of(provider: Provider) -> ProviderPackage:
    return _PACKAGES[provider]


def state_class(provider: Provider) -> type[TailState]:
    return provider_of(provider).state_class()


def session_id_of(provider: Provider, fd: int, path: str) -> str:
    """The id the session in this file goes by everywhere in gobtui (its summary's: what its
    records say, else its file name), read from `fd` as the board reads a file cold."""
    make = state_class(provider)
    return cursor_of_fd(fd, path, provider, lambda p: make(p)).summary().session_id


def parse_transcript(provider: Provider, path: str) -> Transcript:
    """A full parse (every line) into items, for planning and the oracle."""
    return provider_of(provider).parse_transcript(path)


def parse_data(
    provider: Provider, path: str, data: bytes, mtime_ns: int, *, part: bool
) -> Transcript | None:
    """parse_transcript() of `path`'s bytes, read from `data`: the whole file, or (`part`) a
    live part's text (adapters.providers.live_part), None when its live branch reaches back
    before it (read the whole file then)."""
    return provider_of(provider).parse_data(path, data, mtime_ns, part=part)


def sniff_record(record: dict[str, Any]) -> Provider | None:
    """Which provider wrote this record, judged by content, not file name."""
    if "payload" in record and isinstance(record.get("type"), str):
        return Provider.CODEX
    if "sessionId" in record or "session_id" in record or "parentUuid" in record:
        return Provider.CLAUDE
    if record.get("type") in {"user", "assistant", "summary", "file-history-snapshot"}:
        return Provider.CLAUDE
    return None


def build_conversation(
    provider: Provider, pairs: Iterable[tuple[TranscriptItem, Record]]
) -> list[Entry]:
    """The conversation entries of (item, record) pairs in file order."""
    builder = provider_of(provider).conversation_builder()
    for item, record in pairs:
        builder.add(item, record)
    return builder.entries
