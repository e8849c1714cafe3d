"""Host-side admission of a plan: the checks every proposal passes before it is applied.

The same checks bind built-in and external strategies. Each failure is a closed code; messages
carry counts, codes and line numbers only, never transcript text or ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .edits import (
    CacheEditEdit,
    CompactionPlan,
    ElideEdit,
    InjectDigestEdit,
    ProviderCompactEdit,
    has_line_break,
)
from .limits import (
    MAX_CONTROL_CHARS,
    MAX_DIGEST_BYTES,
    MAX_EDITS,
    MAX_PLAN_ITEMS,
    MAX_STUB_CHARS,
    MAX_TOOL_USE_IDS,
)
from .model import ItemKind, Transcript, TranscriptItem
from .policy import PolicyConfig
from .thinking import rule_applies, thinking_after


class AdmissionCode(StrEnum):
    """Why a plan is refused. Closed vocabulary."""

    NO_EDITS = "no_edits"
    TOO_MANY_EDITS = "too_many_edits"
    TOO_MANY_ITEMS = "too_many_items"
    EMPTY_ELIDE = "empty_elide"
    LINE_INDEXES_NOT_INCREASING = "line_indexes_not_increasing"
    DUPLICATE_LINE_INDEX = "duplicate_line_index"
    UNKNOWN_LINE_INDEX = "unknown_line_index"
    LINE_NOT_ELIDABLE = "line_not_elidable"
    PROTECTED_TAIL = "protected_tail"
    STUB_TEMPLATE_INVALID = "stub_template_invalid"
    PER_ITEM_STUB_INVALID = "per_item_stub_invalid"
    MULTIPLE_DIGESTS = "multiple_digests"
    DIGEST_TOO_LARGE = "digest_too_large"
    CONTROL_NOT_ALONE = "control_not_alone"
    CONTROL_INVALID = "control_invalid"
    CACHE_EDIT_UNSUPPORTED_PROVIDER = "cache_edit_unsupported_provider"
    UNKNOWN_TOOL_USE_ID = "unknown_tool_use_id"
    PLAN_GROWS_CONTEXT = "plan_grows_context"
    THINKING_AFTER_CHANGE = "thinking_after_change"


@dataclass(frozen=True, slots=True)
class Violation:
    code: AdmissionCode
    message: str


@dataclass(frozen=True, slots=True)
class Admission:
    """The verdict. `violations` holds each violated class once, in check order."""

    violations: tuple[Violation, ...] = field(default_factory=tuple)

    @property
    def admitted(self) -> bool:
        return not self.violations

    @property
    def code(self) -> AdmissionCode | None:
        return self.violations[0].code if self.violations else None

    @property
    def codes(self) -> list[AdmissionCode]:
        return [v.code for v in self.violations]

    @property
    def message(self) -> str:
        return "; ".join(f"{v.code}: {v.message}" for v in self.violations) or "admitted"


def elidable_items(transcript: Transcript, reasoning: bool = False) -> list[TranscriptItem]:
    """Items whose payload could be stubbed, oldest first; Codex reasoning only when
    `reasoning` (PolicyConfig.drop_old_reasoning)."""
    # TranscriptItem.elidable spelled out: every strategy asks, over every item.
    return [
        item
        for item in transcript.items
        if item.active
        and item.est_tokens > 0
        and (item.elidable_bytes or 0) > 0
        and (reasoning or item.kind is not ItemKind.REASONING)
    ]


def protected_lines(
    transcript: Transcript, keep_recent_tool_outputs: int, reasoning: bool = False
) -> set[int]:
    """The protected lines (protected_of) of the transcript's elidable items."""
    return protected_of(elidable_items(transcript, reasoning), keep_recent_tool_outputs)


def _output_tail(elidable: Sequence[TranscriptItem], keep: int) -> list[TranscriptItem]:
    """The newest `keep` elidable outputs."""
    if keep <= 0:
        return []
    outputs = [item for item in elidable if item.elides_output]
    return outputs[-keep:]


