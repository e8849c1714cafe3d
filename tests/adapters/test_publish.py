"""Fork publication on real fixture copies: receipts, idempotent reruns, refusals, faults."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.planning.load import LoadedSession, load_session, plan_session
from gobtui.adapters.providers.registry import parse_transcript, verify_checks
from gobtui.adapters.publish import publisher as publish_module
from gobtui.adapters.publish.events import read_events
from gobtui.adapters.publish.publisher import (
    PUBLISHED_LABEL,
    STEPS,
    Publisher,
    PublishError,
    PublishErrorCode,
    operations_dir,
)
from gobtui.adapters.vault.prune import prune
from gobtui.adapters.vault.vault import Vault
from gobtui.core.edits import CompactionPlan
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.receipt import OperationKind, Receipt
from gobtui.core.verify import verify
from tests.builders.common import rehydrate

SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"
CODEX = "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
POLICY = PolicyConfig(trigger_tokens=20_000, floor_tokens=5_000)


class Crash(Exception):
    """Stands for the process dying at a step."""


@pytest.fixture
def claude_source(tmp_path: Path, fixtures_dir: Path) -> Path:
    project = tmp_path / "claude" / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    target = project / f"{SPOTTER}.jsonl"
    shutil.copyfile(fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}.jsonl", target)
    return target


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / "data" / "vault")


def planned(
    path: Path, provider: Provider, strategy: str = "elide"
) -> tuple[LoadedSession, CompactionPlan]:
    session = load_session(path, provider)
    outcome = plan_session(session, strategy, POLICY)
    assert outcome.plan is not None, outcome.result
    return session, outcome.plan


def publisher(vault: Vault, tmp_path: Path, **kwargs: object) -> Publisher:
    return Publisher(vault, root=tmp_path / "data", clock=lambda: 1_764_400_000.0, **kwargs)  # type: ignore[arg-type]


def test_apply_publishes_a_smaller_verified_fork_and_never_touches_the_source(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    original = claude_source.read_bytes()
    session, plan = planned(claude_source, Provider.CLAUDE)
    receipt = publisher(vault, tmp_path).apply(session, plan, POLICY)

    assert claude_source.read_bytes() == original
    fork = Path(receipt.path)
    assert fork.parent == claude_source.parent and fork.name == f"{receipt.session_id}.jsonl"
    assert receipt.completed and receipt.kind is OperationKind.APPLY
    assert receipt.resume_command == f"claude --resume {receipt.session_id}"
    data = fork.read_bytes()
    assert len(data) == receipt.bytes_after < receipt.bytes_before == len(original)
    assert receipt.reclaimed_bytes == len(original) - len(data)
    assert verify(data, verify_checks(Provider.CLAUDE)).ok
    transcript = parse_transcript(Provider.CLAUDE, str(fork))
    assert transcript.session_id == receipt.session_id != SPOTTER
    # its latest usage says the fork's projected context (without the card and what followed
    # the restated response, which the client estimates itself), not the source's
    assert plan.projection is not None
    card = (
        session.transcript.calibration.tokens(plan.digest.estimate_overhead()) if plan.digest else 0
    )
    tail = session.transcript.calibration.tail_tokens
    assert transcript.context_tokens() == plan.projection.context_tokens_after - card - tail
    assert transcript.context_tokens() < session.transcript.context_tokens()
    # The original's exact bytes went into the vault first.
    entry = vault.find(receipt.snapshot_manifest_sha256)
    assert vault.read_bytes(entry.sha256) == original
    assert entry.source_sha256 == receipt.source_sha256
    # One numeric event; no path or content in it.
    events = read_events(tmp_path / "data")
    assert [(e.outcome.value, e.action.value) for e in events] == [
        ("applied", "transcript_compact")
    ]
    line = (tmp_path / "data" / "events.jsonl").read_text()
    assert str(claude_source.parent) not in line and "spotter" not in line


def test_a_rerun_returns_the_same_receipt_without_writing(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE)
    first = publisher(vault, tmp_path).apply(session, plan, POLICY)
    files = sorted(claude_source.parent.iterdir())
    second = publisher(vault, tmp_path).apply(session, plan, POLICY)
    assert second == first
    assert sorted(claude_source.parent.iterdir()) == files
    # the source and the fork as published, once each: a rerun snapshots nothing more
    assert [e.strategy for e in vault.entries()] == ["published", plan.strategy]
    outcomes = [e.outcome.value for e in read_events(tmp_path / "data")]
    assert outcomes == ["applied", "skipped"]


def test_published_names_the_earlier_fork_only_while_it_is_as_published(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE)
    other = plan_session(session, "middle", POLICY).plan
    assert other is not None and other.edits != plan.edits
    assert publisher(vault, tmp_path).published(session, plan) is None  # never applied
    receipt = publisher(vault, tmp_path).apply(session, plan, POLICY)
    events = read_events(tmp_path / "data")
    assert publisher(vault, tmp_path).published(session, plan) == receipt
    assert publisher(vault, tmp_path).published(session, other) is None  # another plan
    assert read_events(tmp_path / "data") == events  # a look only: no event, no write
    fork = Path(receipt.path)
    with fork.open("ab") as handle:  # resumed since: apply() would refuse, not return it
        handle.write(b'{"type":"summary","summary":"resumed"}\n')
    assert publisher(vault, tmp_path).published(session, plan) is None
    fork.unlink()
    assert publisher(vault, tmp_path).published(session, plan) is None
    receipt_file = operations_dir(tmp_path / "data") / f"{receipt.operation_id}.json"
    receipt_file.write_text("{damaged")
    assert publisher(vault, tmp_path).published(session, plan) is None


def test_a_source_that_changed_since_planning_is_refused(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE)
    with claude_source.open("ab") as handle:
        handle.write(b'{"type":"summary","summary":"appended"}\n')
    with pytest.raises(PublishError) as caught:
        publisher(vault, tmp_path).apply(session, plan, POLICY)
    assert caught.value.code is PublishErrorCode.SOURCE_CHANGED
    assert "changed since planning" in str(caught.value)
    assert sorted(p.name for p in claude_source.parent.iterdir()) == [claude_source.name]
    assert [e.error_code for e in read_events(tmp_path / "data")] == ["source_changed"]


def test_a_control_plan_is_not_published(claude_source: Path, vault: Vault, tmp_path: Path) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE, "sawtooth")
    with pytest.raises(PublishError) as caught:
        publisher(vault, tmp_path).apply(session, plan, POLICY)
    assert caught.value.code is PublishErrorCode.CONTROL_PLAN


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_after_any_step_leaves_the_source_and_vault_intact(
    claude_source: Path, vault: Vault, tmp_path: Path, step: str
) -> None:
    original = claude_source.read_bytes()
    session, plan = planned(claude_source, Provider.CLAUDE)

    def crash_at(name: str) -> None:
        if name == step:
            raise Crash(name)

    with pytest.raises(Crash):
        publisher(vault, tmp_path, fault=crash_at).apply(session, plan, POLICY)
    assert claude_source.read_bytes() == original
    for entry in vault.entries():  # readable, and every snapshot of the source reconstructs
        if entry.strategy != PUBLISHED_LABEL:
            assert vault.read_bytes(entry.sha256) == original
    leftovers = [p.name for p in claude_source.parent.iterdir() if p.name.startswith(".gobtui-")]
    assert leftovers == []
    # Running again (the process restarted) finishes the job, or returns what was done,
    # the fork kept in the vault as published included (once, however often it is rerun).
    receipt = publisher(vault, tmp_path).apply(session, plan, POLICY)
    assert receipt.completed
    assert (
        Path(receipt.path).is_file()
        and verify(Path(receipt.path).read_bytes(), verify_checks(Provider.CLAUDE)).ok
    )
    assert claude_source.read_bytes() == original
    publisher(vault, tmp_path).apply(session, plan, POLICY)
    kept = [e for e in vault.entries() if e.strategy == PUBLISHED_LABEL]
    assert [(e.session_id, e.source_sha256) for e in kept] == [
        (receipt.session_id, receipt.output_sha256)
    ]


def test_a_concurrent_apply_of_the_same_plan_is_refused_clearly(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE)
    first = publisher(vault, tmp_path)
    # Another process holds the operation's lock: find its name from a completed run's id.
    receipt = first.apply(session, plan, POLICY)
    lock = operations_dir(tmp_path / "data") / f"{receipt.operation_id}.lock"
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(PublishError) as caught:
            publisher(vault, tmp_path).apply(session, plan, POLICY)
        assert caught.value.code is PublishErrorCode.ALREADY_RUNNING
    finally:
        os.close(fd)


def test_a_foreign_file_at_the_fork_name_is_never_overwritten(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE)
    receipt = publisher(vault, tmp_path).apply(session, plan, POLICY)
    fork = Path(receipt.path)
    fork.write_bytes(b'{"type":"summary","summary":"somebody else"}\n')
    with pytest.raises(PublishError) as caught:
        publisher(vault, tmp_path).apply(session, plan, POLICY)
    assert caught.value.code is PublishErrorCode.NEEDS_RECOVERY
    assert f"the fork {fork} published by this apply was changed since" in str(caught.value)
    assert fork.read_bytes() == b'{"type":"summary","summary":"somebody else"}\n'


@pytest.mark.parametrize("kind", ["fork", "undo"])
def test_a_resumed_fork_or_restore_is_never_overwritten_and_the_way_on_is_named(
    claude_source: Path, vault: Vault, tmp_path: Path, kind: str
) -> None:
    session = load_session(claude_source, Provider.CLAUDE)
    pub = publisher(vault, tmp_path)

    def publish() -> object:
        if kind == "fork":
            return pub.fork(session)
        return pub.undo(vault.entries()[-1].sha256)

    if kind == "undo":
        pub.fork(session)  # a snapshot to restore
    receipt = publish()
    assert isinstance(receipt, Receipt)
    fork = Path(receipt.path)
    with fork.open("ab") as handle:  # resumed: the published bytes, then more
        handle.write(b'{"type":"user","message":{"role":"user","content":"go on"}}\n')
    resumed = fork.read_bytes()
    with pytest.raises(PublishError) as caught:
        publish()
    message = str(caught.value)
    assert caught.value.code is PublishErrorCode.NEEDS_RECOVERY and "\n" not in message
    assert message.startswith(f"the fork {fork} published by this {kind} was resumed since")
    assert "it is left as it is" in message and f"gobtui fork {receipt.session_id}" in message
    assert fork.read_bytes() == resumed


@pytest.mark.parametrize("where", ["vault", "fork"])
def test_no_space_left_is_a_one_line_error(
    claude_source: Path, vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    session, plan = planned(claude_source, Provider.CLAUDE)
    original = claude_source.read_bytes()
    import gobtui.adapters.files.atomic as atomic

    def full(*args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "vault":
        monkeypatch.setattr(os, "write", full)  # the snapshot is the first thing written
    else:
        monkeypatch.setattr(atomic, "_write_temp", full)
    with pytest.raises(PublishError) as caught:
        publisher(vault, tmp_path).apply(session, plan, POLICY)
    monkeypatch.undo()
    expected = PublishErrorCode.VAULT if where == "vault" else PublishErrorCode.IO
    assert caught.value.code is expected
    assert "no space left" in str(caught.value).lower() and "\n" not in str(caught.value)
    assert claude_source.read_bytes() == original
    assert sorted(p.name for p in claude_source.parent.iterdir()) == [claude_source.name]


def test_undo_restores_the_snapshot_into_a_new_fork(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    original = claude_source.read_bytes()
    session, plan = planned(claude_source, Provider.CLAUDE)
    pub = publisher(vault, tmp_path)
    applied = pub.apply(session, plan, POLICY)
    undone = pub.undo(applied.snapshot_manifest_sha256)
    restored = Path(undone.path)
    assert undone.kind is OperationKind.UNDO and undone.completed
    assert restored not in (claude_source, Path(applied.path))
    assert parse_transcript(Provider.CLAUDE, str(restored)).session_id == undone.session_id
    # Byte for byte the snapshot, except the session id.
    assert restored.read_bytes().replace(undone.session_id.encode(), SPOTTER.encode()) == original
    assert pub.undo(applied.snapshot_manifest_sha256) == undone  # idempotent
    assert [(e.action.value, e.outcome.value) for e in read_events(tmp_path / "data")] == [
        ("transcript_compact", "applied"),
        ("undo", "applied"),
        ("undo", "skipped"),
    ]


def test_a_fork_and_a_restore_are_dated_as_their_content(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    """Nobody writes a fork: dated now, it would read as a live session (and auto would ask
    the provider to compact it). It is dated as the source's last write."""
    written = 1_700_000_000.0
    os.utime(claude_source, (written, written))
    session, plan = planned(claude_source, Provider.CLAUDE)
    pub = publisher(vault, tmp_path)
    applied = pub.apply(session, plan, POLICY)
    assert os.stat(applied.path).st_mtime == written
    undone = pub.undo(applied.snapshot_manifest_sha256)
    assert os.stat(undone.path).st_mtime == written  # the source still holds those bytes
    with claude_source.open("ab") as handle:  # once it moves on: the snapshot's time
        handle.write(b'{"type":"mode","mode":"plan"}\n')
    entry = vault.find(applied.snapshot_manifest_sha256)
    assert publish_module._written(entry) == entry.ts


