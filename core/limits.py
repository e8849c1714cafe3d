"""Every limit gobtui enforces, named in one place."""

from __future__ import annotations

# Token estimation: no tokenizer, ceil(bytes / CHARS_PER_TOKEN), at least 1.
CHARS_PER_TOKEN = 4

# Reading transcripts.
MAX_JSON_DEPTH = 254
"""A record nested deeper than this is a bad line (too_deep): orjson, which reads up to
1,024 levels, writes no more than this, so such a record could be read but never rewritten
(hostile input; no client writes one)."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this is counted as bad (too_long) and skipped unparsed."""
READ_CHUNK_BYTES = 4 * 1024 * 1024
"""Incremental reads pull at most this much at a time."""
HEAD_FIRST_BYTES = 8 * 1024
"""Cold summaries read this much of a big file's head first: most name their session,
folder and title there."""
HEAD_SCAN_BYTES = 32 * 1024
"""... and up to this much when they do not (identity, cwd, title)."""
TAIL_SCAN_BYTES = 32 * 1024
"""Cold summaries read this much of a big file's tail first (latest usage)."""
TAIL_SCAN_MAX_BYTES = 16 * 1024 * 1024
"""The tail window doubles until usage is found, up to this."""
TAIL_SECONDARY_MAX_BYTES = 1024 * 1024
"""How far behind that window the newest line holding another marker (e.g. the record naming
Codex's model) is looked for by its bytes; only that line is decoded."""
FULL_READ_MAX_BYTES = 96 * 1024
"""Files up to this size are always read whole, even on a cold start."""
FINGERPRINT_WINDOW_BYTES = 4 * 1024
"""A cursor fingerprints the bytes it read: the first this many and the last this many
before where it stopped (all of them when that is less than two windows). A file whose
fingerprint changed was rewritten in place and is read again from the start, not tailed."""
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
FILLS_REFRESH_SECS = 30
"""The detail pane reads a growing session whole again for its Fills line at most this often
(what fills a context moves slowly; a live file grows every second)."""

# Discovery.
DISCOVERY_MAX_ENTRIES = 100_000
CLAUDE_MAX_DEPTH = 5
CODEX_MAX_DEPTH = 5
SNIFF_BYTES = 64 * 1024
DEFAULT_MAX_AGE_SECS = 7 * 24 * 3600
HOT_SECS = 180
ACTIVE_ONLY_SECS = 180
"""`watch --active-only`: files written this recently (a recency guess, not an owner's proof)."""
WATCH_INTERVAL_SECS = 30
"""How often `gobtui watch` looks again, unless --interval says otherwise."""
STATUS_QUIET_SECS = 30
"""A tool call with no result and no write for this long may be waiting for an approval."""
STATUS_STALL_SECS = 600
"""A model that is up and has written nothing for this long is no longer working (and never
once the session has left the board's live window: working is always live)."""
STATUS_WAITING_SECS = 4 * 3600
"""A finished turn (or a call that may wait for an approval) counts as waiting for the user
this long; idle after."""
STATUS_ENDED_SECS = 24 * 3600
"""No write for this long: the session has ended, whatever its last record."""
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
BURN_RECENT_SECS = 60
"""A session filling faster over its last minute than over the whole window is burning at
that pace: the forecast should not lag a speed-up by a quarter of an hour."""
BURN_RECENT_MIN_SAMPLES = 3
"""... judged on this many samples at least (one big tool output is not a pace)."""

# Watcher.
WATCH_DEBOUNCE_MS = 80
WATCH_STEP_MS = 20

# --- Compaction planning: Edit IR, admission, policy, state card, probes ---

# Edit IR and admission (reference admission.rs / validation.rs).
MAX_EDITS = 64
"""A plan holds at most this many edits."""
MAX_PLAN_ITEMS = 100_000
"""A transcript with more items than this is not planned for."""
MAX_PLAN_RECORDS = 400_000
"""Nor one whose live part has more lines than this (counted before they are decoded, so the
parse's time and memory are bounded by it: the biggest bench session has 267k)."""
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
DIGEST_LIST_MAX = 16
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
CALL_PATHS_MAX = 8
"""At most this many file paths are kept of one tool call's arguments."""
PATH_MAX_CHARS = 512
"""A longer token is no file path the card lists."""
PATH_SCAN_CHARS = 4096
"""Of a text argument (a shell command, a patch's prose), the head searched for paths."""
STATE_CARD_RESERVE_TOKENS = 4096

