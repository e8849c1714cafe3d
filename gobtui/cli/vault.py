"""Vault commands: snapshot, vault, history, show, diff, prune, recall, search-snapshot and
read-snapshot. Every one has `--json` (the pydantic models of core.vault.reports).

A damaged vault exits 4 ("vault damaged: ...; repair required"), bad input exits 2 (gobtui.cli.exits). Nothing
prints archived transcript content except recall (state cards) and read-snapshot, and what
reaches a terminal has its control characters escaped. Listings say what they checked: the
index lines and manifests, not the chunks (`vault --stats --deep` re-hashes those).
`vault --repair` rebuilds a damaged index from the manifests (a dry run without --yes).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from gobtui.adapters.providers.registry import record_type
from gobtui.adapters.recall.card_index import CardIndexCheck, check_vault_card_index
from gobtui.adapters.sessions.select import SelectError, check_selector
from gobtui.adapters.vault.prune import prune, repair
from gobtui.adapters.vault.recovery import read_record, recall, search
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.common import (
    file_named,
    homes_of,
    one_file,
    recorded_file,
    resolve_target,
    snapshots_of,
)
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.safe_output import write_json
from gobtui.core.fork_changes import ForkChanges
from gobtui.core.limits import (
    VAULT_PRUNE_KEEP_DEFAULT,
    VAULT_READ_DEFAULT_BYTES,
    VAULT_RECALL_DEFAULT_LIMIT,
    VAULT_SEARCH_DEFAULT_RESULTS,
)
from gobtui.core.model import Provider
from gobtui.core.record_number import index_of, shown
from gobtui.core.vault.errors import (
    DAMAGE_CODES,
    INPUT_CODES,
    VaultError,
    VaultErrorCode,
    has_control,
    is_hex_prefix,
)
from gobtui.core.vault.index import IndexEntry
from gobtui.core.vault.reports import RECOVERED_LABEL
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes

Handler = Callable[[argparse.Namespace], int]
ISSUED_LABEL = "manual"
"""The label of a snapshot taken with `gobtui snapshot` and no --label."""


LISTED_FROM = (
    "listed from the index: lines checksummed, manifests hash-checked; chunks not re-hashed "
    "(gobtui vault --stats --deep re-hashes them)"
)
"""What a listing checked, said under it."""


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


@dataclass(frozen=True, slots=True)
class SessionTarget:
    provider: Provider
    session_id: str
    path: Path
    file: Path | None = None
    """The file the selector named, when it named one: its snapshots only (snapshots_of)."""


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


@contextmanager
def vault_errors() -> Iterator[None]:
    try:
        yield
    except VaultError as error:
        if error.damaged:
            # A message that already names the repair command needs no second hint.
            hint = "" if "vault --repair" in error.message else "; repair required"
            raise CliError(f"vault damaged: {error.message}{hint}", Exit.DAMAGED) from None
        raise CliError(error.message, vault_exit(error.code)) from None


def vault_exit(code: VaultErrorCode) -> Exit:
    """The exit code of a vault refusal, the same from every command (gobtui.cli.exits)."""
    if code in DAMAGE_CODES:
        return Exit.DAMAGED
    if code is VaultErrorCode.IO:
        return Exit.IO
    if code in INPUT_CODES or code is VaultErrorCode.LIMIT:
        return Exit.USAGE
    return Exit.REFUSED


def _handles_vault_errors(handler: Handler) -> Handler:
    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        with vault_errors():
            return handler(args)

    return run


def _vault() -> Vault:
    return Vault()


# --- session selection -----------------------------------------------------------------------


def _resolve_session(args: argparse.Namespace, selector: str, one: bool = False) -> SessionTarget:
    """A session id already in the vault; else a transcript path or a discovered session
    (gobtui.cli.common.resolve_target); else a unique id prefix among the vault's sessions,
    so a session whose file is gone can still be named. With `one` (the command reads one
    file) the homes' sessions come first, and an id two files hold must be told apart."""
    try:
        check_selector(selector)  # "" would be a prefix of every session in the vault
    except SelectError as error:
        raise CliError(str(error)) from None
    homes = homes_of(args)
    if one:  # the command reads one file: the one the homes hold, when they hold it
        try:
            found = resolve_target(args, selector)
        except CliError:
            pass  # gone, or never discovered: as the vault recorded it
        else:
            path = found.path.resolve()
            return SessionTarget(found.provider, found.session_id, path, file_named(selector))
    entries = _vault().entries(checked=False)  # ids only; what is listed or read is checked
    exact = [e for e in entries if e.session_id == selector]
    if one:  # of two copies of a transcript (one id), which?
        exact = one_file(exact, selector, homes)
    if exact:
        return SessionTarget(exact[0].provider, exact[0].session_id, Path(exact[0].path))
    gone = recorded_file(entries, selector)
    if gone is not None:
        return SessionTarget(gone.provider, gone.session_id, Path(gone.path), Path(gone.path))
    try:
        found = resolve_target(args, selector)
    except CliError as not_discovered:
        ids = {e.session_id for e in entries if e.session_id.startswith(selector)}
        if len(ids) > 1:
            raise CliError(f"{selector!r} matches {len(ids)} sessions in the vault") from None
        if not ids:
            raise not_discovered from None
        newest = next(e for e in entries if e.session_id in ids)
        return SessionTarget(newest.provider, newest.session_id, Path(newest.path))
    return SessionTarget(
        found.provider, found.session_id, found.path.resolve(), file_named(selector)
    )


