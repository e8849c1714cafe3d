"""One case of the real-client suite: a provider home holding a session, gobtui run on it as
a user runs it (the installed CLI, --json), and the real client resuming a file from it.

What a resume is judged on comes from the requests the client sent: whether it asked for its
own compaction, and the history it sent (the request it answers from), block by block.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.clients import PATH, Clients, Finished, run_bounded
from tests.e2e.model_server import THINKING_TYPES, Mode, Request, canonical, model_server

GOBTUI = Path(sys.executable).with_name("gobtui")
PROMPT = "continue"
ENCRYPTED_KEYS = ("encrypted_content",)


@dataclass
class Home:
    """Provider homes, gobtui's own folders and a working directory, all under `root`."""

    root: Path

    def __post_init__(self) -> None:
        for folder in (self.claude, self.codex / "sessions", self.data, self.cwd, self.home):
            folder.mkdir(parents=True, exist_ok=True)

    claude = property(lambda self: self.root / "claude")
    codex = property(lambda self: self.root / "codex")
    data = property(lambda self: self.root / "gobtui-data")
    cwd = property(lambda self: self.root / "work")
    home = property(lambda self: self.root / "home")

    def gobtui_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CLAUDE_"))}
        env.update(
            GOBTUI_DATA_DIR=str(self.data),
            GOBTUI_CACHE_DIR=str(self.root / "gobtui-cache"),
            GOBTUI_CONFIG=str(self.root / "gobtui.toml"),
            CLAUDE_CONFIG_DIR=str(self.claude),
            CODEX_HOME=str(self.codex),
            HOME=str(self.home),
        )
        return env

    def gobtui(self, *args: str) -> Any:
        """`gobtui ARGS --json`'s JSON; the test fails with gobtui's own error otherwise."""
        done = subprocess.run(
            [str(GOBTUI), "--claude-home", str(self.claude), "--codex-home", str(self.codex),
             *args, "--json"],
            env=self.gobtui_env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode != 0:
            raise GobtuiRefused(done.returncode, done.stderr.strip())
        return json.loads(done.stdout)


class GobtuiRefused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"gobtui exited {code}: {message}")
        self.code = code
        self.message = message


@dataclass
class Resumed:
    """What one resume did."""

    finished: Finished
    requests: list[Request] = field(default_factory=list)
    detected: dict[str, Any] = field(default_factory=dict)
    """gobtui detect's row of the session resumed (the suite's originals keep it)."""
    rejected: list[str] = field(default_factory=list)
    """The checking server's HTTP 400 messages (a thinking block's prefix did not verify)."""
    dropped: list[str] = field(default_factory=list)
    """Thinking blocks the checking server dropped (mode "drop")."""

    @property
    def loaded(self) -> bool:
        return self.finished.returncode == 0 and bool(self.requests)

    @property
    def compacted(self) -> bool:
        return any(is_compaction(r) for r in self.requests)

    @property
    def history_request(self) -> Request:
        """The first model request: it carries the history as the client loaded it."""
        return self.requests[0]

    @property
    def answered_from(self) -> Request:
        """The request the client answered the prompt from (after any compaction)."""
        turns = [r for r in self.requests if not is_compaction(r)]
        return turns[-1] if turns else self.requests[-1]


def is_compaction(request: Request) -> bool:
    if request.path.startswith("/v1/responses"):
        return request.is_codex_compaction
    messages = request.body.get("messages", []) if isinstance(request.body, dict) else []
    last = json.dumps(messages[-1:]) if messages else ""
    return "<summary>" in last and "<analysis>" in last


def resume_claude(clients: Clients, home: Home, session_id: str, mode: Mode = "record") -> Resumed:
    """`claude --resume ID -p continue`, against a server checking thinking blocks per `mode`."""
    with model_server(mode) as (url, recorder):
        env = {
            "PATH": PATH, "HOME": str(home.home), "CLAUDE_CONFIG_DIR": str(home.claude),
            "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "e2e-dummy-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "TERM": "dumb",
        }  # fmt: skip
        finished = run_bounded(
            [str(clients.claude), "--resume", session_id, "-p", PROMPT], env, home.cwd
        )
        return Resumed(
            finished,
            recorder.model_requests(),
            rejected=list(recorder.rejected),
            dropped=list(recorder.dropped),
        )


def resume_codex(clients: Clients, home: Home, session_id: str, model: str, *flags: str) -> Resumed:
    with model_server() as (url, recorder):
        (home.codex / "config.toml").write_text(
            f'openai_base_url = "{url}/v1"\ncheck_for_update_on_startup = false\n'
        )
        env = {"PATH": PATH, "HOME": str(home.home), "CODEX_HOME": str(home.codex),
               "OPENAI_API_KEY": "e2e-dummy-key", "TERM": "dumb"}  # fmt: skip
        finished = run_bounded(
            [str(clients.codex), "exec", "--skip-git-repo-check", *flags, "resume", "-m",
             model, session_id, PROMPT],
            env, home.cwd,
        )  # fmt: skip
        return Resumed(finished, recorder.model_requests(), rejected=list(recorder.rejected))


# -- what a request carries ------------------------------------------------------------------