# Probes (reference probe.rs).
MAX_PROBES = 64
PROBE_MIN_BYTES = 3
PROBE_MAX_BYTES = 64
PROBES_PER_KIND_PER_LINE = 4
PROBE_PAYLOAD_CHARS = 2048
"""Probes come from each output's first 2,048 characters: the reference scans the raw file in
Rust; a Python regex scan of every byte of a 200 MB session would cost many parses."""
PROBE_BLOCK_ITEMS = 64
"""Probe extraction prefilters this many items' texts at once (core.probes.possible_kinds)."""

# What the real clients do on resume (measured with Claude Code 2.1.328, Codex 0.169.0).
CLAUDE_AUTOCOMPACT_RESERVE_TOKENS = 33_000
"""Claude Code compacts a session whose last recorded usage (plus its estimate of what
follows) reaches its model's window less this (20k for output, 13k of buffer): 167k of 200k."""
CODEX_AUTOCOMPACT_SHARE = 0.9
"""Codex compacts at 90 % of its model's window (`model_auto_compact_token_limit`)."""
CODEX_CLIENT_WINDOW = 272_000
"""The window Codex knows for the GPT-5 family, whatever a rollout records (258,400 is
95 % of it): its compaction point is 244,800."""
TRIGGER_CLIENT_SHARE = 0.9
"""The trigger is lowered to 90 % of where the client compacts by itself: above that, the
client's blind summary always comes first (the board and the planner both lower it)."""

CODEX_SENT_OUTPUT_MAX_BYTES = 12_000
"""Codex sends at most about this many bytes of one tool output (it cuts the middle out,
`…N chars truncated…`): an output's estimate counts no more than this."""
CODEX_REASONING_OVERHEAD_BYTES = 650
"""Codex estimates an encrypted reasoning item as its base64 length x 3/4 less this, 4 bytes
a token, and adds that for the reasoning of earlier turns to the last reported usage when it
decides whether to compact (the provider itself does not count it)."""

# Calibration of estimates to provider tokens (core/projection.py).
DEFAULT_SLOPE = {"claude": 1.2, "codex": 0.9}
"""Provider tokens per estimated token when a session has too few usage records to fit
(measured on genuine sessions: Claude about 1.2; Codex, encrypted reasoning left out, 0.8-1)."""
CALIBRATION_MIN_SLOPE = 0.3
CALIBRATION_MAX_SLOPE = 3.0

# --- eval ---
MAX_MISSED_PROBES_SHOWN = 8
"""An eval row lists at most this many probes the plan loses."""
EVAL_PAYLOAD_BYTES = 16 * 1024
"""Of each elidable output, this head is read for probes and the state card's salient lines."""
MAX_PLAN_SOURCE_BYTES = 512 * 1024 * 1024
"""A transcript above this size is not planned (it is read whole into memory)."""

# --- Config file, session selection, external strategy command (adapters) ---
CONFIG_MAX_BYTES = 64 * 1024
"""config.toml larger than this is refused (the reference's bound)."""
CONFIG_TEXT_MAX_CHARS = 256
"""A free-form config string (ui theme, key binding, preset description) is at most this long."""
CONFIG_KEYMAP_MAX = 256
"""[ui.keymap] holds at most this many bindings."""
ERROR_MAX_CHARS = 400
"""A CLI error line is cut to this many characters (what it quotes is not worth 5 KB)."""
SELECTOR_MAX_CHARS = 4096
"""A session selector (id prefix or path) is at most this many characters."""
SELECT_LIST_MAX = 5
"""An ambiguous selector's error lists at most this many matches, then an ellipsis."""
EXTERNAL_MAX_STDOUT_BYTES = 1024 * 1024
EXTERNAL_MAX_STDERR_BYTES = 1024 * 1024
EXTERNAL_DEFAULT_TIMEOUT_SECS = 30.0
EXTERNAL_MAX_TIMEOUT_SECS = 600.0
EXTERNAL_MAX_ARGS = 64
"""A configured external command has at most this many argv entries."""
EXTERNAL_STDERR_EXCERPT_CHARS = 200
"""A failed command's error quotes at most this much of its last stderr line."""
PLUGIN_MANIFEST_MAX_BYTES = 64 * 1024
"""A plugin manifest (gobtui-plugin.json) larger than this is refused (the reference's bound)."""
PLUGIN_MAX_FILES = 64
"""A plugin bundle declares at most this many files."""
PLUGIN_MAX_ENTRIES = 256
PLUGIN_MAX_DEPTH = 8
"""A bundle folder holds at most this many entries, nested at most this deep."""
PLUGIN_MAX_BUNDLE_BYTES = 16 * 1024 * 1024
"""The declared files of a bundle add up to at most this many bytes."""
PLUGIN_ID_MAX_CHARS = 128
"""A plugin's name, version or environment variable name is at most this long."""
PLUGIN_MAX_ENVIRONMENT = 16
"""A plugin names at most this many environment variables to be passed on to it."""
PLUGIN_MAX_STDIN_BYTES = 2 * 1024 * 1024
"""The host's bound on what a plugin reads on stdin (a manifest may set a lower one)."""

