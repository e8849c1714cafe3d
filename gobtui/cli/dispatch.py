"""`gobtui`: the dashboard by default, and scriptable commands beside it.

Errors are one line on stderr and a non-zero exit (2 for bad usage or input), never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NoReturn, Protocol, cast

from gobtui import __version__
from gobtui.adapters.config.paths import (
    HomeError,
    Homes,
    cache_dir,
    config_path,
    data_dir,
    resolve_homes,
)
from gobtui.adapters.files.private_fs import PrivateError
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.discovery import any_transcript
from gobtui.adapters.sessions.store import SessionStore
from gobtui.cli.exits import Exit
from gobtui.cli.safe_output import SafeStreams, write_json
from gobtui.cli.scorer_note import SCORING_COMMANDS, scorer_note
from gobtui.core.alerts import AlertSettings
from gobtui.core.board import BoardPolicy, SortKey, build_board, sort_rows
from gobtui.core.limits import DEFAULT_MAX_AGE_SECS, ERROR_MAX_CHARS, HOT_SECS, MAX_LIVE_SECS
from gobtui.core.report import detect_row
from gobtui.view_models import format as fmt

if TYPE_CHECKING:
    from gobtui.core.model import SessionSummary
    from gobtui.services.policies import SessionPolicies
    from gobtui.services.run_settings import AppConfig

EXIT_USAGE = Exit.USAGE

COMMAND_MODULES: tuple[str, ...] = (
    "plan",
    "apply",
    "verify",
    "vault",
    "events",
    "recall",
    "watch",
    "mcp",
    "hooks",
    "bench",
    "plugin",
)
"""Modules under gobtui/ that add subcommands; each sets `handler` on its parsers."""


class CommandModule(Protocol):
    def register(
        self,
        commands: argparse._SubParsersAction[argparse.ArgumentParser],
        common: argparse.ArgumentParser,
    ) -> None: ...


class CliError(Exception):
    """A one-line message for the user, with an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


class WarningLines(logging.Handler):
    """What the adapters log (a directory it cannot read, an unusable cache) as one
    `gobtui: warning: ...` line, never a traceback. It writes to sys.stderr as it is at that
    moment, so the dashboard's capture of stderr (and pytest's) applies."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                message += f" ({type(error).__name__}: {error})"
            sys.stderr.write(f"gobtui: warning: {message}\n")
        except Exception:
            self.handleError(record)


class OneLineParser(argparse.ArgumentParser):
    """Usage mistakes are one line on stderr (with a pointer to --help), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _home_options(defaults: bool = True) -> argparse.ArgumentParser:
    """The options every session command shares. The main parser takes them with their
    defaults; each subcommand's copy (`defaults=False`) leaves an option it was not given
    unset, because argparse copies a subparser's defaults over what the main parser parsed:
    `gobtui --claude-home X detect` would otherwise lose X."""

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--claude-home",
        metavar="DIR",
        default=default(None),
        help="Claude Code home (default: $CLAUDE_CONFIG_DIR or ~/.claude)",
    )
    common.add_argument(
        "--codex-home",
        metavar="DIR",
        default=default(None),
        help="Codex home (default: $CODEX_HOME or ~/.codex)",
    )
    common.add_argument(
        "--all",
        action="store_true",
        default=default(False),
        help="include sessions older than 7 days",
    )
    common.add_argument(
        "--live-secs",
        type=_positive_seconds,
        default=default(HOT_SECS),
        metavar="N",
        help=f"a session written within N seconds is live (default {HOT_SECS})",
    )
    return common


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= MAX_LIVE_SECS:  # 0 itself is refused: nothing would ever be live
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most {MAX_LIVE_SECS:,} seconds, got {text}"
        )
    return value


