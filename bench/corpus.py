"""The benchmark corpus: a synthetic home of 2,000+ sessions and 2+ GB, built once.

Generating 2 GB record by record in Python would take minutes, so a few templates are built
with the demo's record builders and then stamped out with bytes.replace: every id in a
template ends in a placeholder tag, its session id and working directory are placeholders,
and its timestamps all fall on 2000-01-01 hour 00. A big session is a head followed by
repeated "compaction cycles" (a block that starts with a compaction and grows the context
again), each with its own id tag and hour, chained to the block before it.

`python -m bench.corpus [--force]` builds it; bench.run calls ensure_corpus().
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gobtui.demo.claude import ClaudeMeta, ClaudeSession
from gobtui.demo.codex import CodexMeta, CodexSession
from gobtui.demo.home import claude_script, claude_slug, codex_script
from gobtui.demo.records import Clock, Ids
from gobtui.demo.text import PROJECTS, Project, Text

CORPUS_VERSION = 1
"""Bump to regenerate everyone's corpus (the stamp file records the version it was built with)."""
CORPUS_DIR = Path(__file__).resolve().parent / ".corpus"
SESSIONS = 2_000
"""Top-level sessions besides the big ones (subagent files come on top)."""
TARGET_BYTES = 2_150_000_000
BIG = (("claude", 220_000_000), ("claude", 220_000_000), ("codex", 220_000_000))

RTAG = "feedfacecafe"  # tail of every record id in a template
PREV = "eeeeeeee-eeee-4eee-8eee-badc0ffee000"  # the block's link to the record before it
SID = "00000000-0000-4000-8000-5e55105e5510"  # the session id
CWD = "/home/dev/src/zzproj"
HOUR = b"2000-01-01T00"
T2000 = datetime(2000, 1, 1, tzinfo=UTC).timestamp()
NAMES = [*PROJECTS] + [
    f"{a}-{b}"
    for a in ("core", "web", "data", "edge", "auth", "search", "pay", "infra", "mobile")
    for b in ("api", "svc", "ui", "jobs", "sdk", "cli")
]


@dataclass
class Template:
    provider: str
    head: bytes
    leaf: str = ""
    """Claude: the head's last uuid (with RTAG), where the first block chains on."""
    agents: dict[str, bytes] = field(default_factory=dict)


@dataclass
class Corpus:
    root: Path
    claude_home: Path
    codex_home: Path
    sessions: int
    files: int
    bytes: int
    seconds: float
    big: list[Path]
    generated: bool = False


def _project(rng: random.Random) -> Project:
    """A demo project whose working directory is the CWD placeholder."""
    return replace(rng.choice(list(PROJECTS.values())), name="zzproj")


def _claude_head(seed: int, turns: int, agents: int) -> Template:
    rng = random.Random(f"bench:claude:{seed}")
    ids, clock = Ids(rng, RTAG), Clock(rng, scale=0.2)  # scaled so a template fits one hour
    meta = ClaudeMeta(SID, CWD, rng.choice(("claude-opus-4-6", "claude-sonnet-4-5-20250929")))
    text = Text(rng, _project(rng))
    session, subs = claude_script(ids, clock, meta, text, turns, compact=False, agents=agents)
    shift = T2000 + 5 - session.stamps[0][2]
    end = rng.randint(60_000, 150_000)
    tpl = Template("claude", session.finish([(21_000, end)], shift, rng), session.leaf or "")
    for sub in subs:
        tpl.agents[str(sub.meta.agent_id)] = sub.finish([(12_000, 50_000)], shift, rng)
    assert clock.t + shift < T2000 + 3600, "template spans more than an hour"
    return tpl


def _claude_block(seed: int, turns: int) -> bytes:
    rng = random.Random(f"bench:claude-block:{seed}")
    ids, clock = Ids(rng, RTAG), Clock(rng, scale=0.05)
    meta = ClaudeMeta(SID, CWD, "claude-opus-4-6")
    text = Text(rng, _project(rng))
    session = ClaudeSession(ids, clock, meta, leaf=PREV)
    session.compact(text.summary())
    for _ in range(turns):
        session.prompt(text.prompt(), uid=session.snapshot())
        for _ in range(rng.randint(2, 6)):
            text.claude_step(session, tools=True, final=False)
        session.call([{"type": "text", "text": text.sentence()}])
    data = session.finish([(0, 0), (36_000, 164_000)], T2000 + 5, rng, prev=150_000)
    assert clock.t < 3600, "block spans more than an hour"
    return data