# --- vault ---
# Content-addressed snapshots (reference vault.rs / recovery.rs).
VAULT_CHUNK_BYTES = 1024 * 1024
"""Snapshots are cut into chunks of this many bytes (the last one may be shorter)."""
VAULT_TRANSCRIPT_MAX_BYTES = 512 * 1024 * 1024
"""A transcript larger than this is not snapshotted."""
VAULT_MAX_RECORDS = 100_000
"""... nor one with more physical lines than this."""
VAULT_INDEX_MAX_BYTES = 128 * 1024 * 1024
VAULT_INDEX_LINE_MAX_BYTES = 64 * 1024
VAULT_MANIFEST_MAX_BYTES = 16 * 1024 * 1024
VAULT_SESSION_ID_MAX_CHARS = 256
VAULT_LABEL_MAX_CHARS = 128
VAULT_PATH_MAX_CHARS = 4096
VAULT_SHA_PREFIX_MIN_CHARS = 4
"""A snapshot named by a prefix needs at least this many hex digits."""
VAULT_AMBIGUOUS_SHOWN = 5
"""An ambiguous prefix error lists at most this many of the snapshots it matches."""
VAULT_SEARCH_MAX_RESULTS = 50
VAULT_SEARCH_DEFAULT_RESULTS = 20
VAULT_QUERY_MIN_BYTES = 1
VAULT_QUERY_MAX_BYTES = 1024
VAULT_READ_MIN_BYTES = 4
"""A page of at least 4 bytes always holds one whole UTF-8 character."""
VAULT_READ_MAX_BYTES = 16 * 1024
VAULT_READ_DEFAULT_BYTES = 4096
VAULT_RECALL_DEFAULT_LIMIT = 20
VAULT_RECALL_MAX_LIMIT = 1000
VAULT_PRUNE_KEEP_DEFAULT = 10
VAULT_PRUNE_KEEP_MAX = 100_000
VAULT_LOCK_WAIT_SECS = 10.0
"""How long a vault command waits for another one's lock before giving up."""
STATE_LOCK_WAIT_SECS = 10.0
"""How long a read-modify-write of a state file (cursors, card index) waits for another's."""
LOCK_POLL_SECS = 0.05
"""How often a lock that is held is tried again."""
VAULT_IO_THREADS = 3
"""Chunk writes (each with its fsync) in flight at once while a snapshot streams."""
VAULT_INFLIGHT_CHUNKS = 8
"""Chunks read but not yet stored; bounds a snapshot's memory to a few MiB."""
VAULT_PREFETCH_CHUNKS = 2
"""Chunks read and verified ahead of the consumer when a snapshot is reconstructed."""

# --- publication (adapters/files/atomic.py, adapters/publish/publisher.py) ---
RECEIPT_MAX_BYTES = 64 * 1024
"""A receipt is a few hundred bytes; a larger file in its place is not read whole."""
STALE_TEMP_SECS = 3600
"""A temporary file of gobtui's older than this is an interrupted publication's leftover
(none takes an hour): the next publication in that folder removes it."""

# --- rewrite: applying a plan to transcript bytes (adapters/rewrite*.py) ---
LAST_PROMPT_MAX_CHARS = 200
"""Claude: the appended `last-prompt` record quotes at most this much of the state card."""
SESSION_ID_MAX_CHARS = 128
"""A fork's new session id is 1 to this many characters of [0-9A-Za-z-]."""

