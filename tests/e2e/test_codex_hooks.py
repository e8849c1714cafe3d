"""gobtui's lifecycle hooks in the real Codex CLI: installed into hooks.json with
`gobtui install-hooks`, run by the client when it compacts a resumed session over its
threshold. Codex runs a new hook only once the user trusts it (/hooks); the suite, which has
no user, passes --dangerously-bypass-hook-trust for that one run."""

from __future__ import annotations

import os
from pathlib import Path

from gobtui.adapters.vault.vault import Vault
from tests.builders import sessions
from tests.e2e.cases import OLD
from tests.e2e.clients import Clients
from tests.e2e.harness import (
    Home,
    history_blocks,
    hook_data_dir,
    install_hooks,
    is_compaction,
    resume_codex,
)

POINTER = "gobtui: the transcript as it was before this compaction is snapshot"


def test_codex_runs_the_hooks_a_compaction_is_snapshotted(clients: Clients, tmp_path: Path) -> None:
    home = Home(tmp_path)
    session = sessions.codex_work_session(250_000)  # the client compacts it on resume
    path = session.write(home.codex / "sessions")
    os.utime(path, (OLD, OLD))
    original = path.read_bytes()
    settings = install_hooks(home, "codex")
    assert {"PreCompact", "SessionStart"} <= set(settings["hooks"])

    resumed = resume_codex(
        clients, home, session.session_id, "gpt-5.2-codex", "--dangerously-bypass-hook-trust"
    )
    assert resumed.finished.returncode == 0, resumed.finished.first_error()
    assert resumed.compacted, "the client did not compact: the hooks had nothing to do"

    data = hook_data_dir(home)
    entries = {e.strategy: e for e in Vault(data / "vault").history(session.session_id)}
    assert "pre-compact" in entries, (
        entries,
        (data / "hooks.log").read_text() if (data / "hooks.log").exists() else "",
    )
    kept = Vault(data / "vault").read_bytes(entries["pre-compact"].sha256)
    assert kept.startswith(original)
    # SessionStart(compact) fired after the compaction: its pointer reached the model
    assert "post-compact" in entries, sorted(map(str, entries))
    after = [r for r in resumed.requests if POINTER in "\n".join(history_blocks(r))]
    assert after and not any(is_compaction(r) for r in after)
    sha = entries["pre-compact"].sha256
    assert f"gobtui search-snapshot {sha}" in "\n".join(history_blocks(after[-1]))
