"""The provider registry: the one place that picks a provider's package by Provider
(each package's face: adapters.providers.interface.ProviderPackage)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from ...core.conversation import Entry, Record
from ...core.model import Provider, Transcript, TranscriptItem
from . import claude, codex
from .interface import TailState
from .reader import cursor_of_fd
from .record_text import RecordText, merged

if TYPE_CHECKING:  # the package contract, for annotations (it names the rewriting stack)
    from ...core.verify import RecordChecks
    from .interface import ProviderPackage

# Checked, not cast: mypy holds each package module to ProviderPackage here. The order is the
# order sniff_record asks them in (Codex's shape is the narrower: a Claude-looking key inside
# a rollout line does not make it Claude's).
_PACKAGES: dict[Provider, ProviderPackage] = {Provider.CODEX: codex, Provider.CLAUDE: claude}


def register(package: ProviderPackage) -> None:
    """Add a provider package beyond the product's two (a test's: tests/adapters/toy_provider);
    asked last when sniffing. ValueError when its Provider has a package already."""
    if package.PROVIDER in _PACKAGES:
        raise ValueError(f"provider {package.PROVIDER.value} has a package already")
    _PACKAGES[package.PROVIDER] = package


def unregister(provider: Provider) -> None:
    """Take back a package register() added (the product's own stay)."""
    if provider in (Provider.CLAUDE, Provider.CODEX):
        raise ValueError(f"provider {provider.value} is the product's")
    _PACKAGES.pop(provider, None)


def providers() -> list[Provider]:
    """The providers that have a package: the product's in their order (Claude, Codex), then
    any register() added."""
    product = list(Provider)
    return [p for p in product if p in _PACKAGES] + [p for p in _PACKAGES if p not in product]


def provider_of(provider: Provider) -> ProviderPackage:
    return _PACKAGES[provider]


def state_class(provider: Provider) -> type[TailState]:
    return provider_of(provider).state_class()


def session_id_of(provider: Provider, fd: int, path: str) -> str:
    """The id the session in this file goes by everywhere in gobtui (its summary's: what its
    records say, else its file name), read from `fd` as the board reads a file cold."""
    return cursor_of_fd(fd, path, provider, state_class(provider)).summary().session_id


def verify_checks(provider: Provider) -> RecordChecks:
    """The provider's checks of its records, for core.verify: verify(data, verify_checks(p))."""
    return provider_of(provider).verify_checks()


def record_text(provider: Provider | None) -> RecordText:
    """How `provider`'s records read in the vault views; a record no provider claims
    (`None`) is read by every provider's rules."""
    if provider is not None:
        return provider_of(provider).record_text()
    return _any_reading()


@cache
def _any_reading() -> RecordText:
    return merged([package.record_text() for package in _PACKAGES.values()])


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
    """Which provider wrote this record, judged by content, not file name: the first package
    that owns it."""
    for provider, package in _PACKAGES.items():
        if package.owns(record):
            return provider
    return None


def sniff_prefix(line: bytes) -> Provider | None:
    """Which provider an unfinished first line is (escaped text cannot match a quoted key):
    the one whose SNIFF_KEYS key comes first in it."""
    best: tuple[int, Provider] | None = None
    for provider, package in _PACKAGES.items():
        for key in package.SNIFF_KEYS:
            at = line.find(key)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, provider)
    return best[1] if best is not None else None


def record_type(record: object) -> str:
    """The record's kind as the vault lists it ("response_item:message"): its provider's, or
    for a record no package claims the most telling any gives; "unparsed" for JSON that is no
    object, "untyped" for one naming no kind."""
    if not isinstance(record, dict):
        return "unparsed"
    owner = sniff_record(record)
    packages = [_PACKAGES[owner]] if owner is not None else _PACKAGES.values()
    named = [said for package in packages if (said := package.record_type(record)) is not None]
    if not named:
        return "untyped"
    kind, sub = next((k for k in named if k[1] is not None), named[0])
    return f"{kind}:{sub}" if sub is not None else kind


class IdentityScan:
    """The provider and session id a transcript's own records name (for `vault --repair`):
    the first record a package says settles it, else the first any package names."""

    __slots__ = ("fallback", "found")

    def __init__(self) -> None:
        self.found: tuple[Provider, str] | None = None
        self.fallback: tuple[Provider, str] | None = None

    def feed(self, record: object) -> bool:
        """Look at one parsed record (any JSON); True once the identity is known."""
        if self.found is not None:
            return True
        if not isinstance(record, dict):
            return False
        for provider, package in _PACKAGES.items():
            named = package.session_identity(record)
            if named is None:
                continue
            sid, settled = named
            if settled:
                self.found = (provider, sid)
            elif self.fallback is None:
                self.fallback = (provider, sid)
            break
        return self.found is not None

    @property
    def identity(self) -> tuple[Provider, str] | None:
        return self.found or self.fallback


def build_conversation(
    provider: Provider, pairs: Iterable[tuple[TranscriptItem, Record]]
) -> list[Entry]:
    """The conversation entries of (item, record) pairs in file order."""
    builder = provider_of(provider).conversation_builder()
    for item, record in pairs:
        builder.add(item, record)
    return builder.entries