# --- commands --------------------------------------------------------------------------------


@_handles_vault_errors
def cmd_snapshot(args: argparse.Namespace) -> int:
    target = _resolve_session(args, args.session, one=True)
    entry = _vault().snapshot(
        target.path, target.provider, target.session_id, args.label, time.time()
    )
    if args.json:
        return _dump(entry)
    print(
        f"snapshot {entry.sha256}\n  {entry.provider.label} {entry.session_id}, "
        f"{human_bytes(entry.bytes)}, {entry.record_count} records, label {entry.strategy}"
    )
    return 0


@_handles_vault_errors
def cmd_vault(args: argparse.Namespace) -> int:
    vault = _vault()
    if args.deep and not args.stats:
        raise CliError("--deep goes with --stats")
    if args.yes and not args.repair:
        raise CliError("--yes goes with --repair")
    if args.repair:
        if args.stats or args.session is not None:
            raise CliError("--repair takes no session and no --stats")
        return _repair(vault, args)
    if args.stats:
        return _stats(vault, args)
    if args.session is not None:
        target = _resolve_session(args, args.session)
        entries = snapshots_of(vault, target.session_id, target.file)
    else:
        entries = vault.entries()
    return _list(entries, args.json, "the vault is empty" if not args.session else "no snapshots")


def _stats(vault: Vault, args: argparse.Namespace) -> int:
    stats = vault.stats(deep=args.deep)
    cards = check_vault_card_index(vault) if args.deep else None
    failed = 1 if stats.damaged or (cards is not None and cards.damaged) else 0
    if args.json:
        data = stats.model_dump(mode="json")
        if cards is not None:
            data["card_index"] = asdict(cards)
        _dump(data)
        return failed
    dedup = stats.logical_bytes / stats.stored_bytes if stats.stored_bytes else 1.0
    print(f"snapshots  {stats.snapshots} of {stats.sessions} sessions, {stats.manifests} manifests")
    print(f"stored     {human_bytes(stats.stored_bytes)} in {stats.chunks} chunks")
    print(f"holding    {human_bytes(stats.logical_bytes)} of transcripts ({dedup:.1f}x)")
    print(f"index      {human_bytes(stats.index_bytes)}; {_span(stats.oldest_ts, stats.newest_ts)}")
    if stats.index_torn_bytes:
        print(
            f"           an interrupted append ({fmt.plural(stats.index_torn_bytes, 'byte')}) "
            "at its end is ignored; the next snapshot or prune cuts it off"
        )
    if stats.unbound_entries:
        print(
            f"           {fmt.plural(stats.unbound_entries, 'line')} without a checksum "
            "(written before lines were bound; vault --repair binds them)"
        )
    if stats.unindexed_manifests:
        print(
            f"           {fmt.plural(stats.unindexed_manifests, 'manifest')} no index line "
            "names (pinned by receipts, or left for prune to remove)"
        )
    print(f"location   {vault.root}")
    if stats.verification == "chunks":
        print(
            f"checked    every snapshot read back: {fmt.plural(stats.chunks_rehashed, 'chunk')} "
            "re-hashed, byte counts and source digests recomputed"
        )
    else:
        print(
            "checked    index lines checksummed, manifests hash-checked, chunks present with "
            "the right sizes; chunks not re-hashed (--deep re-hashes them)"
        )
    if cards is not None:
        _print_card_check(cards)
    for damage in stats.damaged:
        where = "" if damage.indexed else " (no index line names it)"
        print(f"DAMAGED    {damage.sha256[:12]}{where}: {_safe(damage.message)}")
    if stats.damaged:
        print(
            f"{fmt.plural(len(stats.damaged), 'damaged snapshot')}: they fail closed when read; "
            "gobtui vault --repair takes them out of the index (their files are kept)",
            file=sys.stderr,
        )
    return failed


