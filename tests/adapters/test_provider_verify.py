"""A provider's verify checks are its package's, reached through the registry: core.verify runs
the line checks every provider shares and reads records only through the checks it is given."""

from __future__ import annotations

import pytest

from gobtui.adapters.providers.registry import provider_of, verify_checks
from gobtui.core.model import Provider
from gobtui.core.verify import SourceChecks, verify
from tests.builders.claude import assistant, tool_use, user
from tests.builders.codex import call, item
from tests.builders.common import as_jsonl
from tests.core.verify_cases import triples

CLAUDE_ORPHAN = as_jsonl(user("u1", None), assistant("u2", "u1", tool_use("t1")), user("u3", "u2"))
"""A tool_use answered by nothing, a user turn after it: only Claude's pairing sees it."""
CODEX_UNPAIRED = as_jsonl(
    item({"type": "message", "role": "user", "content": "go"}), item(call("c1"))
)
"""A function_call without an output: only Codex's effective context sees it."""


@pytest.mark.parametrize("provider", list(Provider))
def test_the_registry_hands_out_the_packages_own_checks(provider: Provider) -> None:
    checks = verify_checks(provider)
    package = getattr(provider_of(provider), "__name__", "")
    assert checks.provider is provider
    assert checks is provider_of(provider).verify_checks()  # one value, every call
    assert checks.fact.__module__ == checks.checker.__module__ == f"{package}.verify"


def test_claude_pairing_is_reached_through_its_package() -> None:
    report = verify(CLAUDE_ORPHAN, verify_checks(Provider.CLAUDE))
    assert triples(report) == [("orphaned_tool_use", "error", 1)]
    assert not report.ok
    # Codex's checks read those records as records of no shape of theirs: no pairing finding.
    assert "orphaned_tool_use" not in {
        f.code for f in verify(CLAUDE_ORPHAN, verify_checks(Provider.CODEX)).findings
    }


def test_codex_pairing_is_reached_through_its_package() -> None:
    report = verify(CODEX_UNPAIRED, verify_checks(Provider.CODEX))
    assert triples(report) == [("unpaired_tool_call", "warning", 1)]
    assert "unpaired_tool_call" not in {
        f.code for f in verify(CODEX_UNPAIRED, verify_checks(Provider.CLAUDE)).findings
    }


@pytest.mark.parametrize(
    ("provider", "data"), [(Provider.CLAUDE, CLAUDE_ORPHAN), (Provider.CODEX, CODEX_UNPAIRED)]
)
def test_a_candidate_is_checked_by_its_sources_provider(provider: Provider, data: bytes) -> None:
    checks = SourceChecks(data, verify_checks(provider))
    appended = [
        as_jsonl(user("u4", "u3")) if provider is Provider.CLAUDE else as_jsonl(item(call("c2")))
    ]
    assert checks.report() == verify(data, verify_checks(provider))
    candidate = checks.candidate_report({}, appended)
    assert candidate == verify(data + appended[0], verify_checks(provider))
    assert candidate.provider is provider and candidate.findings
