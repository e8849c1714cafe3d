"""Running a preset's plugin: check the bundle, compare it with the pin, run, check again.

Nothing is executed unless the bundle passes `plugin check` and its manifest's sha256 is the
one the preset trusts; the bundle is checked again after the run, so a plugin that changed
itself (or was changed) while it ran yields no plan. What it proposes then passes the same
gates as any external proposal (adapters.planning.external).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...core.edits import CompactionPlan, NoPlan
from ...core.limits import PLUGIN_MAX_STDIN_BYTES
from ...core.model import Transcript
from ...core.policy import PolicyConfig
from ...core.strategies.external import AGENTIC_ID
from ..config.config_file import ExternalCommand
from .external import ExternalError, ExternalErrorCode, Launch, run_external
from .plugin import BundleCheck, PluginError, check_bundle


def run_plugin(
    external: ExternalCommand,
    transcript: Transcript,
    source_sha256: str,
    policy: PolicyConfig,
    strategy_id: str = AGENTIC_ID,
) -> CompactionPlan | NoPlan:
    """The plan a preset's pinned plugin proposes (or NoPlan); ExternalError otherwise."""
    assert external.plugin is not None
    if external.plugin_sha256 is None or not external.trusted:
        raise ExternalError(
            ExternalErrorCode.NOT_TRUSTED,
            "plugin not trusted: pin it with trusted_plugin_sha256 in its preset",
        )
    check = _checked(external.plugin)
    manifest = check.manifest
    if manifest.sha256 != external.plugin_sha256:
        raise ExternalError(
            ExternalErrorCode.NOT_TRUSTED,
            f"plugin {manifest.name or manifest.path.name!r} is not the one trusted: its "
            f"manifest_sha256 is {manifest.sha256}, the preset pins "
            f"{external.plugin_sha256}; review it, then pin the new value",
        )
    if AGENTIC_ID not in manifest.strategies:
        raise ExternalError(ExternalErrorCode.INVALID_PLUGIN, "plugin offers no agentic strategy")
    provider = transcript.provider.value
    if manifest.providers is not None and provider not in manifest.providers:
        raise ExternalError(
            ExternalErrorCode.INVALID_PLUGIN,
            f"plugin {manifest.name!r} is for {', '.join(manifest.providers)} sessions, "
            f"not {provider}",
        )
    launch = Launch(
        argv=[manifest.program(), *manifest.command[1:]],
        cwd=manifest.root,
        environment={k: os.environ[k] for k in manifest.environment if k in os.environ},
        summaries=manifest.summaries,
        max_stdin_bytes=min(manifest.max_stdin_bytes, PLUGIN_MAX_STDIN_BYTES),
        max_stdout_bytes=manifest.max_stdout_bytes,
        source=f"plugin {manifest.name} {manifest.version}",
    )
    result = run_external(
        launch,
        transcript,
        source_sha256,
        policy,
        trusted=True,
        timeout_secs=min(external.timeout_secs, manifest.timeout_secs),
        strategy_id=strategy_id,
    )
    after = _checked(external.plugin).manifest.sha256
    if after != external.plugin_sha256:
        raise ExternalError(
            ExternalErrorCode.PLUGIN_CHANGED,
            f"plugin {manifest.name!r} changed while it ran; its proposal is dropped",
        )
    return result


def _checked(path: str) -> BundleCheck:
    try:
        check = check_bundle(Path(path))
    except PluginError as error:
        raise ExternalError(ExternalErrorCode.INVALID_PLUGIN, str(error)) from None
    if not check.ok:
        raise ExternalError(
            ExternalErrorCode.INVALID_PLUGIN,
            f"plugin {path} does not check ({len(check.problems)} problems, first: "
            f"{check.problems[0]}); see gobtui plugin check",
        )
    return check