def protected_of(elidable: Sequence[TranscriptItem], keep_recent_tool_outputs: int) -> set[int]:
    """What no plan may stub, given the transcript's elidable items (elidable_items): the
    newest `keep_recent_tool_outputs` outputs, the edit inputs and reasoning among them, and
    the newest edit input of each file (what the model last wrote there stays readable)."""
    tail = _output_tail(elidable, keep_recent_tool_outputs)
    protected = {item.line_index for item in tail}
    start = tail[0].line_index if tail else None
    files: set[str] = set()
    for item in reversed(elidable):
        if item.elides_output:
            continue
        newest = False
        if item.elides_input:
            newest = not item.paths or any(path not in files for path in item.paths)
            files.update(item.paths)
        if newest or (start is not None and item.line_index >= start):
            protected.add(item.line_index)
    return protected


def protected_tail_start(transcript: Transcript, keep_recent_tool_outputs: int) -> int | None:
    """The line of the oldest protected output (eval's tail probes start there); None if
    none."""
    tail = _output_tail(elidable_items(transcript), keep_recent_tool_outputs)
    return tail[0].line_index if tail else None


class _Checker:
    def __init__(self) -> None:
        self.found: dict[AdmissionCode, Violation] = {}

    def fail(self, code: AdmissionCode, message: str) -> None:
        # The first message of each class is kept: bounded, and points at the first offender.
        self.found.setdefault(code, Violation(code, message))


def _check_stub(text: str) -> bool:
    return len(text) <= MAX_STUB_CHARS and not has_line_break(text)


def _check_elide(
    edit: ElideEdit,
    items: dict[int, TranscriptItem],
    protected: set[int],
    seen: set[int],
    check: _Checker,
    reasoning: bool,
) -> None:
    if not edit.line_indexes:
        check.fail(AdmissionCode.EMPTY_ELIDE, "an elide edit names no lines")
    if not _check_stub(edit.stub_template):
        check.fail(
            AdmissionCode.STUB_TEMPLATE_INVALID,
            f"stub template must be one line of at most {MAX_STUB_CHARS} characters",
        )
    previous: int | None = None
    for line in edit.line_indexes:
        if previous is not None and line <= previous:
            check.fail(
                AdmissionCode.LINE_INDEXES_NOT_INCREASING,
                f"line {line} follows line {previous}",
            )
        previous = line
        if line in seen:
            check.fail(AdmissionCode.DUPLICATE_LINE_INDEX, f"line {line} is elided twice")
        seen.add(line)
        item = items.get(line)
        if item is None:
            check.fail(AdmissionCode.UNKNOWN_LINE_INDEX, f"line {line} is not a transcript item")
        elif not item.elidable or (item.kind is ItemKind.REASONING and not reasoning):
            check.fail(AdmissionCode.LINE_NOT_ELIDABLE, f"line {line} is not elidable")
        elif line in protected:
            check.fail(AdmissionCode.PROTECTED_TAIL, f"line {line} is in the protected tail")
    named = set(edit.line_indexes)
    for line, stub in edit.per_item_stubs.items():
        if line not in named or not _check_stub(stub):
            check.fail(
                AdmissionCode.PER_ITEM_STUB_INVALID,
                f"per-item stub for line {line} must name an elided line and be one line "
                f"of at most {MAX_STUB_CHARS} characters",
            )


