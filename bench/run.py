"""`make bench`: figures for the targets in the design, measured on the synthetic corpus.

Rows (each isolated: one failing prints its error and the others still run):
  a0. cold `gobtui detect --json --all` on a cold disk: empty cache, and the OS page cache
     dropped first when the bench may (root)                      target < 1 s, < 200 MB
  a. cold `gobtui detect --json --all` (empty cache, files in the OS page cache; a and b are
     the median of 5 runs)
                                                                  target < 1 s, < 200 MB
  b. warm detect, same command again                              target < 0.3 s, < 150 MB
  c. append latency: store + watcher, one record appended to a >200 MB session, until the
     update with the new context arrives (median, p90 of 20)     target < 150 ms
  d. full parse of a ~200 MB transcript (median of 5 subprocesses)  RSS < 3x; the rate is information
  e. dashboard first paint, 2,000 sessions, warm cache            target < 1 s, < 400 MB
  e2. the same dashboard left idle for a minute, watching, once its background read of the
     head+tail summaries is done: CPU share of one core, peak RSS (that read included), and
     whether the status line was there at the first paint        target < 1 %, < 250 MB
  k. side by side with ccusage (CCUSAGE_VERSION, from npm into bench/.tools) on the Claude
     half: its `session --json --offline` report and a cold `gobtui detect --json --all` of
     the same home, as a ratio of wall times                      target <= 0.028 (the
     previous release's ratio)
Results go to stdout (a table) and bench/results/latest.json. Never part of `make test`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from bench.corpus import Corpus, ensure_corpus

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
PYTHON = sys.executable
GOBTUI = "gobtui.cli"
"""The console script's code, run as a module so a stale editable install can't matter."""
CHILD_TIMEOUT = 300.0
APPENDS = 20


@dataclass
class Row:
    key: str
    name: str
    value: float | None = None
    unit: str = ""
    target: str = ""
    ok: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass
class Child:
    seconds: float
    rss_mb: float
    code: int
    stdout: bytes
    stderr: bytes
    cpu_s: float = 0.0
    """User + system CPU time of the child and of the helpers it waited for (wait4's rusage
    counts reaped grandchildren): on a shared machine the steadier figure to compare."""


WRAP = """
import atexit, os, runpy, sys

def _peak():
    # VmHWM belongs to this exec's address space; ru_maxrss would also count the bench's
    # own memory that the child inherited for a moment when it was forked.
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["GOBTUI_BENCH_RSS"], "w") as out:
        out.write(kb)

if os.path.exists("/proc/self/status"):
    atexit.register(_peak)
mode, target, sys.argv = sys.argv[1], sys.argv[2], sys.argv[2:]
if mode == "-m":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    exec(compile(target, "<bench>", "exec"), {"__name__": "__main__"})
"""


def run_child(
    mode: str, target: str, args: list[str], env: dict[str, str], timeout: float = CHILD_TIMEOUT
) -> Child:
    """Run `python -m target args` (mode "-m") or a script (mode "-c"): wall time, peak RSS."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as rss,
    ):
        env = env | {"GOBTUI_BENCH_RSS": rss.name}
        argv = [PYTHON, "-c", WRAP, mode, target, *args]
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=REPO)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise TimeoutError(f"{target[:40]!r} still running after {timeout:.0f} s")
            time.sleep(0.002)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        peak_kb = rss.read().strip()
        rss_mb = int(peak_kb) / 1024 if peak_kb else usage.ru_maxrss / 1024
        out.seek(0)
        err.seek(0)
        cpu_s = usage.ru_utime + usage.ru_stime
        return Child(seconds, rss_mb, proc.returncode, out.read(), err.read(), cpu_s)


def bench_env(cache: Path, work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GOBTUI_CACHE_DIR=str(cache),
        GOBTUI_DATA_DIR=str(work / "data"),
        GOBTUI_CONFIG=str(work / "config.toml"),
        CLAUDE_CONFIG_DIR=str(work / "no-claude"),
        CODEX_HOME=str(work / "no-codex"),
    )
    return env


