"""Sessions built by the real Claude Code: the pinned client, offline, drives a scripted agent
(tests/e2e/model_server.py's `Script`) through multi-turn tool use in a temporary project, so
each transcript is the client's own file, every thinking block in it signed by the checking
server over its prefix.

`python -m tests.e2e.drive OUT_DIR` regenerates the committed ones (tests/corpus/driven/):
each shape's first prompt is `claude -p PROMPT`, every later one `claude --resume ID -p PROMPT`.
The client runs its own tools (Bash, Read, Write, Edit) in the project folder; the final texts
hold a decision ("Decision: ...") and an open task ("TODO: ..."), and a failing command's
output a distinctive error line: what a compacted fork is judged on still carrying.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.clients import CLAUDE_PACKAGE, PATH, Clients, ensure_clients, run_bounded
from tests.e2e.model_server import Recorder, Script, Step, Turn, model_server

ALLOWED_TOOLS = "Bash,Read,Write,Edit"
"""Named for the client: we run as root, where --dangerously-skip-permissions is refused."""
WORKDIR = Path("/tmp/gobtui-drive")
"""Where the projects are driven: a fixed path, so a regenerated transcript differs from the
committed one only in what the client itself varies (ids, timestamps)."""
DRIVEN = Path(__file__).resolve().parents[1] / "corpus" / "driven"
ERROR_LINE = "ERROR E2E-4711: ledger checksum mismatch in batch 2026-03 (expected 91b3, got 4c07)"
DECISION = "Decision: amounts are kept as integer cents end to end; floats are never parsed."
TODO = "TODO: reconcile batch 2026-03 against the bank export before the next import."
TURN_TIMEOUT_SECS = 180
ROWS = 150
"""Rows of the ledger export the agent writes (and its test expects)."""


def claude_env(url: str, config: Path, home: Path) -> dict[str, str]:
    """The client's environment: offline, against the server at `url`, in a temporary home."""
    return {
        "PATH": PATH, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "e2e-dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "TERM": "dumb",
    }  # fmt: skip


# -- what the agent writes and runs -----------------------------------------------------------


def _csv(rows: int) -> str:
    lines = ["date,account,amount_cents,memo"]
    for n in range(rows):
        lines.append(
            f"2026-{1 + n % 3:02d}-{1 + n % 28:02d},acct-{n % 17:03d},{(n * 7919) % 100_000 - 20_000},"
            f"invoice {n:05d} for order batch {n // 25}"
        )
    return "\n".join(lines) + "\n"


PARSER = '''"""Parse ledger exports into integer cents."""

import csv
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    date: str
    account: str
    cents: int
    memo: str


def parse(path):
    with open(path, newline="") as rows:
        return [
            Entry(r["date"], r["account"], int(r["amount_cents"]), r["memo"])
            for r in csv.DictReader(rows)
        ]


def main(argv):
    entries = parse(argv[1])
    for entry in entries:
        print(f"{entry.date} {entry.account:>10} {entry.cents:>9} {entry.memo}")
    print(f"total {sum(e.cents for e in entries)} cents in {len(entries)} entries")


if __name__ == "__main__":
    main(sys.argv)
'''

REPORT = """

def by_account(entries):
    totals = {}
    for entry in entries:
        totals[entry.account] = totals.get(entry.account, 0) + entry.cents
    return dict(sorted(totals.items()))
"""

MIGRATE = f'''"""Check each batch's checksum before importing it."""

import sys

for batch in ("2026-01", "2026-02", "2026-03"):
    print(f"checking batch {{batch}}: 1200 rows")
    if batch == "2026-03":
        print("Traceback (most recent call last):", file=sys.stderr)
        print('  File "tools/migrate.py", line 9, in <module>', file=sys.stderr)
        print("{ERROR_LINE}", file=sys.stderr)
        sys.exit(2)
print("all batches verified")
'''

TEST = """import unittest

from ledger.parser import by_account, parse


class ParserTest(unittest.TestCase):
    def test_every_row_is_read(self):
        self.assertEqual(len(parse("data/ledger.csv")), 150)

    def test_totals_are_integer_cents(self):
        totals = by_account(parse("data/ledger.csv"))
        self.assertTrue(all(isinstance(v, int) for v in totals.values()))


if __name__ == "__main__":
    unittest.main()
"""