def _check_cache_edit(
    edit: CacheEditEdit,
    transcript: Transcript,
    protected: set[int],
    check: _Checker,
) -> None:
    if not transcript.provider.traits.cache_edits:
        check.fail(
            AdmissionCode.CACHE_EDIT_UNSUPPORTED_PROVIDER, "cache_edit applies to Claude only"
        )
    if not edit.tool_use_ids or len(edit.tool_use_ids) > MAX_TOOL_USE_IDS:
        check.fail(AdmissionCode.CONTROL_INVALID, "cache_edit names no tool_use_id, or too many")
    owners: dict[str, TranscriptItem] = {}
    for item in transcript.items:
        if item.elidable:
            for tool_use_id in item.tool_use_ids:
                owners[tool_use_id] = item
    unknown = 0
    for tool_use_id in edit.tool_use_ids:
        owner = owners.get(tool_use_id)
        if owner is None:
            unknown += 1
        elif owner.line_index in protected:
            check.fail(
                AdmissionCode.PROTECTED_TAIL,
                f"a tool_use_id belongs to protected line {owner.line_index}",
            )
    if unknown:
        check.fail(
            AdmissionCode.UNKNOWN_TOOL_USE_ID,
            f"{unknown} tool_use_id(s) name no elidable tool output",
        )


def admit(plan: CompactionPlan, transcript: Transcript, policy: PolicyConfig) -> Admission:
    """Check a plan against the transcript it was made for."""
    check = _Checker()
    if len(transcript.items) > MAX_PLAN_ITEMS:
        check.fail(
            AdmissionCode.TOO_MANY_ITEMS,
            f"{len(transcript.items)} items exceed the limit of {MAX_PLAN_ITEMS}",
        )
    if not plan.edits:
        check.fail(AdmissionCode.NO_EDITS, "the plan has no edits")
    if len(plan.edits) > MAX_EDITS:
        check.fail(
            AdmissionCode.TOO_MANY_EDITS, f"{len(plan.edits)} edits exceed the limit of {MAX_EDITS}"
        )
    if plan.context_tokens_after > plan.context_tokens_before:
        check.fail(AdmissionCode.PLAN_GROWS_CONTEXT, "projected context exceeds the current one")

    controls = [e for e in plan.edits if isinstance(e, ProviderCompactEdit | CacheEditEdit)]
    if controls and len(plan.edits) > 1:
        check.fail(AdmissionCode.CONTROL_NOT_ALONE, "a control edit must be the only edit")
    digests = [e for e in plan.edits if isinstance(e, InjectDigestEdit)]
    if len(digests) > 1:
        check.fail(AdmissionCode.MULTIPLE_DIGESTS, f"{len(digests)} digests, at most one allowed")

    items = {item.line_index: item for item in transcript.items}
    # Claude thinking after a change is the rule's (core.thinking), whatever the policy.
    rule = rule_applies(transcript.provider)
    reasoning = rule or policy.drop_old_reasoning
    protected = protected_lines(transcript, policy.keep_recent_tool_outputs, reasoning)
    if rule:
        protected = {line for line in protected if items[line].kind is not ItemKind.REASONING}
        kept = set(thinking_after(transcript, plan.elided_lines)) - set(plan.elided_lines)
        if kept:
            check.fail(
                AdmissionCode.THINKING_AFTER_CHANGE,
                f"{len(kept)} thinking records after the first change are kept "
                f"(first: line {min(kept)})",
            )
    seen: set[int] = set()
    for edit in plan.edits:
        if isinstance(edit, ElideEdit):
            _check_elide(edit, items, protected, seen, check, reasoning)
        elif isinstance(edit, InjectDigestEdit):
            size = len(edit.digest.render().encode("utf-8", "surrogatepass"))
            if size > MAX_DIGEST_BYTES:
                check.fail(
                    AdmissionCode.DIGEST_TOO_LARGE,
                    f"state card of {size} bytes exceeds {MAX_DIGEST_BYTES}",
                )
        elif isinstance(edit, ProviderCompactEdit):
            if (
                not edit.control
                or len(edit.control) > MAX_CONTROL_CHARS
                or has_line_break(edit.control)
            ):
                check.fail(
                    AdmissionCode.CONTROL_INVALID,
                    f"control must be one line of 1 to {MAX_CONTROL_CHARS} characters",
                )
        else:
            _check_cache_edit(edit, transcript, protected, check)
    return Admission(tuple(check.found.values()))
