"""What a fork changed, read from two snapshots: each record's content with the identity
fields set aside (the provider's own rule, adapters.providers.<name>.rewrite), paired by
core.fork_changes."""

from __future__ import annotations

import hashlib

import orjson

from ...core.fork_changes import ForkChanges, RecordFacts, fork_changes
from ...core.model import Provider
from ..files.jsonl import decode_line
from ..providers.registry import record_type
from ..rewrite.apply import provider_half
from .vault import Vault

IDENTITY_SET_ASIDE = "0"
"""What every session id becomes before two records are compared (one digit: a valid id)."""
STUB_MARKS = (b"elided by gobtui: ", b"elided by gobstopper")
"""Bytes only a stub gobtui (or the reference) wrote holds."""


def record_facts(vault: Vault, sha: str, provider: Provider) -> list[RecordFacts]:
    half = provider_half(provider)
    facts: list[RecordFacts] = []
    for _, line in vault.iter_records(sha):
        record = decode_line(line.strip())
        if isinstance(record, dict):
            half.rewrite_identity_record(record, IDENTITY_SET_ASIDE)
            key = hashlib.sha256(orjson.dumps(record)).hexdigest()
            facts.append(RecordFacts(key, half.record_id(record), record_type(record),
                                     any(mark in line for mark in STUB_MARKS)))  # fmt: skip
        else:
            facts.append(RecordFacts(hashlib.sha256(line).hexdigest(), None, "unparsed", False))
    return facts


def fork_changes_of(vault: Vault, a: str, b: str) -> ForkChanges:
    """What snapshot b changed from snapshot a (VaultError when either cannot be read)."""
    entry_a, entry_b = vault.find(a), vault.find(b)
    facts_a = record_facts(vault, entry_a.sha256, entry_a.provider)
    facts_b = record_facts(vault, entry_b.sha256, entry_b.provider)
    changes = fork_changes(entry_a.sha256, entry_b.sha256, facts_a, facts_b)
    if entry_a.provider is not entry_b.provider:
        why = f"A is a {entry_a.provider.label} transcript and B a {entry_b.provider.label} one"
        return changes.model_copy(update={"unpaired": why})
    return changes
