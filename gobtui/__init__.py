"""gobtui: a dashboard for the context windows of Claude Code and Codex sessions."""

__version__ = "0.1.0"
