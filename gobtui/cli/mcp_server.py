"""`gobtui mcp`: what gobtui knows, for an agent, over stdio (the official `mcp` SDK).

Every tool reads; none writes a transcript, the vault or the events, and none runs a command
(a preset's external strategy is refused here). Answers are ids, numbers, closed codes and
paths: no transcript text. A session's title is its first prompt, so it is left out; a state
card shows its files, provider and count, its other fields (tool output, what the user and the
assistant said) only with --allow-transcript-content, and the tools that read a snapshot's
records exist only with it.

A tool's failure (an unknown session, a bad argument) is a tool error with one line; a
malformed request is the SDK's protocol error, and a line that is no JSON-RPC message at all
is answered with its own (gobtui.cli.mcp_stdio). stdout is the protocol: nothing here prints.
"""

from __future__ import annotations

import argparse
import inspect
import time
from collections.abc import Callable
from typing import Any, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from mcp.types import ToolAnnotations

from gobtui import __version__
from gobtui.adapters.config.config_file import ConfigError
from gobtui.adapters.config.paths import data_dir
from gobtui.adapters.files.private_fs import PrivateError
from gobtui.adapters.planning.load import PlanningError
from gobtui.adapters.recall.verbs import heartbeat, pack
from gobtui.adapters.sessions.select import load_summaries
from gobtui.adapters.vault.recovery import read_record, search
from gobtui.adapters.vault.recovery import recall as recall_cards
from gobtui.adapters.vault.vault import Vault
from gobtui.cli.dispatch import CliError
from gobtui.cli.recall import since_arg
from gobtui.core.board import BoardPolicy, SortKey, build_board, sort_rows
from gobtui.core.edits import NoPlan
from gobtui.core.limits import HOT_SECS
from gobtui.core.policy import POLICY_PROVIDER_NAMES, QuotaPressure, policy_provider
from gobtui.core.recall.model import REMOTE_CALLER, RecallError
from gobtui.core.report import detect_row
from gobtui.core.strategies.external import EXTENSION_IDS
from gobtui.core.vault.errors import VaultError

QUOTA_PRESSURES = tuple(q.value for q in QuotaPressure)
MAX_SESSIONS = 500
"""list_sessions answers with at most this many rows (newest first)."""


class ToolError(SdkToolError):
    """A tool's refusal, as one line the caller can act on (the SDK passes its text on; any
    other exception reaches the caller as a bare "Error executing tool")."""


_HOMES: dict[str, Any] = {"claude_home": None, "codex_home": None}
"""The homes `gobtui [--claude-home D] mcp [--codex-home D]` was given (build_server)."""
_CONTENT = {"allowed": False}
"""--allow-transcript-content: without it a card's fields that are transcript text (tool
output, what the user and the assistant said) are withheld from recall, context_pack and delta."""


def _args(**more: Any) -> argparse.Namespace:
    """The CLI's options as a tool call has them: the server's homes, no overrides."""
    fields: dict[str, Any] = {
        **_HOMES,
        "all": True,
        "live_secs": HOT_SECS,
        "strategy": None,
        "preset": None,
        "trigger": None,
        "floor": None,
    }
    fields.update(more)
    return argparse.Namespace(**fields)


def _refused(error: Exception) -> ToolError:
    return ToolError(" ".join(str(error).split())[:300])


def _vault() -> Vault:
    return Vault(data_dir() / "vault")


