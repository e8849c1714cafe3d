"""What the command modules share: naming a session, loading the config, printing JSON,
and a progress bar that shows only on a terminal."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from gobtui.adapters.config.config_file import (
    ConfigError,
    LoadedConfig,
    ResolvedPolicy,
    load_config,
)
from gobtui.adapters.config.paths import HomeError, Homes, resolve_homes
from gobtui.adapters.planning.load import (
    LoadedSession,
    PlanningError,
    PlanningErrorCode,
    PlanOutcome,
    load_session,
    plan_session,
)
from gobtui.adapters.sessions.select import (
    SelectError,
    check_selector,
    load_summaries,
    looks_like_path,
    select_session,
)
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.safe_output import raw_stderr, write_json
from gobtui.core.model import Provider, SessionSummary
from gobtui.core.policy import PolicyProvider, capped_to_window
from gobtui.core.strategies import STRATEGIES
from gobtui.core.strategies.common import elidable_tokens
from gobtui.core.strategies.external import EXTENSION_IDS
from gobtui.services.adaptive import Adapted, adapt

if TYPE_CHECKING:
    from gobtui.adapters.vault.vault import Vault
    from gobtui.core.vault.index import IndexEntry


@dataclass(frozen=True)
class Target:
    """A session named on the command line: its file, provider and (when known) summary."""

    path: Path
    provider: Provider
    session_id: str
    summary: SessionSummary | None

    @property
    def window(self) -> int | None:
        return self.summary.context_window if self.summary else None

    def live(self, live_secs: float, now: float) -> bool:
        mtime = self.summary.mtime if self.summary else self.path.stat().st_mtime
        return now - mtime <= live_secs


def resolve_target(args: Any, selector: str, *, confined: bool = False) -> Target:
    """An id prefix among the discovered sessions, or a transcript path. `confined` (the MCP
    server): only a session file inside the homes; a path outside them is refused before any
    file system call looks at it, with one message whether or not it exists (no oracle)."""
    homes = homes_of(args)
    try:
        check_selector(selector)  # before any file system call sees it
        if confined and looks_like_path(selector):
            real = os.path.realpath(os.path.abspath(os.path.expanduser(selector)))
            if not within_homes(real, homes):  # as given: the real path would tell links apart
                raise CliError(f"{selector!r} is outside the provider homes: not read here")
            selector = real
        as_path = looks_like_path(selector) if confined else Path(selector).expanduser().is_file()
        summaries = [] if as_path else load_summaries(homes, all_sessions=True)
        found = select_session(selector, summaries)
    except (HomeError, SelectError) as error:
        raise CliError(str(error)) from None
    path = Path(found.path)
    if confined and not within_homes(str(path), homes):
        # An id that named no session but a file in the current directory: as if it were not
        # there, the answer to an id that matches nothing.
        raise CliError(f"no session matches {selector!r}")
    summary = found.summary or _summary_of(path, found.provider)
    session_id = summary.session_id if summary is not None else path.stem
    return Target(path, found.provider, session_id, summary)


def within_homes(path: str, homes: Homes) -> bool:
    """Whether `path`, symbolic links resolved, lies inside the claude or codex home."""
    real = os.path.realpath(path)
    for home in (homes.claude, homes.codex):
        if home is not None and real.startswith(os.path.realpath(home).rstrip(os.sep) + os.sep):
            return True
    return False


def require_direct(target: Target) -> None:
    """A fork is published beside its source: a path reached through a symlink would put it
    beside the link's target, somewhere the user did not name (discovery never follows one
    either). Such a path is refused for apply, fork and undo, with the real one to use."""
    path = target.path.absolute()
    real = Path(os.path.realpath(path))
    if real != path:
        raise CliError(
            f"{path} is reached through a symbolic link; a fork is published only beside the "
            f"file itself: name {real}",
            2,
        )


def file_named(selector: str) -> Path | None:
    """The transcript file a selector names, spelled as the vault records paths (real path);
    None when it names no file (an id or a prefix)."""
    candidate = Path(selector).expanduser()
    return Path(os.path.realpath(candidate)) if candidate.is_file() else None


def recorded_file(entries: list[IndexEntry], selector: str) -> IndexEntry | None:
    """The newest snapshot of the file a path names when that file is gone but the vault
    recorded it (the usual case for an undo); None for anything else."""
    candidate = Path(selector).expanduser()
    if candidate.exists() or not selector.strip():
        return None
    real = os.path.realpath(candidate)
    return next((entry for entry in entries if entry.path == real), None)


def homes_of(args: Any) -> Homes:
    """The homes the command's flags (or the environment) name; a named one that does not
    exist is a usage error, for vault commands as for the others."""
    try:
        return resolve_homes(args.claude_home, args.codex_home, os.environ)
    except HomeError as error:
        raise CliError(str(error)) from None


def one_file(entries: list[IndexEntry], selector: str, homes: Homes) -> list[IndexEntry]:
    """`entries` (snapshots of one session id) narrowed to one file: two copies of a
    transcript share an id. The copy inside the homes wins; otherwise a path must say which."""
    files = list(dict.fromkeys(entry.path for entry in entries))
    if len(files) <= 1:
        return entries
    roots = [os.path.realpath(home) for home in (homes.claude, homes.codex) if home is not None]
    inside = [f for f in files if any(f.startswith(root.rstrip(os.sep) + os.sep) for root in roots)]
    if len(inside) != 1:
        raise CliError(
            f"{selector!r} names snapshots of {len(files)} files ({', '.join(files)}); "
            "give the path of the one you mean"
        )
    return [entry for entry in entries if entry.path == inside[0]]


def snapshots_of(vault: Vault, session_id: str, file: Path | None) -> list[IndexEntry]:
    """The session's snapshots, newest first; of that one file when a path named it (two
    files can hold one session id, a copy of a transcript for one)."""
    history = vault.history(session_id)
    return history if file is None else [entry for entry in history if entry.path == str(file)]


def _summary_of(path: Path, provider: Provider) -> SessionSummary | None:
    """A file named by its path: a quick head-and-tail summary (id, model, window)."""
    from gobtui.adapters.providers.reader import open_cursor
    from gobtui.adapters.providers.registry import state_class

    try:
        return open_cursor(str(path), provider, state_class(provider)).summary()
    except (OSError, ValueError):
        return None


def strategy_named(strategy: str) -> str:
    """A strategy id the CLI can plan with: a built-in one, or external or agentic (with
    --preset)."""
    if strategy not in STRATEGIES and strategy not in EXTENSION_IDS:
        raise CliError(
            f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)}; "
            "external and agentic with --preset)"
        )
    return strategy


def load_target(target: Target) -> LoadedSession:
    """The target loaded for planning."""
    try:
        return load_session(target.path, target.provider)
    except PlanningError as error:
        raise planning_failed(error) from None


@dataclass(frozen=True)
class PlannedTarget:
    """What `plan` and `apply` work from: the resolved policy, the strategy, whether the
    session is live, the loaded session and the strategy's outcome."""

    resolved: ResolvedPolicy
    strategy: str
    live: bool
    session: LoadedSession
    outcome: PlanOutcome
    adapted: Adapted
    """The policy the plan was made with (the adaptive tuner's when it is on)."""