def test_codex_fork_is_a_rollout_file_with_a_new_session_meta_id(
    tmp_path: Path, fixtures_dir: Path, vault: Vault
) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    source = day / CODEX
    source.write_bytes(
        rehydrate((fixtures_dir / "codex" / f"madshn__localpush__{CODEX}").read_bytes())
    )
    original = source.read_bytes()
    session, plan = planned(source, Provider.CODEX)
    receipt = publisher(vault, tmp_path).apply(session, plan, POLICY)
    fork = Path(receipt.path)
    assert fork.name.startswith("rollout-") and fork.name.endswith(f"-{receipt.session_id}.jsonl")
    assert receipt.resume_command == f"codex resume {receipt.session_id}"
    first = orjson.loads(fork.read_bytes().split(b"\n", 1)[0])
    assert first["type"] == "session_meta" and first["payload"]["id"] == receipt.session_id
    assert source.read_bytes() == original


def test_prune_keeps_the_snapshots_receipts_point_at(
    claude_source: Path, vault: Vault, tmp_path: Path
) -> None:
    from gobtui.adapters.publish.publisher import receipt_roots

    session, plan = planned(claude_source, Provider.CLAUDE)
    receipt = publisher(vault, tmp_path).apply(session, plan, POLICY)
    # Two newer snapshots of the same stream: keep=1 would drop the receipt's one.
    with claude_source.open("ab") as handle:
        handle.write(b'{"type":"summary","summary":"later"}\n')
    vault.snapshot(claude_source, Provider.CLAUDE, SPOTTER, "manual", 1_764_400_100.0)
    roots = receipt_roots(tmp_path / "data")
    assert roots == {receipt.snapshot_manifest_sha256}
    prune(vault, keep=1, dry_run=False, extra_roots=roots)
    assert vault.read_bytes(receipt.snapshot_manifest_sha256)  # still there, still verifies