def compile_once() -> None:
    """The project's bytecode, before any row, as an installed gobtui has it: without it each
    child compiles every module it imports again (~0.17 s of a, b and e) when the shell sets
    PYTHONDONTWRITEBYTECODE. Checked-hash pycs (gitignored __pycache__): a module edited since
    is never run from stale bytecode, whatever its mtime."""
    argv = [PYTHON, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash"]
    argv += ["core", "adapters", "gobtui", "bench"]
    subprocess.run(argv, cwd=REPO, check=True, stdout=subprocess.DEVNULL)


def _check(child: Child, what: str) -> None:
    if child.code != 0:
        tail = child.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{what} exited {child.code}: {' | '.join(tail)}")


def drop_page_cache() -> str:
    """Empty the OS page cache before the cold row when this user may (root on Linux), so
    "cold" means a cold disk too; otherwise say the files may still be cached."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as knob:
            knob.write("3\n")
    except OSError:
        return "as is (not permitted to drop it)"
    return "dropped"


DETECT_TARGETS = {"a0": (1.0, 200.0), "a": (1.0, 200.0), "b": (0.3, 150.0)}
"""Seconds and peak RSS (MB) of the detect rows."""


DETECT_RUNS = 5
"""Runs of rows a and b, whose median is the figure: this VM's timings swing by a third."""


def row_detect(corpus: Corpus, env: dict[str, str], key: str) -> Row:
    """a0: nothing cached, by gobtui or the OS (when the bench may drop the page cache);
    a: gobtui's cache empty, the files in the OS page cache (as a0 left them: an agent's
    transcripts are usually there); b: both warm. a and b: the median of DETECT_RUNS."""
    page_cache = drop_page_cache() if key == "a0" else "warm"
    args = ["detect", "--json", "--all"]
    args += ["--claude-home", str(corpus.claude_home), "--codex-home", str(corpus.codex_home)]
    children = []
    for _ in range(1 if key == "a0" else DETECT_RUNS):
        if key == "a":  # each run a cold start
            shutil.rmtree(env["GOBTUI_CACHE_DIR"], ignore_errors=True)
        child = run_child("-m", GOBTUI, args, env)
        _check(child, "gobtui detect")
        children.append(child)
    rows = orjson.loads(children[-1].stdout)
    name = {"a0": "cold detect, cold disk", "a": "cold detect --json --all"}.get(
        key, "warm detect --json --all"
    )
    seconds = statistics.median(c.seconds for c in children)
    rss = max(c.rss_mb for c in children)
    secs, mb = DETECT_TARGETS[key]
    ok = seconds < secs and rss < mb
    details: dict[str, Any] = {"sessions": len(rows)}
    if len(children) > 1:
        details["runs"] = (
            f"{min(c.seconds for c in children):.2f}..{max(c.seconds for c in children):.2f}"
        )
    details |= {"cpu_s": round(statistics.median(c.cpu_s for c in children), 2),
                "rss_mb": round(rss, 1), "page_cache": page_cache}  # fmt: skip
    return Row(key, name, seconds, "s", f"< {secs:g} s, < {mb:g} MB", ok, details)


def _big(corpus: Corpus, provider: str) -> Path:
    return next(p for p in corpus.big if f"/{provider}/" in str(p))


def _claude_line(path: Path, context: int, index: int) -> bytes:
    """An assistant record chained to the file's leaf, reporting `context` tokens."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 256 * 1024))
        tail = handle.read().splitlines()[1:]
    last = next(r for r in map(orjson.loads, reversed(tail)) if "uuid" in r)
    record: dict[str, Any] = {k: last[k] for k in ("isSidechain", "cwd", "sessionId", "version")}
    record["userType"] = "external"
    usage: dict[str, Any] = {"input_tokens": 3, "cache_creation_input_tokens": 211}
    usage |= {"cache_read_input_tokens": context - 214, "output_tokens": 0}
    message: dict[str, Any] = {"model": "claude-opus-4-6", "id": f"msg_bench{index:04d}"}
    message["type"] = "message"
    message |= {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": usage}
    record |= {"parentUuid": last["uuid"], "type": "assistant", "message": message}
    record |= {"uuid": f"00000000-0000-4000-8000-bench{index:07d}", "timestamp": last["timestamp"]}
    return orjson.dumps(record) + b"\n"


class _CountWarnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


async def _append_latency(corpus: Corpus, cache: Path) -> Row:
    from gobtui.adapters.config.paths import resolve_homes
    from gobtui.adapters.sessions.cache import SummaryCache
    from gobtui.adapters.sessions.store import SessionStore
    from gobtui.adapters.sessions.watcher import watch_roots, watch_summaries

    warnings = _CountWarnings()  # the adapters' log lines would drown the table: count them
    logging.getLogger("gobtui.adapters").addHandler(warnings)
    logging.getLogger("gobtui.adapters").propagate = False
    homes = resolve_homes(str(corpus.claude_home), str(corpus.codex_home), {})
    store = SessionStore(homes, SummaryCache(cache / "cursors"), max_age_secs=None)
    started = time.perf_counter()
    await asyncio.to_thread(store.scan, time.time())
    scan_s = time.perf_counter() - started
    big = _big(corpus, "claude")
    target = os.path.realpath(big)
    waiting: dict[int, asyncio.Future[float]] = {}
    stop = asyncio.Event()

    async def consume() -> None:
        async for batch in watch_summaries(
            store, watch_roots(homes), stop_event=stop, now=time.time
        ):
            for summary in batch:
                future = waiting.get(summary.context_tokens or -1)
                if os.path.realpath(summary.path) == target and future and not future.done():
                    future.set_result(time.perf_counter())

    task = asyncio.create_task(consume())
    size, mtime = big.stat().st_size, big.stat().st_mtime
    latencies: list[float] = []
    try:
        await asyncio.sleep(1.5)  # the watcher has to be set up on every directory first
        for i in range(APPENDS):
            context = 170_000 + 131 * i
            waiting[context] = asyncio.get_running_loop().create_future()
            line = _claude_line(big, context, i)
            with big.open("ab", buffering=0) as handle:
                sent = time.perf_counter()
                handle.write(line)
            arrived = await asyncio.wait_for(waiting[context], timeout=10)
            latencies.append((arrived - sent) * 1000)
            await asyncio.sleep(0.3)
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=10)
        os.truncate(big, size)  # leave the corpus as it was
        os.utime(big, (mtime, mtime))
    median = statistics.median(latencies)
    p90 = statistics.quantiles(latencies, n=10)[-1]
    return Row("c", "append latency (median)", median, "ms", "< 150 ms", p90 < 150, {
        "p90_ms": round(p90, 1), "max_ms": round(max(latencies), 1), "appends": APPENDS,
        "file_mb": round(size / 1e6), "store_scan_s": round(scan_s, 2),
        "adapter_warnings": warnings.count})  # fmt: skip


PARSE = """
import sys, time
import gobtui.adapters.providers.claude.parse, gobtui.adapters.providers.codex.parse  # imported, as in a running dashboard
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.core.model import Provider
t = time.perf_counter()
transcript = parse_transcript(Provider(sys.argv[1]), sys.argv[2])
print(time.perf_counter() - t, len(transcript.items))
"""


PARSE_RUNS = 5
"""Row d is the median of this many runs, each in a fresh child: on a shared VM one run's
speed can be a fifth off the next one's (five, not three: a slow spell of a few seconds then
moves the median less)."""


def row_parse(corpus: Corpus, env: dict[str, str], provider: str, key: str) -> Row:
    path = _big(corpus, provider)
    size_mb = path.stat().st_size / 1e6
    runs: list[tuple[float, int, Child]] = []
    for _ in range(PARSE_RUNS):
        child = run_child("-c", PARSE, [provider, str(path)], env)
        _check(child, "parse_transcript")
        seconds_out, items_out = child.stdout.split()
        runs.append((float(seconds_out), int(items_out), child))
    runs.sort(key=lambda run: run[0])
    seconds, items, child = runs[len(runs) // 2]
    rate = size_mb / seconds
    rss_mb = max(run[2].rss_mb for run in runs)
    ratio = rss_mb * 1.048576 / size_mb
    return Row(key, f"full parse, {provider} {size_mb:.0f} MB", rate, "MB/s",
               "RSS < 3x (rate: information)", ratio < 3, {
                   "parse_s": round(seconds, 2), "runs_s": [round(r[0], 2) for r in runs],
                   "items": items, "cpu_s": round(child.cpu_s, 2), "rss_mb": round(rss_mb),
                   "rss_x_file": round(ratio, 2)})  # fmt: skip


PAINT = """
import time
started = time.perf_counter()
import asyncio, json, sys
from gobtui.app import make_app
from gobtui.services.run_settings import AppConfig
imported = time.perf_counter()

