"""The archive a pack or delta reads: the vault's index, its state cards, and the events.

The cards of each snapshot come from the card index (card_index.py) when it has a line for
it that passes its checksum: a pack over a thousand snapshots reads one small file instead of
reconstructing every snapshot. Only a snapshot not yet noted is read, verified, from the vault.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...core.recall.model import Archive, CardSeen
from ...core.vault.index import IndexEntry
from ..config.paths import data_dir
from ..publish.events import read_events
from ..vault.reader import VaultReader
from ..vault.vault import Vault
from .card_index import CARD_INDEX_FILE, Noted, cards_in, note, read_index


@dataclass
class OpenArchive:
    """The archive, read under the vault's lock, which is held until the answer is checked."""

    archive: Archive
    reader: VaultReader

    def check_named(self, shas: set[str]) -> None:
        """The snapshots an answer names, each checked against its manifest as every listing
        is (VaultError when one is damaged): an answer never points at what cannot be read
        back. Only those: the others need no reading to be left out."""
        self.reader.check_manifests(e for e in self.archive.entries if e.sha256 in shas)


@contextmanager
def open_archive(vault: Vault | None = None, root: Path | None = None) -> Iterator[OpenArchive]:
    """Every snapshot (newest first), the cards in them, and the events that parse.

    A damaged snapshot the index has not noted yet is a VaultError, as in recall.
    """
    base = root or data_dir()
    vault = vault or Vault(base / "vault")
    path = base / CARD_INDEX_FILE
    found = read_index(path)
    noted = found.noted
    fresh: Noted = {}
    with vault.reading() as reader:
        entries: list[IndexEntry] = reader.entries()
        for entry in entries:
            sha = entry.sha256
            if (noted is None or sha not in noted) and sha not in fresh:
                fresh[sha] = cards_in(reader, sha, entry.provider)
        if noted is not None and (fresh or found.rejected):
            note(path, fresh, rewrite=bool(found.rejected))
        known = (noted or {}) | fresh
        cards: list[CardSeen] = []
        seen: set[str] = set()
        for entry in entries:
            if entry.sha256 in seen:  # one snapshot indexed twice: its newest line speaks
                continue
            seen.add(entry.sha256)
            cards += [CardSeen(entry, i, card) for i, card in known.get(entry.sha256, [])]
        archive = Archive(entries=entries, cards=cards, events=read_events(base))
        yield OpenArchive(archive, reader)
