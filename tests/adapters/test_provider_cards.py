"""Where each provider's records carry a state card (adapters.providers.<name>.cards): the
places cards are written, in each provider's own shape, and the lookalikes that are not."""

from __future__ import annotations

from gobtui.adapters.providers.registry import provider_of
from gobtui.core.card_text import CARD_MARKER, REFERENCE_CARD_MARKER
from gobtui.core.edits import DigestBlock
from gobtui.core.model import Provider

CLAUDE, CODEX = provider_of(Provider.CLAUDE), provider_of(Provider.CODEX)
CARD = DigestBlock(
    goal="Ship the vault",
    summary="chunks and manifests",
    files_touched=["adapters/vault.py", "core/vault_model.py"],
    errors=["VAULT broke once"],
    open_tasks=["bench the vault"],
    current_work="recall",
    covers_items=12,
)


def test_card_text_of_reads_the_three_places_cards_live() -> None:
    text = CARD.render()
    claude = {"type": "user", "message": {"role": "user", "content": text}}
    codex = {
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_image"}, {"type": "input_text", "text": text}]},
    }  # fmt: skip
    compacted = {
        "type": "compacted",
        "payload": {"message": "", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
        ]},
    }  # fmt: skip
    for provider, record in ((CLAUDE, claude), (CODEX, codex), (CODEX, compacted)):
        assert provider.card_text(record) == text
        assert DigestBlock.parse(text) == CARD
    assert CODEX.card_text(claude) is None and CLAUDE.card_text(codex) is None  # one shape each
    reference = text.replace(CARD_MARKER, REFERENCE_CARD_MARKER)
    assert CLAUDE.card_text({"type": "user", "message": {"content": reference}}) == reference


def test_card_lookalikes_are_not_cards() -> None:
    text = CARD.render()
    assistant = {"type": "assistant", "message": {"content": text}}
    codex_assistant = {
        "type": "response_item",
        "payload": {"type": "message", "role": "assistant",
                    "content": [{"type": "input_text", "text": text}]},
    }  # fmt: skip
    second_item = {
        "type": "compacted",
        "payload": {"replacement_history": [
            {"content": [{"type": "input_text", "text": "hello"}]},
            {"content": [{"type": "input_text", "text": text}]},
        ]},
    }  # fmt: skip
    quoted = {"type": "user", "message": {"content": "see: " + text}}
    blocks = {"type": "user", "message": {"content": [{"type": "text", "text": text}]}}
    # "text": a line that decodes to no object at all, a record only in name
    for record in (assistant, codex_assistant, second_item, quoted, blocks, "text"):
        assert CLAUDE.card_text(record) is None and CODEX.card_text(record) is None  # type: ignore[arg-type]