async def main():
    app = make_app(AppConfig(claude_home=sys.argv[1], codex_home=sys.argv[2],
                             max_age_secs=None, watch=False))
    async with app.run_test(size=(120, 36)) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=120)
        painted = time.perf_counter()
        screen = getattr(app, "sessions_screen", None)
        rows = len(getattr(screen, "summaries", ()) or ())
    return painted, rows

painted, rows = asyncio.run(main())
print(json.dumps({"import_s": imported - started, "paint_s": painted - started, "rows": rows}))
"""


def row_paint(corpus: Corpus, env: dict[str, str], key: str) -> Row:
    # The libraries in the OS page cache, as for any start but the first after a boot (row
    # a0 may have dropped it): one start that is not measured.
    run_child("-c", "import gobtui.app", [], env)
    child = run_child("-c", PAINT, [str(corpus.claude_home), str(corpus.codex_home)], env)
    _check(child, "first paint")
    data = json.loads(child.stdout.splitlines()[-1])
    ok = data["paint_s"] < 1.0 and child.rss_mb < 400
    return Row(key, "dashboard first paint (warm)", data["paint_s"], "s", "< 1 s, < 400 MB",
               ok, {"import_s": round(data["import_s"], 2), "rows": data["rows"],
                    "rss_mb": round(child.rss_mb), "process_s": round(child.seconds, 2),
                    "process_cpu_s": round(child.cpu_s, 2)})  # fmt: skip


IDLE_SECS = 60.0
IDLE = """
import asyncio, json, sys, time
from textual.widgets import Static
from gobtui.app import make_app
from gobtui.services.run_settings import AppConfig

