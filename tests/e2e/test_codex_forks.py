"""Forks of Codex sessions, resumed by the real Codex CLI (see tests/e2e/suite.py)."""

from tests.e2e.suite import resume_test

test_codex_resumes_the_fork = resume_test("codex")
