"""Normalized transcript model shared by every provider.

Plain slotted dataclasses: a warm `detect` builds two thousand summaries from the cache, and
pydantic (its import and a validation per entry) would be most of what it costs. Summaries are
read back from JSON by `summary_from_json` (core.summary_json), which checks every field.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from .calibration import Calibration
from .limits import (
    CLAUDE_AUTOCOMPACT_RESERVE_TOKENS,
    CODEX_AUTOCOMPACT_SHARE,
    CODEX_CLIENT_WINDOW,
    DEFAULT_CLAUDE_WINDOW,
    DEFAULT_SLOPE,
    LARGE_CLAUDE_WINDOW,
)
from .sanitize import one_line


@dataclass(frozen=True, slots=True)
class ProviderTraits:
    """What the pure core decides on about a provider's sessions, each a fact of its client or
    its records. They ride on the Provider because core cannot ask the provider's package
    (adapters.providers.interface is the rest of the contract)."""

    label: str
    """Its name in a sentence ("Claude")."""
    mark: str
    """Its one-letter mark in a table's row (the board's, the vault's)."""
    resume: str
    """The client's command that resumes a session, `{session_id}` standing for its id."""
    thinking: bool
    """Its reasoning is thinking blocks the API checks the prefix of: a fork leaves thinking
    out after a change (core.thinking), and drop_old_thinking (else drop_old_reasoning) says
    whether earlier turns' reasoning is a candidate."""
    cache_edits: bool
    """Its client edits the prompt cache in place (cache_edit control plans)."""
    cached_input_apart: bool
    """Its usage counts cached input apart from input_tokens (Codex counts it inside)."""
    resends_reasoning: bool
    """Its client adds the fork's live encrypted reasoning to what it resumes with (the
    projection counts it: core.projection.codex_reasoning_tokens)."""
    default_window: int
    """The model window assumed when a session records none."""
    window_floor: bool
    """Its client knows its models' windows: a smaller recorded one does not lower it."""
    compact_reserve: int
    compact_share: float
    """Its client compacts a resumed session at (window - compact_reserve) * compact_share."""
    default_slope: float
    programs: frozenset[str] = frozenset()
    """Its client's program names: argv[0], or the script a JavaScript runtime runs."""
    packages: tuple[str, ...] = ()
    """Path fragments of its client's npm package, as a runtime is given them."""
    reference_id: str = ""
    """Its id where the reference names providers (an external command's payload)."""
    """Its tokens per estimated token before a session's usage calibrates it (core.calibration)."""


_TRAITS = {
    "claude": ProviderTraits(
        label="Claude",
        mark="C",
        resume="claude --resume {session_id}",
        thinking=True,
        cache_edits=True,
        cached_input_apart=True,
        resends_reasoning=False,
        default_window=DEFAULT_CLAUDE_WINDOW,
        window_floor=False,
        compact_reserve=CLAUDE_AUTOCOMPACT_RESERVE_TOKENS,
        compact_share=1.0,
        default_slope=DEFAULT_SLOPE["claude"],
        programs=frozenset({"claude"}),
        packages=("claude-code",),
        reference_id="claude_code",
    ),
    "codex": ProviderTraits(
        label="Codex",
        mark="X",
        resume="codex resume {session_id}",
        thinking=False,
        cache_edits=False,
        cached_input_apart=False,
        resends_reasoning=True,
        default_window=CODEX_CLIENT_WINDOW,
        window_floor=True,
        compact_reserve=0,
        compact_share=CODEX_AUTOCOMPACT_SHARE,
        default_slope=DEFAULT_SLOPE["codex"],
        programs=frozenset({"codex"}),
        packages=("@openai/codex",),
        reference_id="codex",
    ),
}
_EXTRA: dict[str, Provider] = {}
"""Providers made by Provider.extra (a test's), by value."""


