"""The vault commands that read archived content: recall (state cards), search-snapshot
(records holding a text, counted, not shown) and read-snapshot (a page of one record, its
control characters escaped)."""

from __future__ import annotations

import argparse
import sys

from gobtui.adapters.vault.recovery import read_record, recall, search
from gobtui.cli.dispatch import CliError
from gobtui.cli.vault_common import (
    dump,
    handles_vault_errors,
    open_vault,
    resolve_session,
    safe,
    when,
)
from gobtui.core.record_number import index_of, shown
from gobtui.core.vault.errors import (
    VaultError,
    VaultErrorCode,
)
from gobtui.view_models import format as fmt
from gobtui.view_models.format import human_bytes


@handles_vault_errors
def cmd_recall(args: argparse.Namespace) -> int:
    session = args.session
    session_id = resolve_session(args, session).session_id if session is not None else None
    result = recall(open_vault(), args.query, args.limit, session_id)
    if args.json:
        return dump(result)
    if not result.results:
        print(f"no state cards found in {fmt.plural(result.snapshots_scanned, 'snapshot')}")
        return 0
    for rank, hit in enumerate(result.results, start=1):
        hits = f"{hit.hits} hits, " if args.query else ""
        print(
            f"{rank}. {hit.snapshot_sha256[:12]}  {hit.provider.label} {hit.session_id[:8]:<8}  "
            f"{when(hit.ts)}  ({hits}record {shown(hit.record_index)})"
        )
        for line in hit.card.render().splitlines():
            print(f"     {safe(line)}")
    more = f" (first {len(result.results)} shown)" if result.truncated else ""
    cards = fmt.plural(result.cards_matched, "card")
    print(f"{cards} in {fmt.plural(result.snapshots_scanned, 'snapshot')}{more}")
    return 0


@handles_vault_errors
def cmd_search(args: argparse.Namespace) -> int:
    vault = open_vault()
    result = search(vault, vault.find(args.sha).sha256, args.query, args.limit)
    if args.json:
        return dump(result)
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


@handles_vault_errors
def cmd_read(args: argparse.Namespace) -> int:
    vault = open_vault()
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
        return dump(page)
    end = page.next_offset if page.next_offset is not None else page.record_bytes
    sys.stdout.write(safe(page.content) + "\n")
    after = f"; next: --offset {page.next_offset}" if page.next_offset is not None else ""
    print(
        f"record {shown(page.record_index)} of {page.snapshot_sha256[:12]}, bytes {page.offset}..{end} "
        f"of {page.record_bytes} (untrusted archived data){after}",
        file=sys.stderr,
    )
    return 0