def build_parser(only_detect: bool = False) -> argparse.ArgumentParser:
    """The whole CLI; `only_detect` leaves out the other command groups, whose imports
    (planning, vault, publication) would cost a status-line `detect` a fifth of a second."""
    parser: argparse.ArgumentParser = OneLineParser(
        prog="gobtui",
        description="Watch the context windows of local Claude Code and Codex sessions.",
        parents=[_home_options()],
    )
    common = _home_options(defaults=False)
    parser.add_argument("--version", action="version", version=f"gobtui {__version__}")
    parser.add_argument("--demo", action="store_true", help="open on a generated demo home")
    parser.add_argument(
        "--auto-demo", action="store_true", help="open the demo home when no real session exists"
    )
    parser.add_argument("--theme", help="a Textual theme name (e.g. ansi-dark, nord)")
    parser.add_argument("--no-watch", action="store_true", help="do not follow file changes")
    parser.add_argument("--no-cache", action="store_true", help="read every file afresh")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    detect = commands.add_parser("detect", parents=[common], help="one row per session")
    detect.add_argument("--json", action="store_true", help="machine-readable output")
    detect.add_argument(
        "--composition",
        action="store_true",
        help="with --json: what fills each context, by kind (reads every file whole)",
    )
    detect.add_argument(  # unset unless given here, like `common` (see _home_options)
        "--no-cache", action="store_true", default=argparse.SUPPRESS, help="read every file afresh"
    )
    detect.add_argument(
        "--sort", choices=[k.value for k in SortKey], default=SortKey.ACTIVITY.value
    )
    detect.set_defaults(handler=cmd_detect)
    for module in () if only_detect else _command_modules():
        module.register(commands, common)
    return parser


def _command_modules() -> list[CommandModule]:
    """The command groups beside `detect`, each a module with `register(commands, common)`."""
    import importlib

    return [
        cast(CommandModule, importlib.import_module(f"gobtui.cli.{name}"))
        for name in COMMAND_MODULES
    ]


def _homes(args: argparse.Namespace) -> Homes:
    try:
        return resolve_homes(args.claude_home, args.codex_home, os.environ)
    except HomeError as error:
        raise CliError(str(error)) from None


def _max_age(args: argparse.Namespace) -> float | None:
    return None if args.all else DEFAULT_MAX_AGE_SECS


def _session_policies() -> SessionPolicies:
    """config.toml's resolved policies, shared by detect and the dashboard so both show the
    same triggers; a broken file is the same one-line usage error in both."""
    from gobtui.adapters.config.config_file import (
        ConfigError,  # imported here: `detect` starts lean
    )
    from gobtui.services import policies

    try:
        return policies.current()
    except ConfigError as error:
        raise CliError(str(error)) from None


def _no_config_file() -> bool:
    try:
        os.stat(config_path())
    except (FileNotFoundError, NotADirectoryError):
        return True
    return False


def _detect_triggers() -> Callable[[SessionSummary], int] | None:
    """Each session's configured trigger, as the dashboard shows it. Without a config file
    that is the policy default, which is the board's own default too (a test checks they
    agree): None then, so a status-line `detect` does not load the config machinery at all."""
    if _no_config_file():
        return None
    return _session_policies().trigger  # an unreadable file fails here, as in plan