def _print_card_check(cards: CardIndexCheck) -> None:
    print(
        f"cards      {fmt.plural(cards.lines, 'card index line')} re-derived from their snapshots"
        + (f" ({cards.orphans} of pruned snapshots)" if cards.orphans else "")
    )
    if cards.damaged:
        wrong = fmt.plural(cards.rejected + cards.mismatched, "card index line")
        print(
            f"DAMAGED    {wrong} did not match their snapshots ({cards.rejected} failed their "
            f"checksum, {cards.mismatched} said other than the snapshot holds); they were "
            "dropped and are never served",
            file=sys.stderr,
        )


def _repair(vault: Vault, args: argparse.Namespace) -> int:
    try:
        report = repair(vault, dry_run=not args.yes, locate=_locator(args))
    except VaultError as error:
        if not error.damaged:
            raise
        # Repair rebuilds the index only; damage to the layout is for a person to look at.
        raise CliError(
            f"vault damaged: {error.message}; --repair cannot fix this, nothing was changed",
            Exit.DAMAGED,
        ) from None
    if args.json:
        return _dump(report)
    would = "would be " if report.dry_run else ""
    torn = (
        f"; {fmt.plural(report.torn_bytes, 'byte')} of an interrupted append"
        if report.torn_bytes
        else ""
    )
    legacy = report.legacy_lines_bound
    print(
        f"index: {fmt.plural(report.lines_read, 'line')} read, {report.kept_lines} kept"
        + (f" ({legacy} without a checksum, {would}bound as they read)" if legacy else "")
        + f", {len(report.dropped)} dropped{torn}"
    )
    for line in report.dropped:
        names = f" (snapshot {line.sha256[:12]})" if line.sha256 else ""
        print(f"  line {line.line}{names} dropped: {_safe(line.reason)}")
    if report.recovered:
        print(
            f"{fmt.plural(len(report.recovered), 'snapshot')} no valid line named, {would}rebuilt:"
        )
    for item in report.recovered:
        e = item.entry
        print(f"  {e.sha256[:12]}  {e.provider.value} {_safe(e.session_id)}  {_safe(e.path)}")
        by_source: dict[str, list[str]] = {}
        for field, source in item.sources.items():
            by_source.setdefault(source.value, []).append(field)
        for how, fields in by_source.items():
            print(f"      {', '.join(fields)}: {_SOURCE_WORDS[how]}")
    for damage in report.damaged:
        print(
            f"  {damage.sha256[:12]} is damaged, {would}left out of the index (its files are "
            f"kept; prune refuses while they are there): {_safe(damage.message)}"
        )
    if not report.changed:
        print("nothing to repair: the index holds every snapshot that reads back")
    elif report.dry_run:
        print(
            f"dry run: nothing written; run again with --yes to write the "
            f"{fmt.plural(report.entries, 'line')} (the old index is kept beside it)"
        )
    else:
        kept = f"; the old index is kept as {report.backup}" if report.backup else ""
        print(f"wrote the index: {fmt.plural(report.entries, 'line')}{kept}")
    return 0


_SOURCE_WORDS = {
    "manifest": "from the manifest",
    "snapshot_records": "from the snapshot's own records",
    "manifest_mtime": "from the manifest file's time",
    "session_line": "from the valid index lines of that session",
    "discovered_session": "from the session of that id in the homes",
    "placeholder": "unknown (a stand-in)",
    "label": f"set to {RECOVERED_LABEL!r}",
}


