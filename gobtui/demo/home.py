"""The bundled demo home: believable Claude Code and Codex sessions, deterministic from a seed.

`build_demo_home` writes about ten sessions (one over the default trigger, one with two
subagents, one compaction per provider, two live ones); `gobtui.demo.live.DemoAppender` grows
the live two. Every id comes from random.Random(seed) and every timestamp from the injected
`now`, so the same seed and `now` give byte-identical files (screenshots and snapshot tests
rely on it).
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gobtui.core.model import Provider
from gobtui.demo.claude import ClaudeMeta, ClaudeSession
from gobtui.demo.codex import CodexMeta, CodexSession
from gobtui.demo.records import Clock, Ids, iso
from gobtui.demo.text import PROJECTS, Text

CLAUDE_VERSION = "2.1.150"
CODEX_CLI = "0.104.0"


def claude_script(
    ids: Ids,
    clock: Clock,
    meta: ClaudeMeta,
    text: Text,
    turns: int,
    *,
    compact: bool,
    agents: int = 0,
) -> tuple[ClaudeSession, list[ClaudeSession]]:
    """A whole session: prompts, tool-using turns, optionally one compaction and subagents."""
    s = ClaudeSession(ids, clock, meta)
    rng, subs = ids.rng, []
    s.hook("SessionStart", "bd prime")
    for turn in range(turns):
        prompt = (
            text.p.prompts[0]
            if turn == 0
            else (text.p.prompts[turn] if turn < len(text.p.prompts) else text.prompt())
        )
        if compact and turn == int(turns * 0.7):
            s.compact(text.summary())
        s.prompt(prompt, uid=s.snapshot())
        if agents and turn == 1:
            subs = _subagents(s, text, agents)
        for _ in range(rng.randint(2, 6)):
            text.claude_step(s, tools=True, final=False)
        s.call([{"type": "text", "text": text.sentence()}])
        s.system("turn_duration", durationMs=rng.randint(8_000, 400_000))
    s.last_prompt(prompt)
    return s, subs


def _subagents(s: ClaudeSession, text: Text, count: int) -> list[ClaudeSession]:
    """Parallel Task calls: agent_progress in the parent, one sidechain file per agent."""
    ids, rng = s.ids, s.ids.rng
    tasks = [
        f"Explore how {n} flows through the codebase; list every file that touches it."
        for n in rng.sample(text.p.nouns, count)
    ]
    uses = [{"type": "tool_use", "id": ids.toolu(), "name": "Task", "input": {
        "description": f"Explore {t.split()[2]}", "prompt": t, "subagent_type": "Explore"}}
        for t in tasks]  # fmt: skip
    source = s.call([{"type": "text", "text": "I'll explore this in parallel."}, *uses])[-1]
    subs = []
    for use, task in zip(uses, tasks, strict=True):
        agent_id = "a" + ids.hex(6)
        meta = ClaudeMeta(s.meta.session_id, s.meta.cwd, "claude-sonnet-4-5-20250929",
                          s.meta.branch, s.meta.slug, s.meta.version, agent_id)  # fmt: skip
        sub = ClaudeSession(ids, s.clock, meta)
        sub.prompt(task)
        s.progress(str(use["id"]), {"type": "agent_progress", "agentId": agent_id,
                                    "prompt": task, "normalizedMessages": []})  # fmt: skip
        for _ in range(rng.randint(3, 7)):
            text.claude_step(sub, tools=True, final=False)
        report = "\n".join(["## Findings", *(f"- {text.sentence()}" for _ in range(12))])
        sub.call([{"type": "text", "text": report}], stop="end_turn")
        s.tool_result(
            str(use["id"]),
            report,
            {
                "status": "completed",
                "prompt": task,
                "agentId": agent_id,
                "content": [{"type": "text", "text": report}],
            },
            source,
        )
        subs.append(sub)
    return subs


def codex_script(
    ids: Ids,
    clock: Clock,
    meta: CodexMeta,
    text: Text,
    turns: int,
    *,
    compact: bool,
    working: bool = False,
) -> CodexSession:
    """`working`: the last turn is still running (its commands ran, no answer yet)."""
    s = CodexSession(ids, clock, meta)
    s.session_meta(INSTRUCTIONS)
    rng, kept = ids.rng, []
    for turn in range(turns):
        prompt = (
            text.p.prompts[0]
            if turn == 0
            else (text.p.prompts[turn] if turn < len(text.p.prompts) else text.prompt())
        )
        kept.append(prompt)
        if compact and turn == int(turns * 0.7):
            s.compacted(kept[-4:], text.codex_summary())
        preamble = (_env_context(meta.cwd), AGENTS_MD) if turn == 0 else ()
        s.turn(prompt, preamble=preamble)
        steps = rng.randint(2, 6)
        for step in range(steps):
            last = working and turn == turns - 1 and step == steps - 1
            text.codex_step(s, final=not last)
        if not (working and turn == turns - 1):
            s.task_complete(text.sentence())
    return s


INSTRUCTIONS = (
    "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a "
    "user's computer.\n\n## General\n\n- When searching for text or files, prefer using `rg` "
    "or `rg --files` respectively because `rg` is much faster than alternatives like `grep`.\n"
) * 12
AGENTS_MD = (
    "<user_instructions>\n\n# AGENTS.md\n\n- Run the tests before you say you are done.\n"
    "- Keep diffs small; never reformat files you did not change.\n</user_instructions>"
)


def _env_context(cwd: str) -> str:
    return (
        f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>on-request"
        "</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  "
        "<network_access>restricted</network_access>\n  <shell>zsh</shell>\n"
        "</environment_context>"
    )


# --- the demo home ---------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    provider: Provider
    project: str
    model: str
    turns: int
    usage: tuple[tuple[int, int], ...]
    """(first, last) context per segment; a second segment means one compaction."""
    idle: float
    """Seconds between the session's last record (and mtime) and `now`."""
    subagents: int = 0
    live: bool = False


