"""The one synthetic transcript builder of the suite: built in code, deterministic, in the
shapes real files hold (docs: transcript-formats.md), never a client's own file (those are
tests/corpus/driven and ../shared/fixtures).

- claude.ClaudeSession / codex.CodexSession: a session record by record, whose usage grows
  with its content; `.records` (dicts), `.text()` (the file's text), `.write(home)` (the file,
  where the client keeps it). claude.envelope / codex.record: one record of the same shape;
  claude.user / assistant, codex.item / message / call / output: bare records for hand-made
  cases.
- common.as_jsonl / write_jsonl: records as the bytes of a file, and that file.
- sessions, hostile, stand_ins: the named sessions the suites plan, fork and resume.
- generated: hypothesis strategies for whole files of either provider.
- items: in-memory Transcripts of parsed items, for the core tests (no file, no parse).
"""
