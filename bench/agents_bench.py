"""`make bench`, the agents' half: what the headless surfaces cost.

Rows:
  w. `gobtui watch --dry-run` on the 2,000-session corpus, once its first pass is done: CPU
     share of one core over two idle passes at the default interval, and RSS   < 2 %
  x. context-pack on a vault of 1,000 snapshots (one card each) and 1,000 events: the first
     call (it notes every snapshot's cards) and p50/p99 of the next ones       p99 < 100 ms
  y. delta on the same vault, each call with its cursor read and stored: p50/p99  < 100 ms

`python -m bench.agents_bench [w] [x]` runs some; `bench.more` calls run_agents_bench.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.corpus import ensure_corpus
from bench.run import Row, bench_env, run_child

IDLE_SECS = 60.0
WATCH_CHILD = """
import json, sys, time
from gobtui.adapters.config.paths import resolve_homes
from gobtui.core.limits import WATCH_INTERVAL_SECS
from gobtui.services.watching import HeadlessWatch, WatchSettings
homes = resolve_homes(sys.argv[1], sys.argv[2])
watch = HeadlessWatch(homes, WatchSettings(dry_run=True, all_sessions=True))
started = time.perf_counter()
first = watch.pass_once()
first_s = time.perf_counter() - started
cpu, wall = time.process_time(), time.perf_counter()
deadline = wall + float(sys.argv[3])
passes = 0
while time.perf_counter() < deadline:  # the watch loop: sleep, pass
    time.sleep(min(WATCH_INTERVAL_SECS, max(0.0, deadline - time.perf_counter())))
    watch.pass_once()
    passes += 1
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS:"))
print(json.dumps({"cpu_share": cpu / wall, "first_pass_s": first_s, "passes": passes,
                  "sessions": watch.sessions_seen, "over": len(watch.current),
                  "rss_mb": rss / 1024}))
"""


def row_watch(env: dict[str, str]) -> Row:
    corpus = ensure_corpus()
    child = run_child(
        "-c",
        WATCH_CHILD,
        [str(corpus.claude_home), str(corpus.codex_home), str(IDLE_SECS)],
        env,
        timeout=1800,
    )
    if child.code != 0:
        raise RuntimeError(child.stderr.decode(errors="replace")[-400:])
    data = json.loads(child.stdout.splitlines()[-1])
    share = data["cpu_share"] * 100
    return Row("w", "watch idle, CPU of one core", share, "%", "< 2 %", share < 2.0,
               {"rss_mb": round(data["rss_mb"]), "peak_rss_mb": round(child.rss_mb),
                "sessions": data["sessions"], "over_trigger": data["over"],
                "first_pass_s": round(data["first_pass_s"], 1), "idle_passes": data["passes"],
                "idle_s": IDLE_SECS})  # fmt: skip


SNAPSHOTS = 1_000
CALLS = 60
RECALL_CHILD = """
import json, sys, time
from pathlib import Path
from gobtui.adapters.publish.events import append_event
from gobtui.adapters.recall.verbs import heartbeat, pack
from gobtui.adapters.vault.vault import Vault
from gobtui.core.edits import DigestBlock
from gobtui.core.model import Provider
from gobtui.core.recall.model import LOCAL_CALLER
from gobtui.core.telemetry import EventAction, EventOutcome, TelemetryEvent
work, count, calls = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
vault = Vault(work / "data" / "vault")
base = 1_790_000_000.0
for n in range(count):
    sid = f"{n:08d}-0000-4000-8000-000000000000"
    card = DigestBlock(goal=f"task {n}", errors=[f"E{n}: checkout total off by {n}"],
                       open_tasks=[f"fix module_{n % 50}"], decisions=["round per line item"],
                       files_touched=[f"shop/mod_{n % 50}.py"], covers_items=12)
    lines = [{"type": "user", "sessionId": sid, "uuid": f"u{n}-{i}",
              "message": {"role": "user", "content": f"step {i} " + "x" * 400}}
             for i in range(20)]
    lines.append({"type": "user", "sessionId": sid, "uuid": f"c{n}",
                  "message": {"role": "user", "content": card.render()}})
    path = work / "t" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(l) + "\\n" for l in lines))
    vault.snapshot(path, Provider.CLAUDE, sid, "published", base + n)
    append_event(TelemetryEvent(ts=base + n, provider=Provider.CLAUDE, session_id=sid,
        source_identity_sha256="0" * 64, strategy="structured",
        action=EventAction.TRANSCRIPT_COMPACT, outcome=EventOutcome.APPLIED, trigger_tokens=1,
        context_tokens_before=9, context_tokens_after=3, est_reclaimed_tokens=6,
        items_covered=1, duration_ms=1.0))