async def main():
    app = make_app(AppConfig(claude_home=sys.argv[1], codex_home=sys.argv[2],
                             max_age_secs=None, watch=True))
    async with app.run_test(size=(120, 36)) as pilot:
        await asyncio.wait_for(app.first_paint.wait(), timeout=120)
        status = str(app.sessions_screen.query_one("#status", Static).render())
        rows = len(app.sessions_screen.summaries)
        painted = time.perf_counter()
        # The one-time background read of the head+tail summaries is work, not idling.
        await asyncio.wait_for(app.history_complete.wait(), timeout=600)
        while app.sessions_screen.fills_reading:  # so is the selected session's, read once
            await asyncio.sleep(0.1)
        completed = time.perf_counter() - painted
        await asyncio.sleep(5)  # the watcher and the one-second tick settle in
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(float(sys.argv[3]))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu_share": cpu / wall, "idle_s": wall, "rows": rows, "status": status,
            "history_s": completed}

print(json.dumps(asyncio.run(main())))
"""
"""The board painted, then left alone: what it costs to keep open in a pane all day."""


def row_idle(corpus: Corpus, env: dict[str, str], key: str) -> Row:
    child = run_child(
        "-c", IDLE, [str(corpus.claude_home), str(corpus.codex_home), str(IDLE_SECS)], env
    )
    _check(child, "idle dashboard")
    data = json.loads(child.stdout.splitlines()[-1])
    share = data["cpu_share"] * 100
    counted = f"{data['rows']} sessions" in data["status"]  # the board's count, at first paint
    ok = share < 1.0 and child.rss_mb < 250 and counted
    return Row(key, "idle dashboard, CPU of one core", share, "%", "< 1 %, < 250 MB", ok,
               {"idle_s": round(data["idle_s"]), "rss_mb": round(child.rss_mb),
                "history_read_s": round(data["history_s"], 1),
                "rows": data["rows"], "status_at_first_paint": counted})  # fmt: skip


def measure(key: str, name: str, fn: Callable[[], Row]) -> Row:
    print(f"  {key}. {name} ...", file=sys.stderr, flush=True)
    try:
        return fn()
    except Exception as error:  # one failing row never stops the others
        detail = traceback.format_exception_only(error)[-1].strip()
        return Row(key, name, error=detail)


SETTLE_LOAD = 1.0
SETTLE_MAX_SECS = 90.0


def settle() -> None:
    """Wait (up to SETTLE_MAX_SECS) for the 1-minute load average to drop under SETTLE_LOAD:
    a bench started right after another heavy job would measure the other job too."""
    deadline = time.monotonic() + SETTLE_MAX_SECS
    load = os.getloadavg()[0]
    if load >= SETTLE_LOAD:
        print(f"bench: load average {load:.2f}; waiting for it to settle", file=sys.stderr)
    while load >= SETTLE_LOAD and time.monotonic() < deadline:
        time.sleep(2)
        load = os.getloadavg()[0]


REFERENCE_RECORDS = 20_000
_REFERENCE_LINE = orjson.dumps({
    "type": "assistant", "uuid": "0" * 36, "timestamp": "2026-11-30T12:00:00.000Z",
    "message": {"id": "msg_0", "content": [{"type": "text", "text": "word " * 300}],
                "usage": {"input_tokens": 5, "output_tokens": 9}},
})  # fmt: skip


def cpu_reference() -> float:
    """Seconds a fixed piece of work takes on one core here: JSON lines decoded and walked in
    Python, as a parse does. The same every run, so it tells how fast this machine was at
    the time (a shared VM's speed can swing by a third from one minute to the next)."""
    start = time.perf_counter()
    words = 0
    for _ in range(REFERENCE_RECORDS):
        record = orjson.loads(_REFERENCE_LINE)
        message = record.get("message")
        words += len(message["content"][0]["text"].split()) + len(orjson.dumps(message))
    return round(time.perf_counter() - start, 3)


def noise() -> dict[str, Any]:
    return {
        "nproc": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def render(rows: list[Row], context: dict[str, Any]) -> str:
    lines = [f"{'':2} {'measure':<34} {'value':>10}  {'target':<22} {'ok':<4} details"]
    for r in rows:
        if r.error:
            lines.append(f"{r.key:2} {r.name:<34} {'ERROR':>10}  {r.target:<22} {'-':<4} {r.error}")
            continue
        value = f"{r.value:.3g} {r.unit}" if r.value is not None else "-"
        ok = {True: "yes", False: "NO", None: "-"}[r.ok]
        extra = ", ".join(f"{k}={v}" for k, v in r.extra.items())
        lines.append(f"{r.key:2} {r.name:<34} {value:>10}  {r.target:<22} {ok:<4} {extra}")
    head = (f"nproc={context['nproc']} load={context['loadavg_before']} -> "
            f"{context['loadavg_after']}  cpu_ref={context['cpu_ref_before']} s -> "
            f"{context['cpu_ref_after']} s  corpus: {context['corpus']}")  # fmt: skip
    return "\n".join([head, *lines])


CCUSAGE_VERSION = "18.0.11"
"""The ccusage the side-by-side row runs (MIT; its JavaScript build, no native binary)."""
CCUSAGE_RATIO_TARGET = 0.028
TOOLS = REPO / "bench" / ".tools"


def ccusage_bin() -> Path:
    """ccusage CCUSAGE_VERSION in bench/.tools, installed from npm the first time."""
    binary = TOOLS / "node_modules" / ".bin" / "ccusage"
    manifest = TOOLS / "node_modules" / "ccusage" / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text()).get("version") == CCUSAGE_VERSION:
        return binary
    TOOLS.mkdir(parents=True, exist_ok=True)
    argv = ["npm", "install", "--prefix", str(TOOLS), "--no-audit", "--no-fund"]
    subprocess.run(
        [*argv, f"ccusage@{CCUSAGE_VERSION}"], check=True, capture_output=True, timeout=300
    )
    return binary


def row_ccusage(corpus: Corpus, work: Path) -> Row:
    """k: the same Claude home read by ccusage's session report and by a cold gobtui detect."""
    binary = ccusage_bin()
    env = bench_env(work / "cache-k", work)
    env["CLAUDE_CONFIG_DIR"] = str(corpus.claude_home)
    started = time.perf_counter()
    done = subprocess.run(
        [str(binary), "session", "--json", "--offline"], env=env, capture_output=True,
        timeout=CHILD_TIMEOUT,
    )  # fmt: skip
    ccusage_s = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"ccusage exited {done.returncode}: {done.stderr[-300:]!r}")
    reported = len(json.loads(done.stdout).get("sessions", []))
    empty = work / "empty-codex-home"
    empty.mkdir(exist_ok=True)
    args = ["detect", "--json", "--all", "--claude-home", str(corpus.claude_home)]
    args += ["--codex-home", str(empty)]
    child = run_child("-m", GOBTUI, args, env)
    _check(child, "gobtui detect (Claude half)")
    ratio = child.seconds / ccusage_s
    return Row("k", "cold detect / ccusage session", ratio, "x",
               f"<= {CCUSAGE_RATIO_TARGET:g}", ratio <= CCUSAGE_RATIO_TARGET, {
                   "gobtui_s": round(child.seconds, 2), "ccusage_s": round(ccusage_s, 2),
                   "ccusage": CCUSAGE_VERSION, "gobtui_sessions": len(orjson.loads(child.stdout)),
                   "ccusage_rows": reported})  # fmt: skip