class ExternalRefused(CliError):
    """The policy resolves to a preset's external command where no command may run."""


def plan_target(args: Any, target: Target, *, run_external: bool = True) -> PlannedTarget:
    """The target's plan under the CLI's flags (--strategy, --preset, --trigger, ...).
    `run_external=False` (the MCP server) refuses a policy whose strategy is a preset's
    command before the session is even loaded, and hands the planner no command at all."""
    resolved = resolve_policy(args, target.provider, target.session_id, window=target.window)
    strategy = strategy_named(args.strategy or resolved.strategy)
    if not run_external and strategy in EXTENSION_IDS:
        raise ExternalRefused("the policy's strategy runs an external command", Exit.REFUSED)
    command = resolved.external_command if run_external else None
    live = target.live(args.live_secs, time.time())
    session = load_target(target)
    transcript = session.transcript
    adapted = adapt(
        resolved.policy,
        provider=target.provider,
        session_id=target.session_id,
        path=str(target.path),
        window=target.window or (transcript.summary.context_window if transcript.summary else None),
        context_tokens=transcript.context_tokens(),
        elidable_tokens=elidable_tokens(transcript) if resolved.policy.adaptive else None,
    )
    try:
        outcome = plan_session(session, strategy, adapted.policy, live, command)
    except PlanningError as error:
        raise planning_failed(error) from None
    return PlannedTarget(resolved, strategy, live, session, outcome, adapted)


