"""core.verify on the shared fixtures: the dialect oracle, and what every real file gives."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.providers.registry import verify_checks
from gobtui.core.model import Provider
from gobtui.core.verify import verify
from tests.core.verify_cases import triples

CLAUDE, CODEX = Provider.CLAUDE, Provider.CODEX


@pytest.mark.parametrize(
    ("name", "provider"), [("codex-window.jsonl", CODEX), ("claude-branch.jsonl", CLAUDE)]
)
def test_oracle_findings(
    name: str, provider: Provider, fixtures_dir: Path, fixture_copy: Callable[..., Path]
) -> None:
    manifest = orjson.loads((fixtures_dir / "oracle" / "dialects-manifest.json").read_bytes())
    (expected,) = [f["findings"] for f in manifest["fixtures"] if f["file"] == name]
    report = verify(fixture_copy(f"oracle/{name}").read_bytes(), verify_checks(provider))
    assert [f.code.value for f in report.findings] == expected
    if expected:  # line 9 mixes an image block into a custom tool output
        assert triples(report) == [("unsupported_response_item", "warning", 9)]


REAL_FINDINGS: dict[str, dict[str, int]] = {
    # Synthetic kitchen sinks: a hand-edited file, a format-drift fixture with trimmed ids.
    "claude/daaain__claude-code-log__edge_cases.jsonl": {
        "duplicate_uuid": 2, "invalid_record": 4, "broken_parent_chain": 1,
    },
    "claude/jazzyalex__agent-sessions__small.jsonl": {
        "broken_parent_chain": 1, "duplicate_uuid": 44, "orphaned_tool_use": 1,
    },
    "claude/jazzyalex__agent-sessions__schema_drift.jsonl": {},
    "claude/kvsankar__agent-history__session-01.jsonl": {},
    "claude/kvsankar__agent-history__session_with_compaction.jsonl": {},
    # Genuine sessions: 150 tool pairs, parallel calls included, all paired on the live branch.
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl": {},
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl": {},
    # The compaction agent's records chain onto the main session's, in another file.
    "claude/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569/subagents/"
    "agent-acompact-e1f845.jsonl": {"broken_parent_chain": 3},
    "claude/marot__spotter__short.jsonl": {},
    "claude/marot__spotter__tool_heavy.jsonl": {},
    # Genuine sessions with real outputs: image inputs and string custom-tool outputs.
    "codex/EdouardZemb__test-framework__rollout-2026-01-30T23-40-14-019c1110-6c78-7101-a89d"
    "-814cc74cbf46.jsonl": {"unsupported_response_item": 5},
    "codex/Kocoro-lab__Shannon__rollout-2026-01-10T14-27-32-019ba997-bbca-7483-9a75"
    "-07808dcc061c.jsonl": {"unsupported_response_item": 59},
    "codex/Monotoba__OpenPrintKit__rollout-2025-10-31T19-02-58-c61729d4-da6d-46a4-9a29"
    "-ec2c614e5e23.jsonl": {},
    "codex/jazzyalex__agent-sessions__codex_050_legacy.jsonl": {},
    "codex/jazzyalex__agent-sessions__codex_053_rate_limit.jsonl": {},
    "codex/jazzyalex__agent-sessions__small.jsonl": {"unsupported_response_item": 1},
    "codex/kvsankar__agent-history__session-01.jsonl": {},
    "codex/kvsankar__agent-history__session_with_compaction.jsonl": {"malformed_compacted": 1},
    "codex/madshn__localpush__rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9"
    ".jsonl": {},
    # Image inputs, web searches, string custom-tool outputs and the opaque compaction item.
    "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
    ".jsonl": {"unsupported_response_item": 40},
    "codex/madshn__localpush__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322"
    ".jsonl": {"unpaired_tool_call": 1},
}  # fmt: skip


def test_the_table_covers_every_real_fixture(fixtures_dir: Path) -> None:
    found = {
        str(p.relative_to(fixtures_dir))
        for area in ("claude", "codex")
        for p in (fixtures_dir / area).rglob("*.jsonl")
    }
    assert found == set(REAL_FINDINGS)


@pytest.mark.parametrize("relative", sorted(REAL_FINDINGS))
def test_real_fixture(relative: str, fixture_copy: Callable[..., Path]) -> None:
    provider = CODEX if relative.startswith("codex/") else CLAUDE
    data = fixture_copy(relative).read_bytes()
    report = verify(data, verify_checks(provider))
    assert dict(Counter(f.code.value for f in report.findings)) == REAL_FINDINGS[relative]
    assert report.records == sum(1 for line in data.split(b"\n") if line.strip())
