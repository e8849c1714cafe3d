"""The bundled demo home: believable Claude Code and Codex sessions, deterministic from a seed.

`build_demo_home` writes about ten sessions (one over the default trigger, one with two
subagents, one compaction per provider, two live ones); `DemoAppender` grows the live two.
Every id comes from random.Random(seed) and every timestamp from the injected `now`, so the
same seed and `now` give byte-identical files (screenshots and snapshot tests rely on it).
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from core.model import Provider, claude_context_window
from gobtui.demo_records import (
    CODEX_WINDOW,
    ClaudeMeta,
    ClaudeSession,
    Clock,
    CodexMeta,
    CodexSession,
    Ids,
    iso,
)

CLAUDE_VERSION = "2.1.150"
CODEX_CLI = "0.104.0"
CLAUDE_COMPACT_AT = 0.83
"""Claude Code auto-compacts near 83% of the window (preTokens ~166k on 200k)."""
CODEX_COMPACT_AT = 254_000
"""Just past the default trigger, so the live Codex session crosses it before compacting."""


# --- what the sessions talk about ----------------------------------------------------------


@dataclass(frozen=True)
class Project:
    name: str
    lang: str
    branch: str
    test: str
    nouns: tuple[str, ...]
    files: tuple[str, ...]
    prompts: tuple[str, ...]
    """The first one is the session's title."""

    @property
    def cwd(self) -> str:
        return f"/home/dev/src/{self.name}"


# name | language | branch | test command, then nouns, files and prompts (title first).
_PROJECTS = """
ledgerly | py | feat/scheduler-v2 | uv run pytest -q
  invoice export batch ledger schedule retry tenant
  ledgerly/billing/export.py ledgerly/tasks/scheduler.py ledgerly/tasks/retry.py
  ledgerly/models/invoice.py tests/test_export.py tests/test_scheduler.py
  > migrate the invoice export from celery beat to the new scheduler and keep retries idempotent
  > the nightly export ran twice for tenant 42, find out why
spotlight-api | ts | main | pnpm vitest run
  search query index ranking cursor facet
  src/routes/search.ts src/index/ranker.ts src/index/cursor.ts src/db/schema.ts
  test/search.test.ts
  > add cursor pagination to /search and make the ranking stable across pages
  > the facet counts are off by one when a filter is active
tiles | rs | perf/chunk-streaming | cargo test
  board tile render sprite chunk camera
  src/board.rs src/render.rs src/chunk.rs src/camera.rs tests/board.rs
  > chunk loading stutters when the camera crosses a region border, profile it and fix
  > add a debug overlay that shows chunk boundaries
docs-site | ts | main | pnpm build
  page sidebar link heading search version
  src/content/docs/index.mdx astro.config.mjs src/components/Sidebar.astro
  scripts/check-links.ts
  > audit the docs for broken internal links and outdated CLI flags, then fix them
dotfiles | sh | main | shellcheck install.sh
  alias prompt plugin keymap theme
  zsh/.zshrc nvim/init.lua nvim/lua/keymaps.lua tmux/tmux.conf install.sh
  > my tmux status line stopped showing the git branch
pg-migrate | go | main | go test ./...
  migration lock schema version runner plan
  internal/migrate/runner.go internal/migrate/lock.go internal/migrate/plan.go
  cmd/pgm/main.go internal/migrate/runner_test.go
  > take an advisory lock before running migrations so two deploys can't race
  > add a --dry-run that prints the plan without touching the database
infra | tf | main | terraform plan
  bucket policy role cluster node
  modules/cluster/main.tf modules/cluster/variables.tf envs/staging/main.tf
  > why does terraform plan want to recreate the staging node pool?
relay | go | fix/rebalance-offsets | go test ./internal/...
  message queue consumer offset backoff shard
  internal/relay/consumer.go internal/relay/backoff.go internal/relay/shard.go
  internal/relay/consumer_test.go
  > consumers lose their offset after a rebalance; reproduce it in a test and fix it
  > make the backoff jittered and cap it at 30s
orbit-cli | py | main | pytest -q
  command config profile token output plugin
  orbit/cli.py orbit/config.py orbit/profiles.py orbit/output.py tests/test_cli.py
  > add profile support to orbit-cli: orbit --profile staging deploy
  > make --output json stable and document the schema
benchkit | rs | main | cargo test --all
  sample histogram runner report baseline
  src/runner.rs src/stats.rs src/report.rs benches/parse.rs
  > replace the mean/stddev summary with a bootstrap confidence interval
  > compare against a saved baseline and exit non-zero on a regression
notebooks | py | main | pytest -q analysis
  frame column sample plot model
  analysis/load.py analysis/features.py notebooks/eda.py
  > turn the churn notebook into a script that writes the plots to out/
"""