def planning_failed(error: PlanningError) -> CliError:
    """A planning error as the CLI reports it, with its exit code (gobtui.cli.exits)."""
    code = {
        PlanningErrorCode.UNREADABLE: Exit.IO,
        PlanningErrorCode.CHANGED: Exit.REFUSED,
        PlanningErrorCode.EXTERNAL_FAILED: Exit.REFUSED,
    }.get(error.code, Exit.USAGE)  # over a limit, an unknown strategy: the input
    return CliError(str(error), code)


def policy_config() -> LoadedConfig:
    try:
        return load_config()
    except ConfigError as error:
        raise CliError(str(error)) from None


def resolve_policy(
    args: Any,
    provider: PolicyProvider,
    session_id: str | None,
    config: LoadedConfig | None = None,
    window: int | None = None,
) -> ResolvedPolicy:
    """config.toml layers, then --preset, then --trigger/--floor; a trigger that would fire
    after the client compacts by itself is lowered (core.thresholds.trigger_cap), unless
    --trigger names one explicitly. A native-only provider's client (Devin) compacts where it
    decides: nothing is known to lower the trigger to."""
    overrides = {
        key: value
        for key, value in (
            ("trigger_tokens", getattr(args, "trigger", None)),
            ("floor_tokens", getattr(args, "floor", None)),
        )
        if value is not None
    }
    try:
        resolved = (config or policy_config()).resolve(
            provider, session_id, getattr(args, "preset", None), overrides
        )
    except ConfigError as error:
        raise CliError(str(error)) from None
    if "trigger_tokens" in overrides or window is None or not isinstance(provider, Provider):
        return resolved  # (without a window, nothing says where the client compacts)
    return resolved.model_copy(
        update={"policy": capped_to_window(resolved.policy, provider, window)}
    )


def print_json(value: BaseModel | list[BaseModel] | dict[str, Any] | list[Any]) -> None:
    def plain(item: Any) -> Any:
        return item.model_dump(mode="json") if isinstance(item, BaseModel) else item

    data = [plain(v) for v in value] if isinstance(value, list) else plain(value)
    write_json(data)


def token_count(text: str, low: int = 0) -> int:
    """An argparse type for token counts: a whole number, `low`..10M (the policy's bounds)."""
    import argparse

    from gobtui.core.limits import MAX_POLICY_TOKENS

    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}") from None
    if not low <= value <= MAX_POLICY_TOKENS:
        raise argparse.ArgumentTypeError(
            f"must be between {low:,} and {MAX_POLICY_TOKENS:,} tokens, got {value:,}"
        )
    return value


def trigger_count(text: str) -> int:
    """--trigger: at least 1 token, as core.policy.Policy requires (a floor may be 0)."""
    return token_count(text, low=1)


def add_limit_options(parser: Any) -> None:
    """--trigger and --floor, the per-run policy overrides of plan, eval and apply."""
    parser.add_argument("--trigger", type=trigger_count, metavar="N", help="trigger tokens")
    parser.add_argument("--floor", type=token_count, metavar="N", help="floor tokens")


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int, str], None]]:
    """A one-line progress bar on stderr when it is a terminal; silent otherwise (gobtui's
    own text: it goes to the raw stream, its \r and line clearing as they are)."""
    stream = raw_stderr()
    shown = stream.isatty()
    started = time.monotonic()

    def update(done: int, total: int, what: str) -> None:
        if not shown or total <= 0:
            return
        width = 24
        filled = width * done // total
        bar = "█" * filled + "·" * (width - filled)
        elapsed = time.monotonic() - started
        stream.write(f"\r{label} {bar} {done}/{total} {what:<14.14} {elapsed:5.1f}s")
        stream.flush()

    try:
        yield update
    finally:
        if shown:
            stream.write("\r\x1b[2K")
            stream.flush()