def _lines_cmd(count: int, word: str) -> str:
    """A command printing `count` long, distinct lines (a big, deterministic output)."""
    return (
        f'python3 -c "for i in range({count}): '
        f"print(f'{word} {{i:05d}}: status=ok checksum={{(i * 2654435761) % 4294967296:08x}} "
        f"path=/srv/ledger/{word}/{{i % 97:02d}}/{{i:05d}}.json')\""
    )


def bash(command: str, what: str) -> Step:
    return Step("Bash", {"command": command, "description": what})


def write(path: str, text: str) -> Step:
    return Step("Write", {"file_path": path, "content": text})


def read(path: str) -> Step:
    return Step("Read", {"file_path": path})


def edit(path: str, old: str, new: str) -> Step:
    return Step("Edit", {"file_path": path, "old_string": old, "new_string": new})


def turns(project: Path, shape: str) -> tuple[Turn, ...]:
    """The scripted agent's turns of one shape (file paths inside `project`)."""
    parser = str(project / "ledger" / "parser.py")
    data = str(project / "data" / "ledger.csv")
    setup = (
        write(str(project / "ledger" / "__init__.py"), ""),
        write(parser, PARSER),
        write(data, _csv(ROWS)),
    )
    failing = bash("python3 tools/migrate.py", "Verify the batch checksums")
    if shape == "three-prompts":
        return (
            Turn("three-1", (
                bash("seq 1 4000", "Count the rows the import expects"),
                *setup,
                read(data),
                bash("ls -la /usr/bin | head -n 120", "See which tools are installed"),
                bash("python3 -m ledger.parser data/ledger.csv | head -n 100", "Run the parser on the export"),
                read(parser),
            ), "The parser reads all 150 rows into integer cents. TODO: add a per-account report."),
            Turn("three-2", (
                read(parser),
                edit(parser, '\n\ndef main(argv):', REPORT + '\n\ndef main(argv):'),
                write(str(project / "tests" / "__init__.py"), ""),
                write(str(project / "tests" / "test_parser.py"), TEST),
                bash("python3 -m unittest -v tests.test_parser", "Run the parser tests"),
                bash(_lines_cmd(120, "account"), "List the account index"),
                bash("python3 -m ledger.parser data/ledger.csv | sort -k3 -n | tail -n 100",
                     "Show the largest entries"),
                read(str(project / "tests" / "test_parser.py")),
            ), "The report groups totals by account and the tests pass."),
            Turn("three-3", (
                write(str(project / "tools" / "migrate.py"), MIGRATE),
                bash(_lines_cmd(110, "batch"), "List the batch files"),
                failing,
                read(str(project / "tools" / "migrate.py")),
                bash("seq 1 1200 | sed 's/^/checked row /'", "Recount the rows of every batch"),
                bash("python3 -m ledger.parser data/ledger.csv | grep 2026-03", "Rows of March"),
                read(data),
                bash("ls -la /usr/lib | head -n 150", "Check the installed libraries"),
            ), f"Batch 2026-03 fails its checksum: {ERROR_LINE}. {DECISION} {TODO}"),
        )  # fmt: skip
    if shape == "tool-heavy":
        return (
            Turn("heavy-1", (
                bash("seq 1 4000", "Count the rows the import expects"),
                bash("ls -la /usr/bin | head -n 160", "See which tools are installed"),
                bash(_lines_cmd(110, "archive"), "List the archived exports"),
                *setup,
                bash("python3 -m ledger.parser data/ledger.csv | head -n 100", "Run the parser on the export"),
                read(data),
                bash(_lines_cmd(110, "mirror"), "List the mirrored exports"),
                bash("seq 10000 13500", "Count the archived rows"),
            ), f"The exports are all there and parse. {DECISION}"),
            Turn("heavy-2", (
                bash(_lines_cmd(120, "audit"), "Read the audit index"),
                write(str(project / "tools" / "migrate.py"), MIGRATE),
                failing,
                bash("ls -la /usr/lib | head -n 120", "Check the installed libraries"),
                read(parser),
            ), f"The audit stops at batch 2026-03: {ERROR_LINE}. {TODO}"),
        )  # fmt: skip
    if shape == "edits-failure":
        config = str(project / "ledger" / "config.py")
        return (
            Turn("edits-1", (
                *setup,
                write(config, "CURRENCY = 'EUR'\nROUNDING = 'half-even'\nBATCH_SIZE = 500\n"),
                read(config),
                edit(config, "BATCH_SIZE = 500", "BATCH_SIZE = 1200"),
                read(parser),
                edit(parser, '\n\ndef main(argv):', REPORT + '\n\ndef main(argv):'),
                bash("python3 -m ledger.parser data/ledger.csv | head -n 100", "Run the parser on the export"),
                edit(config, "ROUNDING = 'half-even'", "ROUNDING = 'none'  # integer cents"),
            ), "The configuration and the report are in place."),
            Turn("edits-2", (
                read(data),
                write(str(project / "tools" / "migrate.py"), MIGRATE),
                bash(_lines_cmd(120, "batch"), "List the batch files"),
                read(str(project / "tools" / "migrate.py")),
                edit(str(project / "tools" / "migrate.py"), "1200 rows", "1,200 rows"),
                bash("seq 1 2500", "Count the rows of the import"),
                failing,
            ), f"The import stops at batch 2026-03: {ERROR_LINE}. {DECISION} {TODO}"),
        )  # fmt: skip
    raise ValueError(f"no shape {shape!r}")


