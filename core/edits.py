"""The Edit IR: what a strategy proposes, serialized like the reference's serde shapes.

Edits are a discriminated union on `op` (snake_case), unknown fields are rejected. A plan never
removes or reorders records: `elide` replaces payloads in place, `inject_digest` appends one
state card, and the two control edits (`provider_compact`, `cache_edit`) change no file.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from .card_text import CARD_MARKER as CARD_MARKER
from .card_text import CARD_MARKERS as CARD_MARKERS
from .card_text import REFERENCE_CARD_MARKER as REFERENCE_CARD_MARKER
from .limits import DIGEST_FRAMING_BYTES
from .projection import Projection
from .stubs import DEFAULT_STUB as DEFAULT_STUB
from .stubs import INPUT_STUB as INPUT_STUB
from .tokens import estimate_tokens

# str.splitlines() breaks on all of these; a card field must hold none of them, or its
# rendering would not parse back.
_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_COVERS = re.compile(r"\(covers (\d+) earlier records\)")
_PROVIDER_CONTEXT = re.compile(r"provider: [a-z_]{1,16}")
"""The context gobtui writes (core.digest): a card written otherwise may say anything there."""


def one_line(text: str) -> str:
    """Line breaks become spaces: card fields and stubs are single lines."""
    return _LINE_BREAKS.sub(" ", text)


def has_line_break(text: str) -> bool:
    return _LINE_BREAKS.search(text) is not None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Card lines in rendering order: (prefix, field, is_list).
_CARD_FIELDS: tuple[tuple[str, str, bool], ...] = (
    ("goal: ", "goal", False),
    ("summary: ", "summary", False),
    ("concept: ", "concepts", True),
    ("file: ", "files_touched", True),
    ("decision: ", "decisions", True),
    ("constraint: ", "constraints", True),
    ("error: ", "errors", True),
    ("todo: ", "open_tasks", True),
    ("current: ", "current_work", False),
    ("context: ", "context", False),
)
_TEXT_FIELDS = tuple(name for _, name, _ in _CARD_FIELDS)


def _field_at(line: str, start: int) -> int | None:
    """The index of the first card field, from `start` on, whose prefix begins `line`."""
    for index in range(start, len(_CARD_FIELDS)):
        if line.startswith(_CARD_FIELDS[index][0]):
            return index
    return None


class DigestBlock(_Strict):
    """A state card: a bounded, metadata-derived record of what elision removed."""

    goal: str = ""
    summary: str = ""
    concepts: list[str] = Field(default_factory=list)
    files_touched: list[str] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    """Rules a tool's output stated (a prohibition, a revocation): not the session's own
    decisions, which come from what the user and the assistant said."""
    errors: list[str] = Field(default_factory=list)
    open_tasks: list[str] = Field(default_factory=list)
    current_work: str = ""
    context: str = ""
    covers_items: int = Field(default=0, ge=0)

    @field_validator("goal", "summary", "current_work", "context")
    @classmethod
    def _scalar_one_line(cls, value: str) -> str:
        return one_line(value)

    @field_validator(
        "concepts", "files_touched", "decisions", "constraints", "errors", "open_tasks"
    )
    @classmethod
    def _entries_one_line(cls, value: list[str]) -> list[str]:
        return [one_line(entry) for entry in value]

    def render(self) -> str:
        """The card text. Empty scalars are left out; every list entry is one line."""
        lines = [CARD_MARKER]
        for prefix, name, is_list in _CARD_FIELDS:
            value = getattr(self, name)
            if is_list:
                lines.extend(prefix + entry for entry in value)
            elif value:
                lines.append(prefix + value)
        lines.append(f"(covers {self.covers_items} earlier records)")
        return "\n".join(lines)

    @classmethod
    def parse(cls, text: str) -> Self | None:
        """The reverse of render(); None when `text` is not a card.

        Strict: a marker first, the covers line last, known prefixes in rendering order in
        between, and each scalar at most once.
        """
        lines = text.strip().split("\n")
        if len(lines) < 2 or lines[0].rstrip("\r") not in CARD_MARKERS:
            return None
        covers = _COVERS.fullmatch(lines[-1].rstrip("\r"))
        if covers is None:
            return None
        values: dict[str, object] = {"covers_items": int(covers.group(1))}
        position = 0
        for line in lines[1:-1]:
            found = _field_at(line, position)
            if found is None:
                return None
            position = found
            prefix, name, is_list = _CARD_FIELDS[position]
            value = line[len(prefix) :]
            if is_list:
                entries = values.setdefault(name, [])
                assert isinstance(entries, list)
                entries.append(value)
            else:
                if name in values or not value:
                    return None
                values[name] = value
                position += 1  # a scalar appears once: the next line starts further on
        try:
            return cls.model_validate(values)
        except ValueError:
            return None

    def without_transcript_text(self) -> DigestBlock:
        """The card as a caller not shown transcript text sees it: the files it names, the
        provider it was written for and how many records it covers. Every other field is
        what a tool printed (errors, constraints, to-dos: HTTP headers, ids, verbatim lines)
        or what the user and the assistant said (goal, decisions, current work)."""
        context = self.context if _PROVIDER_CONTEXT.fullmatch(self.context) else ""
        return DigestBlock(
            files_touched=list(self.files_touched), context=context, covers_items=self.covers_items
        )

    def text_bytes(self) -> int:
        """UTF-8 bytes of every text field (the reference's overhead basis)."""
        total = 0
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            for entry in value if isinstance(value, list) else (value,):
                total += len(entry.encode("utf-8", "surrogatepass"))
        return total

    def estimate_overhead(self) -> int:
        """Tokens the card adds: its text fields plus 64 bytes of framing, estimated."""
        return estimate_tokens(self.text_bytes() + DIGEST_FRAMING_BYTES)


class ElideEdit(_Strict):
    """Replace the payloads of these lines by a stub, in place."""

    op: Literal["elide"] = "elide"
    line_indexes: list[int]
    stub_template: str = DEFAULT_STUB
    per_item_stubs: dict[int, str] = Field(default_factory=dict)

    def stub_for(self, line_index: int, n_bytes: int, kind: str) -> str:
        """The text that replaces one line's payload.

        A per-item stub is used verbatim; the template gets `{bytes}` and `{kind}` replaced
        (plain replacement, so other braces are left alone).
        """
        if line_index in self.per_item_stubs:
            return self.per_item_stubs[line_index]
        return self.stub_template.replace("{bytes}", str(n_bytes)).replace("{kind}", kind)


class InjectDigestEdit(_Strict):
    """Append one state card at the tail, in the provider's own shape."""

    op: Literal["inject_digest"] = "inject_digest"
    digest: DigestBlock


class ProviderCompactEdit(_Strict):
    """Ask the provider to compact (a control-plane proposal; no file change)."""

    op: Literal["provider_compact"] = "provider_compact"
    control: str


class CacheEditEdit(_Strict):
    """Claude only: tool results to drop at the API layer (no file change)."""

    op: Literal["cache_edit"] = "cache_edit"
    tool_use_ids: list[str]


Edit = Annotated[
    ElideEdit | InjectDigestEdit | ProviderCompactEdit | CacheEditEdit,
    Field(discriminator="op"),
]
EDITS_ADAPTER: TypeAdapter[list[Edit]] = TypeAdapter(list[Edit])
"""Parses an edit list (for example one proposed by an external command)."""

CONTROL_OPS = frozenset({"provider_compact", "cache_edit"})


class CompactionPlan(_Strict):
    """What one strategy proposes for one transcript. `rationale` holds no transcript text."""

    strategy: str
    rationale: str
    edits: list[Edit]
    context_tokens_before: int = Field(ge=0)
    context_tokens_after: int = Field(ge=0)
    projection: Projection | None = None
    """A file plan's fork in the real client (set by the central decision)."""

    @property
    def est_savings(self) -> int:
        """Saturating before minus after."""
        return max(0, self.context_tokens_before - self.context_tokens_after)

    @property
    def elided_lines(self) -> list[int]:
        """Every line an elide edit names, in edit order."""
        return [i for edit in self.edits if isinstance(edit, ElideEdit) for i in edit.line_indexes]

    @property
    def digest(self) -> DigestBlock | None:
        for edit in self.edits:
            if isinstance(edit, InjectDigestEdit):
                return edit.digest
        return None

    @property
    def is_control(self) -> bool:
        """True when the plan asks the provider (or API layer) and writes no file."""
        return any(edit.op in CONTROL_OPS for edit in self.edits)

    @property
    def rewrites_file(self) -> bool:
        return any(isinstance(edit, ElideEdit | InjectDigestEdit) for edit in self.edits)


class NoPlanReason(StrEnum):
    """Why inspection produced no plan. Closed vocabulary (reference `plan --json`)."""

    BELOW_TRIGGER = "below_trigger"
    STRATEGY_RETURNED_NO_PLAN = "strategy_returned_no_plan"
    EMPTY_EXTERNAL_EDITS = "empty_external_edits"
    MINIMUM_SAVINGS_NOT_MET = "minimum_savings_not_met"
    EXTERNAL_NONREDUCING_PLAN = "external_nonreducing_plan"


class NoPlan(_Strict):
    """A successful inspection without a plan; the `plan --json` no_plan object."""

    status: Literal["no_plan"] = "no_plan"
    reason_code: NoPlanReason
    context_tokens_before: int
    effective_trigger_tokens: int
    target_context_tokens: int
    min_savings_tokens: int
    projected_context_tokens_after: int | None = None
    projected_savings_tokens: int | None = None
    why: str | None = None
    """The reason in the user's terms (core.context_words.why_no_plan), when the host knows
    the session's composition."""