def timed(fn):
    started = time.perf_counter(); fn(); return time.perf_counter() - started
first = timed(lambda: pack(["module_7", "checkout"], 4000))
packs = sorted(timed(lambda: pack(["module_7", "checkout"], 4000)) for _ in range(calls))
sid = f"{count // 2:08d}-0000-4000-8000-000000000000"
deltas = sorted(timed(lambda: heartbeat(sid, LOCAL_CALLER, 2000)) for _ in range(calls))
found = pack(["module_7", "checkout"], 4000)
def p(values, q): return values[min(len(values) - 1, int(q * len(values)))]
print(json.dumps({"first_s": first, "pack_p50": p(packs, 0.5), "pack_p99": p(packs, 0.99),
                  "delta_p50": p(deltas, 0.5), "delta_p99": p(deltas, 0.99),
                  "items": len(found.items), "used": found.budget_used,
                  "dropped": found.dropped_count}))
"""


def rows_recall(work: Path) -> list[Row]:
    env = bench_env(work / "cache", work)
    child = run_child("-c", RECALL_CHILD, [str(work), str(SNAPSHOTS), str(CALLS)], env,
                      timeout=1800)  # fmt: skip
    if child.code != 0:
        raise RuntimeError(child.stderr.decode(errors="replace")[-400:])
    data = json.loads(child.stdout.splitlines()[-1])
    ms = {k: round(v * 1000, 1) for k, v in data.items() if k.endswith(("_s", "50", "99"))}
    pack_row = Row("x", f"context-pack p99, {SNAPSHOTS} snapshots", ms["pack_p99"], "ms",
                   "< 100 ms", data["pack_p99"] < 0.1,
                   {"p50_ms": ms["pack_p50"], "first_call_ms": ms["first_s"],
                    "items": data["items"], "budget_used": data["used"],
                    "dropped": data["dropped"], "calls": CALLS})  # fmt: skip
    delta_row = Row("y", f"delta p99, {SNAPSHOTS} snapshots", ms["delta_p99"], "ms",
                    "< 100 ms", data["delta_p99"] < 0.1,
                    {"p50_ms": ms["delta_p50"], "calls": CALLS})  # fmt: skip
    return [pack_row, delta_row]


def run_agents_bench(wanted: set[str]) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gobtui-bench-agents-") as tmp:
        work = Path(tmp)
        if not wanted or "w" in wanted:
            print("  w. watch idle ...", file=sys.stderr, flush=True)
            rows.append(
                _guarded("w", "watch idle", lambda: row_watch(bench_env(work / "wc", work)))
            )
        if not wanted or wanted & {"x", "y"}:
            print("  x, y. context-pack and delta ...", file=sys.stderr, flush=True)
            try:
                rows += rows_recall(work / "recall")
            except Exception as error:  # one failing group never stops the others
                rows.append(Row("x", "context-pack and delta", error=str(error)[:300]))
    return rows


def _guarded(key: str, name: str, fn: Callable[[], Row]) -> Row:
    try:
        return fn()
    except Exception as error:
        return Row(key, name, error=str(error)[:300])


if __name__ == "__main__":
    from bench.run import render

    found = run_agents_bench(set(sys.argv[1:]))
    keys = ("nproc", "loadavg_before", "loadavg_after", "cpu_ref_before", "cpu_ref_after", "corpus")
    print("\n".join(render(found, dict.fromkeys(keys, "-")).splitlines()[1:]))
