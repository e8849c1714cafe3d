"""`install-hooks`, `uninstall-hooks` and the hidden `hook <event>` the clients run.

install-hooks adds gobtui's PreCompact and SessionStart hooks to Claude Code's settings.json
and Codex's hooks.json; without --yes it shows what it would add and where, and writes
nothing. Only gobtui's own entries are ever added or taken out.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.hooks.settings import (
    Edit,
    HookFileChanged,
    HookFileError,
    parse,
    plan_edit,
    render,
    write_edit,
)
from gobtui.cli.common import homes_of
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.core.hooks import HookEvent, is_ours
from gobtui.core.limits import HOOK_STDIN_DEADLINE_SECS, HOOK_STDIN_MAX_BYTES
from gobtui.core.model import Provider


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    for name, install, what in (
        ("install-hooks", True, "add gobtui's compaction hooks to Claude Code and Codex"),
        ("uninstall-hooks", False, "take gobtui's hooks out of Claude Code and Codex"),
    ):
        p = commands.add_parser(name, parents=[common], help=what)
        p.add_argument("--yes", action="store_true", help="write (without it: show what and where)")
        p.add_argument("--provider", choices=[p.value for p in Provider], help="only this client")
        p.set_defaults(handler=cmd_hooks, install=install)
    hook = commands.add_parser("hook", parents=[common])  # no help: not listed (the clients run it)
    hook.add_argument("event", help=", ".join(e.value for e in HookEvent))
    hook.set_defaults(handler=cmd_hook)


def executable() -> str:
    """The gobtui the clients should run: this one, by absolute path (a hook runs with the
    client's PATH, which may not hold gobtui's folder)."""
    launched = Path(sys.argv[0])
    if launched.name == "gobtui" and launched.is_file():
        return str(launched.resolve())
    return shutil.which("gobtui") or "gobtui"


def _providers(args: argparse.Namespace) -> list[Provider]:
    return [Provider(args.provider)] if args.provider else list(Provider)


def _ours(doc: Any) -> dict[str, list[Any]]:
    """The matcher groups holding a handler of gobtui's, by event."""
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    found: dict[str, list[Any]] = {}
    for name, groups in (hooks or {}).items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(is_ours(h) for h in handlers):
                found.setdefault(name, []).append(group)
    return found


def _preview(edit: Edit, install: bool) -> str:
    """What an install adds, or an uninstall takes out: gobtui's groups, as JSON."""
    doc = edit.merge.doc if install else (parse(edit.original) if edit.original.strip() else {})
    return render({"hooks": _ours(doc)}).rstrip("\n")


def cmd_hooks(args: argparse.Namespace) -> int:
    homes: Homes = homes_of(args)
    done = False
    for provider in _providers(args):
        try:
            edit = plan_edit(homes, provider, executable(), args.install)
        except HookFileError as error:
            raise CliError(str(error)) from None
        if edit is None:
            print(f"{provider.value}: no home to write hooks into; skipped")
            continue
        verb = "adds" if args.install else "removes"
        if not edit.merge.changed:
            state = "already installed" if args.install else "none installed"
            print(f"{provider.value}: {edit.path}: gobtui's hooks {state}; nothing to write")
            continue
        changed = ", ".join(edit.merge.changed)
        if not args.yes:
            print(f"would write {edit.path} ({verb} {changed}; the rest is kept as it is):")
            print(_preview(edit, args.install))
            done = True
            continue
        try:
            backup = write_edit(edit)
        except HookFileChanged as error:  # the client's own write wins; nothing written over
            raise CliError(str(error), Exit.REFUSED) from None
        except HookFileError as error:
            raise CliError(str(error)) from None
        kept = f"; the old file is kept as {backup}" if backup else ""
        print(f"wrote {edit.path} ({verb} {changed}){kept}")
        if provider is Provider.CODEX and args.install:
            print("  Codex runs a new hook only once you trust it: open /hooks in Codex")
    if done:
        print("run again with --yes to write it")
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """Always 0: a hook must never block or break the agent that runs it."""
    from gobtui.adapters.hooks.handler import handle, log_skip
    from gobtui.adapters.hooks.stdin import StdinEnd, read_bounded
    from gobtui.core.hooks import HookSkip

    stdin = read_bounded(0, HOOK_STDIN_MAX_BYTES, HOOK_STDIN_DEADLINE_SECS)
    if stdin.end is StdinEnd.DEADLINE:
        # The client is told (its hook log shows stderr) and goes on: exit 0, no output.
        print(
            f"gobtui hook: stdin was not closed within {HOOK_STDIN_DEADLINE_SECS:g} s; "
            "nothing done",
            file=sys.stderr,
        )
        log_skip(args.event, HookSkip.STDIN_OPEN)
        return 0
    if stdin.end is StdinEnd.TOO_LARGE:
        log_skip(args.event, HookSkip.TOO_LARGE)
        return 0
    try:
        homes = homes_of(args)
        result = handle(args.event, stdin.data, homes, shlex.quote(executable()))
    except Exception:  # the agent must go on whatever happens here
        log_skip(args.event, HookSkip.FAILED)
        return 0
    for note in result.notes:
        log_skip(args.event, note)
    if result.skipped is not None:
        log_skip(args.event, result.skipped)
    if result.output:
        sys.stdout.write(result.output + "\n")
    return 0