def _locator(args: argparse.Namespace) -> Callable[[Provider, str], str | None]:
    """The transcript a rebuilt entry names: the one file in the homes with that session id."""
    homes = homes_of(args)  # a bad --claude-home is refused before the vault is touched
    found: dict[tuple[Provider, str], set[str]] | None = None

    def locate(provider: Provider, session_id: str) -> str | None:
        nonlocal found
        if found is None:  # discovery runs only when an entry needs rebuilding
            from gobtui.adapters.sessions.select import load_summaries

            found = {}
            try:
                summaries = load_summaries(homes, all_sessions=True)
            except (OSError, ValueError):
                summaries = []  # a home that cannot be read: the path stays unknown
            for summary in summaries:
                key = (summary.provider, summary.session_id)
                found.setdefault(key, set()).add(os.path.realpath(summary.path))
        paths = found.get((provider, session_id), set())
        return next(iter(paths)) if len(paths) == 1 else None

    return locate


@_handles_vault_errors
def cmd_history(args: argparse.Namespace) -> int:
    target = _resolve_session(args, args.session)
    entries = snapshots_of(_vault(), target.session_id, target.file)
    return _list(entries, args.json, f"no snapshots of {target.file or target.session_id}")


@_handles_vault_errors
def cmd_show(args: argparse.Namespace) -> int:
    vault = _vault()
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
        return _dump(shown)
    print(f"snapshot {entry.sha256}  (verified: every chunk and the source digest)")
    if not entry.is_bound:
        print(
            "  index line without a checksum (written before lines were bound): the session, "
            "path, label and time below are as written, unchecked"
        )
    print(f"  taken     {_when(entry.ts)}  label {entry.strategy or '-'}")
    print(f"  session   {entry.provider.label} {entry.session_id}")
    print(f"  path      {_safe(fmt.display_path(entry.path))}")
    print(
        f"  size      {human_bytes(entry.bytes)} in {shown.chunks} chunks, {shown.records} records"
    )
    print(f"  source    sha256 {entry.source_sha256}")
    for kind, count in shown.types.items():
        print(f"  {count:>8}  {_safe(kind)}")
    return 0


def _entry_for(vault: Vault, args: argparse.Namespace, text: str) -> IndexEntry:
    """A snapshot id (prefix) first; else the newest snapshot of the session it names."""
    if is_hex_prefix(text.lower()):
        try:
            return vault.find(text)
        except VaultError as error:
            if error.code not in (VaultErrorCode.NOT_FOUND, VaultErrorCode.INVALID_INPUT):
                raise
    target = _resolve_session(args, text, one=True)
    history = snapshots_of(vault, target.session_id, target.file)
    if target.file is None:
        history = one_file(history, text, homes_of(args))
    if not history:
        raise CliError(f"no snapshots of {text!r} in the vault")
    return history[0]


@_handles_vault_errors
def cmd_diff(args: argparse.Namespace) -> int:
    vault = _vault()
    from gobtui.adapters.vault.fork_diff import fork_changes_of

    a, b = vault.find(args.a).sha256, vault.find(args.b).sha256
    diff = vault.diff(a, b)
    changes = fork_changes_of(vault, a, b)
    if args.json:  # the byte-for-byte record diff, and what b changed with identity set aside
        return _dump(diff.model_dump(mode="json") | {"changes": changes.model_dump(mode="json")})
    print(
        f"{a[:12]} ({diff.records_a} records) -> {b[:12]} ({diff.records_b} records): "
        f"+{diff.records_added} added, -{diff.records_removed} removed, "
        f"{diff.unchanged} unchanged byte for byte"
    )
    for kind in sorted(diff.types_a.keys() | diff.types_b.keys()):
        before, after = diff.types_a.get(kind, 0), diff.types_b.get(kind, 0)
        delta = f"{after - before:+d}" if after != before else ""
        print(f"  {before:>7} {after:>7} {delta:>6}  {_safe(kind)}")
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
        lines.append(f"  rec {where_a:>6} -> {where_b:<6} {c.change.value:<9} {_safe(c.kind)}")
    if len(changes.changes) > CHANGES_SHOWN:
        lines.append(f"  … {len(changes.changes) - CHANGES_SHOWN} more (--json lists them all)")
    return lines


@_handles_vault_errors
def cmd_prune(args: argparse.Namespace) -> int:
    from gobtui.adapters.publish.publisher import PublishError, receipt_roots

    try:
        roots = receipt_roots()
    except PublishError as error:
        raise CliError(f"{error}; prune needs every receipt readable", Exit.DAMAGED) from None
    report = prune(_vault(), keep=args.keep, dry_run=not args.yes, extra_roots=roots)
    if args.json:
        return _dump(report)
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


