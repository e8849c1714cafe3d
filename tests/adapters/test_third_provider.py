"""A third provider is one package plus one registry line: the toy (tests/adapters/toy_provider,
a JSONL format of its own) goes through discovery and the board's store, the full parse, the
conversation, the core planner and a fork's bytes without any other code knowing it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.planning.load import candidate_bytes, load_session, plan_session
from gobtui.adapters.providers import registry
from gobtui.adapters.sessions.discovery import sniff_file
from gobtui.adapters.sessions.store import SessionStore
from gobtui.core.edits import CompactionPlan
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.verify import verify
from gobtui.core.verify.findings import FindingCode
from gobtui.view_models import vault_text
from tests.adapters import toy_provider

TOY = toy_provider.PROVIDER
SESSION = "toy-0001"


@pytest.fixture
def toy() -> Iterator[Provider]:
    registry.register(toy_provider)  # the one line a third provider needs
    try:
        yield TOY
    finally:
        registry.unregister(TOY)


def _session(path: Path, results: int = 12, output_bytes: int = 6_000) -> Path:
    records: list[dict[str, object]] = [
        {"toy": "session", "id": SESSION, "cwd": "/work/toy", "model": "toy-1", "window": 40_000},
        {"toy": "say", "who": "user", "text": "read every file and sum them up"},
    ]
    for n in range(results):
        call = f"c{n}"
        records.append({"toy": "call", "call": call, "name": "read", "args": {"path": f"f{n}"}})
        records.append(
            {"toy": "result", "call": call, "output": f"line {n}\n" * (output_bytes // 7)}
        )
        records.append({"toy": "say", "who": "assistant", "text": f"file {n} read"})
    records.append({"toy": "usage", "context": 30_000})
    records.append({"toy": "say", "who": "user", "text": "and now?"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def test_the_toy_is_outside_the_products_closed_vocabulary(toy: Provider) -> None:
    assert toy not in list(Provider)  # every choice the product offers stays its two
    assert Provider("toy") is toy and toy.label == "Toy"
    with pytest.raises(ValueError):
        registry.register(toy_provider)  # one package a provider
    with pytest.raises(ValueError):
        registry.unregister(Provider.CLAUDE)


def test_its_files_are_found_by_content_and_read_by_the_board(
    toy: Provider, tmp_path: Path
) -> None:
    # Found under a client's home by what its records say, as any transcript is.
    home = tmp_path / "claude"
    path = _session(home / "projects" / "proj" / f"{SESSION}.jsonl")
    assert sniff_file(str(path)) is toy
    assert registry.sniff_record({"toy": "say"}) is toy
    assert registry.sniff_prefix(b'{"toy": "say", "text": "an unfinished li') is toy
    assert registry.sniff_record({"type": "user", "sessionId": "s"}) is Provider.CLAUDE

    store = SessionStore(Homes(claude=home, codex=None), None, max_age_secs=None)
    (summary,) = store.scan(now=path.stat().st_mtime + 1)
    assert summary.provider is toy and summary.session_id == SESSION
    assert (summary.cwd, summary.model, summary.context_tokens) == ("/work/toy", "toy-1", 30_000)
    assert summary.title == "read every file and sum them up"
    assert summary.resume_command() == f"toy resume {SESSION}"

    with path.open("ab") as handle:  # an append is read incrementally
        handle.write(orjson.dumps({"toy": "usage", "context": 31_000}) + b"\n")
    (after,) = store.update([str(path)], now=path.stat().st_mtime + 1)
    assert after.context_tokens == 31_000


def test_it_is_parsed_planned_and_forked(toy: Provider, tmp_path: Path) -> None:
    path = _session(tmp_path / f"{SESSION}.jsonl")
    transcript = registry.parse_transcript(toy, str(path))
    assert transcript.provider is toy and transcript.session_id == SESSION
    results = [item for item in transcript.items if item.elidable]
    assert len(results) == 12

    lines = path.read_bytes().splitlines()
    pairs = [(item, orjson.loads(lines[item.line_index])) for item in transcript.items]
    entries = registry.build_conversation(toy, pairs)
    assert entries[0].body == "read every file and sum them up"
    assert any(entry.header.startswith("read ⇒") for entry in entries)

    session = load_session(path, toy)
    policy = PolicyConfig(trigger_tokens=10_000, floor_tokens=5_000, keep_recent_tool_outputs=2)
    outcome = plan_session(session, "cache_aware", policy)
    plan = outcome.result
    assert isinstance(plan, CompactionPlan), plan
    assert outcome.admission is not None and outcome.admission.admitted, outcome
    elided = set(plan.elided_lines)
    assert elided and elided <= {item.line_index for item in results}
    # The newest outputs are kept, as the policy says.
    assert not elided & {item.line_index for item in results[-2:]}

    fork = candidate_bytes(session, plan)
    records = [orjson.loads(line) for line in fork.splitlines()]
    assert len(fork) < path.stat().st_size
    assert records[0] == orjson.loads(path.read_bytes().splitlines()[0])  # the head as it was
    cards = [r for r in records if toy_provider.card_text(r) is not None]
    assert len(cards) == (1 if plan.digest is not None else 0)
    for index in elided:  # each elided output is a stub now, every other line as it was
        assert len(records[index]["output"]) < len(orjson.loads(lines[index])["output"])
    assert [records[i] for i in range(len(lines)) if i not in elided] == [
        orjson.loads(lines[i]) for i in range(len(lines)) if i not in elided
    ]
    reparsed = registry.parse_data(toy, str(path), fork, 0, part=False)
    assert reparsed is not None and reparsed.session_id == SESSION
    assert sum(i.elidable_bytes or 0 for i in reparsed.items) < sum(
        i.elidable_bytes or 0 for i in transcript.items
    )


def test_its_records_are_verified_and_read_by_its_own_rules(toy: Provider, tmp_path: Path) -> None:
    path = _session(tmp_path / f"{SESSION}.jsonl", results=3)
    data = path.read_bytes()
    assert verify(data, registry.verify_checks(toy)).ok
    orphan = orjson.dumps({"toy": "result", "call": "nobody", "output": "late"}) + b"\n"
    twice = orjson.dumps({"toy": "call", "call": "c0", "name": "read", "args": {}}) + b"\n"
    report = verify(data + orphan + twice, registry.verify_checks(toy))
    codes = [finding.code for finding in report.findings]
    assert FindingCode.ORPHANED_TOOL_RESULT in codes
    assert FindingCode.DUPLICATE_TOOL_CALL_ID in codes and not report.ok

    # The vault's record view reads a call's input as the toy says where it is.
    call = orjson.dumps({"toy": "call", "call": "c9", "name": "grep", "args": {"q": "needle"}})
    (first, *_) = vault_text.entries(call)
    assert (first.kind, first.label, first.value) == ("text", "tool grep", "q: needle")