SHAPES = {
    "three-prompts": "3 prompts of 8 tool steps each",
    "tool-heavy": "2 prompts whose tool outputs are mostly big command outputs",
    "edits-failure": "2 prompts of writes and edits, a failing command near the end",
}


# -- driving the client -----------------------------------------------------------------------


@dataclass
class Driven:
    session_id: str
    path: Path
    recorder: Recorder


def prompt_text(turn: Turn) -> str:
    return f"[[drive:{turn.tag}]] Work on the ledger project: step {turn.tag}."


def drive(clients: Clients, shape: str, workdir: Path = WORKDIR) -> Driven:
    """Drive one shape's prompts through the real client; the session file it wrote (in a
    temporary config dir: copy it before the block's folder goes)."""
    project = workdir / shape
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    state = Path(tempfile.mkdtemp(prefix=f"drive-{shape}-"))
    config, home = state / "claude", state / "home"
    config.mkdir()
    home.mkdir()
    script = Script(turns(project, shape))
    session_id = ""
    with model_server("reject", script) as (url, recorder):
        env = claude_env(url, config, home)
        for turn in script.turns:
            resume = ["--resume", session_id] if session_id else []
            finished = run_bounded(
                [str(clients.claude), *resume, "-p", prompt_text(turn),
                 "--allowedTools", ALLOWED_TOOLS, "--output-format", "json"],
                env, project, timeout=TURN_TIMEOUT_SECS,
            )  # fmt: skip
            if finished.returncode != 0:
                raise RuntimeError(f"{shape}/{turn.tag}: {finished.first_error()}")
            result = json.loads(finished.stdout)
            if session_id and result["session_id"] != session_id:
                raise RuntimeError(f"{shape}: --resume wrote another session")
            session_id = result["session_id"]
    (path,) = config.glob(f"projects/*/{session_id}.jsonl")
    return Driven(session_id, path, recorder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES))
    args = parser.parse_args(argv)
    clients = ensure_clients()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for shape in args.shape or SHAPES:
        driven = drive(clients, shape)
        target = args.out_dir / f"{shape}.jsonl"
        shutil.copyfile(driven.path, target)
        print(
            f"{target}: session {driven.session_id}, {target.stat().st_size} bytes, "
            f"{len(driven.recorder.model_requests())} requests, "
            f"{driven.recorder.rejections} rejected ({CLAUDE_PACKAGE})"
        )
        shutil.rmtree(driven.path.parents[2], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
