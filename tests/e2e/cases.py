"""The sessions the real-client suite resumes: the project's own corpus always, and the
genuine transcripts of ../shared/fixtures when that folder is there."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.builders import sessions
from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession
from tests.conftest import SHARED_FIXTURES
from tests.e2e.harness import Home, copy_home_session
from tests.e2e.model_server import Mode

DRIVEN = Path(__file__).resolve().parents[1] / "corpus" / "driven"
"""Sessions the real Claude Code wrote against the signing server (tests/e2e/drive.py)."""

OLD = 1_790_000_000.0
"""Sources are dated long ago: an idle session, as auto plans it."""

FILE_STRATEGIES = (
    "auto", "scored", "cache_aware", "elide", "dedupe", "micro", "middle", "compacted",
    "structured", "cliff",
)  # fmt: skip
VARIANTS = (*FILE_STRATEGIES, "fork", "undo")


@dataclass(frozen=True)
class Case:
    """A session placed into a home: `place(home)` returns its path there."""

    provider: str
    name: str
    place: Callable[[Home], Path]
    model: str = ""
    """Codex: the model to resume with (a rollout may not name one)."""
    server_mode: Mode = "record"
    """How the model server checks the thinking blocks a resume sends back: "reject" for
    sessions whose blocks it signed itself (the driven ones); the genuine fixtures carry
    redacted signatures, so they are only recorded."""

    def __str__(self) -> str:
        return self.name


def _dated(path: Path) -> Path:
    os.utime(path, (OLD, OLD))
    return path


def _corpus_claude(build: Callable[[], ClaudeSession]) -> Callable[[Home], Path]:
    return lambda home: _dated(build().write(home.claude / "projects"))


def _corpus_codex(build: Callable[[], CodexSession]) -> Callable[[Home], Path]:
    return lambda home: _dated(build().write(home.codex / "sessions"))


CORPUS = [
    Case("claude", "corpus-claude-over-threshold",
         _corpus_claude(lambda: sessions.claude_work_session(180_000))),
    Case("claude", "corpus-claude-interrupted", _corpus_claude(sessions.claude_interrupted)),
    Case("claude", "corpus-claude-continued", _corpus_claude(sessions.claude_continued)),
    Case("claude", "corpus-claude-leafless", _corpus_claude(sessions.claude_leafless)),
    Case("claude", "corpus-claude-one-million", _corpus_claude(sessions.claude_one_million)),
    Case("codex", "corpus-codex-over-threshold",
         _corpus_codex(lambda: sessions.codex_work_session(250_000)), "gpt-5.2-codex"),
    Case("codex", "corpus-codex-reasoning-heavy", _corpus_codex(sessions.codex_reasoning_heavy),
         "gpt-5.2-codex"),
    # Compacted once, then over the trigger again: planned from the live part.
    Case("claude", "corpus-claude-compacted", _corpus_claude(sessions.claude_compacted)),
    Case("codex", "corpus-codex-compacted", _corpus_codex(sessions.codex_compacted),
         "gpt-5.2-codex"),
]  # fmt: skip


def driven_claude(shape: str) -> Callable[[Home], Path]:
    """A driven session placed as Claude Code keeps it: `<session id>.jsonl` in a project
    folder (the one it was driven in)."""

    def place(home: Home) -> Path:
        source = DRIVEN / f"{shape}.jsonl"
        target = home.claude / "projects" / f"-tmp-gobtui-drive-{shape}"
        return _dated(copy_home_session(source, target / f"{_claude_session_id(source)}.jsonl"))

    return place


DRIVEN_SHAPES = ("three-prompts", "tool-heavy", "edits-failure")
CORPUS += [
    Case("claude", f"driven-claude-thinking-{shape}", driven_claude(shape), server_mode="reject")
    for shape in DRIVEN_SHAPES
]

_GENUINE_CLAUDE = {
    "genuine-claude-spotter-4d56": "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "genuine-claude-spotter-short": "marot__spotter__short.jsonl",
    "genuine-claude-spotter-tool-heavy": "marot__spotter__tool_heavy.jsonl",
}
_GENUINE_CODEX = {
    "genuine-codex-shannon": (
        "Kocoro-lab__Shannon__rollout-2026-01-10T14-27-32-019ba997-bbca-7483-9a75-07808dcc061c.jsonl",
        "gpt-5.2-codex",
    ),
    "genuine-codex-openprintkit": (
        "Monotoba__OpenPrintKit__rollout-2025-10-31T19-02-58-c61729d4-da6d-46a4-9a29-ec2c614e5e23.jsonl",
        "gpt-5",
    ),
    "genuine-codex-test-framework": (
        "EdouardZemb__test-framework__rollout-2026-01-30T23-40-14-019c1110-6c78-7101-a89d-814cc74cbf46.jsonl",
        "gpt-5.2-codex",
    ),
    "genuine-codex-localpush": (
        "madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
        "gpt-5.3-codex",
    ),
}


def _genuine_claude(name: str) -> Callable[[Home], Path]:
    def place(home: Home) -> Path:
        source = SHARED_FIXTURES / "claude" / name
        session_id = _claude_session_id(source)
        target = home.claude / "projects" / "-home-user-project" / f"{session_id}.jsonl"
        return _dated(copy_home_session(source, target))

    return place


def _claude_session_id(path: Path) -> str:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if isinstance(record, dict) and isinstance(record.get("sessionId"), str):
                return str(record["sessionId"])
    raise ValueError(f"{path} names no session")


def _genuine_codex(name: str) -> Callable[[Home], Path]:
    def place(home: Home) -> Path:
        source = SHARED_FIXTURES / "codex" / name
        target = home.codex / "sessions" / "2026" / "01" / "10" / name.split("__")[-1]
        return _dated(copy_home_session(source, target))

    return place


def genuine() -> list[Case]:
    if not SHARED_FIXTURES.is_dir():
        return []
    return [
        Case("claude", name, _genuine_claude(file)) for name, file in _GENUINE_CLAUDE.items()
    ] + [
        Case("codex", name, _genuine_codex(file), model)
        for name, (file, model) in _GENUINE_CODEX.items()
    ]


def cases(provider: str) -> list[Case]:
    return [case for case in [*CORPUS, *genuine()] if case.provider == provider]
