"""Planning figures on one big transcript: `python -m bench.plan_bench <provider> <path>`.

With --from-the-file, only what a user waits for: a plan and a preview from the file.
Otherwise one JSON object: the full parse, the load planning does (read + parse + one pass over
the lines), each strategy's plan time, a full eval of a loaded session and one from the file
(load + eval, as `gobtui eval` runs), and the state card's cost, each also as a ratio to one
full parse, and the peak RSS. The trigger is lowered to 20k (floor 5k) so every
strategy has something to do.

Every figure is cold: a loaded session keeps what its plans share (card lines, plans,
rewritten lines), so each strategy is planned, and the eval run, on a fresh copy of the
session as load_session returned it, and the card is built without a memo.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import resource
import statistics
import sys
import time
from pathlib import Path

from gobtui.adapters.planning.evaluate import evaluate_session
from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.core.digest import state_card_digest
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies import STRATEGIES
from gobtui.core.strategies.common import candidates
from gobtui.services.planning_state import PreviewPlanner

POLICY = PolicyConfig(trigger_tokens=20_000, floor_tokens=5_000)
PARSE_RUNS = 3
"""The ratios' unit is the median of this many parses: one parse's time drifts by a fifth."""


def from_the_file(provider: Provider, path: Path) -> dict[str, float]:
    """What a user waits for: a plan (`gobtui plan`) and a preview (the dashboard's `p`), each
    from the file, as they run (load_session reads the live part). The file is read once
    first, unmeasured: the session a user plans is one the board has just read, in the page
    cache (a cold disk would time the disk)."""
    with open(path, "rb") as handle:
        while handle.read(1 << 24):
            pass
    started = time.perf_counter()
    session = load_session(path, provider)
    loaded = time.perf_counter()
    plan_session(session, "auto", POLICY)
    planned = time.perf_counter()
    PreviewPlanner(load_session(path, provider)).preview("auto", POLICY, live=False)
    previewed = time.perf_counter()
    return {
        "load_s": round(loaded - started, 3),
        "file_plan_s": round(planned - started, 3),
        "file_preview_s": round(previewed - planned, 3),
        "live_bytes": len(session.data),
    }


def main(argv: list[str]) -> int:
    provider, path = Provider(argv[0]), Path(argv[1])
    if argv[2:] == ["--from-the-file"]:
        figures = from_the_file(provider, path)
        figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        print(json.dumps(figures))
        return 0
    parses: list[float] = []
    for _ in range(PARSE_RUNS):
        started = time.perf_counter()
        parse_transcript(provider, str(path))
        parses.append(time.perf_counter() - started)
    parse_s = statistics.median(parses)

    started = time.perf_counter()
    session = load_session(path, provider)
    load_s = time.perf_counter() - started

    plan_ms: dict[str, float] = {}
    for name in STRATEGIES:
        fresh = dataclasses.replace(session)
        started = time.perf_counter()
        plan_session(fresh, name, POLICY)
        plan_ms[name] = round((time.perf_counter() - started) * 1000, 1)

    lines = [item.line_index for item in candidates(session.transcript, POLICY)]
    started = time.perf_counter()
    card = state_card_digest(session.transcript, lines, session.payloads)
    card_ms = (time.perf_counter() - started) * 1000
    n_items = len(session.transcript.items)
    del session, fresh  # the eval loads its own: one session in memory at a time
    gc.collect()

    # g: the eval of a loaded session, as the plans above are timed (the load's parse is the
    # ratio's unit, not a part of it). Loaded without probes: the eval extracts its own.
    loaded = load_session(path, provider)
    started = time.perf_counter()
    evaluate_session(loaded, POLICY)
    eval_s = time.perf_counter() - started
    del loaded
    gc.collect()

    started = time.perf_counter()  # g2: what `gobtui eval` costs from the file
    evaluated = load_session(path, provider)  # as gobtui eval
    file_load_s = time.perf_counter() - started
    rows = evaluate_session(evaluated, POLICY)
    file_eval_s = time.perf_counter() - started
    print(
        json.dumps(
            {
                "bytes": path.stat().st_size,
                "items": n_items,
                "parse_s": round(parse_s, 3),
                "parse_runs_s": [round(seconds, 3) for seconds in parses],
                "load_s": round(load_s, 3),
                "plan_ms": plan_ms,
                "plan_x_parse": {k: round(v / 1000 / parse_s, 3) for k, v in plan_ms.items()},
                "eval_s": round(eval_s, 3),
                "eval_x_parse": round(eval_s / parse_s, 2),
                "file_eval_s": round(file_eval_s, 3),
                "file_load_s": round(file_load_s, 3),
                "file_eval_x_parse": round(file_eval_s / parse_s, 2),
                "eval_rows": {
                    row.strategy: {"status": row.status.value, "ms": row.duration_ms}
                    for row in rows
                },
                "card_ms": round(card_ms, 1),
                "card_items": len(lines),
                "card_bytes": len(card.render().encode()),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