def _codex_head(seed: int, turns: int) -> Template:
    rng = random.Random(f"bench:codex:{seed}")
    ids, clock = Ids(rng, RTAG), Clock(rng, scale=0.2)
    meta = CodexMeta(SID, CWD, rng.choice(("gpt-5.3-codex", "gpt-5.5")))
    text = Text(rng, _project(rng))
    session = codex_script(ids, clock, meta, text, turns, compact=False)
    shift = T2000 + 5 - session.stamps[0][2]
    data = session.finish([(14_000, rng.randint(60_000, 200_000))], shift, rng)
    assert clock.t + shift < T2000 + 3600
    return Template("codex", data)


def _codex_block(seed: int, turns: int) -> bytes:
    rng = random.Random(f"bench:codex-block:{seed}")
    ids, clock = Ids(rng, RTAG), Clock(rng, scale=0.05)
    meta = CodexMeta(SID, CWD, "gpt-5.3-codex")
    text = Text(rng, _project(rng))
    session = CodexSession(ids, clock, meta)
    session.turn_id = (0.0, ids.uuid7_bits())
    session.compacted([text.prompt() for _ in range(3)], text.codex_summary())
    for _ in range(turns):
        session.turn(text.prompt())
        for _ in range(rng.randint(2, 6)):
            text.codex_step(session)
        session.task_complete(text.sentence())
    data = session.finish([(0, 0), (40_000, 240_000)], T2000 + 5, rng)
    assert clock.t < 3600
    return data


def _claude_block_leaf(block: bytes) -> str:
    for line in reversed(block.splitlines()):
        record = json.loads(line)
        if "uuid" in record:
            return str(record["uuid"])
    raise ValueError("block without uuids")


class _Writer:
    """Stamps templates into files under root, counting sessions and bytes."""

    def __init__(self, root: Path, now: float, blocks: dict[str, bytes]) -> None:
        self.root, self.now, self.blocks = root, now, blocks
        self.claude_leaf = _claude_block_leaf(blocks["claude"])
        self.rng = random.Random("bench:files")
        self.index = self.files = self.bytes = 0
        self.started = time.perf_counter()

    def _tag(self, rep: int) -> str:
        return f"{self.index:06x}{rep:06x}"

    def write(self, tpl: Template, reps: int) -> Path:
        rng, self.index = self.rng, self.index + 1
        start = self.now - rng.uniform((reps + 2) * 3600, 30 * 86_400)
        hour0 = datetime.fromtimestamp(start, UTC).replace(minute=0, second=0, microsecond=0)
        cwd = f"/home/dev/src/{rng.choice(NAMES)}".encode()
        if tpl.provider == "claude":
            sid = str(Ids(rng).uuid4())
            folder = self.root / "claude" / "projects" / claude_slug(cwd.decode())
            path = folder / f"{sid}.jsonl"
        else:
            sid = Ids(rng).uuid7(start)
            started = hour0.strftime("%Y-%m-%dT%H-%M-05")
            folder = self.root / "codex" / "sessions" / hour0.strftime("%Y/%m/%d")
            path = folder / f"rollout-{started}-{sid}.jsonl"
        sid_b = sid.encode()

        def stamp(data: bytes, rep: int) -> bytes:
            hour = (hour0 + timedelta(hours=rep)).strftime("%Y-%m-%dT%H").encode()
            data = data.replace(RTAG.encode(), self._tag(rep).encode())
            return data.replace(SID.encode(), sid_b).replace(CWD.encode(), cwd).replace(HOUR, hour)

        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            self.bytes += out.write(stamp(tpl.head, 0))
            prev = tpl.leaf
            for rep in range(1, reps + 1):
                block = self.blocks[tpl.provider]
                if tpl.provider == "claude":
                    block = block.replace(
                        PREV.encode(), prev.replace(RTAG, self._tag(rep - 1)).encode()
                    )
                    prev = self.claude_leaf
                self.bytes += out.write(stamp(block, rep))
        end = (hour0 + timedelta(hours=reps + 1)).timestamp()
        for agent_id, data in tpl.agents.items():
            sub = path.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"
            sub.parent.mkdir(parents=True, exist_ok=True)
            self.bytes += sub.write_bytes(stamp(data, 0))
            os.utime(sub, (end - 600, end - 600))
            self.files += 1
        os.utime(path, (end, end))
        self.files += 1
        if self.index % 25 == 0:
            self.progress()
        return path

    def progress(self, final: bool = False) -> None:
        rate = self.bytes / max(1e-9, time.perf_counter() - self.started) / 1e6
        sys.stderr.write(
            f"\rcorpus: {self.index} sessions, {self.bytes / 1e9:.2f} GB ({rate:.0f} MB/s)"
            + ("\n" if final else "")
        )
        sys.stderr.flush()


