"""Deterministic text for built transcripts: source listings, logs, test runs, diffs.

Words come from fixed lists picked by a seeded counter, so the same call gives the same text
on every machine; the shapes (line-numbered reads, pytest failures, git status) are what tool
outputs in real sessions look like.
"""

from __future__ import annotations

import hashlib

_WORDS = [
    "cart",
    "order",
    "invoice",
    "payment",
    "refund",
    "ledger",
    "basket",
    "coupon",
    "shipment",
    "stock",
    "price",
    "tax",
    "customer",
    "session",
    "token",
    "retry",
    "queue",
    "worker",
    "cache",
    "index",
    "report",
    "batch",
    "schedule",
    "export",
]
_VERBS = [
    "load",
    "save",
    "compute",
    "apply",
    "validate",
    "render",
    "fetch",
    "merge",
    "build",
    "parse",
]


def _pick(seed: str, n: int, options: tuple[str, ...] | list[str]) -> str:
    digest = hashlib.sha256(f"{seed}:{n}".encode()).digest()
    return options[digest[0] % len(options)]


def source_listing(path: str, lines: int, start: int = 1) -> str:
    """A Read tool's view of a source file: numbered lines (Claude's `N→` form)."""
    out = []
    for number in range(start, start + lines):
        noun = _pick(path, number, _WORDS)
        verb = _pick(path, number * 7, _VERBS)
        if number % 9 == 1:
            body = f"def {verb}_{noun}(self, {noun}_id: int) -> dict:"
        elif number % 9 == 2:
            body = f'    """{verb.capitalize()} the {noun} and its {_pick(path, number, _WORDS)} rows."""'
        else:
            body = (
                f"    {noun} = self.{verb}_{_pick(path, number + 3, _WORDS)}({noun}_id)  # {number}"
            )
        out.append(f"{number:>6}\u2192{body}")
    return "\n".join(out)


def log_lines(seed: str, lines: int) -> str:
    out = []
    for number in range(lines):
        noun = _pick(seed, number, _WORDS)
        out.append(
            f"12:{number // 60:02d}:{number % 60:02d}.{number * 37 % 1000:03d} [info] "
            f"{noun} worker processed batch {number} in {number * 13 % 97} ms"
        )
    return "\n".join(out)


def pytest_failure(test: str, error: str, lines: int = 40) -> str:
    body = [f"tests/test_{test}.py::test_{test}_{n} PASSED" for n in range(lines)]
    return "\n".join(
        [
            "============================= test session starts =============================",
            *body,
            f"tests/test_{test}.py::test_{test}_totals FAILED",
            "=================================== FAILURES ===================================",
            f"    def test_{test}_totals():",
            ">       assert order.total == 1299",
            f"E       {error}",
            f"tests/test_{test}.py:88: {error.split(':')[0]}",
            "=========================== short test summary info ============================",
            f"FAILED tests/test_{test}.py::test_{test}_totals - {error}",
            f"==================== 1 failed, {lines} passed in 2.31s ====================",
        ]
    )


def git_status(files: list[str]) -> str:
    return "\n".join(
        [
            "On branch main",
            "Changes not staged for commit:",
            '  (use "git add <file>..." to update what will be committed)',
            *[f"\tmodified:   {name}" for name in files],
        ]
    )
