"""Named sessions of the corpus: what the suites plan, fork and resume.

Each builder returns the session object (records, id, figures); `write` puts it where the
provider keeps it. Sizes are given as a target context in provider tokens: the session grows
until its reported context reaches it.
"""

from __future__ import annotations

from tests.builders.claude import ClaudeSession
from tests.builders.codex import CodexSession, uuid7_like
from tests.builders.common import stable_uuid
from tests.builders.text import git_status, log_lines, pytest_failure, source_listing

CRITICAL_ERROR = "AssertionError: assert 1302 == 1299 (rounding in apply_coupon)"
TASK = "Fix the failing checkout totals; do not touch the payments module."
DECISION = "Decision: we will round coupons per line item, not per order."


def claude_work_session(
    target_tokens: int, name: str = "work", session_id: str | None = None
) -> ClaudeSession:
    """A long debugging session: reads, greps, a failing test, a decision, an open task."""
    session = ClaudeSession(session_id or stable_uuid("claude", name, target_tokens))
    session.prompt(TASK)
    session.say("I'll start by reading the checkout module and running the tests.")
    _claude_work(session, target_tokens)
    session.tool("Bash", {"command": "git status"}, git_status(["shop/checkout/totals.py"]))
    session.say("TODO: update the coupon tests after the rounding change.", final=True)
    session.last_prompt()
    return session


def _claude_work(session: ClaudeSession, target_tokens: int, tag: str = "") -> None:
    """Reads, log tails, and once a failing test and a decision, until the context is near
    `target_tokens`."""
    step = 0
    while session.context_now() < target_tokens - 6_000:
        name = ["cart", "totals", "coupons", "tax"][step % 4]
        path = f"shop/checkout/{name}{tag}_{step}.py"
        session.tool(
            "Read", {"file_path": f"{session.cwd}/{path}"}, source_listing(path, 60 + step % 5 * 20)
        )
        if step % 3 == 0:
            session.tool(
                "Bash",
                {"command": "tail -n 80 logs/worker.log", "description": "Read the worker log"},
                log_lines(f"log{tag}{step}", 70),
            )
        if step % 4 == 1:  # edits of the same few files: the older ones' content is stale
            edited = f"{session.cwd}/shop/checkout/{name}{tag}.py"
            session.tool(
                "Edit",
                {
                    "file_path": edited,
                    "old_string": _code_lines("old", step, 24),
                    "new_string": _code_lines("new", step, 26),
                },
                f"The file {edited} has been updated successfully.",
            )
        if step == 2:
            session.tool(
                "Bash",
                {"command": "pytest tests/test_checkout.py -q"},
                pytest_failure("checkout", CRITICAL_ERROR),
                is_error=True,
            )
            session.say(DECISION)
        step += 1


def _code_lines(word: str, step: int, count: int) -> str:
    return "\n".join(
        f"    {word}_{step}_{n} = round(line.total * rate, {n % 3})" for n in range(count)
    )


def claude_compacted() -> ClaudeSession:
    """Compacted once by the client, then worked on past its trigger again: a plan reads only
    what follows the boundary, and a fork keeps the history before it byte for byte."""
    session = ClaudeSession(stable_uuid("claude", "compacted"))
    session.prompt(TASK)
    _claude_work(session, 120_000, "-old")
    session.compact("The coupon rounding bug is in apply_coupon; we round per line item.")
    session.prompt("Go on: the coupon tests next.")
    _claude_work(session, 180_000)
    session.say("TODO: update the coupon tests after the rounding change.", final=True)
    session.last_prompt()
    return session


def claude_interrupted() -> ClaudeSession:
    """Ends on a tool_use with no tool_result: the user interrupted the call."""
    session = claude_work_session(40_000, "interrupted")
    session.records.pop()  # the last-prompt
    session.call("Bash", {"command": "pytest -x", "description": "Run the whole suite"})
    return session


def claude_continued() -> ClaudeSession:
    """The first record's parentUuid names a uuid of another file (a continued session)."""
    session = ClaudeSession(stable_uuid("claude", "continued"))
    session.parent = stable_uuid("claude", "the-earlier-file", 1)
    session.prompt("Continue with the coupon rounding from yesterday.")
    for step in range(12):
        session.tool(
            "Read",
            {"file_path": f"{session.cwd}/shop/coupons_{step}.py"},
            source_listing(f"shop/coupons_{step}.py", 80),
        )
    session.say("The rounding happens in apply_coupon.", final=True)
    session.last_prompt()
    return session