def main() -> int:
    print("bench: preparing the corpus (generated once, then reused)", file=sys.stderr)
    corpus = ensure_corpus()
    settle()
    before = noise()
    reference = cpu_reference()
    summary = f"{corpus.sessions} sessions, {corpus.files} files, {corpus.bytes / 1e9:.2f} GB"
    with tempfile.TemporaryDirectory(prefix="gobtui-bench-") as tmp:
        work = Path(tmp)
        cache = work / "cache"  # empty at first: row a is a cold start
        env = bench_env(cache, work)
        cold_env = bench_env(work / "cache-a0", work)
        compile_once()
        plan: list[tuple[str, str, Callable[[], Row]]] = [
            # a0 has a cache of its own: a starts from an empty one too
            ("a0", "cold detect, cold disk", partial(row_detect, corpus, cold_env, "a0")),
            ("a", "cold detect", partial(row_detect, corpus, env, "a")),
            ("b", "warm detect", partial(row_detect, corpus, env, "b")),
            ("c", "append latency", lambda: asyncio.run(_append_latency(corpus, cache))),
            ("d", "full parse claude", partial(row_parse, corpus, env, "claude", "d")),
            ("d2", "full parse codex", partial(row_parse, corpus, env, "codex", "d2")),
            ("e", "first paint", partial(row_paint, corpus, env, "e")),  # cache warmed by a, b
            ("e2", "idle dashboard", partial(row_idle, corpus, env, "e2")),
            ("k", "beside ccusage", partial(row_ccusage, corpus, work)),
        ]
        wanted = set(sys.argv[1:])  # `python -m bench.run a b`: only those rows
        rows = [measure(k, name, fn) for k, name, fn in plan if not wanted or k in wanted]
    context = before | {"loadavg_before": before["loadavg"], "loadavg_after": noise()["loadavg"]}
    context |= {"cpu_ref_before": reference, "cpu_ref_after": cpu_reference()}
    context["corpus"] = summary
    print(render(rows, context))
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {"when": time.time(), "context": context, "rows": [asdict(r) for r in rows]}
    (RESULTS / "latest.json").write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {RESULTS / 'latest.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
