"""The demo home: deterministic Claude Code and Codex sessions written to a folder."""
