"""Vault figures on a ~500 MB transcript: snapshot cost against plain hashing, chunk reuse after
an append, search-snapshot over the whole snapshot, and the snapshot's peak memory.

The transcript is generated here rather than taken from bench/corpus.py: the corpus templates
average ~1.8 KB a record, so 500 MB of them would hold ~280,000 records, beyond the vault's
100,000-record limit. These Claude-shaped turns carry large tool outputs (~6 KB a record on
average, ~85,000 records), like long tool-heavy sessions do.

Snapshot and sha256 times are the median of three runs, each snapshot into a new vault after
the disk has been flushed: this VM's write speed drifts several-fold between minutes.

Peak RSS is the (last) snapshot child's VmHWM (bench.run.run_child), next to the same figure for a
child that only imports the vault, so the snapshot's own share can be read off.

`python -m bench.vault_bench [--workdir DIR]` runs it alone; `run_vault_bench` is what
bench.run calls.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from bench.run import bench_env, run_child
from gobtui.adapters.vault.recovery import search
from gobtui.adapters.vault.vault import Vault
from gobtui.core.limits import VAULT_CHUNK_BYTES
from gobtui.core.model import Provider

TARGET_BYTES = 500_000_000
APPEND_BYTES = VAULT_CHUNK_BYTES
NEEDLE = "ERR-4242"
"""Planted in ~2% of the tool outputs: what search-snapshot looks for."""
SESSION_ID = "00000000-0000-4000-8000-00000000b0b0"
READ_BYTES = 1024 * 1024
RUNS = 3
"""Snapshot and hash figures are the median of this many runs (the VM's disk speed drifts)."""

SNAPSHOT_CHILD = """
import json, sys, time
from pathlib import Path
from gobtui.adapters.vault.vault import Vault
from gobtui.core.model import Provider
vault = Vault(Path(sys.argv[1]))
started = time.perf_counter()
entry = vault.snapshot(Path(sys.argv[2]), Provider.CLAUDE, sys.argv[3], "bench", time.time())
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "sha256": entry.sha256, "records": entry.record_count}))
"""
IMPORT_CHILD = "import adapters.vault.vault, core.model"


class _Turns:
    """Claude-shaped records: prompt, tool call, large tool result, answer."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu", "qua", "bri"]
        words = {
            "".join(self.rng.choices(syllables, k=self.rng.randint(1, 4))) for _ in range(3000)
        }
        vocabulary = sorted(words)
        self.blocks = [" ".join(self.rng.choices(vocabulary, k=9000)) for _ in range(48)]
        self.count = 0
        self.parent: str | None = None

    def _text(self, low: int, high: int) -> str:
        block = self.rng.choice(self.blocks)
        size = self.rng.randint(low, high)
        start = self.rng.randrange(0, max(1, len(block) - size))
        return block[start : start + size]

    def _record(self, kind: str, message: dict[str, Any]) -> bytes:
        self.count += 1
        uid = f"00000000-0000-4000-8000-{self.count:012x}"
        record = {
            "parentUuid": self.parent, "isSidechain": False, "userType": "external",
            "cwd": "/home/dev/src/bench", "sessionId": SESSION_ID, "version": "2.1.39",
            "type": kind, "message": message, "uuid": uid,
            "timestamp": f"2026-11-01T{self.count // 3600 % 24:02d}:{self.count // 60 % 60:02d}:"
                         f"{self.count % 60:02d}.000Z",
        }  # fmt: skip
        self.parent = uid
        return orjson.dumps(record) + b"\n"

    def turn(self) -> Iterator[bytes]:
        tool_id = f"toolu_bench{self.count:08d}"
        yield self._record("user", {"role": "user", "content": self._text(80, 600)})
        call = {"type": "tool_use", "id": tool_id, "name": "Bash",
                "input": {"command": self._text(20, 200)}}  # fmt: skip
        usage = {"input_tokens": 3, "cache_read_input_tokens": self.rng.randint(20_000, 150_000),
                 "cache_creation_input_tokens": 400, "output_tokens": 120}  # fmt: skip
        yield self._record(
            "assistant",
            {"role": "assistant", "model": "claude-opus-4-6", "content": [call], "usage": usage},
        )
        output = self._text(4_000, 40_000)
        if self.rng.random() < 0.02:
            output = f"{output[:2000]} {NEEDLE} {output[2000:]}"
        result = {"type": "tool_result", "tool_use_id": tool_id, "content": output}
        yield self._record("user", {"role": "user", "content": [result]})
        answer = [{"type": "text", "text": self._text(200, 2_000)}]
        yield self._record(
            "assistant",
            {"role": "assistant", "model": "claude-opus-4-6", "content": answer, "usage": usage},
        )


def build_transcript(path: Path, target_bytes: int, seed: int = 4242) -> tuple[int, int]:
    """Write about `target_bytes` of turns to `path`: (bytes, records).

    The file is fsynced: a transcript at rest, so its own write-back is not charged to the
    first snapshot's fsyncs (ext4 journals them together)."""
    turns = _Turns(seed)
    written = 0
    with path.open("wb") as out:
        while written < target_bytes:
            for line in turns.turn():
                written += out.write(line)
        out.flush()
        os.fsync(out.fileno())
    return written, turns.count


def append_turns(path: Path, at_least: int, seed: int) -> int:
    turns = _Turns(seed)
    turns.count = 10_000_000  # distinct uuids from the body's
    written = 0
    with path.open("ab") as out:
        while written < at_least:
            for line in turns.turn():
                written += out.write(line)
        out.flush()
        os.fsync(out.fileno())
    return written


def hash_file(path: Path) -> tuple[str, float]:
    """Plain hashlib.sha256 over the file, read in 1 MiB pieces: the baseline."""
    digest = hashlib.sha256()
    buffer = bytearray(READ_BYTES)
    view = memoryview(buffer)
    started = time.perf_counter()
    with path.open("rb", buffering=0) as handle:
        while size := handle.readinto(buffer):
            digest.update(view[:size])
    return digest.hexdigest(), time.perf_counter() - started


def run_vault_bench(workdir: Path, report: Callable[[str], None]) -> dict[str, Any]:
    """Build the transcript under `workdir`, measure, and return the figures."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    source = work / f"{SESSION_ID}.jsonl"
    root = work / "vault"
    env = bench_env(work / "cache", work)

    report(f"vault bench: writing a ~{TARGET_BYTES / 1e6:.0f} MB transcript")
    started = time.perf_counter()
    size, records = build_transcript(source, TARGET_BYTES)
    build_s = time.perf_counter() - started
    hash_file(source)  # warm the page cache, so both sides below read from memory
    hashed = [hash_file(source) for _ in range(RUNS)]
    digest, sha256_s = hashed[0][0], statistics.median(seconds for _, seconds in hashed)
    report(f"vault bench: sha256 of {size / 1e6:.0f} MB took {sha256_s:.2f} s; snapshotting")

    baseline = run_child("-c", IMPORT_CHILD, [], env)
    snapshot_runs: list[float] = []
    for _ in range(RUNS):  # each into a new vault: every chunk is written, as at a first apply
        shutil.rmtree(root, ignore_errors=True)
        os.sync()  # the last run's write-back is not charged to this one
        child = run_child("-c", SNAPSHOT_CHILD, [str(root), str(source), SESSION_ID], env)
        if child.code != 0:
            tail = child.stderr.decode(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"snapshot child exited {child.code}: {' | '.join(tail)}")
        snapped = json.loads(child.stdout)
        snapshot_runs.append(snapped["seconds"])
    snapshot_s = statistics.median(snapshot_runs)
    vault = Vault(root)
    entry = vault.find(snapped["sha256"])
    if entry.source_sha256 != digest or entry.bytes != size:
        raise RuntimeError("the snapshot does not match the source")
    first_chunks = set(os.listdir(vault.chunks_dir))

    report("vault bench: appending 1 MiB and snapshotting again")
    appended = append_turns(source, APPEND_BYTES, seed=7)
    started = time.perf_counter()
    second = vault.snapshot(source, Provider.CLAUDE, SESSION_ID, "bench", time.time())
    resnapshot_s = time.perf_counter() - started
    new_chunks = len(set(os.listdir(vault.chunks_dir)) - first_chunks)

    report(f"vault bench: search-snapshot {NEEDLE!r} over {size / 1e6:.0f} MB")
    started = time.perf_counter()
    found = search(vault, entry.sha256, NEEDLE, limit=50)
    search_s = time.perf_counter() - started

    return {
        "file_mb": round(size / 1e6, 1),
        "records": float(records),
        "build_s": round(build_s, 2),
        "sha256_s": round(sha256_s, 3),
        "sha256_runs_s": [round(seconds, 3) for _, seconds in hashed],
        "snapshot_s": round(snapshot_s, 3),
        "snapshot_runs_s": [round(seconds, 3) for seconds in snapshot_runs],
        "snapshot_ratio": round(snapshot_s / sha256_s, 2),
        "snapshot_rss_mb": round(child.rss_mb, 1),
        "import_rss_mb": round(baseline.rss_mb, 1),
        "chunks": float(len(first_chunks)),
        "appended_bytes": float(appended),
        "resnapshot_s": round(resnapshot_s, 3),
        "resnapshot_new_chunks": float(new_chunks),
        "resnapshot_records": float(second.record_count),
        "search_s": round(search_s, 3),
        "search_mb_per_s": round(size / 1e6 / search_s, 1),
        "search_matched_records": float(found.matched_records),
    }


TARGETS = {"snapshot_ratio": "< 1.5x sha256", "resnapshot_new_chunks": "<= 2"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.vault_bench", description=__doc__)
    parser.add_argument("--workdir", type=Path, help="kept afterwards (default: a temp dir)")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.workdir is not None:
        figures = run_vault_bench(args.workdir, say)
    else:
        with tempfile.TemporaryDirectory(prefix="gobtui-vault-bench-") as tmp:
            figures = run_vault_bench(Path(tmp), say)
    for key, value in figures.items():
        target = f"   (target {TARGETS[key]})" if key in TARGETS else ""
        shown = value if isinstance(value, list) else f"{value:g}"
        print(f"{key:<24} {shown}{target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
