"""What the demo sessions talk about: the projects, and prose, code and tool output about them.

`Text` draws everything from the random.Random it is given, so a seeded rng gives the same text.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from gobtui.demo.claude import ClaudeSession
from gobtui.demo.codex import CodexSession


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

    def codex_step(self, s: CodexSession, *, final: bool = True) -> None:
        """One request: reasoning, a message, maybe a patch, commands and their output; then
        (`final`) the answer."""
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
        if final:
            s.say(self.sentence(), "final_answer")
            s.token_count()
