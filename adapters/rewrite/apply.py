"""Applying a compaction plan to transcript bytes, and giving a fork its own identity.

Lines are indexed as adapters.files.jsonl reads them: the bytes split on b"\\n", a last line without a
newline still a line. Records are never removed or reordered. An elide replaces payload parts
in place and re-serializes only that line (compact, on one line, its own line ending kept); a
state card is appended in the provider's own shape. Every other byte stays as it was, the
presence of a final newline included.

Where the reference leaves room, the choices are:
- An output holding an image is refused (`image_output`), never stubbed in part: the stub
  would drop the image, and admission prefers a refusal.
- Claude's top-level `toolUseResult` (the UI's structured copy of an output) is left as it
  is, as the reference does: it is not part of what the model is sent.
- Ids of appended records derive from the source bytes and the plan, so a rerun of the same
  plan on the same bytes gives the same bytes.
- The result may not be larger than the source (`grew`), as publication requires.

The provider halves live in adapters.providers.claude.rewrite and adapters.providers.codex.rewrite; what they
share with this module, in adapters.providers.rewrite_records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ...core.edits import CompactionPlan, DigestBlock, ElideEdit, InjectDigestEdit
from ...core.limits import SESSION_ID_MAX_CHARS
from ...core.model import BadLine, Provider, Transcript, TranscriptItem
from ..files.jsonl import Record, decode_line
from ..providers.interface import ForkUsage, RewriteCode, RewriteError, RewriteHalf
from ..providers.registry import provider_of
from ..providers.rewrite_records import (
    append_records,
    cut_utf8,
    decode_at,
    encode_line,
    kept_ancestor,
    line_ending,
    plan_seed,
    require_whole_tail,
    split_lines,
)

# -- applying a plan ---------------------------------------------------------------------------


_SESSION_ID = re.compile(r"[0-9A-Za-z-]+", re.ASCII)


def provider_half(provider: Provider) -> RewriteHalf:
    return provider_of(provider).rewrite_half()


def _elide_targets(plan: CompactionPlan) -> dict[int, ElideEdit]:
    targets: dict[int, ElideEdit] = {}
    for edit in plan.edits:
        if isinstance(edit, ElideEdit):
            for line in edit.line_indexes:
                if line in targets:
                    raise RewriteError(RewriteCode.DUPLICATE_LINE, f"line {line} is elided twice")
                targets[line] = edit
    return targets


def _elide_line(
    lines: Sequence[bytes],
    index: int,
    edit: ElideEdit,
    item: TranscriptItem | None,
    half: RewriteHalf,
) -> bytes:
    record = decode_at(lines, index)
    if item is None or not item.elidable:
        if half.has_image_output(record):
            raise RewriteError(RewriteCode.IMAGE_OUTPUT, f"line {index} holds an image output")
        raise RewriteError(RewriteCode.NOT_ELIDABLE, f"line {index} is not an elidable item")
    kind = item.label or item.kind.value

    def stub(n_bytes: int) -> str:
        return edit.stub_for(index, n_bytes, kind)

    if not half.elide_record(record, stub):
        raise RewriteError(RewriteCode.GREW, f"no payload part of line {index} shrinks")
    line = lines[index]
    ending = line_ending(line)
    rewritten = encode_line(record, ending)
    if len(rewritten) >= len(line):
        raise RewriteError(RewriteCode.GREW, f"line {index} would not shrink")
    return rewritten


def fork_usage_target(plan: CompactionPlan, transcript: Transcript) -> ForkUsage | None:
    """What the fork's latest usage should say; None for a plan without a projection (one
    not made by the central decision)."""
    if plan.projection is None:
        return None
    digest = plan.digest
    card = transcript.calibration.tokens(digest.estimate_overhead()) if digest else 0
    following = transcript.calibration.tail_tokens + card
    return plan.projection.context_tokens_after, following


def stubbed(
    targets: dict[int, ElideEdit], items: dict[int, TranscriptItem], half: RewriteHalf
) -> list[int]:
    """The elided lines that get a stub, in order: not those the provider's half leaves
    out whole (prefix_safe leaves them out, as every record of their kind after the first
    change)."""
    left_out = half.LEFT_OUT_KINDS
    return [
        index
        for index in sorted(targets)
        if not ((item := items.get(index)) is not None and item.kind in left_out and item.elidable)
    ]


def relinked(records: list[Record], left_out: dict[str, str | None]) -> list[Record]:
    """Appended records hung off the nearest kept ancestor of a record the rewrite left out
    (prefix_safe)."""
    if left_out:
        for record in records:
            parent = record.get("parentUuid")
            if type(parent) is str and parent in left_out:
                record["parentUuid"] = kept_ancestor(left_out, parent)
    return records


def checked_edits(
    plan: CompactionPlan, transcript: Transcript, provider: Provider, lines: Sequence[bytes]
) -> tuple[list[DigestBlock], dict[int, ElideEdit]]:
    """The refusals every rewrite makes before it touches a line, alike for apply_plan and
    adapters.rewrite.lines' overlays; then the plan's state cards (at most one) and its elide
    targets by line."""
    if transcript.provider is not provider:
        raise RewriteError(
            RewriteCode.PROVIDER_MISMATCH,
            f"a {transcript.provider.value} transcript given as {provider.value}",
        )
    if plan.is_control:
        raise RewriteError(RewriteCode.CONTROL_EDIT, "a control edit changes no file")
    digests = [edit.digest for edit in plan.edits if isinstance(edit, InjectDigestEdit)]
    if len(digests) > 1:
        raise RewriteError(RewriteCode.MULTIPLE_DIGESTS, f"{len(digests)} state cards in one plan")
    targets = _elide_targets(plan)
    require_whole_tail(lines)
    return digests, targets


def apply_plan(
    data: bytes, provider: Provider, plan: CompactionPlan, transcript: Transcript
) -> bytes:
    """The transcript `data` with the plan's file edits applied (see the module docstring).

    `transcript` is the parse of `data`: it says which lines are elidable and names their
    stubs' kind. Control edits write no file (control_edit).
    """
    lines = split_lines(data)
    digests, targets = checked_edits(plan, transcript, provider, lines)
    half = provider_half(provider)
    items = {item.line_index: item for item in transcript.items}
    for index in stubbed(targets, items, half):
        lines[index] = _elide_line(lines, index, targets[index], items.get(index), half)
    safe, left_out = half.prefix_safe(lines, min(targets)) if targets else ({}, {})
    for index, line in safe.items():
        lines[index] = line
    records: list[Record] = []
    target = fork_usage_target(plan, transcript)
    if digests or target is not None:
        scan = half.CardScan.of(lines, transcript.path)
        if digests:
            card = digests[0].render()
            seed = plan_seed(data, provider, plan)
            records = half.card_records_scanned(scan, lines, transcript, card, seed)
            records = relinked(records, left_out)
        if target is not None:
            replaced, usage = half.fork_usage(scan, lines, target, len(records))
            for index, line in replaced.items():
                lines[index] = line
            records += usage
    append_records(lines, records)
    out = b"".join(lines)
    if len(out) > len(data):
        raise RewriteError(
            RewriteCode.GREW, f"the result would grow the file by {len(out) - len(data)} bytes"
        )
    return out


# -- identity and payload texts ----------------------------------------------------------------


def rewrite_identity(data: bytes, provider: Provider, new_session_id: str) -> bytearray:
    """`data` as the transcript of session `new_session_id`.

    Claude: the top-level `sessionId` of every record that has one; Codex: `payload.id` and
    `payload.session_id` (where present) of every session_meta record. uuid/parentUuid links
    and every other line stay byte-identical.
    """
    if len(new_session_id) > SESSION_ID_MAX_CHARS or not _SESSION_ID.fullmatch(new_session_id):
        raise RewriteError(
            RewriteCode.BAD_SESSION_ID,
            f"a session id is 1 to {SESSION_ID_MAX_CHARS} characters of 0-9, A-Z, a-z and -",
        )
    half = provider_half(provider)
    # Line by line into one growing buffer: a list of every line (and its joined copy) would
    # hold the transcript twice more (550 MB more on a 200 MB Claude fork, every record of
    # which carries the session id).
    out = bytearray()
    view = memoryview(data)
    find = data.find
    size = len(data)
    start = 0
    while start < size:
        end = find(b"\n", start)
        stop = size if end < 0 else end + 1
        line = data[start:stop]
        record = decode_line(line.strip())
        if isinstance(record, dict) and half.rewrite_identity_record(record, new_session_id):
            out += encode_line(record, line_ending(line))
        elif record is BadLine.TOO_DEEP:  # not to be written again: its id changed in place
            out += half.rewrite_identity_bytes(line, new_session_id)
        else:
            out += view[start:stop]
        start = stop
    return out


def payload_texts(
    data: bytes, provider: Provider, lines: Iterable[int], limit: int
) -> dict[int, str]:
    """The text of the elidable output on each of `lines`, cut to `limit` UTF-8 bytes.

    Text parts are joined; lines that are missing, not records, or hold no output text are
    left out. This feeds EvalContext.payloads (state-card salient lines, eval probes).
    """
    half = provider_half(provider)
    split = split_lines(data)
    texts: dict[int, str] = {}
    for index in sorted(set(lines)):
        if not 0 <= index < len(split):
            continue
        record = decode_line(split[index].strip())
        if not isinstance(record, dict):
            continue
        text = half.payload_text(record)
        if text:
            texts[index] = cut_utf8(text, limit)
    return texts