def policy_check(
    provider: str,
    context_tokens: int,
    session_active: bool = False,
    session_id: str = "",
    session: str = "",
    quota_pressure: str = "",
    window: int = 0,
    preset: str = "",
) -> dict[str, Any]:
    """What to do with a session at `context_tokens`: nothing, the provider's own compaction
    (a live session), or a transcript strategy that prepares a fork (an idle one).
    `provider` is claude (or claude_code), codex or devin; Devin's policy is numeric, and over
    its trigger the answer is always Devin's own /compact (gobtui never reads its sessions).
    `session_id` (or `session`) applies that session's config layer; `quota_pressure` (low,
    normal, high) moves the trigger as the CLI's option does; `window`, the session's
    context window, lowers a trigger the client would beat; `preset` names a preset."""
    from gobtui.cli.common import resolve_policy
    from gobtui.services.adaptive import checked_policy

    chosen = policy_provider(provider)  # claude_code and devin as the reference names them
    if chosen is None:
        known = ", ".join(POLICY_PROVIDER_NAMES)
        raise ToolError(f"unknown provider {provider!r} (one of {known})")
    if context_tokens < 0:
        raise ToolError("context_tokens must be 0 or more")
    if quota_pressure and quota_pressure not in QUOTA_PRESSURES:
        raise ToolError(f"quota_pressure is one of {', '.join(QUOTA_PRESSURES)}")
    if window < 0:
        raise ToolError("window must be 0 (unknown) or more")
    named = session_id or session
    try:
        args = _args(preset=preset or None)
        resolved = resolve_policy(args, chosen, named or None, window=window or None)
    except CliError as error:
        raise _refused(error) from None
    policy = resolved.policy
    if quota_pressure:
        policy = policy.model_copy(update={"quota_pressure": QuotaPressure(quota_pressure)})
    found = checked_policy(
        chosen, named or None, context_tokens, session_active, policy, resolved.strategy,
        window or None,
    )  # fmt: skip
    return found.model_dump(mode="json")


def list_sessions(
    provider: str = "",
    over_trigger_only: bool = False,
    all_sessions: bool = False,
    all: bool = False,
) -> list[dict[str, Any]]:
    """Every local session of the last 7 days (`all_sessions` or `all`: of any age), newest
    first: id, provider, context and window, trigger, status, live or not (titles are left
    out: they are the user's first prompt)."""
    summaries = load_summaries(_homes(), all_sessions=all_sessions or all)
    if provider:
        summaries = [s for s in summaries if s.provider.value == provider]
    from gobtui.services import policies

    try:
        trigger = policies.current().trigger
    except ConfigError as error:
        raise _refused(error) from None
    rows = build_board(summaries, BoardPolicy(session_trigger=trigger), time.time())
    rows = [
        row
        for row in sort_rows(rows, SortKey.ACTIVITY)
        if row.over_trigger or not over_trigger_only
    ]
    return [
        {k: v for k, v in detect_row(row).items() if k != "title"} for row in rows[:MAX_SESSIONS]
    ]


def _homes() -> Any:
    from gobtui.cli.common import homes_of

    try:
        return homes_of(_args())
    except CliError as error:
        raise _refused(error) from None


def plan(session: str, strategy: str = "", trigger: int = 0, floor: int = 0) -> dict[str, Any]:
    """The plan the session's policy (or `strategy`) makes now, in memory: before and after,
    the saving, what its edits do and whether admission takes it. `trigger` and `floor`
    (tokens) override the policy's, as the CLI's options do. Nothing is written."""
    from gobtui.cli.common import ExternalRefused, plan_target, resolve_target

    if strategy in EXTENSION_IDS:
        raise ToolError(f"{strategy} runs a command: it is not offered over MCP")
    if trigger < 0 or floor < 0:
        raise ToolError("trigger and floor are token counts: 0 (the policy's) or more")
    try:
        args = _args(strategy=strategy or None, trigger=trigger or None, floor=floor or None)
        target = resolve_target(args, session, confined=True)
        # Refused from the resolved policy, before planning: nothing here runs a command.
        planned = plan_target(args, target, run_external=False)
    except ExternalRefused:
        raise ToolError(
            "the session's policy runs an external command: not offered over MCP"
        ) from None
    except (CliError, PlanningError) as error:
        raise _refused(error) from None
    result = planned.outcome.result
    base = {"session_id": target.session_id, "provider": target.provider.value}
    if isinstance(result, NoPlan):
        return base | {"status": "no_plan", **result.model_dump(mode="json")}
    admission = planned.outcome.admission
    ops: dict[str, int] = {}
    for edit in result.edits:
        ops[edit.op] = ops.get(edit.op, 0) + 1
    return base | {
        "status": "plan",
        "strategy": result.strategy,
        "live": planned.live,
        "context_tokens_before": result.context_tokens_before,
        "context_tokens_after": result.context_tokens_after,
        "est_savings": result.est_savings,
        "edits": ops,
        "admitted": bool(admission and admission.admitted),
        "admission_codes": [code.value for code in admission.codes] if admission else [],
    }