def _parse_projects(table: str) -> dict[str, Project]:
    out: dict[str, Project] = {}
    name = ""
    for raw in filter(str.strip, table.splitlines()):
        line = raw.strip()
        if not raw.startswith(" "):
            name, lang, branch, test = (part.strip() for part in line.split("|"))
            out[name] = Project(name, lang, branch, test, (), (), ())
        elif line.startswith(">"):
            out[name] = replace(out[name], prompts=(*out[name].prompts, line[1:].strip()))
        elif not out[name].nouns:
            out[name] = replace(out[name], nouns=tuple(line.split()))
        else:
            out[name] = replace(out[name], files=(*out[name].files, *line.split()))
    return out


PROJECTS = _parse_projects(_PROJECTS)

FOLLOW_UPS = """run the tests again, I think one of them is flaky
looks good. can you also add a test for the empty case?
why did you change {f}? revert that part
ok now update the changelog and the README section about it
that broke the build on CI, check the logs
keep going
can you make the {n} configurable instead of hard-coding it?
split that into two commits please
what happens if the {n} is missing entirely?
good. now clean up the dead code you left in {f}""".splitlines()

SENTENCES = """Let me look at how the {n} is handled in `{f}` first.
The failing case is in `{f}`: the {n} is never reset between runs.
I'll change `{v}_{n}` so it checks the {m} before returning.
Now let me run the tests to confirm nothing else depends on the old {n} behaviour.
Found it. `{f}` reads the {n} before the {m} lock is taken, so two workers race.
All green. Summary: the {n} path now goes through `{v}_{m}`, with a test for it.
I'll add a regression test that reproduces the duplicate {n} first.""".splitlines()

VERBS = ("load", "build", "apply", "parse", "flush", "resolve", "merge", "render", "check")

# Code-ish lines per language, one template a line ({{ }} are literal braces).
_CODE = """
@py
def {v}_{n}(self, {m}: {T}) -> {U}:
    \"\"\"{V} the {n} for one {m}.\"\"\"
    {n}s = [x for x in self.{m}s if x.{n}_id == {m}.id]
    if not {n}s:
        raise {T}Error(f"no {n} for {{{m}.id}}")
    return {U}.from_{n}s({n}s)
from {P}.{n} import {T}
class {T}({U}):
    {n}_id: int
@rs
pub fn {v}_{n}(&mut self, {m}: &{T}) -> Result<{U}> {{
    let {n} = self.{m}s.get(&{m}.id).context("{n} missing")?;
    if {n}.is_empty() {{
        bail!("empty {n} for {{}}", {m}.id);
    Ok({U}::from({n}))
use crate::{n}::{T};
#[derive(Debug, Clone)]
pub struct {T} {{
    pub {n}s: Vec<{U}>,
@ts
export async function {v}{N}({m}: {T}): Promise<{U}> {{
  const {n}s = await db.{n}.findMany({{ where: {{ {m}Id: {m}.id }} }});
  if (!{n}s.length) throw new HttpError(404, "{n} not found");
  return {n}s.map(to{U});
import type {{ {T} }} from "../{n}";
interface {T} {{
  {n}Id: string;
@go
func (s *{T}) {V}{N}(ctx context.Context, {m} {U}) error {{
\tif err := s.{m}.Validate(); err != nil {{
\t\treturn fmt.Errorf("{v} {n}: %w", err)
\treturn s.store.Save(ctx, {m})
type {T} struct {{
\t{N}ID int64
@sh
alias {n}="{v} --{m}"
set -g @{n}-{m} on
export {N}_{M}="$HOME/.{n}"
vim.keymap.set("n", "<leader>{n}", "<cmd>{V}{N}<cr>")
@tf
resource "{n}" "{m}" {{
  name = "${{var.env}}-{n}"
  {m}_id = var.{m}_id
variable "{n}_{m}" {{
  type = string
"""


def _parse_code(text: str) -> dict[str, list[str]]:
    """Template lines per language; blanks and closing braces are common enough to add."""
    out: dict[str, list[str]] = {}
    lang = ""
    for line in text.strip("\n").splitlines():
        if line.startswith("@"):
            lang = line[1:]
            out[lang] = [""] if lang in ("py", "sh") else ["", "}}"]
        else:
            out[lang].append(line)
    return out


CODE = _parse_code(_CODE)