def cmd_detect(args: argparse.Namespace) -> int:
    homes = _homes(args)
    session_trigger = _detect_triggers()  # before the scan: a bad file fails fast
    now = time.time()
    cache = None if args.no_cache else SummaryCache(cache_dir() / "cursors")
    from gobtui.adapters.providers.full_parse import gc_paused

    try:
        store = SessionStore(homes, cache, max_age_secs=_max_age(args))
        with gc_paused():  # thousands of summaries, all kept: nothing for the GC to find
            summaries = store.scan(now)
    finally:
        if cache is not None:
            cache.close()
    from gobtui.adapters.publish.receipt_feed import ReceiptFeed
    from gobtui.services.published_forks import PublishedForks

    # As the board shows them (the receipt model loads only when there are receipts).
    summaries = PublishedForks(ReceiptFeed().new()).mark(summaries)
    policy = BoardPolicy(hot_secs=args.live_secs, session_trigger=session_trigger)
    rows = sort_rows(build_board(summaries, policy, now), SortKey(args.sort))
    out = [detect_row(r) for r in rows]
    if args.json:
        data: list[dict[str, object]] = [dict(r) for r in out]
        if args.composition:
            for row, entry in zip(rows, data, strict=True):
                entry["composition"] = _composition(row.summary)
        write_json(data)
        return 0
    if not out:
        print("no sessions found" + ("" if args.all else " in the last 7 days (try --all)"))
        return 0
    from gobtui.view_models.format import human_bytes  # as the dashboard writes sizes

    print(
        f"{'prov':<6} {'session':<8}  {'used/window':>11} {'occ':>7}  {'':<4} "
        f"{'age':>4}  {'lifetime':>8}  {'size':>8}  title"
    )
    for r in out:
        live = "live" if r["live"] else "idle"
        warn = f" ⚠{r['bad_lines']}" if r["bad_lines"] else ""
        used = f"{fmt.tokens(r['context_tokens'])}/{fmt.tokens(r['context_window'])}"
        occupancy = r["occupancy"]
        occ = fmt.percent(occupancy) if occupancy is not None else r["context_state"]
        title = fmt.ellipsize(r["title"] or "", 40)
        life = r["lifetime"]
        # (≥: summed over the head and tail read so far, not the whole file)
        spent = (
            "-"
            if life is None
            else ("≥" if life["partial"] else "") + fmt.tokens(life["total_tokens"])
        )
        print(
            f"{r['provider']:<6} {r['session_id'][:8]:<8}  {used:>11} {occ:>7}  {live:<4} "
            f"{fmt.duration(r['age_secs']):>4}  {spent:>8}  {human_bytes(r['bytes']):>8}  "
            f"{title}{warn}"
        )
    return 0


def _composition(summary: SessionSummary) -> dict[str, object] | None:
    """detect --json --composition's object for one session (None: it cannot be read)."""
    from pathlib import Path

    from gobtui.adapters.planning.load import PlanningError, load_session
    from gobtui.core.context_words import composition_object, reclaimable

    try:
        session = load_session(Path(summary.path), summary.provider)
    except PlanningError:
        return None
    comp = session.composition
    policy = _session_policies().resolve(summary).policy
    return composition_object(comp, reclaimable(session.transcript, policy, comp))


@dataclass(frozen=True)
class _UiSettings:
    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    alerts: AlertSettings = field(default_factory=AlertSettings)
    trigger: Callable[[SessionSummary], int] | None = None


def _ui_settings() -> _UiSettings:
    """What the dashboard takes from config.toml; without the file, the defaults (the same
    as an empty file's: a test checks), and the config machinery is not loaded at start."""
    if _no_config_file():
        return _UiSettings()
    session_policies = _session_policies()
    config = session_policies.config
    return _UiSettings(
        config.ui_theme, config.ui_keymap, config.ui_alerts, session_policies.trigger
    )