@_handles_vault_errors
def cmd_recall(args: argparse.Namespace) -> int:
    session = args.session
    session_id = _resolve_session(args, session).session_id if session is not None else None
    result = recall(_vault(), args.query, args.limit, session_id)
    if args.json:
        return _dump(result)
    if not result.results:
        print(f"no state cards found in {fmt.plural(result.snapshots_scanned, 'snapshot')}")
        return 0
    for rank, hit in enumerate(result.results, start=1):
        hits = f"{hit.hits} hits, " if args.query else ""
        print(
            f"{rank}. {hit.snapshot_sha256[:12]}  {hit.provider.label} {hit.session_id[:8]:<8}  "
            f"{_when(hit.ts)}  ({hits}record {shown(hit.record_index)})"
        )
        for line in hit.card.render().splitlines():
            print(f"     {_safe(line)}")
    more = f" (first {len(result.results)} shown)" if result.truncated else ""
    cards = fmt.plural(result.cards_matched, "card")
    print(f"{cards} in {fmt.plural(result.snapshots_scanned, 'snapshot')}{more}")
    return 0


@_handles_vault_errors
def cmd_search(args: argparse.Namespace) -> int:
    vault = _vault()
    result = search(vault, vault.find(args.sha).sha256, args.query, args.limit)
    if args.json:
        return _dump(result)
    for match in result.matches:
        print(
            f"record {shown(match.record_index):>6}  {match.match_count:>4} hits  "
            f"{human_bytes(match.record_bytes):>7}  sha256 {match.record_sha256[:16]}"
        )
    listed = f" ({len(result.matches)} shown)" if result.truncated else ""
    print(f"{result.matched_records} records match{listed}", end="")
    bad = result.unsearchable_records
    print(f"; {bad} lines are not JSON and were not searched" if bad else "")
    return 0


def _one_based_range(message: str) -> str:
    """The vault's range error for `read-snapshot`, whose --record counts from 1."""
    head, sep, rest = message.partition(" is out of range")
    number = head.removeprefix("record ")
    return f"record {int(number) + 1}{sep}{rest}" if sep and number.isdigit() else message


@_handles_vault_errors
def cmd_read(args: argparse.Namespace) -> int:
    vault = _vault()
    try:
        index = index_of(args.record)
    except ValueError as error:
        raise CliError(f"--record: {error}") from None
    sha = vault.find(args.sha).sha256
    try:
        page = read_record(vault, sha, index, args.offset, args.max_bytes)
    except VaultError as error:
        if error.code is not VaultErrorCode.NOT_FOUND:
            raise
        raise VaultError(error.code, _one_based_range(str(error))) from None
    if args.json:
        return _dump(page)
    end = page.next_offset if page.next_offset is not None else page.record_bytes
    sys.stdout.write(_safe(page.content) + "\n")
    after = f"; next: --offset {page.next_offset}" if page.next_offset is not None else ""
    print(
        f"record {shown(page.record_index)} of {page.snapshot_sha256[:12]}, bytes {page.offset}..{end} "
        f"of {page.record_bytes} (untrusted archived data){after}",
        file=sys.stderr,
    )
    return 0


# --- output ----------------------------------------------------------------------------------


def _dump(value: BaseModel | list[Any] | dict[str, Any]) -> int:
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    write_json(data)
    return 0


def _list(entries: list[IndexEntry], as_json: bool, empty: str) -> int:
    if as_json:
        return _dump([e.model_dump(mode="json") for e in entries])
    if not entries:
        print(empty)
        return 0
    for e in entries:
        unbound = "  (line without a checksum)" if not e.is_bound else ""
        print(
            f"{_when(e.ts)}  {e.sha256[:12]}  {e.provider.value:<6} {e.session_id[:8]:<8}  "
            f"{human_bytes(e.bytes):>7} {e.record_count:>7} rec  {_safe(e.strategy or '-')}"
            f"{unbound}"
        )
    print(LISTED_FROM)
    return 0


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _span(oldest: float | None, newest: float | None) -> str:
    if oldest is None or newest is None:
        return "no snapshots yet"
    return f"from {_when(oldest)} to {_when(newest)}"


def _safe(text: str) -> str:
    """Archived text for a terminal: control characters (escape sequences...) shown escaped."""
    if not has_control(text):
        return text
    return "".join(repr(ch)[1:-1] if has_control(ch) else ch for ch in text)