CLAUDE_HEADS = ((1, 0), (2, 0), (3, 0), (5, 0), (8, 0), (12, 0), (20, 0), (30, 0), (4, 2), (9, 2))
CODEX_HEADS = (1, 2, 3, 5, 8, 12, 20, 30)
HEAD_WEIGHTS = (14, 14, 12, 12, 10, 8, 5, 3, 3, 3)
"""Most real sessions are short; a few run for hours."""


def _templates() -> tuple[dict[str, list[Template]], dict[str, bytes]]:
    heads = {
        "claude": [_claude_head(i, t, a) for i, (t, a) in enumerate(CLAUDE_HEADS)],
        "codex": [_codex_head(i, t) for i, t in enumerate(CODEX_HEADS)],
    }
    blocks = {"claude": _claude_block(0, 48), "codex": _codex_block(0, 36)}
    return heads, blocks


def _size(tpl: Template) -> int:
    return len(tpl.head) + sum(len(a) for a in tpl.agents.values())


def _plan(heads: dict[str, list[Template]], blocks: dict[str, bytes]) -> list[list[Template | int]]:
    """[template, repeated blocks] per session: the big ones first, then a realistic mix."""
    rng = random.Random("bench:plan")
    plan: list[list[Template | int]] = []
    for provider, size in BIG:
        tpl = heads[provider][-1 if provider == "codex" else -3]
        plan.append([tpl, (size - len(tpl.head)) // len(blocks[provider])])
    templates: list[Template] = []
    for _ in range(SESSIONS):
        pool = heads["claude" if rng.random() < 0.55 else "codex"]
        templates.append(rng.choices(pool, HEAD_WEIGHTS[: len(pool)])[0])
    regular: list[list[Template | int]] = [[tpl, 0] for tpl in templates]
    total = sum(_size(t) for t in templates)
    total += sum(n * len(blocks[t.provider]) for t, n in (_entry(e) for e in plan))
    while total < TARGET_BYTES:  # long-running sessions: a few compaction cycles each
        entry = rng.choice(regular)
        extra = rng.choice((1, 1, 2, 3))
        tpl, reps = _entry(entry)
        entry[1] = reps + extra
        total += extra * len(blocks[tpl.provider])
    return plan + regular


def _entry(entry: list[Template | int]) -> tuple[Template, int]:
    tpl, reps = entry
    assert isinstance(tpl, Template) and isinstance(reps, int)
    return tpl, reps


def ensure_corpus(root: Path = CORPUS_DIR, *, force: bool = False) -> Corpus:
    """The corpus under root, generated when missing, stale (CORPUS_VERSION) or forced."""
    stamp = root / "STAMP.json"
    if not force and stamp.is_file():
        info = json.loads(stamp.read_text())
        if info.get("version") == CORPUS_VERSION:
            return _corpus(root, info, generated=False)
    building = root.with_name(root.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    started = time.perf_counter()
    heads, blocks = _templates()
    writer = _Writer(building, time.time(), blocks)
    big = [writer.write(*_entry(entry)) for entry in _plan(heads, blocks)][: len(BIG)]
    writer.progress(final=True)
    info = {
        "version": CORPUS_VERSION,
        "sessions": writer.index,
        "files": writer.files,
        "bytes": writer.bytes,
        "seconds": round(time.perf_counter() - started, 1),
        "big": [str(p.relative_to(building)) for p in big],
    }
    (building / "STAMP.json").write_text(json.dumps(info, indent=2))
    shutil.rmtree(root, ignore_errors=True)
    building.rename(root)  # only a finished corpus gets the real name and a stamp
    return _corpus(root, info, generated=True)


def _corpus(root: Path, info: dict[str, Any], *, generated: bool) -> Corpus:
    """The corpus a stamp describes (`info`: STAMP.json's object, as JSON, hence Any)."""
    return Corpus(
        root=root,
        claude_home=root / "claude",
        codex_home=root / "codex",
        sessions=int(info["sessions"]),
        files=int(info["files"]),
        bytes=int(info["bytes"]),
        seconds=float(info["seconds"]),
        big=[root / str(p) for p in info["big"]],
        generated=generated,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.corpus", description=__doc__)
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    parser.add_argument("--root", type=Path, default=CORPUS_DIR)
    args = parser.parse_args(argv)
    corpus = ensure_corpus(args.root, force=args.force)
    state = f"generated in {corpus.seconds:.0f} s" if corpus.generated else "up to date"
    print(
        f"{corpus.root}: {corpus.sessions} sessions, {corpus.files} files, "
        f"{corpus.bytes / 1e9:.2f} GB ({state})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