def cmd_dashboard(args: argparse.Namespace) -> int:
    from gobtui.demo.home import default_demo_root
    from gobtui.services.run_settings import AppConfig

    homes = _homes(args)
    settings = _ui_settings()
    demo = bool(args.demo)
    if args.auto_demo and not demo and not any_transcript(homes):
        print(
            "gobtui: no Claude Code or Codex sessions here; opening the demo home", file=sys.stderr
        )
        demo = True
    config = AppConfig(
        claude_home=args.claude_home,
        codex_home=args.codex_home,
        demo=demo,
        max_age_secs=None if demo else _max_age(args),
        watch=not args.no_watch,
        use_cache=not args.no_cache,
        theme=args.theme or settings.theme or _saved_theme(),
        remember_theme=True,
        keymap=settings.keymap,
        alerts=settings.alerts,
        policy=BoardPolicy(hot_secs=args.live_secs, session_trigger=settings.trigger),
        config_file=config_path(),
    )
    if not demo:
        return _run_dashboard(config)
    # The demo lives in one temporary folder: its sessions, and the vault, receipts and events
    # of what is applied to them (never the user's data directory). It goes when the app ends.
    root = default_demo_root()
    try:
        os.environ["GOBTUI_DATA_DIR"] = str(root / "data")
        return _run_dashboard(replace(config, demo_root=root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _saved_theme() -> str | None:
    """The theme last picked in the palette, while Textual still has it."""
    from textual.theme import BUILTIN_THEMES

    from gobtui.adapters.config.ui_state import saved_theme

    theme = saved_theme()
    return theme if theme in BUILTIN_THEMES else None


def _run_dashboard(config: AppConfig) -> int:
    from gobtui.app import make_app

    data_dir()  # an unsafe data folder is refused here, in one line, not later inside the app
    app = make_app(config)
    if config.theme and config.theme not in app.available_themes:
        raise CliError(
            f"unknown theme {config.theme!r}; try one of: {', '.join(sorted(app.available_themes))}"
        )
    app.run()
    # Textual prints an unhandled error's traceback as the app closes and sets return_code:
    # the exit status must say so too.
    return app.return_code or 0


def _first_command(argv: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """The first word that is neither an option nor an option's value: in
    `gobtui --claude-home DIR detect` that is `detect`, not DIR."""
    takes_value = [
        option
        for action in parser._actions  # argparse has no public list of a parser's options
        if action.nargs != 0
        for option in action.option_strings
    ]
    skip_next = False
    for arg in argv:
        if skip_next:
            skip_next = False
        elif arg.startswith("-") and arg != "-":
            # `--theme nord` (or an abbreviation, `--th nord`) takes the next word; `--theme=nord`
            # and the `--` that ends the options do not.
            skip_next = (
                arg != "--" and "=" not in arg and any(o.startswith(arg) for o in takes_value)
            )
        else:
            return arg
    return None


DASHBOARD_ONLY = {
    "demo": ("--demo", ()),
    "auto_demo": ("--auto-demo", ()),
    "theme": ("--theme", ()),
    "no_watch": ("--no-watch", ()),
    "no_cache": ("--no-cache", ("detect",)),
}
"""Options of the dashboard (flag, and the commands that read it too): given with any other
command they would do nothing."""


def _refuse_dashboard_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    given = [
        flag
        for name, (flag, commands) in DASHBOARD_ONLY.items()
        if getattr(args, name, None) not in (None, False) and args.command not in commands
    ]
    if given:
        parser.error(f"{', '.join(given)}: for the dashboard only, not with `{args.command}`")


def main(argv: Sequence[str] | None = None) -> int:
    # Everything the CLI prints is made safe to show (gobtui.cli.safe_output), argparse's own
    # errors included: a selector is text a user may have pasted from a transcript.
    with SafeStreams():
        return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    parser = build_parser(only_detect=True)  # cheap: no command module imported yet
    command = _first_command(argv, parser)
    if command != "detect":
        parser = build_parser()
    args = parser.parse_args(argv)
    if command in SCORING_COMMANDS:
        note = scorer_note(os.environ)
        if note is not None:
            print(note, file=sys.stderr)
    if getattr(args, "handler", None) is not None:
        _refuse_dashboard_options(parser, args)
    warnings = WarningLines()
    logging.getLogger("gobtui.adapters").addHandler(warnings)
    try:
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        return cmd_dashboard(args)
    except CliError as error:
        print(f"gobtui: error: {error_line(str(error))}", file=sys.stderr)
        return error.code
    except PrivateError as error:  # an unsafe data folder: fixed by the user, as a bad home is
        print(f"gobtui: error: {error_line(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `gobtui detect | head`: the reader left; that is not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        detail = error_line(f"{error.strerror or error} ({error.filename or ''})")
        print(f"gobtui: error: {detail}", file=sys.stderr)
        return Exit.IO
    except KeyboardInterrupt:  # (the cleanup above has run: the one line, and 130)
        from gobtui.cli.interrupted import say_interrupted

        return say_interrupted()
    finally:
        logging.getLogger("gobtui.adapters").removeHandler(warnings)


def error_line(message: str) -> str:
    """An error as one line of a bounded length (a 5 KB selector is not worth echoing)."""
    flat = " ".join(message.split())
    return flat if len(flat) <= ERROR_MAX_CHARS else flat[: ERROR_MAX_CHARS - 1] + "…"


if __name__ == "__main__":
    sys.exit(main())