def verify(session: str) -> dict[str, Any]:
    """The structural checks a resume depends on; findings never quote the transcript."""
    from gobtui.cli.common import resolve_target
    from gobtui.cli.verify import _verify_file

    try:
        target = resolve_target(_args(), session, confined=True)
        return _verify_file(target.path, target.provider).model_dump(mode="json")
    except CliError as error:
        raise _refused(error) from None


def history(session: str) -> list[dict[str, Any]]:
    """The vault's snapshots of a session (id or prefix), newest first."""
    if not session.strip():
        raise ToolError("name a session id or prefix")
    try:
        entries = _vault().entries()
    except VaultError as error:
        raise _refused(error) from None
    return [e.model_dump(mode="json") for e in entries if e.session_id.startswith(session)]


def _snapshot_id(snapshot: str) -> str:
    if len(snapshot.strip()) < 4:
        raise ToolError("give at least 4 characters of a snapshot id")
    try:
        return _vault().find(snapshot.strip()).sha256
    except VaultError as error:
        raise _refused(error) from None


def show(snapshot: str = "", target: str = "") -> dict[str, Any]:
    """One snapshot's index entry (`snapshot`, or `target`: an id or prefix): what it holds,
    not its records."""
    sha = _snapshot_id(snapshot or target)
    try:
        entry = next(e for e in _vault().entries() if e.sha256 == sha)
    except (VaultError, StopIteration) as error:
        raise _refused(error) from None
    return entry.model_dump(mode="json")


def diff(a: str, b: str) -> dict[str, Any]:
    """Two snapshots compared record by record: counts and record types, no content."""
    try:
        return _vault().diff(_snapshot_id(a), _snapshot_id(b)).model_dump(mode="json")
    except VaultError as error:
        raise _refused(error) from None


def recall(
    query: str = "", session_id: str = "", limit: int = 10, session: str = "", sha: str = ""
) -> dict[str, Any]:
    """The state cards gobtui wrote into its forks (the error, the open task, the decision),
    newest first, those holding `query` when given, of one session (`session_id` or
    `session`: its whole id) or one snapshot (`sha`: an id or prefix) when given. A card's
    goal and summary quote the user's prompt, so they are left out, as titles are; without
    --allow-transcript-content so is every field but its files, provider and count (and a
    query matches only those)."""
    if not 1 <= limit <= 100:
        raise ToolError("limit must be 1 to 100")
    snapshot = _snapshot_id(sha) if sha else None
    try:
        found = recall_cards(
            _vault(), query or None, limit, session_id or session or None,
            with_prompt=False, with_text=_CONTENT["allowed"], snapshot=snapshot,
        )  # fmt: skip
    except VaultError as error:
        raise _refused(error) from None
    prompt_fields = {"results": {"__all__": {"card": {"goal", "summary"}}}}
    return found.model_dump(mode="json", exclude=prompt_fields)


def context_pack(entities: list[str], budget_tokens: int) -> dict[str, Any]:
    """What the vault knows about `entities` (session ids, projects, files, terms), packed into
    `budget_tokens`: state cards first, then facts from earlier cards, snapshot pointers and
    events. Inject `text`; `dropped_count` says what did not fit. World-only: no goals, no
    paths; a card's fields other than its files only with --allow-transcript-content."""
    try:
        found = pack(entities, budget_tokens, with_text=_CONTENT["allowed"])
        return found.model_dump(mode="json")
    except (RecallError, VaultError, PrivateError, OSError) as error:
        raise _refused(error) from None


