"""probe_recall for many plans of one transcript, without re-reading what every plan keeps.

A probe is recalled when its line stays, or its text appears in a kept item's summary, label
or payload, or in the plan's state card. When no probe text holds a line break (the usual
case) a match cannot span two of those pieces, so one kept piece holding the text (a witness)
decides it. Only probes whose line the plan removes need one. Witnesses are found once per
text for the whole eval: summaries and labels through one joined index, payloads by a lazy
scan remembered across plans. So scoring a plan costs what its removed probes need, not a
join of every kept item's text (40,000 items in a 200 MB session). Texts with a line break
fall back to probe_recall itself.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping

from .edits import CompactionPlan
from .model import Transcript
from .probes import Probe, ProbeScore, probe_recall, removed_lines, score_of


class ProbeWitness:
    """Scores plans of one transcript as probe_recall would (see the module docstring)."""

    def __init__(
        self, probes: list[Probe], transcript: Transcript, payloads: Mapping[int, str]
    ) -> None:
        self.probes = probes
        self.transcript = transcript
        self.payloads = payloads
        self.exact = all("\n" not in probe.text for probe in probes)
        visible = [item for item in transcript.items if item.active and item.est_tokens > 0]
        seen = {item.line_index for item in visible}
        self._payload_lines = [line for line in payloads if line in seen]
        self._payload_hits: dict[str, list[int]] = {}
        self._payload_scanned: dict[str, int] = {}
        # Summary and label of every visible item, one piece per item, joined once.
        pieces = [
            "\n".join(part for part in (item.summary or "", item.label) if part) for item in visible
        ]
        self._meta = "\n".join(pieces)
        self._meta_lines = [item.line_index for item in visible]
        self._meta_starts: list[int] = []
        at = 0
        for piece in pieces:
            self._meta_starts.append(at)
            at += len(piece) + 1
        self._meta_hits: dict[str, list[int]] = {}

    def score(self, plan: CompactionPlan, tail_start: int | None) -> ProbeScore:
        if not self.exact:
            return probe_recall(self.probes, self.transcript, plan, tail_start, self.payloads)
        removed = removed_lines(self.transcript, plan)
        card = plan.digest.render() if plan.digest is not None else ""
        answers: dict[str, bool] = {}
        flags: list[bool] = []
        for probe in self.probes:
            if probe.line not in removed:
                flags.append(True)
                continue
            text = probe.text
            found = answers.get(text)
            if found is None:
                found = answers[text] = (
                    text in card
                    or any(line not in removed for line in self._in_meta(text))
                    or self._payload_witness(text, removed) is not None
                )
            flags.append(found)
        return score_of(self.probes, flags, tail_start)

    def _in_meta(self, text: str) -> list[int]:
        """Lines whose summary or label holds `text` (no line break), found once."""
        hits = self._meta_hits.get(text)
        if hits is not None:
            return hits
        hits = self._meta_hits[text] = []
        meta, starts = self._meta, self._meta_starts
        at = meta.find(text)
        while at >= 0:
            piece = bisect_right(starts, at) - 1
            hits.append(self._meta_lines[piece])
            following = piece + 1
            if following >= len(starts):
                break
            at = meta.find(text, starts[following])
        return hits

    def _payload_witness(self, text: str, removed: set[int]) -> int | None:
        """A kept line whose payload holds `text`, or None; each payload read once per text."""
        hits = self._payload_hits.setdefault(text, [])
        for line in hits:
            if line not in removed:
                return line
        lines, payloads = self._payload_lines, self.payloads
        at = self._payload_scanned.get(text, 0)
        while at < len(lines):
            line = lines[at]
            at += 1
            if text in payloads[line]:
                hits.append(line)
                if line not in removed:
                    self._payload_scanned[text] = at
                    return line
        self._payload_scanned[text] = at
        return None
