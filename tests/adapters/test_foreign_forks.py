"""A fork gobtui published is known as one by the state card it holds, without its receipt:
published into one data dir (A), summarised by a store whose data dir and cache are another (B,
no receipts there), its SessionSummary says has_state_card, from a cold read, a full parse, the
cache after a restart and an append. Its source, an elide fork (no card) and a session that only
quotes the marker do not."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.config.paths import Homes
from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.adapters.providers.registry import parse_transcript
from gobtui.adapters.publish.operations import published_receipts
from gobtui.adapters.publish.publisher import Publisher
from gobtui.adapters.sessions.cache import SummaryCache
from gobtui.adapters.sessions.store import SessionStore
from gobtui.adapters.vault.vault import Vault
from gobtui.core.edits import CARD_MARKER
from gobtui.core.model import Provider, SessionSummary
from gobtui.core.policy import PolicyConfig
from gobtui.core.receipt import Receipt
from tests.builders.common import rehydrate

NOW = 1_800_000_000.0
SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"
CODEX = "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
POLICY = PolicyConfig(trigger_tokens=20_000, floor_tokens=5_000)
CARD_STRATEGY = "middle"
"""A strategy whose plans end in a state card (elide's do not)."""


@pytest.fixture
def homes(tmp_path: Path) -> Homes:
    return Homes(claude=tmp_path / "claude", codex=tmp_path / "codex")


@pytest.fixture
def data_a(tmp_path: Path) -> Path:
    """Where the fork was published: its receipts and the source's snapshot."""
    return tmp_path / "a" / "data"


@pytest.fixture
def data_b(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The data dir of the gobtui that reads the fork: it holds no receipt."""
    data = tmp_path / "b" / "data"
    monkeypatch.setenv("GOBTUI_DATA_DIR", str(data))
    monkeypatch.setenv("GOBTUI_CACHE_DIR", str(tmp_path / "b" / "cache"))
    return data


def claude_source(homes: Homes, fixtures_dir: Path) -> Path:
    assert homes.claude is not None
    project = homes.claude / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    target = project / f"{SPOTTER}.jsonl"
    shutil.copyfile(fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}.jsonl", target)
    return target


def codex_source(homes: Homes, fixtures_dir: Path) -> Path:
    assert homes.codex is not None
    day = homes.codex / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    target = day / CODEX
    target.write_bytes(
        rehydrate((fixtures_dir / "codex" / f"madshn__localpush__{CODEX}").read_bytes())
    )
    return target


SOURCES = {Provider.CLAUDE: claude_source, Provider.CODEX: codex_source}


def publish(source: Path, provider: Provider, data: Path, strategy: str = CARD_STRATEGY) -> Receipt:
    """A real apply, through the project's own publisher, into data dir `data`."""
    session = load_session(source, provider)
    outcome = plan_session(session, strategy, POLICY)
    assert outcome.plan is not None, outcome.result
    publisher = Publisher(Vault(data / "vault"), root=data, clock=lambda: 1_764_400_000.0)
    receipt = publisher.apply(session, outcome.plan, POLICY)
    assert receipt.completed and (strategy == CARD_STRATEGY) == (outcome.plan.digest is not None)
    return receipt


def by_path(summaries: list[SessionSummary]) -> dict[str, SessionSummary]:
    return {summary.path: summary for summary in summaries}


def store_in_b(homes: Homes, data_b: Path) -> tuple[SessionStore, SummaryCache]:
    cache = SummaryCache(data_b.parent / "cache" / "cursors")
    return SessionStore(homes, cache, max_age_secs=None), cache


@pytest.mark.parametrize("provider", [Provider.CLAUDE, Provider.CODEX])
def test_a_card_fork_is_known_without_its_receipt(
    provider: Provider, homes: Homes, data_a: Path, data_b: Path, fixtures_dir: Path
) -> None:
    source = SOURCES[provider](homes, fixtures_dir)
    receipt = publish(source, provider, data_a)
    assert [r.session_id for r in published_receipts(data_a)] == [receipt.session_id]
    assert published_receipts(data_b) == published_receipts() == []  # none where it is read

    store, cache = store_in_b(homes, data_b)
    with cache:
        summaries = by_path(store.scan(NOW))
    fork, original = summaries[receipt.path], summaries[str(source)]
    assert fork.session_id == receipt.session_id
    assert fork.has_state_card and not original.has_state_card
    # a full parse (what plan and verify read) says the same
    parsed = parse_transcript(provider, receipt.path).summary
    assert parsed is not None and parsed.has_state_card
    source_parse = parse_transcript(provider, str(source)).summary
    assert source_parse is not None and not source_parse.has_state_card


@pytest.mark.parametrize("provider", [Provider.CLAUDE, Provider.CODEX])
def test_the_cache_keeps_it_across_a_restart_and_an_append(
    provider: Provider, homes: Homes, data_a: Path, data_b: Path, fixtures_dir: Path
) -> None:
    source = SOURCES[provider](homes, fixtures_dir)
    receipt = publish(source, provider, data_a)
    store, cache = store_in_b(homes, data_b)
    with cache:
        store.scan(NOW)
    store, cache = store_in_b(homes, data_b)  # a restart: the summary comes from the cache
    with cache:
        again = by_path(store.scan(NOW))[receipt.path]
        assert store.stats.from_cache == 2 and store.stats.cold_reads == 0
        assert again.has_state_card
        # the fork resumed: a record appended is tailed, and the state keeps the card
        with open(receipt.path, "ab") as handle:
            handle.write(orjson.dumps({"type": "note", "timestamp": "2026-11-29T10:00:00Z"}))
            handle.write(b"\n")
        (grown,) = store.update([receipt.path], NOW)
        assert grown.records == again.records + 1 and grown.has_state_card
        assert store.stats.advanced == 1 and store.stats.cold_reads == 0


def test_an_elide_fork_holds_no_card(
    homes: Homes, data_a: Path, data_b: Path, fixtures_dir: Path
) -> None:
    """An elide fork stubs outputs and adds no card: only its receipt says it is a fork."""
    source = claude_source(homes, fixtures_dir)
    receipt = publish(source, Provider.CLAUDE, data_a, strategy="elide")
    store, cache = store_in_b(homes, data_b)
    with cache:
        assert not by_path(store.scan(NOW))[receipt.path].has_state_card


def test_a_session_that_only_quotes_the_marker_is_no_fork(
    homes: Homes, data_b: Path, fixtures_dir: Path
) -> None:
    """A session working on gobtui reads and says the marker (a tool's output, an answer, a
    prompt that does not start with it): none of that is a card."""
    source = claude_source(homes, fixtures_dir)
    lines = source.read_bytes().splitlines()
    last = orjson.loads(next(line for line in reversed(lines) if b'"uuid"' in line))
    base = {"sessionId": SPOTTER, "timestamp": "2026-11-29T10:00:00.000Z", "isSidechain": False}
    quoting = [
        base
        | {"type": "assistant", "uuid": "q1", "parentUuid": last["uuid"],
           "message": {"role": "assistant", "content": [
               {"type": "text", "text": f"{CARD_MARKER}\ngoal: a card quoted in an answer"}]}},
        base
        | {"type": "user", "uuid": "q2", "parentUuid": "q1",
           "message": {"role": "user", "content": [
               {"type": "tool_result", "tool_use_id": "t1",
                "content": f"{CARD_MARKER}\ngoal: grep output"}]}},
        base
        | {"type": "user", "uuid": "q3", "parentUuid": "q2",
           "message": {"role": "user", "content": f"what does {CARD_MARKER} mean?"}},
    ]  # fmt: skip
    with source.open("ab") as handle:
        for record in quoting:
            handle.write(orjson.dumps(record) + b"\n")
    store, cache = store_in_b(homes, data_b)
    with cache:
        assert not by_path(store.scan(NOW))[str(source)].has_state_card
    parsed = parse_transcript(Provider.CLAUDE, str(source)).summary
    assert parsed is not None and not parsed.has_state_card
