"""card-index.jsonl under the data folder: the state cards found in each snapshot, noted once.

A snapshot never changes (its id is its content's digest), so its cards are derived once and
read from here afterwards. The index is derived data, so it is bound and checked rather than
trusted: each line carries the sha256 of its own canonical fields (as the vault's index lines
do), and a line that fails it, or does not parse, is not served; its snapshot is read again
and the index rewritten without it. `vault --stats --deep` re-derives every line from its
snapshot (check_card_index), which catches what a recomputed checksum would hide.
Writers hold the index's lock (state_lock), so a rewrite never drops another's append.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import ValidationError

from ...core.card_text import CARD_PREFILTER
from ...core.edits import DigestBlock
from ...core.model import Provider
from ...core.vault.errors import VaultError
from ..files.atomic import replace_private
from ..files.private_fs import PrivateError, open_private
from ..files.state_lock import state_locked
from ..providers.registry import provider_of
from ..vault.reader import VaultReader
from ..vault.vault import Vault

log = logging.getLogger(__name__)

CARD_INDEX_FILE = "card-index.jsonl"
LABEL = "card index"
_VERSION = 2
"""2: lines carry `line_sha256`. Lines of version 1 had none; they are read as unbound and
the index is rewritten bound."""

Cards = list[tuple[int, DigestBlock]]
"""(record index, card) of each card one snapshot holds."""
Noted = dict[str, Cards]
"""snapshot id -> its cards."""


@dataclass
class IndexRead:
    noted: Noted | None
    """None: the file cannot be trusted (a symlink, another owner): not used at all."""
    rejected: int = 0
    """Lines not served: unparseable, of another version, or failing their checksum."""


def _body(sha: str, cards: Cards) -> dict[str, object]:
    return {"v": _VERSION, "sha256": sha, "cards": [[i, c.model_dump()] for i, c in cards]}


def _line(sha: str, cards: Cards) -> bytes:
    body = _body(sha, cards)
    digest = hashlib.sha256(orjson.dumps(body)).hexdigest()
    return orjson.dumps({**body, "line_sha256": digest}) + b"\n"


def _parse(line: bytes) -> tuple[str, Cards] | None:
    """A line's snapshot and cards, or None when it is not one to serve."""
    try:
        row = orjson.loads(line)
        if not isinstance(row, dict) or row.get("v") != _VERSION:
            return None
        sha, digest = row["sha256"], row.pop("line_sha256")
        if not isinstance(sha, str) or hashlib.sha256(orjson.dumps(row)).hexdigest() != digest:
            return None
        cards = [(int(i), DigestBlock.model_validate(card)) for i, card in row["cards"]]
    except (orjson.JSONDecodeError, ValidationError, KeyError, TypeError, ValueError):
        return None
    return sha, cards


def read_index(path: Path) -> IndexRead:
    try:
        fd, notes = open_private(path, os.O_RDONLY, LABEL)
    except FileNotFoundError:
        return IndexRead({})
    except PrivateError as error:
        log.warning("card index not used: %s", error)
        return IndexRead(None)
    for note in notes:
        log.warning("%s", note)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    noted: Noted = {}
    rejected = 0
    for line in data.splitlines():
        parsed = _parse(line)
        if parsed is None:
            rejected += 1
        else:
            noted[parsed[0]] = parsed[1]
    return IndexRead(noted, rejected)


def note(path: Path, fresh: Noted, *, rewrite: bool = False, drop: Iterable[str] = ()) -> None:
    """Append `fresh`; or (`rewrite`) write the index anew as its lines that pass, less those
    of the snapshots in `drop`, and `fresh`. Never raises: the index is only a shortcut."""
    try:
        with state_locked(path, LABEL):
            if rewrite:
                # Read again under the lock: another writer may have appended since.
                kept = read_index(path).noted or {}
                for sha in drop:
                    kept.pop(sha, None)
                lines = (kept | fresh).items()
                replace_private(path, b"".join(_line(sha, cards) for sha, cards in lines))
                return
            fd, notes = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, LABEL)
            for message in notes:
                log.warning("%s", message)
            try:
                os.write(fd, b"".join(_line(sha, cards) for sha, cards in fresh.items()))
            finally:
                os.close(fd)
    except (PrivateError, OSError) as error:
        log.warning("card index not written: %s", error)


def cards_in(reader: VaultReader, sha: str, provider: Provider) -> Cards:
    """The cards snapshot `sha` (a transcript of `provider`) holds, read (verified) from the
    vault."""
    card_text = provider_of(provider).card_text
    cards: Cards = []
    for index, line in reader.records(sha):
        if CARD_PREFILTER not in line:
            continue
        try:
            text = card_text(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
        card = DigestBlock.parse(text) if text is not None else None
        if card is not None:
            cards.append((index, card))
    return cards


def _derived(reader: VaultReader, sha: str, provider: Provider) -> Cards | None:
    """The snapshot's cards; None when it is damaged (reported as such by the deep check,
    and never served: a pack naming it fails closed)."""
    try:
        return cards_in(reader, sha, provider)
    except VaultError as error:
        if not error.damaged:
            raise
        return None


@dataclass(frozen=True)
class CardIndexCheck:
    lines: int
    """Lines that passed their checksum."""
    rejected: int
    """Lines that did not (never served; the next pack rewrites the index without them)."""
    mismatched: int
    """Lines that passed but say other than their snapshot holds (dropped by this check)."""
    orphans: int
    """Lines of snapshots no longer in the vault (pruned): harmless, never served."""

    @property
    def damaged(self) -> bool:
        return bool(self.rejected or self.mismatched)


def check_card_index(
    reader: VaultReader, path: Path, snapshots: Mapping[str, Provider]
) -> CardIndexCheck:
    """Every line re-derived from its snapshot; lines that do not match are dropped (the
    index is rewritten from what does), so what the check found is what the next pack serves."""
    found = read_index(path)
    noted = found.noted or {}
    present = snapshots
    mismatched: set[str] = set()
    for sha in noted.keys() & present:
        derived = _derived(reader, sha, present[sha])
        if derived is not None and derived != noted[sha]:
            mismatched.add(sha)
    if mismatched or found.rejected:
        note(path, {}, rewrite=True, drop=mismatched)
    return CardIndexCheck(
        lines=len(noted),
        rejected=found.rejected,
        mismatched=len(mismatched),
        orphans=len(noted.keys() - present),
    )


def check_vault_card_index(vault: Vault) -> CardIndexCheck:
    """check_card_index for the card index beside `vault` (in the same data folder)."""
    with vault.reading() as reader:
        present = {entry.sha256: entry.provider for entry in reader.entries()}
        return check_card_index(reader, vault.root.parent / CARD_INDEX_FILE, present)
