"""Forks of Claude Code sessions, resumed by the real Claude Code (see tests/e2e/suite.py)."""

from tests.e2e.suite import resume_test

test_claude_resumes_the_fork = resume_test("claude")
