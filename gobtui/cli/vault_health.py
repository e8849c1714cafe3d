"""`gobtui vault`: the snapshots listed, `--stats` (with `--deep`: every chunk re-hashed and the
card index re-derived; exit 1 on damage) and `--repair` (the index rebuilt from the
manifests, a dry run without --yes)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import asdict

from gobtui.adapters.recall.card_index import CardIndexCheck, check_vault_card_index
from gobtui.adapters.vault.prune import repair
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.common import (
    homes_of,
    snapshots_of,
)
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.vault_common import (
    dump,
    handles_vault_errors,
    list_entries,
    open_vault,
    resolve_session,
    safe,
    span,
)
from gobtui.core.model import Provider
from gobtui.core.vault.errors import (
    VaultError,
)
from gobtui.core.vault.reports import RECOVERED_LABEL
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes


@handles_vault_errors
def cmd_vault(args: argparse.Namespace) -> int:
    vault = open_vault()
    if args.deep and not args.stats:
        raise CliError("--deep goes with --stats")
    if args.yes and not args.repair:
        raise CliError("--yes goes with --repair")
    if args.repair:
        if args.stats or args.session is not None:
            raise CliError("--repair takes no session and no --stats")
        return print_repair(vault, args)
    if args.stats:
        return print_stats(vault, args)
    if args.session is not None:
        target = resolve_session(args, args.session)
        entries = snapshots_of(vault, target.session_id, target.file)
    else:
        entries = vault.entries()
    return list_entries(
        entries, args.json, "the vault is empty" if not args.session else "no snapshots"
    )


def print_stats(vault: Vault, args: argparse.Namespace) -> int:
    stats = vault.stats(deep=args.deep)
    cards = check_vault_card_index(vault) if args.deep else None
    failed = 1 if stats.damaged or (cards is not None and cards.damaged) else 0
    if args.json:
        data = stats.model_dump(mode="json")
        if cards is not None:
            data["card_index"] = asdict(cards)
        dump(data)
        return failed
    dedup = stats.logical_bytes / stats.stored_bytes if stats.stored_bytes else 1.0
    print(f"snapshots  {stats.snapshots} of {stats.sessions} sessions, {stats.manifests} manifests")
    print(f"stored     {human_bytes(stats.stored_bytes)} in {stats.chunks} chunks")
    print(f"holding    {human_bytes(stats.logical_bytes)} of transcripts ({dedup:.1f}x)")
    print(f"index      {human_bytes(stats.index_bytes)}; {span(stats.oldest_ts, stats.newest_ts)}")
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
        print(f"DAMAGED    {damage.sha256[:12]}{where}: {safe(damage.message)}")
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


def print_repair(vault: Vault, args: argparse.Namespace) -> int:
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
        return dump(report)
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
        print(f"  line {line.line}{names} dropped: {safe(line.reason)}")
    if report.recovered:
        print(
            f"{fmt.plural(len(report.recovered), 'snapshot')} no valid line named, {would}rebuilt:"
        )
    for item in report.recovered:
        e = item.entry
        print(f"  {e.sha256[:12]}  {e.provider.value} {safe(e.session_id)}  {safe(e.path)}")
        by_source: dict[str, list[str]] = {}
        for field, source in item.sources.items():
            by_source.setdefault(source.value, []).append(field)
        for how, fields in by_source.items():
            print(f"      {', '.join(fields)}: {_SOURCE_WORDS[how]}")
    for damage in report.damaged:
        print(
            f"  {damage.sha256[:12]} is damaged, {would}left out of the index (its files are "
            f"kept; prune refuses while they are there): {safe(damage.message)}"
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
