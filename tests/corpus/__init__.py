"""The project's own transcript corpus: deterministic Claude Code and Codex sessions built in
code, in the shapes real files hold (docs: transcript-formats.md), so the suite needs no file
from outside the repository. The genuine transcripts of ../shared/fixtures are used besides,
when present."""
