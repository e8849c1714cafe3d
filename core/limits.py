"""Every limit gobtui enforces, named in one place."""

from __future__ import annotations

# Token estimation: no tokenizer, ceil(bytes / CHARS_PER_TOKEN), at least 1.
CHARS_PER_TOKEN = 4

# Reading transcripts.
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this is counted as bad (too_long) and skipped unparsed."""
READ_CHUNK_BYTES = 4 * 1024 * 1024
"""Incremental reads pull at most this much at a time."""
HEAD_SCAN_BYTES = 32 * 1024
"""Cold summaries read this much of a big file's head (identity, cwd, title)."""
TAIL_SCAN_BYTES = 32 * 1024
"""Cold summaries read this much of a big file's tail first (latest usage)."""
TAIL_SCAN_MAX_BYTES = 16 * 1024 * 1024
"""The tail window doubles until usage is found, up to this."""
TAIL_SECONDARY_MAX_BYTES = 1024 * 1024
"""... and until the other markers (e.g. Codex's model) are found, up to this."""
FULL_READ_MAX_BYTES = 96 * 1024
"""Files up to this size are always read whole, even on a cold start."""
COMPLETE_MAX_BYTES = 64 * 1024 * 1024
"""The dashboard reads head+tail files up to this size whole in the background."""
RECENT_LINK_WINDOW = 4096
"""Claude: parent links kept for the live-branch walk (newest records)."""
USAGE_HISTORY_MAX = 120
"""Usage samples kept per session for the sparkline (as wide as a wide pane) and burn rate."""
COMPACTION_EVENTS_MAX = 64
TITLE_MAX_CHARS = 120
LABEL_MAX_CHARS = 80
SUMMARY_MAX_CHARS = 240
ELIDABLE_MIN_BYTES = 256
"""Only tool outputs larger than this are elidable."""
STUB_BUDGET_BYTES = 96
"""What one stub is assumed to cost when estimating elision savings."""

# Discovery.
DISCOVERY_MAX_ENTRIES = 100_000
CLAUDE_MAX_DEPTH = 5
CODEX_MAX_DEPTH = 5
SNIFF_BYTES = 64 * 1024
DEFAULT_MAX_AGE_SECS = 7 * 24 * 3600
HOT_SECS = 180
"""A session written within this many seconds is live."""
MAX_LIVE_SECS = 86_400

# Policy defaults (until config arrives).
DEFAULT_TRIGGER_TOKENS = 250_000
DEFAULT_FLOOR_TOKENS = 40_000
DEFAULT_CLAUDE_WINDOW = 200_000
LARGE_CLAUDE_WINDOW = 1_000_000
DEFAULT_BAND_WARN_PCT = 50
DEFAULT_BAND_ALERT_PCT = 80

# Burn rate: samples younger than this feed the rate.
BURN_WINDOW_SECS = 15 * 60
BURN_MIN_SAMPLES = 2

# Watcher.
WATCH_DEBOUNCE_MS = 80
WATCH_STEP_MS = 20

# --- Compaction planning: Edit IR, admission, policy, state card, probes ---

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