def claude_leafless() -> ClaudeSession:
    """2.1.97 and later: last-prompt records carry lastPrompt and sessionId, no leafUuid."""
    session = claude_work_session(40_000, "leafless")
    session.records.pop()
    session.last_prompt(leaf=False)
    return session


def claude_1m(target_tokens: int = 419_860) -> ClaudeSession:
    """A 1M-context session whose model id carries no [1m] marker."""
    session = claude_work_session(60_000, "one-million")
    session.base_tokens += target_tokens - session.context_now()
    session.say("Done with this pass.", final=True)
    return session


def claude_one_million(target_tokens: int = 419_860) -> ClaudeSession:
    """A 1M-context session: a model the client gives 1M (no [1m] marker in its id), usage
    far above 200k."""
    session = ClaudeSession(stable_uuid("claude", "one-million"), model="claude-opus-4-7")
    session.prompt(TASK)
    step = 0
    while session.context_now() < 60_000:
        session.tool(
            "Read",
            {"file_path": f"{session.cwd}/shop/big_{step}.py"},
            source_listing(f"shop/big_{step}.py", 120),
        )
        step += 1
    session.base_tokens += target_tokens - session.context_now()  # a long, cached prefix
    session.say("Done with this pass.", final=True)
    session.last_prompt()
    return session


def codex_work_session(target_tokens: int, name: str = "work") -> CodexSession:
    """A long Codex session: shell reads, a failing test run, patches, a decision."""
    session = CodexSession(uuid7_like(f"codex:{name}:{target_tokens}"))
    session.meta()
    session.turn(TASK)
    _codex_work(session, target_tokens)
    session.answer("TODO: update the coupon tests after the rounding change.")
    return session


def _codex_work(session: CodexSession, target_tokens: int, tag: str = "") -> None:
    """Shell reads, patches, and once a failing test run and a decision, until the context is
    near `target_tokens`."""
    step = 0
    while session.context_now() < target_tokens - 4_000:
        path = f"api/orders/{['cart', 'totals', 'coupons'][step % 3]}{tag}_{step}.py"
        session.reason(f"**Reading {path}**")
        session.shell(f"sed -n 1,200p {path}", source_listing(path, 90, 1))
        if step % 4 == 1:
            session.patch(  # patches of the same few files: the older ones are stale
                f"{session.cwd}/api/orders/{['cart', 'totals', 'coupons'][step % 3]}{tag}.py",
                "\n".join(f"-    old_{n} = 1\n+    new_{n} = 2" for n in range(30 + step % 20)),
            )
        if step == 3:
            session.shell(
                "pytest tests/test_orders.py -q",
                pytest_failure("orders", CRITICAL_ERROR),
                exit_code=1,
            )
            session.answer(DECISION)
            session.turn("Go on.")
        step += 1


def codex_compacted() -> CodexSession:
    """Compacted once by the client (a local compaction: its replacement history), then
    worked on past its threshold again: a plan reads session_meta and what follows the
    compaction; the fork keeps the history before it byte for byte."""
    session = CodexSession(uuid7_like("codex:compacted"))
    session.meta()
    session.turn(TASK)
    _codex_work(session, 150_000, "-old")
    session.compact("The coupon rounding bug is in apply_coupon; we round per line item.", (TASK,))
    session.turn("Go on: the coupon tests next.")
    _codex_work(session, 250_000)
    session.answer("TODO: update the coupon tests after the rounding change.")
    return session


def codex_reasoning_heavy() -> CodexSession:
    """Many turns of big encrypted reasoning over small outputs: what Codex adds for the
    reasoning of earlier turns keeps even a cut fork over its threshold."""
    session = CodexSession(uuid7_like("codex:reasoning-heavy"))
    session.meta()
    step = 0
    while session.context_now() < 150_000:
        session.turn(f"Step {step}: keep going with the coupon rounding.")
        session.reason(f"**Planning step {step}**", encrypted_bytes=12_000)
        session.shell(
            f"sed -n 1,200p api/step_{step}.py", source_listing(f"api/step_{step}.py", 60)
        )
        session.answer(f"Step {step} done.")
        step += 1
    return session