class Provider(StrEnum):
    """The product's providers, a closed vocabulary (iterating it, every choice offered).
    Provider.extra makes one more for a test, outside it."""

    CLAUDE = "claude"
    CODEX = "codex"

    @property
    def label(self) -> str:
        return self.traits.label

    @property
    def traits(self) -> ProviderTraits:
        return _TRAITS[self.value]

    @classmethod
    def _missing_(cls, value: object) -> Provider | None:
        return _EXTRA.get(value) if isinstance(value, str) else None

    @classmethod
    def extra(cls, value: str, traits: ProviderTraits) -> Provider:
        """A provider beyond the product's (tests/adapters/toy_provider's): no member, so
        iterating Provider still lists the product's only, but Provider(value) finds it from
        now on. ValueError when the value is taken."""
        if value in _TRAITS:
            raise ValueError(f"provider {value!r} exists already")
        made = str.__new__(cls, value)
        made._value_ = value
        made._name_ = value.upper()
        _TRAITS[value] = traits
        _EXTRA[value] = made
        return made


class ItemKind(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    REASONING = "reasoning"
    META = "meta"


class ContextState(StrEnum):
    """How much we know about the context occupancy."""

    ABSENT = "absent"  # no usage record seen yet
    REPORTED = "reported"  # the provider reported every component
    UNKNOWN = "unknown"  # usage seen but not complete (nulls, odd shapes)
    RESET = "reset"  # a compaction cleared the context; no usage since


class BadLine(StrEnum):
    """Why a line was not read as a record. Closed vocabulary."""

    NOT_JSON = "not_json"
    NOT_OBJECT = "not_object"
    NOT_UTF8 = "not_utf8"
    TOO_LONG = "too_long"
    TOO_DEEP = "too_deep"
    TORN_TAIL = "torn_tail"


class TurnState(StrEnum):
    """Who is up, by the transcript's newest conversational record. Closed vocabulary."""

    RESPONDING = "responding"
    """A prompt or a tool's result is the newest word: the model is up."""
    TOOL_PENDING = "tool_pending"
    """A tool call has no result yet: it runs, or waits for an approval."""
    TURN_ENDED = "turn_ended"
    """The agent answered and stopped (Claude's answer or stop hook, Codex task_complete)."""


class Coverage(StrEnum):
    FULL = "full"  # every byte of the file was read
    HEAD_TAIL = "head_tail"  # a cold summary of a big file: its head and tail only


@dataclass(slots=True)
class TranscriptItem:
    """One physical JSONL line that is part of the conversation."""

    line_index: int
    kind: ItemKind
    est_tokens: int
    active: bool = True
    elidable_bytes: int | None = None
    elidable_parts: int = 0
    label: str = ""
    summary: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    tool_use_ids: tuple[str, ...] = ()
    payload_sha256: str | None = None
    hidden_bytes: int = 0
    """Bytes sent to the model that the provider does not count as context and est_tokens
    leaves out (Codex's encrypted reasoning)."""
    paths: tuple[str, ...] = ()
    """Files and folders the item's tool calls name in their arguments (a tool result: its
    calls'), for the state card's `file:` lines (core.paths)."""
    file_view: bool = False
    """A tool result whose calls only showed files (core.paths.is_file_view): its output is
    what the files hold, not what happened."""
    image_bytes: int = 0
    """Bytes of the images and documents the item carries (base64), part of its estimate."""
    failed: bool = False
    """A tool result whose call failed, as the provider recorded it (an error result, a
    non-zero exit): what the state card may take errors from."""

    @property
    def elidable(self) -> bool:
        return self.active and self.est_tokens > 0 and (self.elidable_bytes or 0) > 0

    @property
    def elides_input(self) -> bool:
        """Whether what may be stubbed is a call's input, not an output: the content a
        finished edit wrote (Claude Edit/Write, a Codex patch), which the file now holds."""
        return self.kind is ItemKind.ASSISTANT or self.kind is ItemKind.TOOL_CALL

    @property
    def elides_output(self) -> bool:
        """Whether what may be stubbed is a tool's output (else a call's input, or a Codex
        reasoning record of an earlier turn, which a fork leaves out of the history)."""
        return not self.elides_input and self.kind is not ItemKind.REASONING


@dataclass(frozen=True, slots=True)
class ContextComponents:
    input_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class UsageSample:
    """Context occupancy reported at one point of the session."""

    context_tokens: int
    ts: float | None = None


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """A provider compaction seen in the transcript."""

    ts: float | None = None
    pre_tokens: int | None = None
    trigger: str | None = None


@dataclass(frozen=True, slots=True)
class SubagentRef:
    agent_id: str
    path: str
    context_tokens: int | None = None
    records: int = 0
    bytes: int = 0
    mtime: float = 0.0


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What the board needs to know about one transcript file."""

    provider: Provider
    session_id: str
    path: str
    cwd: str | None = None
    model: str | None = None
    title: str | None = None
    context_tokens: int | None = None
    context_window: int | None = None
    context_state: ContextState = ContextState.ABSENT
    components: ContextComponents | None = None
    usage_history: list[UsageSample] = field(default_factory=list)
    compactions: list[CompactionEvent] = field(default_factory=list)
    records: int = 0
    bad_lines: int = 0
    bad_reasons: dict[str, int] = field(default_factory=dict)
    torn_tail: bool = False
    bytes: int = 0
    mtime: float = 0.0
    coverage: Coverage = Coverage.FULL
    first_ts: float | None = None
    last_ts: float | None = None
    agent_id: str | None = None
    parent_session_id: str | None = None
    subagents: list[SubagentRef] = field(default_factory=list)
    turn: TurnState | None = None
    """Who is up at the end of the file (None: no conversational record seen)."""
    has_state_card: bool = False
    """The file holds a state card (its provider package's card_text): a compacted fork gobtui
    (or the reference) published, known as one without its receipt."""
    lifetime: ContextComponents | None = None
    """Tokens of every response the file records, summed (what the session cost, not what
    its context holds); of the part read when `coverage` is not FULL."""
    fork_as_published: bool = False
    """A fork gobtui published that no client has written to since (it is as large as its
    receipt says): it is dated as its source, but nobody works in it yet. Set by the host
    from its receipts, never read from the file."""

    @property
    def is_subagent(self) -> bool:
        return self.agent_id is not None

    @property
    def occupancy(self) -> float | None:
        """Fraction of the window in use, or None when either side is unknown."""
        if self.context_tokens is None or not self.context_window:
            return None
        return self.context_tokens / self.context_window

    @property
    def warned(self) -> bool:
        return self.bad_lines > 0 or self.torn_tail

    def resume_command(self) -> str:
        return resume_command(self.provider, self.session_id)


def resume_line(command: str, cwd: str | None) -> str:
    """What a user pastes to resume: the command, from the session's directory when it is
    known (`cd <dir> && <command>`). A directory whose name holds control or format
    characters is left out: quoted or not, pasting them is pasting escapes (the command
    alone still finds the session)."""
    if not cwd or one_line(cwd) != cwd:
        return command
    return f"cd {shlex.quote(cwd)} && {command}"


def resume_command(provider: Provider, session_id: str) -> str:
    """The client's own command that resumes the session."""
    return provider.traits.resume.format(session_id=session_id)


@dataclass(slots=True)
class Transcript:
    """A full parse of one transcript file."""

    provider: Provider
    session_id: str
    path: str
    items: list[TranscriptItem] = field(default_factory=list)
    summary: SessionSummary | None = None
    leaf_uuid: str | None = None
    """Claude: the uuid of the live branch's newest record, as the parse found it (None when
    it found none, or the transcript was not made by a parse)."""
    calibration: Calibration = field(default_factory=Calibration)
    """How estimated tokens convert to the provider's (planning fits it; identity else)."""

    def context_tokens(self) -> int:
        """Provider-reported context when known, else the sum of active estimates."""
        if self.summary is not None and self.summary.context_tokens is not None:
            return self.summary.context_tokens
        return sum(item.est_tokens for item in self.items if item.active)


ContextWindowSource = Literal["model", "file", "default"]


def claude_context_window(model: str | None, peak_tokens: int = 0) -> int:
    """Claude writes no window size: 1M for a 1M variant of a model, or when the session
    reported a context larger than the default window (1M sessions often carry a plain model
    id); 200k otherwise."""
    if peak_tokens > DEFAULT_CLAUDE_WINDOW:
        return LARGE_CLAUDE_WINDOW
    name = (model or "").lower()
    if "[1m]" in name or name.endswith("-1m") or "-1m-" in name:
        return LARGE_CLAUDE_WINDOW
    return DEFAULT_CLAUDE_WINDOW
