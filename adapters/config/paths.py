"""Where gobtui keeps its own files, and where the provider homes are.

Every location can be overridden by an environment variable so tests and benchmarks never
touch the real ones. Provider homes follow the reference order: the command-line flag, then the
provider's own variable, then the default under the user's home directory.

The data folder holds the vault, receipts and events: `data_dir()` hands it out only once it is
private (see adapters.files.private_fs), and refuses it otherwise. The cache folder is checked where
the cache opens it (adapters.sessions.cache): a refused cache is only switched off.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from ...core.model import Provider
from ..files.private_fs import private_dir

log = logging.getLogger(__name__)

APP_NAME = "gobtui"

HomeSource = Literal["flag", "env", "default"]


class HomeError(Exception):
    """A provider home named on the command line is unusable. The message is one line."""


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def _user_home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME")
    return Path(home) if home else Path.home()


def _expand(value: str, environ: Mapping[str, str]) -> Path:
    """`~` expanded against the given environment; made absolute but not resolved."""
    if value == "~" or value.startswith("~/"):
        value = str(_user_home(environ)) + value[1:]
    return Path(os.path.abspath(value))


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """$GOBTUI_DATA_DIR, or ~/.local/share/gobtui (the platform's user data folder).

    Without `environ` this is the folder this process writes to, so it is made private first:
    created 0700 (missing parents too), refused when it is a symlink, not a directory, someone
    else's or writable by others (PrivateError, one line), tightened to 0700 when readable by
    others (said once, as a warning). With `environ` it only says where the folder would be.
    """
    env = _env(environ)
    if env.get("GOBTUI_DATA_DIR"):
        path = _expand(env["GOBTUI_DATA_DIR"], env)
    else:
        path = Path(platformdirs.user_data_dir(APP_NAME))
    if environ is None:
        for note in private_dir(path, "data folder"):
            log.warning("%s", note)
    return path


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """$GOBTUI_CACHE_DIR, or ~/.cache/gobtui. Only where: SummaryCache checks it on opening."""
    env = _env(environ)
    if env.get("GOBTUI_CACHE_DIR"):
        return _expand(env["GOBTUI_CACHE_DIR"], env)
    return Path(platformdirs.user_cache_dir(APP_NAME))


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = _env(environ)
    if env.get("GOBTUI_CONFIG"):
        return _expand(env["GOBTUI_CONFIG"], env)
    return _user_home(env) / ".config" / APP_NAME / "config.toml"


@dataclass(frozen=True, slots=True)
class Homes:
    """The provider homes to scan. None means the provider is not scanned at all."""

    claude: Path | None
    codex: Path | None
    claude_explicit: bool = False
    codex_explicit: bool = False
    claude_source: HomeSource = "default"
    codex_source: HomeSource = "default"

    def of(self, provider: Provider) -> Path | None:
        """The home of this provider's client (None: not scanned, or a provider whose files
        are found only by their content, under another's)."""
        if provider is Provider.CLAUDE:
            return self.claude
        return self.codex if provider is Provider.CODEX else None


def _reason(error: OSError) -> str:
    return (error.strerror or str(error)).lower()


def _check_home(label: str, path: Path) -> None:
    """A home the user named must exist, be a directory and be listable: discovery would
    otherwise skip it and report no sessions, as if it were empty. (It is listed for real:
    os.access ignores ACLs and answers yes to root.)"""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise HomeError(f"{label} home {path} does not exist") from None
    except OSError as error:  # e.g. a parent directory without search permission
        raise HomeError(f"{label} home {path} cannot be read: {_reason(error)}") from None
    if not stat.S_ISDIR(mode):
        raise HomeError(f"{label} home {path} is not a directory")
    try:
        with os.scandir(path):
            pass
    except OSError as error:
        raise HomeError(f"{label} home {path} cannot be read: {_reason(error)}") from None


def _resolve_one(
    label: str, flag: str | None, env_name: str, default: str, environ: Mapping[str, str]
) -> tuple[Path, HomeSource]:
    if flag:
        path = _expand(flag, environ)
        # Only a home the user typed is checked: a missing default is simply an empty home.
        _check_home(label, path)
        return path, "flag"
    if environ.get(env_name):
        return _expand(environ[env_name], environ), "env"
    return _user_home(environ) / default, "default"


def resolve_homes(
    claude_home: str | None,
    codex_home: str | None,
    environ: Mapping[str, str] | None = None,
) -> Homes:
    """--flag, then CLAUDE_CONFIG_DIR / CODEX_HOME, then ~/.claude / ~/.codex.

    Raises HomeError when a home given as a flag does not exist, is not a directory or
    cannot be read.
    """
    env = _env(environ)
    claude, claude_source = _resolve_one("claude", claude_home, "CLAUDE_CONFIG_DIR", ".claude", env)
    codex, codex_source = _resolve_one("codex", codex_home, "CODEX_HOME", ".codex", env)
    return Homes(
        claude=claude,
        codex=codex,
        claude_explicit=claude_source == "flag",
        codex_explicit=codex_source == "flag",
        claude_source=claude_source,
        codex_source=codex_source,
    )