def delta(
    session_id: str, budget_tokens: int, since: str = "", only_session: bool = False
) -> dict[str, Any]:
    """What is new in the vault since you last asked (snapshots with their cards, events),
    oldest first within `budget_tokens`. `session_id` is your session's: it names your
    cursor, which your first call establishes and each call advances to the newest item
    delivered; `has_more` means call again. `since`: a span (30m, 2d) or a cursor you were
    given, for a stateless read that leaves your cursor alone. `only_session`: only what the
    vault holds of the archived session `session_id` names (an id or a prefix)."""
    start: str | float | None = None
    if since.strip():
        try:
            start = since_arg(since)
        except argparse.ArgumentTypeError as error:
            raise _refused(error) from None
    try:
        return heartbeat(
            session_id,
            REMOTE_CALLER,
            budget_tokens,
            since=start,
            only_session=only_session,
            with_text=_CONTENT["allowed"],
        ).model_dump(mode="json")
    except (RecallError, VaultError, PrivateError, OSError) as error:
        raise _refused(error) from None


def search_snapshot(snapshot: str, query: str, limit: int = 20) -> dict[str, Any]:
    """Records of one snapshot holding `query` literally (transcript content: opt-in)."""
    if not query:
        raise ToolError("give a query")
    try:
        return search(_vault(), _snapshot_id(snapshot), query, limit).model_dump(mode="json")
    except VaultError as error:
        raise _refused(error) from None


def read_snapshot(
    snapshot: str, record: int, offset: int = 0, max_bytes: int = 16_384
) -> dict[str, Any]:
    """A page of one archived record (transcript content, untrusted: opt-in)."""
    try:
        page = read_record(_vault(), _snapshot_id(snapshot), record, offset, max_bytes)
    except VaultError as error:
        raise _refused(error) from None
    return page.model_dump(mode="json")


class StrictServer(MCPServer):
    """An MCPServer whose tools refuse an argument they do not take (the SDK drops it, and a
    caller would get an answer to a question it did not ask), naming it and what is taken."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.accepted: dict[str, tuple[str, ...]] = {}

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().add_tool(fn, *args, **kwargs)
        self.accepted[fn.__name__] = tuple(inspect.signature(fn).parameters)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        taken = self.accepted.get(name)
        unknown = sorted(set(arguments) - set(taken)) if taken is not None else []
        if unknown:
            raise ToolError(
                f"{name} takes no argument {', '.join(map(repr, unknown))} "
                f"(it takes {', '.join(taken or ()) or 'none'})"
            )
        return await super().call_tool(name, arguments, context)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport, reading a stdin that answers what is not JSON-RPC
        (gobtui.cli.mcp_stdio) instead of dropping it; stdout is the SDK's, claimed as it does."""
        from mcp.server.stdio import stdio_server

        from gobtui.cli.mcp_stdio import CheckedStdin, claimed_stdin

        with claimed_stdin() as raw:
            stdin = CheckedStdin(raw)
            async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
                stdin.answer_on(write_stream)
                server = self._lowlevel_server  # what MCPServer.run_stdio_async runs too
                await server.run(read_stream, write_stream, server.create_initialization_options())


def build_server(
    allow_transcript_content: bool = False, homes: dict[str, Any] | None = None
) -> MCPServer:
    _HOMES.update(homes or {})
    _CONTENT["allowed"] = allow_transcript_content
    server = StrictServer(
        "gobtui",
        version=__version__,
        instructions="Read-only: what gobtui knows about local Claude Code and Codex sessions.",
    )
    tools: list[Callable[..., Any]] = [
        policy_check,
        list_sessions,
        recall,
        history,
        show,
        diff,
        plan,
        verify,
        context_pack,
        delta,
    ]
    if allow_transcript_content:
        tools += [search_snapshot, read_snapshot]
    reads = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    for tool in tools:
        server.add_tool(tool, annotations=reads)
    return server


def print_config() -> list[str]:
    """The lines that register this server with Claude Code, Codex and Devin."""
    return [
        "# Claude Code",
        "claude mcp add gobtui -- gobtui mcp",
        "# Codex (~/.codex/config.toml)",
        "[mcp_servers.gobtui]",
        'command = "gobtui"',
        'args = ["mcp"]',
        "# Devin (policy_check with provider devin answers /compact)",
        "devin mcp add -s user gobtui -- gobtui mcp",
    ]