H = 3600.0
C, X = Provider.CLAUDE, Provider.CODEX
LIVE_CLOCK_SCALE = 0.02
"""The live sessions' records come this much faster than the others': about the pace
DemoAppender keeps them growing at, so their burn rate and ETA hold from the first tick."""
SPECS: tuple[Spec, ...] = (
    Spec(C, "ledgerly", "claude-opus-4-6[1m]", 34, ((24_800, 311_400),), 14 * 60),
    Spec(C, "spotlight-api", "claude-opus-4-6", 14, ((23_100, 86_900),), 25, live=True),
    Spec(
        C, "tiles", "claude-sonnet-4-5-20250929", 24, ((21_900, 163_700), (36_200, 61_700)), 3.2 * H
    ),
    Spec(C, "docs-site", "claude-sonnet-4-5-20250929", 9, ((19_400, 72_300),), 47 * 60, 2),
    Spec(C, "dotfiles", "claude-opus-4-6", 4, ((22_000, 31_200),), 51 * H),
    Spec(C, "pg-migrate", "claude-opus-4-6", 30, ((24_100, 141_800),), 6.5 * H),
    Spec(C, "infra", "claude-sonnet-4-5-20250929", 6, ((20_500, 48_900),), 146 * H),
    Spec(X, "relay", "gpt-5.3-codex", 12, ((14_000, 181_200),), 8, live=True),
    Spec(X, "orbit-cli", "gpt-5.5", 16, ((16_500, 238_700), (41_300, 63_900)), 1.6 * H),
    Spec(X, "benchkit", "gpt-5.3-codex", 28, ((15_200, 122_400),), 27 * H),
    Spec(X, "notebooks", "gpt-5.5", 3, ((12_800, 26_300),), 122 * H),
)


@dataclass
class DemoHome:
    root: Path
    claude_home: Path
    codex_home: Path
    live_paths: list[Path]
    """The two sessions DemoAppender grows (Claude first, then Codex)."""
    sessions: list[Path] = field(default_factory=list)
    """Every main transcript written (subagent files not included)."""