class Text:
    """Believable prose, code and tool output about one project."""

    def __init__(self, rng: random.Random, project: Project) -> None:
        self.rng = rng
        self.p = project

    def _fill(self, template: str) -> str:
        r = self.rng
        n, m = r.sample(self.p.nouns, 2)
        v = r.choice(VERBS)
        return template.format(
            n=n,
            m=m,
            v=v,
            V=v.title(),
            N=n.title(),
            M=m.upper(),
            T=n.title(),
            U=m.title(),
            P=self.p.name.replace("-", "_"),
            f=r.choice(self.p.files),
        )

    def code(self, lines: int) -> list[str]:
        pool = CODE[self.p.lang]
        return [self._fill(self.rng.choice(pool)) for _ in range(lines)]

    def file(self) -> str:
        return self.rng.choice(self.p.files)

    def prompt(self) -> str:
        return self._fill(self.rng.choice(FOLLOW_UPS))

    def sentence(self) -> str:
        return self._fill(self.rng.choice(SENTENCES))

    def numbered(self, lines: list[str], start: int = 1) -> str:
        return "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, start))

    def run_output(self) -> str:
        r, n = self.rng, self.rng.randint(8, 70)
        names = [f"{self._fill('{v}_{n}_{m}')}" for _ in range(n)]
        lang = self.p.lang
        if lang == "py":
            body = [f"tests/test_{r.choice(self.p.nouns)}.py::test_{x} PASSED" for x in names]
            return "\n".join(
                [
                    f"collected {n} items",
                    "",
                    *body,
                    f"{'=' * 20} {n} passed in {r.uniform(0.4, 9):.2f}s {'=' * 20}",
                ]
            )
        if lang == "rs":
            body = [f"test {r.choice(self.p.nouns)}::tests::{x} ... ok" for x in names]
            return "\n".join(
                [
                    f"running {n} tests",
                    *body,
                    "",
                    f"test result: ok. {n} passed; 0 "
                    f"failed; 0 ignored; finished in {r.uniform(0.1, 4):.2f}s",
                ]
            )
        if lang == "ts":
            body = [
                f" \u2713 test/{r.choice(self.p.nouns)}.test.ts > {x} {r.randint(1, 90)}ms"
                for x in names
            ]
            return "\n".join([*body, "", f" Tests  {n} passed ({n})"])
        body = [f"ok  \t{self.p.name}/internal/{x}\t{r.uniform(0.01, 2):.3f}s" for x in names]
        return "\n".join(body)

    def grep(self) -> tuple[str, str]:
        pattern = self._fill("{v}_{n}")
        hits = [
            f"{self.file()}:{self.rng.randint(3, 400)}:{line.strip()}"
            for line in self.code(self.rng.randint(3, 30))
        ]
        return pattern, "\n".join(hits)

    def summary(self) -> str:
        items = [f"   - {self.sentence()}" for _ in range(self.rng.randint(25, 60))]
        return (
            "This session is being continued from a previous conversation that ran out of "
            "context. The summary below covers the earlier portion of the conversation.\n\n"
            "Analysis:\nLet me chronologically analyze the conversation:\n\n"
            f"1. The user asked: {self.p.prompts[0]}\n"
            + "\n".join(items)
            + "\n\nSummary:\n1. Primary Request and Intent:\n   "
            + self.p.prompts[0]
            + "\n\n2. Key files:\n"
            + "\n".join(f"   - {f}" for f in self.p.files)
        )

    def codex_summary(self) -> str:
        return (
            "Another language model started to solve this problem and produced a summary "
            "of its thinking process. You also have access to the state of the tools that "
            "were used by that language model.\n\n" + self.summary()
        )

    def claude_tool(self) -> tuple[str, dict[str, object], str, object]:
        """(tool name, input, tool_result content, toolUseResult) of one tool call."""
        r = self.rng
        kind = r.choices(("Read", "Bash", "Grep", "Edit", "Glob"), (5, 4, 3, 3, 1))[0]
        path = f"{self.p.cwd}/{self.file()}"
        if kind == "Read":
            lines = self.code(r.randint(20, 160))
            content = self.numbered(lines)
            file = {"filePath": path, "content": "\n".join(lines), "numLines": len(lines)}
            return kind, {"file_path": path}, content, {"type": "text", "file": file | {
                "startLine": 1, "totalLines": len(lines)}}  # fmt: skip
        if kind == "Bash":
            if r.random() < 0.3:
                command, what = "git status --short", "Show working tree status"
                out = "\n".join(f" M {f}" for f in r.sample(self.p.files, 2))
            else:
                command, what, out = self.p.test, "Run the tests", self.run_output()
            result = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            return kind, {"command": command, "description": what}, out, result
        if kind == "Grep":
            pattern, out = self.grep()
            names = sorted({line.split(":")[0] for line in out.splitlines()})
            return kind, {"pattern": pattern, "output_mode": "content", "-n": True}, out, {
                "mode": "content", "numFiles": len(names), "filenames": names,
                "content": out, "numLines": out.count("\n") + 1}  # fmt: skip
        if kind == "Edit":
            old, new = "\n".join(self.code(4)), "\n".join(self.code(6))
            out = (
                f"The file {path} has been updated. Here's the result of running `cat -n` "
                f"on a snippet of the edited file:\n" + self.numbered(self.code(12), 40)
            )
            return (
                kind,
                {"file_path": path, "old_string": old, "new_string": new},
                out,
                {"filePath": path, "oldString": old, "newString": new, "replaceAll": False},
            )
        names = [f"{self.p.cwd}/{f}" for f in self.p.files]
        return (
            kind,
            {"pattern": "**/*"},
            "\n".join(names),
            {"filenames": names, "numFiles": len(names)},
        )

    def claude_step(self, s: ClaudeSession, *, tools: bool, final: bool = True) -> None:
        """One assistant request, its tool calls and their results."""
        blocks: list[dict[str, object]] = [{"type": "text", "text": self.sentence()}]
        if self.rng.random() < 0.2:
            thinking = " ".join(self.sentence() for _ in range(3))
            blocks.insert(0, {"type": "thinking", "thinking": thinking,
                              "signature": "Es" + s.ids.b62(180)})  # fmt: skip
        calls = [self.claude_tool() for _ in range(self.rng.choice((1, 1, 2)) if tools else 0)]
        uses = [
            {"type": "tool_use", "id": s.ids.toolu(), "name": name, "input": args}
            for name, args, _, _ in calls
        ]
        uuids = s.call(blocks + uses)
        for use, (name, _, content, result) in zip(uses, calls, strict=True):
            if name == "Bash":  # Claude Code streams the whole output so far, every second
                ticks = self.rng.randint(1, 6)
                for tick in range(1, ticks + 1):
                    shown = content[: len(content) * tick // ticks]
                    data = {"type": "bash_progress", "output": shown[-400:], "fullOutput": shown}
                    s.progress(str(use["id"]), data | {"elapsedTimeSeconds": tick})
            s.tool_result(str(use["id"]), content, result, uuids[-1])
        if tools and final:
            s.call([{"type": "text", "text": self.sentence()}])

    def codex_step(self, s: CodexSession) -> None:
        r = self.rng
        gerund = r.choice(("Checking", "Tracing", "Inspecting", "Planning", "Reviewing"))
        s.reasoning(f"**{gerund} the {self._fill('{n} {m}')}**")
        s.say(self.sentence())
        if r.random() < 0.25:
            path = self.file()
            body = "\n".join(["*** Begin Patch", f"*** Update File: {path}", "@@",
                              *(f"-{x}" for x in self.code(3)), *(f"+{x}" for x in self.code(5)),
                              "*** End Patch"])  # fmt: skip
            s.patch(body, path)
        cmds = [
            self.p.test if r.random() < 0.4 else f"rg -n {self._fill('{v}_{n}')} ."
            for _ in range(r.choice((1, 1, 2, 3)))
        ]
        cids = [
            s.call("exec_command", {"cmd": c, "workdir": s.meta.cwd, "yield_time_ms": 10000})
            for c in cmds
        ]
        s.token_count()
        for cid, cmd in zip(cids, cmds, strict=True):
            out = self.run_output() if cmd == self.p.test else self.grep()[1]
            took = r.uniform(0.02, 9)
            s.output(cid, f"Chunk ID: {s.ids.hex(6)}\nWall time: {took:.4f} seconds\n"
                          f"Process exited with code 0\nOutput:\n{out}")  # fmt: skip
            end = {"type": "exec_command_end", "call_id": cid, "command": ["bash", "-lc", cmd]}
            s.event(end | {"aggregated_output": out, "exit_code": 0, "formatted_output": out})
        s.say(self.sentence(), "final_answer")
        s.token_count()


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
    ids: Ids, clock: Clock, meta: CodexMeta, text: Text, turns: int, *, compact: bool
) -> CodexSession:
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
        for _ in range(rng.randint(2, 6)):
            text.codex_step(s)
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
    clock = Clock(rng)
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
    clock = Clock(rng)
    meta = CodexMeta("", project.cwd, spec.model, CODEX_CLI, branch=project.branch)
    text = Text(rng, project)
    session = codex_script(ids, clock, meta, text, spec.turns, compact=len(spec.usage) > 1)
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


# --- live appends ------------------------------------------------------------------------


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
        text.claude_step(session, tools=rng.random() < 0.6)
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
        text.codex_step(session)
        data = session.finish(targets, now - clock.t, rng, prev=live.context)
        _append(live.path, data)
        live.totals = session.totals
        live.context = min(targets[-1][1], CODEX_WINDOW)
        return live.path


def _append(path: Path, data: bytes) -> None:
    """Whole lines in one write call, so a reader never sees half a turn's last line."""
    with path.open("ab", buffering=0) as handle:
        handle.write(data)
