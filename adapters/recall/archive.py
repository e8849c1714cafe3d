"""The archive a pack or delta reads: the vault's index, its state cards, and the events.

A snapshot never changes (its id is its content's digest), so the cards found in it are
noted once in card-index.jsonl under the data folder and read from there afterwards: a pack
over a thousand snapshots reads one small file instead of reconstructing every snapshot.
Only a snapshot not yet noted is read, verified, from the vault. The index is opened as the
events file is (private, never through a symlink); a line that does not parse is ignored and
its snapshot read again, and an index that cannot be trusted is not used at all.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import ValidationError

from ...core.card_text import CARD_PREFILTER, card_text_of
from ...core.edits import DigestBlock
from ...core.recall.model import Archive, CardSeen
from ...core.vault_model import IndexEntry
from ..config.paths import data_dir
from ..files.private_fs import PrivateError, open_private
from ..publish.events import read_events
from ..vault.reader import VaultReader
from ..vault.vault import Vault

log = logging.getLogger(__name__)

CARD_INDEX_FILE = "card-index.jsonl"
LABEL = "card index"
_VERSION = 1

Noted = dict[str, list[tuple[int, DigestBlock]]]
"""snapshot id -> (record index, card) of each card it holds."""


def _read_index(path: Path) -> Noted | None:
    try:
        fd, notes = open_private(path, os.O_RDONLY, LABEL)
    except FileNotFoundError:
        return {}
    except PrivateError as error:
        log.warning("card index not used: %s", error)
        return None
    for note in notes:
        log.warning("%s", note)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    noted: Noted = {}
    for line in data.splitlines():
        try:
            row = orjson.loads(line)
            if row.get("v") != _VERSION or not isinstance(row.get("sha256"), str):
                continue
            cards = [(int(i), DigestBlock.model_validate(card)) for i, card in row["cards"]]
        except (
            orjson.JSONDecodeError,
            ValidationError,
            AttributeError,
            KeyError,
            TypeError,
            ValueError,
        ):
            continue
        noted[row["sha256"]] = cards
    return noted


def _note(path: Path, found: Noted) -> None:
    lines = b"".join(
        orjson.dumps(
            {"v": _VERSION, "sha256": sha, "cards": [[i, c.model_dump()] for i, c in cards]}
        )
        + b"\n"
        for sha, cards in found.items()
    )
    try:
        fd, notes = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, LABEL)
    except (PrivateError, OSError) as error:
        log.warning("card index not written: %s", error)
        return
    for note in notes:
        log.warning("%s", note)
    try:
        os.write(fd, lines)  # one write: concurrent appenders never interleave within it
    except OSError as error:
        log.warning("card index not written: %s", error)
    finally:
        os.close(fd)


def _cards_in(reader: VaultReader, sha: str) -> list[tuple[int, DigestBlock]]:
    cards: list[tuple[int, DigestBlock]] = []
    for index, line in reader.records(sha):
        if CARD_PREFILTER not in line:
            continue
        try:
            text = card_text_of(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
        card = DigestBlock.parse(text) if text is not None else None
        if card is not None:
            cards.append((index, card))
    return cards


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
    noted = _read_index(path)
    fresh: Noted = {}
    with vault.reading() as reader:
        entries: list[IndexEntry] = reader.entries()
        for entry in entries:
            sha = entry.sha256
            if (noted is None or sha not in noted) and sha not in fresh:
                fresh[sha] = _cards_in(reader, sha)
        if fresh and noted is not None:
            _note(path, fresh)
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