def default_demo_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="gobtui-demo-"))


def claude_slug(cwd: str) -> str:
    return "".join("-" if ch in "/. ~" else ch for ch in cwd)


def _write(path: Path, data: bytes, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))


def build_demo_home(root: Path, *, seed: int = 7, now: float) -> DemoHome:
    """Write the demo sessions under root/claude and root/codex (never reads the clock)."""
    root = Path(root)
    home = DemoHome(root, root / "claude", root / "codex", [])
    live: dict[Provider, Path] = {}
    for index, spec in enumerate(SPECS):
        rng = random.Random(f"gobtui-demo:{seed}:{index}:{spec.project}")
        ids = Ids(rng)
        build = _build_claude if spec.provider is Provider.CLAUDE else _build_codex
        path = build(home, spec, ids, now)
        home.sessions.append(path)
        if spec.live:
            live[spec.provider] = path
    home.live_paths = [live[Provider.CLAUDE], live[Provider.CODEX]]
    return home


def _build_claude(home: DemoHome, spec: Spec, ids: Ids, now: float) -> Path:
    project = PROJECTS[spec.project]
    rng = ids.rng
    meta = ClaudeMeta(
        ids.uuid4(), project.cwd, spec.model, project.branch, _slug(rng), CLAUDE_VERSION
    )
    clock = Clock(rng, scale=LIVE_CLOCK_SCALE if spec.live else 1.0)
    text = Text(rng, project)
    session, agents = claude_script(
        ids, clock, meta, text, spec.turns, compact=len(spec.usage) > 1, agents=spec.subagents
    )
    end = now - spec.idle
    shift = end - clock.t
    folder = home.claude_home / "projects" / claude_slug(project.cwd)
    path = folder / f"{meta.session_id}.jsonl"
    for agent in agents:
        last = agent.stamps[-1][2] + shift
        sub_usage = [(rng.randint(11_000, 14_000), rng.randint(38_000, 61_000))]
        data = agent.finish(sub_usage, shift, rng)
        _write(
            folder / meta.session_id / "subagents" / f"agent-{agent.meta.agent_id}.jsonl",
            data,
            last,
        )
    _write(path, session.finish(list(spec.usage), shift, rng), end)
    return path


def _build_codex(home: DemoHome, spec: Spec, ids: Ids, now: float) -> Path:
    project = PROJECTS[spec.project]
    rng = ids.rng
    clock = Clock(rng, scale=LIVE_CLOCK_SCALE if spec.live else 1.0)
    meta = CodexMeta("", project.cwd, spec.model, CODEX_CLI, branch=project.branch)
    text = Text(rng, project)
    session = codex_script(
        ids, clock, meta, text, spec.turns, compact=len(spec.usage) > 1, working=spec.live
    )
    end = now - spec.idle
    shift = end - clock.t
    start = session.stamps[0][2] + shift
    sid = ids.uuid7(start)
    session.records[0]["payload"]["id"] = sid  # the id is a UUIDv7 of the start time
    stamp = iso(start)[:19].replace(":", "-")
    day = home.codex_home / "sessions" / stamp[:4] / stamp[5:7] / stamp[8:10]
    path = day / f"rollout-{stamp}-{sid}.jsonl"
    _write(path, session.finish(list(spec.usage), shift, rng), end)
    return path


def _slug(rng: random.Random) -> str:
    """Claude Code's three-word session name."""
    a = ("linked", "radiant", "quiet", "brisk", "amber", "gentle", "lucky", "hidden", "steady")
    b = ("soaring", "floating", "humming", "wandering", "glowing", "drifting", "sparkling")
    c = ("matsumoto", "music", "lantern", "harbor", "meadow", "pebble", "otter", "compass")
    return f"{rng.choice(a)}-{rng.choice(b)}-{rng.choice(c)}"
