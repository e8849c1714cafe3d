"""What the vault commands share: their errors and exit codes, the session a selector names
(the vault's own ids first), and how a listing, a time or archived text is printed."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gobtui.adapters.sessions.select import SelectError, check_selector
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.common import (
    file_named,
    homes_of,
    one_file,
    recorded_file,
    resolve_target,
)
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.safe_output import write_json
from gobtui.core.model import Provider
from gobtui.core.vault.errors import (
    DAMAGE_CODES,
    INPUT_CODES,
    VaultError,
    VaultErrorCode,
    has_control,
)
from gobtui.core.vault.index import IndexEntry
from gobtui.view_models.format import human_bytes

Handler = Callable[[argparse.Namespace], int]


LISTED_FROM = (
    "listed from the index: lines checksummed, manifests hash-checked; chunks not re-hashed "
    "(gobtui vault --stats --deep re-hashes them)"
)
"""What a listing checked, said under it."""


@dataclass(frozen=True, slots=True)
class SessionTarget:
    provider: Provider
    session_id: str
    path: Path
    file: Path | None = None
    """The file the selector named, when it named one: its snapshots only (snapshots_of)."""


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


def handles_vault_errors(handler: Handler) -> Handler:
    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        with vault_errors():
            return handler(args)

    return run


def open_vault() -> Vault:
    return Vault()


def resolve_session(args: argparse.Namespace, selector: str, one: bool = False) -> SessionTarget:
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
    entries = open_vault().entries(checked=False)  # ids only; what is listed or read is checked
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


def dump(value: BaseModel | list[Any] | dict[str, Any]) -> int:
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    write_json(data)
    return 0


def list_entries(entries: list[IndexEntry], as_json: bool, empty: str) -> int:
    if as_json:
        return dump([e.model_dump(mode="json") for e in entries])
    if not entries:
        print(empty)
        return 0
    for e in entries:
        unbound = "  (line without a checksum)" if not e.is_bound else ""
        print(
            f"{when(e.ts)}  {e.sha256[:12]}  {e.provider.value:<6} {e.session_id[:8]:<8}  "
            f"{human_bytes(e.bytes):>7} {e.record_count:>7} rec  {safe(e.strategy or '-')}"
            f"{unbound}"
        )
    print(LISTED_FROM)
    return 0


def when(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def span(oldest: float | None, newest: float | None) -> str:
    if oldest is None or newest is None:
        return "no snapshots yet"
    return f"from {when(oldest)} to {when(newest)}"


def safe(text: str) -> str:
    """Archived text for a terminal: control characters (escape sequences...) shown escaped."""
    if not has_control(text):
        return text
    return "".join(repr(ch)[1:-1] if has_control(ch) else ch for ch in text)