# --- verify ---
VERIFY_MAX_BYTES = 512 * 1024 * 1024
"""verify refuses (transcript_limit) a transcript larger than this."""
VERIFY_MAX_RECORDS = 100_000
"""... or with more lines than this."""
VERIFY_MAX_CONTEXT_ITEMS = 100_000
"""Codex: a replacement_history, and the effective context, hold at most this many items."""

# --- plan preview and record diff (gobtui/view_models/diff_model.py, gobtui/screens/record_diff.py) ---
DIFF_STRING_MAX_CHARS = 400
"""A JSON string longer than this is cut for display (with its length and a digest)."""
DIFF_MAX_LINES = 20_000
"""Pretty-printed lines shown per side of a record diff; the rest is left out (and said)."""
DIFF_CONTEXT_LINES = 3
"""Unchanged lines kept around each change before the rest of a run folds."""
DIFF_MATCH_BUDGET = 250_000
"""difflib matches a changed middle of at most this many line pairs (old x new); larger ones
are compared line by line (same length) or shown as one replaced block."""

# --- dashboard apply and vault screens (gobtui/controllers/publishing.py, gobtui/screens/vault*.py) ---
VAULT_VIEW_PAGE_BYTES = 16 * 1024
"""The record viewer reads one record in pages of this many bytes (read_record's maximum)."""
VAULT_VIEW_SEARCH_RESULTS = 50
"""Matching records the record browser highlights per search (search's maximum)."""
VAULT_VIEW_RECALL_LIMIT = 50
"""State cards the recall screen lists per query."""
VAULT_VIEW_PROGRESS_RECORDS = 2_000
"""The record browser reports its scan's progress every this many records."""
SHUTDOWN_GRACE_SECS = 3.0
"""Once the dashboard is closing (q, SIGHUP, SIGTERM), what a worker is still doing may hold
the process this long; then it ends anyway."""

# --- budgeted recall: context packs and deltas (core/recall_pack.py, adapters/recall/) ---
PACK_MAX_ENTITIES = 16
"""A context pack names at most this many entities ..."""
PACK_ENTITY_MIN_CHARS = 2
PACK_ENTITY_MAX_CHARS = 128
"""... each this long (one character would match nearly every card)."""
PACK_MAX_BUDGET_TOKENS = 200_000
"""A pack or delta never plans for more than a large context window holds."""
PACK_SNAPSHOTS_PER_SESSION = 3
"""The snapshots arm points at this many newest snapshots of each matching session ..."""
PACK_EVENTS_PER_SESSION = 5
"""... and the events arm at this many newest events of each."""
DELTA_MAX_ITEMS = 50
"""A delta delivers at most this many items a call (the rest: has_more)."""
CURSOR_IDLE_EXPIRY_SECS = 7 * 24 * 3600
"""A delta cursor nobody used for this long has expired: the next call says so and starts
it afresh at that moment."""
CURSOR_NAME_MAX_CHARS = 200
"""A delta caller's session id, the name of its cursor, is at most this long."""
CURSOR_KEEP_SECS = 90 * 24 * 3600
"""An expired cursor is still remembered (so its expiry can be told) for this long."""
CURSOR_MAX_ENTRIES = 10_000
"""cursors.json keeps at most this many (the least recently used go first)."""
PACK_MAX_FACTS = 64
"""Facts a pack offers at most (from the cards not packed whole); the rest count as dropped."""

# --- the MCP server (gobtui/cli/mcp_stdio.py) ---
MCP_LINE_MAX_BYTES = 4 * 1024 * 1024
"""A request line of the MCP server's stdin: an agent's calls are a few hundred bytes; a longer
line is read in pieces of this size, thrown away and answered with an error, so a client
cannot make the server hold an unbounded line."""

# --- lifecycle hooks (core/hooks.py, adapters/hooks/) ---
HOOK_STDIN_MAX_BYTES = 1024 * 1024
"""A hook payload is a few hundred bytes; a larger one is not read (and is logged)."""
HOOK_STDIN_DEADLINE_SECS = 5.0
"""A client writes its payload and closes the hook's stdin at once: a stdin still open this
long after the hook started reading is given up on (one line, exit 0), never waited out."""
HOOK_SESSION_ID_MAX_CHARS = 128
HOOK_SETTINGS_MAX_BYTES = 8 * 1024 * 1024
"""A client's settings.json or hooks.json is a few KB; a larger one is refused, not edited."""
HOOK_PACK_BUDGET_TOKENS = 1_500
"""What the post-compaction recovery message may add to the new context, pointer included."""
