"""Every limit gobtui enforces, named in one place."""

from __future__ import annotations

# Token estimation: no tokenizer, ceil(bytes / CHARS_PER_TOKEN), at least 1.
CHARS_PER_TOKEN = 4

# Reading transcripts.
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this is counted as bad (too_long) and skipped unparsed."""
READ_CHUNK_BYTES = 4 * 1024 * 1024
"""Incremental reads pull at most this much at a time."""
HEAD_SCAN_BYTES = 64 * 1024
"""Cold summaries read this much of a big file's head (identity, cwd, title)."""
TAIL_SCAN_BYTES = 64 * 1024
"""Cold summaries read this much of a big file's tail first (latest usage)."""
TAIL_SCAN_MAX_BYTES = 16 * 1024 * 1024
"""The tail window doubles until usage is found, up to this."""
FULL_READ_MAX_BYTES = 256 * 1024
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
