"""The CLI's exit codes: one table, the same fault the same code in every command (the
README's "Exit codes" table says the same)."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    REFUSED = 1
    """The command ran and says no: verify found errors, nothing to apply, a plan refused,
    the session changed since planning, a fork's name is taken, a question answered no."""
    USAGE = 2
    """Bad input: arguments, a selector that names no session, config.toml, a home, a file
    that is not a transcript or is over a limit, an unsafe folder, a path through a symlink."""
    IO = 3
    """The system failed a read or a write (disk full, permission, read-only, a loop of
    symlinks): the message names the file."""
    DAMAGED = 4
    """Stored state failed a check and fails closed: the vault (gobtui vault --repair) or a
    receipt."""
    INTERRUPTED = 130
