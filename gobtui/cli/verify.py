"""`gobtui verify <session|path> [--json]`: the structural checks of one transcript file.

Exit status: 1 when any finding is an error, 0 otherwise (warnings included), 2 for bad input.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gobtui.adapters.files.regular import regular_file
from gobtui.adapters.providers.registry import verify_checks
from gobtui.cli.dispatch import CliError
from gobtui.cli.safe_output import write_json
from gobtui.core.limits import VERIFY_MAX_BYTES
from gobtui.core.model import Provider
from gobtui.core.record_number import shown
from gobtui.core.verify import VerifyReport, oversize_report, verify
from gobtui.view_models import format as fmt

EXIT_ERRORS = 1


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = commands.add_parser(
        "verify",
        parents=[common],
        help="structural checks of a transcript (exit 1 on any error finding)",
        description="Check that a transcript would resume: JSON lines, uuid links, tool "
        "pairing, Codex windows. Lines count from 0; findings never quote the transcript.",
    )
    parser.add_argument("target", metavar="session|path", help="a transcript file")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    path, provider = _read_target(args)
    report = _verify_file(path, provider)
    if args.json:
        data = report.model_dump(mode="json")
        write_json(data)
    else:
        for line in render(report, path.name):
            print(line)
    return EXIT_ERRORS if report.errors else 0


def _read_target(args: argparse.Namespace) -> tuple[Path, Provider]:
    """The transcript named by `args.target`: an id prefix or a path (shared resolver)."""
    from gobtui.cli.common import resolve_target

    target = resolve_target(args, args.target)
    return target.path, target.provider


def _verify_file(path: Path, provider: Provider) -> VerifyReport:
    try:
        with regular_file(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > VERIFY_MAX_BYTES:  # not worth reading into memory
                return oversize_report(size, provider)
            data = handle.read(size)  # (as of the open: what a writer adds later is not judged)
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror or error}") from None
    return verify(data, verify_checks(provider))


def render(report: VerifyReport, name: str) -> list[str]:
    """One line per group of like findings (`rec N  severity  code  message`; a repeated one
    `recs A–B  severity  code ×n  message`), the counts, then whether it is safe to resume.
    Records are numbered from 1, as everywhere gobtui shows one (--json keeps the 0-based
    line index)."""
    lines = []
    for group in report.groups:
        if group.count == 1:
            where = "-" if group.first_line is None else str(shown(group.first_line))
            lines.append(
                f"rec {where:<7} {group.severity.value:<7}  {group.code.value}  {group.message}"
            )
            continue
        first, last = group.first_line, group.last_line
        span = "-" if first is None else f"{shown(first)}–{shown(first if last is None else last)}"
        lines.append(
            f"recs {span:<6} {group.severity.value:<7}  {group.code.value} ×{group.count}  "
            f"{group.message}"
        )
    if report.errors:
        verdict = "errors: a resume would break or lose context"
    elif report.findings:
        verdict = "ok, with warnings"
    else:
        verdict = "clean"
    lines.append(
        f"{name}: {report.provider.label}, {fmt.plural(report.records, 'record')}, "
        f"{fmt.plural(report.bytes, 'byte')}: {fmt.plural(report.errors, 'error')}, "
        f"{fmt.plural(report.warnings, 'warning')} ({verdict})"
    )
    lines.append(report.resume_verdict)
    return lines
