"""`gobtui plugin check DIR` and `gobtui plugin inspect DIR [--json]`: a plugin bundle read,
never run.

check: exit 0 and the manifest_sha256 to pin when the bundle is usable, else one line per
problem and exit 1. inspect: what the manifest declares (name, version, command, strategies,
files), whatever its state, with the same exit status. What the manifest says is text from
someone else: it reaches the terminal through the CLI's sanitizer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gobtui.adapters.planning.plugin import (
    MANIFEST_NAME,
    REFERENCE_MANIFEST_NAME,
    BundleCheck,
    PluginError,
    check_bundle,
)
from gobtui.cli.dispatch import CliError
from gobtui.cli.exits import Exit
from gobtui.cli.safe_output import write_json


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    plugin = commands.add_parser(
        "plugin",
        help="check or inspect a plugin bundle (nothing is run)",
        description=f"A plugin bundle is a folder with a {MANIFEST_NAME} (the reference's "
        f"{REFERENCE_MANIFEST_NAME} is read too); see the README's Plugins section.",
    )
    verbs = plugin.add_subparsers(dest="plugin_command", metavar="VERB", required=True)
    check = verbs.add_parser(
        "check", help="validate a bundle: one line per problem, exit 1 when invalid"
    )
    check.add_argument("bundle", metavar="DIR", help="the bundle folder (or its manifest)")
    check.set_defaults(handler=cmd_check)
    inspect = verbs.add_parser("inspect", help="show what a bundle declares")
    inspect.add_argument("bundle", metavar="DIR", help="the bundle folder (or its manifest)")
    inspect.add_argument("--json", action="store_true", help="print it as JSON")
    inspect.set_defaults(handler=cmd_inspect)


def _check(args: argparse.Namespace) -> BundleCheck:
    try:
        return check_bundle(Path(args.bundle))
    except PluginError as error:
        raise CliError(str(error)) from None


def cmd_check(args: argparse.Namespace) -> int:
    check = _check(args)
    out = sys.stdout if check.ok else sys.stderr
    for line in check_lines(check):
        print(line, file=out)
    return Exit.OK if check.ok else Exit.REFUSED


def cmd_inspect(args: argparse.Namespace) -> int:
    check = _check(args)
    shown = describe(check)
    if args.json:
        write_json(shown)
        return Exit.OK if check.ok else Exit.REFUSED
    print(f"manifest         {shown['manifest']} ({shown['dialect']} schema)")
    print(f"manifest_sha256  {shown['manifest_sha256']}")
    print(f"name             {shown['name'] or '-'} {shown['version'] or ''}".rstrip())
    if shown["description"]:
        print(f"description      {shown['description']}")
    print(f"command          {_argv(shown['command'])}")
    print(f"strategies       {', '.join(shown['strategies']) or '-'}")
    providers = shown["providers"]
    print(f"providers        {'every provider' if providers is None else ', '.join(providers)}")
    print(f"timeout          {shown['timeout_secs']:g}s")
    print(
        f"summaries        {'sent (item summaries are transcript text)' if shown['summaries'] else 'not sent'}"
    )
    if shown["environment"]:
        print(f"environment      {', '.join(shown['environment'])}")
    print(f"files            {len(shown['files'])}")
    for name, digest in shown["files"].items():
        print(f"  {digest}  {name}")
    if check.ok:
        print("valid: pin manifest_sha256 as trusted_plugin_sha256 in a preset to run it")
    else:
        print(f"invalid: {len(check.problems)} problems")
        for problem in check.problems:
            print(f"  {problem}")
    return Exit.OK if check.ok else Exit.REFUSED


def _argv(argv: list[str]) -> str:
    """An argv as words (quoted where a word holds a space), for reading only."""
    return " ".join(repr(word) if not word or " " in word else word for word in argv) or "-"


def check_lines(check: BundleCheck) -> list[str]:
    """`plugin check`'s lines: the verdict, or one line per problem."""
    m = check.manifest
    if check.ok:
        return [
            f"ok: {m.name} {m.version} ({m.path.name}, schema {m.schema_version}) "
            f"offers {', '.join(m.strategies)}",
            f"manifest_sha256 {m.sha256}",
        ]
    return [f"{m.path}: {problem}" for problem in check.problems]


def describe(check: BundleCheck) -> dict[str, Any]:
    """What the bundle declares, for `plugin inspect` (its --json form as it is)."""
    m = check.manifest
    return {
        "manifest": str(m.path),
        "dialect": m.dialect,
        "manifest_sha256": m.sha256,
        "valid": check.ok,
        "problems": list(check.problems),
        "schema_version": m.schema_version,
        "name": m.name,
        "version": m.version,
        "description": m.description,
        "command": list(m.command),
        "strategies": list(m.strategies),
        "providers": None if m.providers is None else list(m.providers),
        "files": dict(m.files),
        "timeout_secs": m.timeout_secs,
        "environment": list(m.environment),
        "summaries": m.summaries,
    }
