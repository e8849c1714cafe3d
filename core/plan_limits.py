"""Limits of compaction planning (Edit IR, admission, policy, state card, probes).

Kept apart from core/limits.py while planning is built; the lead merges them later. Names follow
the reference (gobstopper) where it has one.
"""

from __future__ import annotations

# Edit IR and admission (reference admission.rs / validation.rs).
MAX_EDITS = 64
"""A plan holds at most this many edits."""
MAX_PLAN_ITEMS = 100_000
"""A transcript with more items than this is not planned for."""
MAX_DIGEST_BYTES = 32 * 1024
"""The rendered state card is at most this many UTF-8 bytes."""
MAX_STUB_CHARS = 96
"""A stub template (and a per-item stub) is one line of at most this many characters."""
MAX_CONTROL_CHARS = 256
"""A provider control string is one line of at most this many characters."""
MAX_TOOL_USE_IDS = MAX_PLAN_ITEMS
"""A cache_edit names at most this many tool_use_ids."""

# Policy bounds (reference policy.rs).
MAX_POLICY_TOKENS = 10_000_000
MAX_INTERVAL_SECS = 86_400
MAX_KEEP_RECENT = 100_000
"""keep_recent_tool_outputs / keep_recent_turns above this are refused as absurd."""
MAX_RESULT_BYTES = 64 * 1024 * 1024

# Adaptive tuner (reference policy.rs; `gobstopper tune`).
TUNE_WINDOW_FRACTION = 0.25
TUNE_MIN_TRIGGER = 10_000
TUNE_MIN_FLOOR = 1_000
TUNE_RECENT_MAX = 3
TUNE_LOW_YIELD_MIN = 2
TUNE_LOW_YIELD_SHARE = 0.10
TUNE_LOW_YIELD_FACTOR = 1.5
TUNE_MAX_TRIGGER_FACTOR = 2
TUNE_HIGH_ELIDABLE_SHARE = 0.5
TUNE_HIGH_ELIDABLE_FACTOR = 0.8

# State card (reference strategy/mod.rs).
DIGEST_LIST_MAX = 8
"""Each list of the state card keeps at most this many entries."""
DIGEST_FRAMING_BYTES = 64
"""estimate_overhead(): the bytes added for the card's framing."""
DIGEST_SUMMARY_MAX_BYTES = 120
DIGEST_ENTRY_MAX_BYTES = 240
"""One entry (line) of the state card is cut to this many UTF-8 bytes."""
SALIENT_SCAN_BYTES = 16 * 1024
"""Of a host-supplied payload text, only this head is scanned for salient lines."""
SALIENT_LINES_PER_ITEM = 4
"""At most this many salient lines come from one elided item."""
STATE_CARD_RESERVE_TOKENS = 4096

# Probes (reference probe.rs).
MAX_PROBES = 64
PROBE_MIN_BYTES = 3
PROBE_MAX_BYTES = 64
PROBES_PER_KIND_PER_LINE = 4
