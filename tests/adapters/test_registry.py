"""The registry: one package per provider, each with the whole interface, picked in one place."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from gobtui.adapters.providers import interface
from gobtui.adapters.providers.registry import IdentityScan, provider_of, record_type
from gobtui.core.model import Provider

FACES = [
    name
    for name, _ in inspect.getmembers(interface.ProviderPackage)
    if not name.startswith("_") or name.isupper()
]


@pytest.mark.parametrize("provider", list(Provider))
def test_every_provider_has_a_package_with_every_face(provider: Provider) -> None:
    package = provider_of(provider)
    assert package.PROVIDER is provider
    missing = [name for name in FACES if not hasattr(package, name)]
    assert not missing and {"parse_data", "fork_path", "rewrite_half"} <= set(FACES)
    assert package.state_class().__module__.startswith(getattr(package, "__name__", ""))


def test_forks_are_named_as_each_client_names_its_files(tmp_path: Path) -> None:
    claude = tmp_path / "11111111-1111-4111-8111-111111111111.jsonl"
    assert (
        provider_of(Provider.CLAUDE).fork_path(claude, "new-id", 0.0) == tmp_path / "new-id.jsonl"
    )
    codex = tmp_path / "rollout-2026-09-21T13-33-20-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl"
    fork = provider_of(Provider.CODEX).fork_path(codex, "new-id", 0.0)
    assert fork == tmp_path / "rollout-2026-09-21T13-33-20-new-id.jsonl"
    # A fork already there under another stamp (an earlier run of the same operation) is it.
    earlier = tmp_path / "rollout-2026-01-01T00-00-00-new-id.jsonl"
    earlier.write_text("")
    assert provider_of(Provider.CODEX).fork_path(codex, "new-id", 0.0) == earlier


@pytest.mark.parametrize(
    ("records", "identity"),
    [
        ([{"type": "session_meta", "payload": {"id": "019c"}}], (Provider.CODEX, "019c")),
        ([{"type": "progress", "sessionId": "old"}, {"type": "user", "sessionId": "new"}],
         (Provider.CLAUDE, "new")),
        ([{"type": "progress", "sessionId": "only"}], (Provider.CLAUDE, "only")),
        ([{"type": "file-history-snapshot"}, [1], "x", {"sessionId": ""}], None),
    ],
)  # fmt: skip
def test_identity_scan_reads_the_session_the_records_name(
    records: list[object], identity: tuple[Provider, str] | None
) -> None:
    scan = IdentityScan()
    for record in records:
        scan.feed(record)
    assert scan.identity == identity


@pytest.mark.parametrize(
    ("record", "kind"),
    [
        ({"type": "assistant"}, "assistant"),
        ({"type": "system", "subtype": "compact_boundary"}, "system:compact_boundary"),
        ({"type": "response_item", "payload": {"type": "message"}}, "response_item:message"),
        ({"type": "compacted", "payload": {"message": ""}}, "compacted"),
        ({"message": {}}, "untyped"),
        ([1, 2], "unparsed"),
    ],
)
def test_record_type(record: object, kind: str) -> None:
    assert record_type(record) == kind
