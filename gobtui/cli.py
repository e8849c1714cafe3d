"""`gobtui`: the dashboard by default, and scriptable commands beside it.

Errors are one line on stderr and a non-zero exit (2 for bad usage or input), never a traceback.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, NoReturn, Protocol, cast

import orjson

from adapters.cache import SummaryCache
from adapters.discovery import discover
from adapters.paths import HomeError, Homes, cache_dir, resolve_homes
from adapters.store import SessionStore
from core.board import BoardPolicy, SortKey, build_board, sort_rows
from core.limits import DEFAULT_MAX_AGE_SECS, HOT_SECS, MAX_LIVE_SECS
from core.report import detect_row
from gobtui import __version__
from gobtui import format as fmt

if TYPE_CHECKING:
    from gobtui.config import AppConfig

EXIT_USAGE = 2

COMMAND_MODULES: tuple[str, ...] = ("cli_plan", "cli_apply", "cli_verify", "cli_vault")
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


class OneLineParser(argparse.ArgumentParser):
    """Usage mistakes are one line on stderr (with a pointer to --help), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _home_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--claude-home",
        metavar="DIR",
        help="Claude Code home (default: $CLAUDE_CONFIG_DIR or ~/.claude)",
    )
    common.add_argument(
        "--codex-home", metavar="DIR", help="Codex home (default: $CODEX_HOME or ~/.codex)"
    )
    common.add_argument("--all", action="store_true", help="include sessions older than 7 days")
    common.add_argument(
        "--live-secs",
        type=_positive_seconds,
        default=HOT_SECS,
        metavar="N",
        help=f"a session written within N seconds is live (default {HOT_SECS})",
    )
    return common


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= MAX_LIVE_SECS:
        raise argparse.ArgumentTypeError(f"must be between 0 and {MAX_LIVE_SECS} seconds")
    return value


def build_parser(only_detect: bool = False) -> argparse.ArgumentParser:
    """The whole CLI; `only_detect` leaves out the other command groups, whose imports
    (planning, vault, publication) would cost a status-line `detect` a fifth of a second."""
    common = _home_options()
    parser: argparse.ArgumentParser = OneLineParser(
        prog="gobtui",
        description="Watch the context windows of local Claude Code and Codex sessions.",
        parents=[common],
    )
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
    detect.add_argument("--no-cache", action="store_true", help="read every file afresh")
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
        cast(CommandModule, importlib.import_module(f"gobtui.{name}")) for name in COMMAND_MODULES
    ]


def _homes(args: argparse.Namespace) -> Homes:
    try:
        return resolve_homes(args.claude_home, args.codex_home, os.environ)
    except HomeError as error:
        raise CliError(str(error)) from None


def _max_age(args: argparse.Namespace) -> float | None:
    return None if args.all else DEFAULT_MAX_AGE_SECS


def cmd_detect(args: argparse.Namespace) -> int:
    homes = _homes(args)
    now = time.time()
    cache = None if args.no_cache else SummaryCache(cache_dir() / "cursors")
    try:
        store = SessionStore(homes, cache, max_age_secs=_max_age(args))
        summaries = store.scan(now)
    finally:
        if cache is not None:
            cache.close()
    policy = BoardPolicy(hot_secs=args.live_secs)
    rows = sort_rows(build_board(summaries, policy, now), SortKey(args.sort))
    out = [detect_row(r) for r in rows]
    if args.json:
        data = [r.model_dump(mode="json") for r in out]
        sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if not out:
        print("no sessions found" + ("" if args.all else " in the last 7 days (try --all)"))
        return 0
    for r in out:
        live = "live" if r.live else "idle"
        warn = f" ⚠{r.bad_lines}" if r.bad_lines else ""
        used = f"{fmt.tokens(r.context_tokens)}/{fmt.tokens(r.context_window)}"
        occ = fmt.percent(r.occupancy) if r.occupancy is not None else r.context_state
        title = fmt.ellipsize(r.title or "", 40)
        print(
            f"{r.provider:<6} {r.session_id[:8]}  {used:>11} {occ:>7}  {live:<4} "
            f"{fmt.duration(r.age_secs):>4}  {fmt.tokens(r.bytes):>5}B  {title}{warn}"
        )
    return 0


def cmd_dashboard(args: argparse.Namespace) -> int:
    from adapters.config_file import ConfigError
    from gobtui import policies
    from gobtui.config import AppConfig
    from gobtui.demo import default_demo_root

    homes = _homes(args)
    try:
        session_policies = policies.current()
    except ConfigError as error:
        raise CliError(str(error)) from None
    demo = bool(args.demo)
    if args.auto_demo and not demo:
        found = discover(homes, now=time.time(), max_age_secs=None)
        if not found:
            print(
                "gobtui: no Claude Code or Codex sessions here; opening the demo home",
                file=sys.stderr,
            )
            demo = True
    config = AppConfig(
        claude_home=args.claude_home,
        codex_home=args.codex_home,
        demo=demo,
        max_age_secs=None if demo else _max_age(args),
        watch=not args.no_watch,
        use_cache=not args.no_cache,
        theme=args.theme or session_policies.config.ui_theme,
        keymap=session_policies.config.ui_keymap,
        policy=BoardPolicy(hot_secs=args.live_secs, session_trigger=session_policies.trigger),
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


def _run_dashboard(config: AppConfig) -> int:
    from gobtui.app import make_app

    app = make_app(config)
    if config.theme and config.theme not in app.available_themes:
        raise CliError(
            f"unknown theme {config.theme!r}; try one of: {', '.join(sorted(app.available_themes))}"
        )
    app.run()
    return 0


def _first_command(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only_detect=_first_command(argv) == "detect")
    args = parser.parse_args(argv)
    try:
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        return cmd_dashboard(args)
    except CliError as error:
        print(f"gobtui: error: {error}", file=sys.stderr)
        return error.code
    except BrokenPipeError:
        # `gobtui detect | head`: the reader left; that is not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        print(f"gobtui: error: {error.strerror or error} ({error.filename or ''})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
