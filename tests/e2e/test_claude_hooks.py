"""gobtui's lifecycle hooks in the real Claude Code: installed with `gobtui install-hooks`,
run by the client itself when it compacts a session on resume (over its threshold)."""

from __future__ import annotations

import hashlib
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
    resume_claude,
)

POINTER = "gobtui: the transcript as it was before this compaction is snapshot"


def test_claude_runs_the_hooks_a_compaction_is_snapshotted_and_the_context_gets_a_pointer(
    clients: Clients, tmp_path: Path
) -> None:
    home = Home(tmp_path)
    session = sessions.claude_work_session(180_000)  # the client compacts it on resume
    path = session.write(home.claude / "projects")
    os.utime(path, (OLD, OLD))
    original = path.read_bytes()
    settings = install_hooks(home, "claude")
    assert {"PreCompact", "SessionStart"} <= set(settings["hooks"])

    resumed = resume_claude(clients, home, session.session_id)
    assert resumed.finished.returncode == 0, resumed.finished.first_error()
    assert resumed.compacted, "the client did not compact: the hooks had nothing to do"

    vault = Vault(hook_data_dir(home) / "vault")
    labels = {entry.strategy: entry for entry in vault.history(session.session_id)}
    assert "pre-compact" in labels, labels
    # the file as the client had it when it began compacting: the original and its new turn
    kept = vault.read_bytes(labels["pre-compact"].sha256)
    assert kept.startswith(original) and len(kept) > len(original)
    assert hashlib.sha256(kept).hexdigest() == labels["pre-compact"].source_sha256
    # SessionStart(compact) fired after the compaction: its pointer reached the model
    assert "post-compact" in labels, labels
    pre_sha = labels["pre-compact"].sha256
    after = [r for r in resumed.requests if POINTER in "\n".join(history_blocks(r))]
    assert after and not any(is_compaction(r) for r in after)
    assert f"gobtui search-snapshot {pre_sha}" in "\n".join(history_blocks(after[-1]))
