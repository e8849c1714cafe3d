"""core.projection: the fork's context in the client, and whether the client compacts it."""

from __future__ import annotations

from gobtui.core.calibration import Calibration
from gobtui.core.model import ItemKind, Provider, TranscriptItem
from gobtui.core.projection import codex_reasoning_tokens, project
from gobtui.core.thresholds import client_compact_threshold

CLAUDE, CODEX = Provider.CLAUDE, Provider.CODEX


def test_where_the_clients_compact_by_themselves() -> None:
    # measured with the real clients: Claude Code at the window less 33k, Codex at 90 % of
    # its model's 272k window whatever the rollout records (258,400 is 95 % of 272k)
    assert client_compact_threshold(CLAUDE, 200_000) == 167_000
    assert client_compact_threshold(CLAUDE, 1_000_000) == 967_000
    assert client_compact_threshold(CLAUDE, None) == 167_000
    assert client_compact_threshold(CODEX, 258_400) == 244_800
    assert client_compact_threshold(CODEX, 272_000) == 244_800
    assert client_compact_threshold(CODEX, None) == 244_800
    assert client_compact_threshold(CODEX, 400_000) == 360_000


def reasoning(line: int, hidden: int, active: bool = True) -> TranscriptItem:
    return TranscriptItem(line, ItemKind.REASONING, 10, active=active, hidden_bytes=hidden)


def user(line: int) -> TranscriptItem:
    return TranscriptItem(line, ItemKind.USER, 10)


def test_codex_counts_the_encrypted_reasoning_of_earlier_turns() -> None:
    items = [reasoning(1, 4_650), user(2), reasoning(3, 8_650), reasoning(0, 9_000, False)]
    # (4650 * 3/4 - 650) / 4 = 709: before the last user message; the newest turn's is the
    # provider's own (in the reported usage)
    assert codex_reasoning_tokens(items, card=False) == 709
    # a card is a user message at the end: every live turn's reasoning is earlier
    assert codex_reasoning_tokens(items, card=True) == (2_837 + 5_837) // 4
    assert codex_reasoning_tokens([reasoning(1, 100), user(2)], card=False) == 0


def test_a_projection_adds_the_tail_and_says_whether_the_client_compacts() -> None:
    calibration = Calibration(slope=1.2, base=20_000, points=9, tail_tokens=3_000)
    under = project(CLAUDE, 180_000, 100_000, 200_000, calibration)
    assert (under.context_tokens_before, under.context_tokens_after) == (183_000, 103_000)
    assert under.client_context_tokens == 103_000 and not under.client_compacts
    over = project(CLAUDE, 180_000, 165_000, 200_000, calibration)
    assert over.client_compacts and over.client_threshold_tokens == 167_000
    # Codex: under the threshold on its own, over it with the reasoning it adds
    codex = project(CODEX, 250_000, 200_000, 258_400, calibration, client_extra=50_000)
    assert codex.client_context_tokens == 253_000 and codex.client_compacts