def history_blocks(request: Request) -> list[str]:
    """The history of a request as comparable strings: Claude's message content blocks (role
    and block, cache markers dropped), Codex's input items (encrypted reasoning kept)."""
    body = request.body if isinstance(request.body, dict) else {}
    blocks: list[str] = []
    if "messages" in body:
        for message in body["messages"]:
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for block in content or []:
                block = {k: v for k, v in block.items() if k != "cache_control"}
                blocks.append(message["role"] + " " + json.dumps(block, sort_keys=True))
    else:
        for item in body.get("input", []):
            blocks.append(json.dumps(item, sort_keys=True))
    return blocks


@dataclass(frozen=True)
class PrefixChange:
    """Where a fork's request first differs from the original's, and its thinking blocks on
    either side of that point (the provider invalidates every one after it)."""

    message: int | None
    """Index in the fork's request of the first message that differs (None: none does)."""
    thinking_before: int
    thinking_after: int


def prefix_change(original: Request, fork: Request) -> PrefixChange:
    """Compare the two requests' messages as the provider does (canonical(): roles merged,
    cache markers dropped) block by block; the first block that differs is the change."""
    before = canonical(original.body.get("messages", []) if isinstance(original.body, dict) else [])
    after = canonical(fork.body.get("messages", []) if isinstance(fork.body, dict) else [])
    change: tuple[int, int] | None = None
    for at, message in enumerate(after):
        same = before[at] if at < len(before) and before[at].role == message.role else None
        for position, block in enumerate(message.blocks):
            if same is None or position >= len(same.blocks) or same.blocks[position] != block:
                change = (at, position)
                break
        if change:
            break
    kept_before = kept_after = 0
    for at, message in enumerate(after):
        for position, block in enumerate(message.blocks):
            if isinstance(block, dict) and block.get("type") in THINKING_TYPES:
                if change is None or (at, position) < change:
                    kept_before += 1
                else:
                    kept_after += 1
    first = after[change[0]].origin[change[1]][0] if change else None
    return PrefixChange(first, kept_before, kept_after)


def history_bytes(request: Request, counted_only: bool = False) -> int:
    """Bytes of the request's history as compact UTF-8 JSON (as it goes over the wire, and
    as gobtui estimates); `counted_only` leaves out what the provider does not count as
    context (Codex's encrypted reasoning)."""
    body = request.body if isinstance(request.body, dict) else {}
    entries: list[Any] = body.get("messages", body.get("input", [])) or []
    total = 0
    for entry in entries:
        if counted_only and isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k not in ENCRYPTED_KEYS}
        total += len(json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode())
    return total


def history_tokens(request: Request) -> int:
    """chars/4 of the counted history (what the provider counts as context, estimated)."""
    return history_bytes(request, counted_only=True) // 4


PER_RUN = ("<system-reminder>", "<environment_context>", "/tmp/")
"""Text the client writes anew on every run (the date, the temporary home and working
directory): a block holding any is left out of comparisons."""
INTERRUPTION_MARKERS = ('{"text": "[Request interrupted by user]", "type": "text"}',)
"""Claude Code's own marker of an interrupted turn: it drops the marker from a user message
that another user message (the card) follows, as it does in any session resumed that way."""
PER_RUN_KEYS = ("id", "internal_chat_message_metadata_passthrough")
"""Keys Codex gives the items it adds on every run (fresh message ids)."""


def stable_blocks(request: Request) -> list[str]:
    """history_blocks() less the per-run ones, less Codex's fresh item ids."""
    stable = []
    for block in history_blocks(request):
        if any(marker in block for marker in PER_RUN):
            continue
        if block.startswith("{"):
            item = {k: v for k, v in json.loads(block).items() if k not in PER_RUN_KEYS}
            block = json.dumps(item, sort_keys=True)
        stable.append(block)
    return stable


def untouched_missing(original: Request, fork: Request, changed_ids: set[str]) -> list[str]:
    """Blocks of the original's history that the fork's lacks, leaving out the tool outputs
    gobtui changed or answered (named by their tool_use_id / call_id), per-run text, and
    thinking (preserved thinking: a fork leaves it out after its first change; the suite
    counts what it keeps before and after that change apart)."""
    fork_blocks = set(stable_blocks(fork))
    return [
        block[:200]
        for block in stable_blocks(original)
        if block not in fork_blocks
        and not any(tool_id in block for tool_id in changed_ids)
        and not block.endswith(INTERRUPTION_MARKERS)
        and not _is_thinking(block)
    ]


def _is_thinking(block: str) -> bool:
    """Whether a history_blocks() string is a Claude thinking block ("assistant {...}")."""
    role, _, body = block.partition(" ")
    if role != "assistant" or not body.startswith("{"):
        return False
    return json.loads(body).get("type") in THINKING_TYPES


def copy_home_session(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    old = source.stat().st_mtime
    os.utime(target, (old, old))
    return target


def install_hooks(home: Home, provider: str) -> dict[str, Any]:
    """`gobtui install-hooks --yes` for one client, as a user runs it: the settings written."""
    done = subprocess.run(
        [str(GOBTUI), "install-hooks", "--yes", "--provider", provider],
        env=home.gobtui_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    settings = home.claude / "settings.json" if provider == "claude" else home.codex / "hooks.json"
    return dict(json.loads(settings.read_text()))


def hook_data_dir(home: Home) -> Path:
    """Where a hook's gobtui keeps its data: it runs in the client's environment, whose HOME
    is the case's and which names no GOBTUI_DATA_DIR."""
    return Path(home.home) / ".local" / "share" / "gobtui"
