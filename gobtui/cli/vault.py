"""Vault commands: snapshot, vault, history, show, diff, prune, recall, search-snapshot and
read-snapshot, registered here; every one has `--json` (the pydantic models of
core.vault.reports). This module holds the commands over snapshots as wholes; `vault` with its
stats and repair is .vault_health, the ones reading archived content .vault_read.

A damaged vault exits 4 ("vault damaged: ...; repair required"), bad input exits 2 (gobtui.cli.exits). Nothing
prints archived transcript content except recall (state cards) and read-snapshot, and what
reaches a terminal has its control characters escaped. Listings say what they checked: the
index lines and manifests, not the chunks (`vault --stats --deep` re-hashes those).
`vault --repair` rebuilds a damaged index from the manifests (a dry run without --yes).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import orjson
from pydantic import BaseModel

from gobtui.adapters.providers.registry import record_type
from gobtui.adapters.vault.prune import prune
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.common import (
    homes_of,
    one_file,
    snapshots_of,
)
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.vault_common import (
    Handler,
    dump,
    handles_vault_errors,
    list_entries,
    open_vault,
    resolve_session,
    safe,
    when,
)
from gobtui.cli.vault_health import cmd_vault
from gobtui.cli.vault_read import cmd_read, cmd_recall, cmd_search
from gobtui.core.fork_changes import ForkChanges
from gobtui.core.limits import (
    VAULT_PRUNE_KEEP_DEFAULT,
    VAULT_READ_DEFAULT_BYTES,
    VAULT_RECALL_DEFAULT_LIMIT,
    VAULT_SEARCH_DEFAULT_RESULTS,
)
from gobtui.core.vault.errors import (
    VaultError,
    VaultErrorCode,
    is_hex_prefix,
)
from gobtui.core.vault.index import IndexEntry
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes

ISSUED_LABEL = "manual"
"""The label of a snapshot taken with `gobtui snapshot` and no --label."""


class SnapshotShow(BaseModel):
    """`show --json`: the index entry, and what verifying the snapshot found."""

    entry: IndexEntry
    verified: bool
    chunks: int
    records: int
    types: dict[str, int]
    line_bound: bool = True
    """False: the entry's index line predates line checksums, so its session id, path, label
    and time are as written, unchecked (the bytes are verified either way)."""


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, parents=[common], help=help_text)
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.set_defaults(handler=handler)
        return parser

    p = add("snapshot", cmd_snapshot, "copy a transcript into the vault, exactly")
    p.add_argument("session", help="a transcript path, or a session id already in the vault")
    p.add_argument("--label", default=ISSUED_LABEL, help=f"why (default {ISSUED_LABEL!r})")
    p = add("vault", cmd_vault, "list the snapshots in the vault, newest first")
    p.add_argument("session", nargs="?", help="only this session's snapshots")
    p.add_argument("--stats", action="store_true", help="sizes and counts instead of a list")
    p.add_argument(
        "--deep", action="store_true", help="with --stats: re-hash every chunk of every snapshot"
    )
    p.add_argument(
        "--repair", action="store_true", help="rebuild a damaged index from the manifests"
    )
    p.add_argument("--yes", action="store_true", help="with --repair: write (default: a dry run)")
    p = add("history", cmd_history, "every snapshot of one session, newest first")
    p.add_argument("session")
    p = add("show", cmd_show, "one snapshot (id or id prefix, or a session's newest), verified")
    p.add_argument("snapshot", metavar="sha|session")
    p = add("diff", cmd_diff, "records added and removed between two snapshots")
    p.add_argument("a", metavar="sha-a")
    p.add_argument("b", metavar="sha-b")
    p = add("prune", cmd_prune, "keep the newest snapshots of each transcript (dry run)")
    p.add_argument("--keep", type=int, default=VAULT_PRUNE_KEEP_DEFAULT, metavar="N")
    p.add_argument("--yes", action="store_true", help="really delete (default: a dry run)")
    p = add("recall", cmd_recall, "search the state cards in every snapshot")
    p.add_argument("session", nargs="?", help="only this session's snapshots")
    p.add_argument("--query", metavar="Q", help="case-insensitive text to look for")
    p.add_argument("--limit", type=int, default=VAULT_RECALL_DEFAULT_LIMIT, metavar="N")
    p = add("search-snapshot", cmd_search, "records of one snapshot holding exact text")
    p.add_argument("sha", help="a snapshot id or a unique prefix of one")
    p.add_argument("--query", required=True, metavar="Q", help="literal, case-sensitive")
    p.add_argument("--limit", type=int, default=VAULT_SEARCH_DEFAULT_RESULTS, metavar="N")
    p = add("read-snapshot", cmd_read, "a page of one record of a snapshot")
    p.add_argument("sha", help="a snapshot id or a unique prefix of one")
    p.add_argument(
        "--record",
        type=int,
        required=True,
        metavar="N",
        help="the record's number as gobtui shows it (1-based: the first record is 1)",
    )
    p.add_argument("--offset", type=int, default=0, metavar="B", help="a UTF-8 byte offset")
    p.add_argument("--max-bytes", type=int, default=VAULT_READ_DEFAULT_BYTES, metavar="N")


@handles_vault_errors
def cmd_snapshot(args: argparse.Namespace) -> int:
    target = resolve_session(args, args.session, one=True)
    entry = open_vault().snapshot(
        target.path, target.provider, target.session_id, args.label, time.time()
    )
    if args.json:
        return dump(entry)
    print(
        f"snapshot {entry.sha256}\n  {entry.provider.label} {entry.session_id}, "
        f"{human_bytes(entry.bytes)}, {entry.record_count} records, label {entry.strategy}"
    )
    return 0


@handles_vault_errors
def cmd_history(args: argparse.Namespace) -> int:
    target = resolve_session(args, args.session)
    entries = snapshots_of(open_vault(), target.session_id, target.file)
    return list_entries(entries, args.json, f"no snapshots of {target.file or target.session_id}")


@handles_vault_errors
def cmd_show(args: argparse.Namespace) -> int:
    vault = open_vault()
    entry = _entry_for(vault, args, args.snapshot)
    types: Counter[str] = Counter()
    with vault.reading() as reader:
        manifest = reader.manifest(entry.sha256)
        for _, line in reader.records(entry.sha256, manifest):
            try:
                types[record_type(orjson.loads(line))] += 1
            except orjson.JSONDecodeError:
                types["unparsed"] += 1
    shown = SnapshotShow(
        entry=entry,
        verified=True,
        chunks=len(manifest.chunks),
        records=sum(types.values()),
        types=dict(sorted(types.items())),
        line_bound=entry.is_bound,
    )
    if args.json:
        return dump(shown)
    print(f"snapshot {entry.sha256}  (verified: every chunk and the source digest)")
    if not entry.is_bound:
        print(
            "  index line without a checksum (written before lines were bound): the session, "
            "path, label and time below are as written, unchecked"
        )
    print(f"  taken     {when(entry.ts)}  label {entry.strategy or '-'}")
    print(f"  session   {entry.provider.label} {entry.session_id}")
    print(f"  path      {safe(fmt.display_path(entry.path))}")
    print(
        f"  size      {human_bytes(entry.bytes)} in {shown.chunks} chunks, {shown.records} records"
    )
    print(f"  source    sha256 {entry.source_sha256}")
    for kind, count in shown.types.items():
        print(f"  {count:>8}  {safe(kind)}")
    return 0


def _entry_for(vault: Vault, args: argparse.Namespace, text: str) -> IndexEntry:
    """A snapshot id (prefix) first; else the newest snapshot of the session it names."""
    if is_hex_prefix(text.lower()):
        try:
            return vault.find(text)
        except VaultError as error:
            if error.code not in (VaultErrorCode.NOT_FOUND, VaultErrorCode.INVALID_INPUT):
                raise
    target = resolve_session(args, text, one=True)
    history = snapshots_of(vault, target.session_id, target.file)
    if target.file is None:
        history = one_file(history, text, homes_of(args))
    if not history:
        raise CliError(f"no snapshots of {text!r} in the vault")
    return history[0]


@handles_vault_errors
def cmd_diff(args: argparse.Namespace) -> int:
    vault = open_vault()
    from gobtui.adapters.vault.fork_diff import fork_changes_of

    a, b = vault.find(args.a).sha256, vault.find(args.b).sha256
    diff = vault.diff(a, b)
    changes = fork_changes_of(vault, a, b)
    if args.json:  # the byte-for-byte record diff, and what b changed with identity set aside
        return dump(diff.model_dump(mode="json") | {"changes": changes.model_dump(mode="json")})
    print(
        f"{a[:12]} ({diff.records_a} records) -> {b[:12]} ({diff.records_b} records): "
        f"+{diff.records_added} added, -{diff.records_removed} removed, "
        f"{diff.unchanged} unchanged byte for byte"
    )
    for kind in sorted(diff.types_a.keys() | diff.types_b.keys()):
        before, after = diff.types_a.get(kind, 0), diff.types_b.get(kind, 0)
        delta = f"{after - before:+d}" if after != before else ""
        print(f"  {before:>7} {after:>7} {delta:>6}  {safe(kind)}")
    for line in changes_lines(changes):
        print(line)
    return 0


CHANGES_SHOWN = 200
"""At most this many changed records are listed (--json has them all)."""


def changes_lines(changes: ForkChanges) -> list[str]:
    """What b changed, identity set aside: the counts, then each changed record (numbered
    from 1, as in the files)."""
    if changes.unpaired:
        return [f"what B changed: cannot pair the records: {changes.unpaired}"]
    counts = ", ".join(f"{n} {change.value}" for change, n in changes.counts.items())
    lines = [
        f"what B changed (session ids set aside): {changes.kept} records kept as they were"
        + (f"; {counts}" if counts else "; nothing else")
    ]
    for c in changes.changes[:CHANGES_SHOWN]:
        where_a = "-" if c.record_a is None else str(c.record_a)  # (1-based already)
        where_b = "-" if c.record_b is None else str(c.record_b)
        lines.append(f"  rec {where_a:>6} -> {where_b:<6} {c.change.value:<9} {safe(c.kind)}")
    if len(changes.changes) > CHANGES_SHOWN:
        lines.append(f"  … {len(changes.changes) - CHANGES_SHOWN} more (--json lists them all)")
    return lines


@handles_vault_errors
def cmd_prune(args: argparse.Namespace) -> int:
    from gobtui.adapters.publish.publisher import PublishError, receipt_roots

    try:
        roots = receipt_roots()
    except PublishError as error:
        raise CliError(f"{error}; prune needs every receipt readable", Exit.DAMAGED) from None
    report = prune(open_vault(), keep=args.keep, dry_run=not args.yes, extra_roots=roots)
    if args.json:
        return dump(report)
    verb = "would drop" if report.dry_run else "dropped"
    orphans = report.orphan_manifests
    print(
        f"{verb} {report.dropped_entries} of {report.kept_entries + report.dropped_entries} "
        f"snapshots (keeping the newest {report.keep} of each of {report.streams} transcripts); "
        f"{report.manifests_removed} manifests"
        + (f" ({orphans} named by no index line or receipt)" if orphans else "")
        + f", {report.chunks_removed} chunks, {human_bytes(report.bytes_reclaimed)}"
        + (f", {report.temps_removed} leftover temporary files" if report.temps_removed else "")
        + (
            f", an interrupted index append ({fmt.plural(report.index_torn_bytes, 'byte')})"
            if report.index_torn_bytes
            else ""
        )
    )
    if report.dry_run and (
        report.dropped_entries
        or report.manifests_removed
        or report.chunks_removed
        or report.temps_removed
        or report.index_torn_bytes
    ):
        print("dry run: nothing deleted; run again with --yes to delete")
    return 0
