"""Small hand-made and generated transcripts for the planning tests."""

from __future__ import annotations

from hypothesis import strategies as st

from gobtui.core.model import ItemKind, Provider, SessionSummary, Transcript, TranscriptItem


def item(
    line: int,
    kind: ItemKind = ItemKind.TOOL_RESULT,
    tokens: int = 100,
    elidable: int | None = None,
    label: str = "bash",
    summary: str | None = None,
    parts: int = 1,
    active: bool = True,
    sha: str | None = None,
    tool_use_ids: tuple[str, ...] = (),
    paths: tuple[str, ...] = (),
    file_view: bool = False,
    failed: bool = False,
) -> TranscriptItem:
    return TranscriptItem(
        line_index=line,
        kind=kind,
        est_tokens=tokens,
        active=active,
        elidable_bytes=elidable,
        elidable_parts=parts if elidable else 0,
        label=label,
        summary=summary,
        payload_sha256=sha,
        tool_use_ids=tool_use_ids,
        paths=paths,
        file_view=file_view,
        failed=failed,
    )


def output(
    line: int,
    n_bytes: int = 4000,
    label: str = "bash",
    summary: str | None = None,
    sha: str | None = None,
    tool_use_ids: tuple[str, ...] = (),
    parts: int = 1,
    paths: tuple[str, ...] = (),
    file_view: bool = False,
    failed: bool = False,
) -> TranscriptItem:
    """An elidable tool output of `n_bytes` (est_tokens = bytes/4 plus a little framing)."""
    return item(
        line,
        ItemKind.TOOL_RESULT,
        n_bytes // 4 + 10,
        n_bytes,
        label,
        summary,
        parts=parts,
        sha=sha,
        tool_use_ids=tool_use_ids,
        paths=paths,
        file_view=file_view,
        failed=failed,
    )


def transcript(
    items: list[TranscriptItem],
    context: int | None = None,
    provider: Provider = Provider.CLAUDE,
) -> Transcript:
    summary = None
    if context is not None:
        summary = SessionSummary(
            provider=provider, session_id="s", path="/x/s.jsonl", context_tokens=context
        )
    return Transcript(
        provider=provider, session_id="s", path="/x/s.jsonl", items=items, summary=summary
    )


def turns(n: int, out_bytes: int = 4000, provider: Provider = Provider.CLAUDE) -> Transcript:
    """n turns of user prompt, assistant tool call, tool output; context = sum of estimates."""
    items: list[TranscriptItem] = []
    line = 0
    for i in range(n):
        items.append(item(line, ItemKind.USER, 20, label="user", summary=f"step {i} please"))
        items.append(
            item(
                line + 1,
                ItemKind.TOOL_CALL,
                30,
                label="bash",
                summary=f"bash(ls /src/m{i})",
                tool_use_ids=(f"t{i}",),
            )
        )
        items.append(
            output(
                line + 2,
                out_bytes,
                summary=f"bash(ls /src/m{i}) => file{i}.py",
                tool_use_ids=(f"t{i}",),
            )
        )
        line += 3
    return transcript(items, provider=provider)


_KINDS = [
    ItemKind.USER,
    ItemKind.ASSISTANT,
    ItemKind.TOOL_CALL,
    ItemKind.TOOL_RESULT,
    ItemKind.TOOL_RESULT,
    ItemKind.TOOL_RESULT,
    ItemKind.REASONING,
    ItemKind.SYSTEM,
]
_LABELS = ["bash", "read_file", "grep", "Read", "edit", "web"]
_SUMMARIES = [
    None,
    "ok",
    "error: build failed in src/a.rs",
    "TODO: wire the cache",
    "do not touch the vault",
    "we decided to use orjson instead of json",
    "listing /home/u/src",
    "plain words here",
]


@st.composite
def transcripts(draw: st.DrawFn, max_items: int = 40) -> Transcript:
    """Random transcripts: increasing lines with gaps, some dead, some elidable outputs."""
    n = draw(st.integers(0, max_items))
    line = 0
    items: list[TranscriptItem] = []
    for i in range(n):
        line += draw(st.integers(1, 3))
        kind = draw(st.sampled_from(_KINDS))
        active = draw(st.booleans()) or draw(st.booleans())
        tokens = draw(st.integers(0, 3000)) if active else 0
        elidable = None
        if kind is ItemKind.TOOL_RESULT and draw(st.integers(0, 3)) > 0:
            elidable = draw(st.integers(257, 12_000))
        items.append(
            item(
                line,
                kind,
                tokens,
                elidable,
                draw(st.sampled_from(_LABELS)),
                draw(st.sampled_from(_SUMMARIES)),
                parts=draw(st.integers(1, 3)),
                active=active,
                sha=draw(st.sampled_from([None, "a", "b", "c"])),
                tool_use_ids=(f"t{i}",) if elidable else (),
            )
        )
    use_context = draw(st.booleans())
    context = draw(st.integers(0, 200_000)) if use_context else None
    provider = draw(st.sampled_from([Provider.CLAUDE, Provider.CODEX]))
    return transcript(items, context, provider)
