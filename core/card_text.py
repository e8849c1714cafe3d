"""The markers a state card's text starts with, provider-neutral. Where each provider's records
carry a card is its own package's to say (adapters.providers.<name>.cards, through
ProviderPackage.card_text). Light on purpose: summary readers ask of every record."""

from __future__ import annotations

CARD_MARKER = "[gobtui state card]"
REFERENCE_CARD_MARKER = "[gobstopper state card]"
"""Cards written by the reference parse too, so recall reads both."""
CARD_MARKERS = (CARD_MARKER, REFERENCE_CARD_MARKER)
CARD_PREFILTER = b" state card]"
"""Bytes every line holding a card has (a cheap test before decoding one)."""
