"""verify() of a transcript's candidates (compacted copies of it) by reading only their new
lines: the source's line facts and the pass over them are kept (see SourceChecks)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..limits import VERIFY_MAX_BYTES, VERIFY_MAX_RECORDS
from .lines import LineFact, LineKind, LinePass, RecordChecks, read_facts, read_line
from .report import (
    VerifyReport,
    count_lines,
    oversize_report,
    records_limit_report,
    report_of,
    report_of_facts,
    utf8_error_offset,
    verify,
)


class SourceChecks:
    """verify() of one transcript kept line by line, so that a candidate built from it (its
    lines, some replaced, maybe some appended) is verified by reading only the new lines.

    `candidate_report(replaced, appended)` is verify() of the candidate's bytes: the source's
    lines with replaced[i] in place of line i, then the appended lines (each piece one whole
    line: its own "\n" ending it, the candidate's last line excepted). When every replaced
    line says what the line it replaces said, the pass resumes from the source's state after
    its last line; otherwise it runs over the facts again (new lines read once, memoized).
    Anything else (a piece that is not one whole line, a limit crossed) is verified from the
    joined bytes. `facts` and `starts` may come from a reader that already went through the
    source (core.verify.lines.read_value, line by line): they must be what read_facts gives.
    """

    def __init__(
        self,
        data: bytes,
        checks: RecordChecks,
        facts: list[LineFact] | None = None,
        starts: list[int] | None = None,
    ) -> None:
        self.data = data
        self.checks = checks
        self.provider = checks.provider
        self._memo: dict[bytes, LineFact] = {}
        self._base_pass: LinePass | None = None
        self._report: VerifyReport | None = None
        n_lines = count_lines(data)
        self.readable = len(data) <= VERIFY_MAX_BYTES and 0 < n_lines <= VERIFY_MAX_RECORDS
        self._bad_utf8 = False
        self._utf8_ok: bool | None = None
        """Whether an unread source is all valid UTF-8 (worked out when first needed)."""
        if not self.readable:
            self.facts: list[LineFact] = []
            self.starts: list[int] = []
            return
        if facts is None or starts is None:
            facts, starts = read_facts(data, n_lines, checks)
        self.facts, self.starts = facts, starts
        self._bad_utf8 = any(fact.kind is LineKind.NOT_UTF8 for fact in facts)

    @property
    def _base(self) -> LinePass | None:
        """The pass fed every source line, not finished (None when a line is not UTF-8)."""
        if self._base_pass is None and self.readable and not self._bad_utf8:
            base = LinePass(self.checks)
            for index, fact in enumerate(self.facts):
                base.feed(index, fact)
            self._base_pass = base
        return self._base_pass

    def report(self) -> VerifyReport:
        """verify(data, checks)."""
        if self._report is None:
            if not self.readable:
                self._report = verify(self.data, self.checks)
            elif self._base is None:
                starts = self.starts
                self._report = report_of_facts(
                    self.checks, self.facts, lambda i: starts[i], len(self.data)
                )
            else:
                done = self._base.clone()
                done.finish(len(self.facts))
                self._report = report_of(self.provider, done.sink, done.count, len(self.data))
        return self._report

    def line(self, index: int) -> bytes:
        """Source line `index` with its terminator."""
        starts = self._line_starts()
        return self.data[starts[index] : starts[index + 1]]

    def _line_starts(self) -> list[int]:
        """Where each source line starts, and the end: read_facts' for a readable source,
        found once (the first time a candidate needs them) for one over a limit."""
        if not self.starts and self.data:
            self.starts = _starts_of(self.data)
        return self.starts

    def materialize(self, replaced: Mapping[int, bytes], appended: Sequence[bytes]) -> bytes:
        """The candidate's bytes."""
        if not replaced:
            return self.data + b"".join(appended)
        pieces: list[bytes] = []
        at = 0
        for index in sorted(replaced):
            start, end = self._span(index)
            pieces.append(self.data[at:start])
            pieces.append(replaced[index])
            at = end
        pieces.append(self.data[at:])
        pieces.extend(appended)
        return b"".join(pieces)

    def _span(self, index: int) -> tuple[int, int]:
        starts = self._line_starts()
        return starts[index], starts[index + 1]

    def candidate_report(
        self, replaced: Mapping[int, bytes], appended: Sequence[bytes] = ()
    ) -> VerifyReport:
        """verify() of the candidate (see the class docstring)."""
        if not self.readable:
            return self._unread_candidate_report(replaced, appended)
        n_source = len(self.facts)
        if not self._whole_lines(replaced, appended):
            return verify(self.materialize(replaced, appended), self.checks)
        size = len(self.data) + sum(len(piece) for piece in appended)
        for index, piece in replaced.items():
            size += len(piece) - (self.starts[index + 1] - self.starts[index])
        if size > VERIFY_MAX_BYTES:
            return oversize_report(size, self.provider)
        n_lines = n_source + len(appended)
        if n_lines > VERIFY_MAX_RECORDS:
            return verify(self.materialize(replaced, appended), self.checks)
        new = {index: self._fact(piece) for index, piece in replaced.items()}
        added = [self._fact(piece) for piece in appended]
        facts = self.facts
        if (
            self._base is not None
            and all(fact == facts[index] for index, fact in new.items())
            and not any(fact.kind is LineKind.NOT_UTF8 for fact in added)
        ):
            resumed = self._base.clone()
            for offset, fact in enumerate(added):
                resumed.feed(n_source + offset, fact)
            resumed.finish(n_lines)
            return report_of(self.provider, resumed.sink, resumed.count, size)
        merged = list(facts)
        for index, fact in new.items():
            merged[index] = fact
        merged.extend(added)
        return report_of_facts(
            self.checks, merged, lambda i: self._start(i, replaced, appended), size
        )

    def _start(self, index: int, replaced: Mapping[int, bytes], appended: Sequence[bytes]) -> int:
        """Where the candidate's line `index` starts."""
        starts = self.starts
        n_source = len(self.facts)
        before = min(index, n_source)
        shift = sum(
            len(piece) - (starts[i + 1] - starts[i]) for i, piece in replaced.items() if i < before
        )
        return starts[before] + shift + sum(len(piece) for piece in appended[: index - before])

    def _unread_candidate_report(
        self, replaced: Mapping[int, bytes], appended: Sequence[bytes]
    ) -> VerifyReport:
        """A candidate of a source verify does not read line by line (over a limit, or
        empty). Over the byte or record limit as well (elisions keep every line), its report
        needs no reading of its lines: no materialized copy and UTF-8 check per candidate."""
        if self.data and self._whole_lines(replaced, appended):
            starts = self._line_starts()
            size = len(self.data) + sum(len(piece) for piece in appended)
            for index, piece in replaced.items():
                size += len(piece) - (starts[index + 1] - starts[index])
            if size > VERIFY_MAX_BYTES:
                return oversize_report(size, self.provider)
            n_lines = len(starts) - 1 + len(appended)
            pieces = [*replaced.values(), *appended]
            if (
                n_lines > VERIFY_MAX_RECORDS
                and self._valid_utf8()
                and all(utf8_error_offset(piece) is None for piece in pieces)
            ):
                return records_limit_report(self.provider, n_lines, size, None)
        return verify(self.materialize(replaced, appended), self.checks)

    def _valid_utf8(self) -> bool:
        if self._utf8_ok is None:
            self._utf8_ok = utf8_error_offset(self.data) is None
        return self._utf8_ok

    def _whole_lines(self, replaced: Mapping[int, bytes], appended: Sequence[bytes]) -> bool:
        """Each piece is one whole line: a "\n" at its end only, and absent only from the
        candidate's last line; replaced lines are lines of the source."""
        n_source = len(self._line_starts()) - 1 if self.data else 0
        last = n_source - 1 if not appended else None
        for index, piece in replaced.items():
            if not 0 <= index < n_source or not _one_line(piece, index == last):
                return False
        if appended:
            tail = replaced.get(n_source - 1, b"") or self.line(n_source - 1)
            if not tail.endswith(b"\n"):
                return False
            final = len(appended) - 1
            return all(_one_line(piece, i == final) for i, piece in enumerate(appended))
        return True

    def _fact(self, line: bytes) -> LineFact:
        found = self._memo.get(line)
        if found is None:
            found = self._memo[line] = read_line(line, self.checks)
        return found


def _one_line(piece: bytes, may_be_open: bool) -> bool:
    newline = piece.find(b"\n")
    if newline < 0:
        return may_be_open and bool(piece)
    return newline == len(piece) - 1


def _starts_of(data: bytes) -> list[int]:
    """Where each line of `data` starts, then len(data)."""
    starts = [0]
    find = data.find
    size = len(data)
    newline = find(b"\n")
    while newline >= 0 and newline + 1 < size:
        starts.append(newline + 1)
        newline = find(b"\n", newline + 1)
    starts.append(size)
    return starts
