"""The live demo: `DemoAppender` grows the demo home's two live sessions by one turn per tick.

It reads each session's tail for where it left off (leaf uuid, context, token totals) and
appends whole records, compacting once the context crosses the provider's threshold.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from gobtui.core.model import claude_context_window
from gobtui.demo.claude import ClaudeMeta, ClaudeSession
from gobtui.demo.codex import CODEX_WINDOW, CodexMeta, CodexSession
from gobtui.demo.home import CLAUDE_VERSION, CODEX_CLI, DemoHome
from gobtui.demo.records import Clock, Ids
from gobtui.demo.text import PROJECTS, Text

CLAUDE_COMPACT_AT = 0.83
"""Claude Code auto-compacts near 83% of the window (preTokens ~166k on 200k)."""
CODEX_COMPACT_AT = 254_000
"""Just past the default trigger, so the live Codex session crosses it before compacting."""


def _tail_records(path: Path, size: int = 256 * 1024) -> list[dict[str, Any]]:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - size))
        data = handle.read()
    out: list[dict[str, Any]] = []
    for line in data.split(b"\n")[1:] if len(data) == size else data.split(b"\n"):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


class _LiveClaude:
    def __init__(self, path: Path) -> None:
        self.path = path
        records = _tail_records(path)
        chained = [r for r in records if isinstance(r.get("uuid"), str)]
        last = [r for r in chained if r.get("type") == "assistant"][-1]
        msg = last["message"]
        assert isinstance(msg, dict)
        usage = msg["usage"]
        self.context = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        self.leaf = str(chained[-1]["uuid"])
        self.meta = ClaudeMeta(
            str(last["sessionId"]),
            str(last["cwd"]),
            str(msg["model"]),
            str(last.get("gitBranch") or "main"),
            str(last.get("slug") or ""),
            str(last.get("version") or CLAUDE_VERSION),
        )
        self.project = PROJECTS.get(Path(self.meta.cwd).name) or next(iter(PROJECTS.values()))


class _LiveCodex:
    def __init__(self, path: Path) -> None:
        self.path = path
        records = _tail_records(path)
        info = [
            r["payload"]["info"]
            for r in records
            if r.get("type") == "event_msg"
            and isinstance(r["payload"], dict)
            and r["payload"].get("type") == "token_count"
            and r["payload"].get("info")
        ][-1]
        ctx = [r["payload"] for r in records if r.get("type") == "turn_context"][-1]
        assert isinstance(ctx, dict)
        self.totals: dict[str, int] = dict(info["total_token_usage"])
        self.context = int(info["last_token_usage"]["input_tokens"])
        self.turn_id = str(ctx.get("turn_id") or "")
        self.meta = CodexMeta("", str(ctx["cwd"]), str(ctx["model"]), CODEX_CLI)
        self.project = PROJECTS.get(Path(self.meta.cwd).name) or next(iter(PROJECTS.values()))


class DemoAppender:
    """Grows the two live demo sessions by one realistic turn per tick."""

    def __init__(self, home: DemoHome, seed: int) -> None:
        self.rng = random.Random(f"gobtui-demo-append:{seed}")
        self.ids = Ids(self.rng)
        codex = [p.is_relative_to(home.codex_home) for p in home.live_paths]
        self.claude = [_LiveClaude(p) for p, x in zip(home.live_paths, codex, strict=True) if not x]
        self.codex = [_LiveCodex(p) for p, x in zip(home.live_paths, codex, strict=True) if x]

    def tick(self, now: float) -> list[Path]:
        written = [self._claude_turn(live, now) for live in self.claude]
        written += [self._codex_turn(live, now) for live in self.codex]
        return written

    def _claude_turn(self, live: _LiveClaude, now: float) -> Path:
        rng = self.rng
        clock = Clock(rng, scale=0.12)  # a few seconds of records, shifted to end at `now`
        session = ClaudeSession(self.ids, clock, live.meta, leaf=live.leaf)
        text = Text(rng, live.project)
        grow = rng.randint(900, 2_000)  # a tick a second: fast, so the board visibly moves
        targets = [(live.context + 300, live.context + grow)]
        if live.context + grow > CLAUDE_COMPACT_AT * claude_context_window(live.meta.model):
            session.compact(text.summary())
            fresh = rng.randint(33_000, 39_000)
            targets.append((fresh, fresh + grow))
        # Mid-turn, as an agent writing every second is: its tool results are in, the
        # answer is still to come (the board reads it working, not waiting).
        text.claude_step(session, tools=True, final=False)
        data = session.finish(targets, now - clock.t, rng, prev=live.context)
        _append(live.path, data)
        live.leaf = str(session.leaf)
        live.context = targets[-1][1]
        return live.path

    def _codex_turn(self, live: _LiveCodex, now: float) -> Path:
        rng = self.rng
        clock = Clock(rng, scale=0.12)
        session = CodexSession(self.ids, clock, live.meta, totals=live.totals)
        session.turn_id = live.turn_id
        text = Text(rng, live.project)
        grow = rng.randint(1_600, 3_200)
        targets = [(live.context + 1_000, live.context + grow)]  # above the last output
        if live.context + grow > CODEX_COMPACT_AT:
            session.compacted([text.prompt()], text.codex_summary())
            fresh = rng.randint(38_000, 45_000)
            targets.append((fresh, fresh + grow))
        text.codex_step(session, final=False)  # mid-turn, as the Claude one
        data = session.finish(targets, now - clock.t, rng, prev=live.context)
        _append(live.path, data)
        live.totals = session.totals
        live.context = min(targets[-1][1], CODEX_WINDOW)
        return live.path


def _append(path: Path, data: bytes) -> None:
    """Whole lines in one write call, so a reader never sees half a turn's last line."""
    with path.open("ab", buffering=0) as handle:
        handle.write(data)
