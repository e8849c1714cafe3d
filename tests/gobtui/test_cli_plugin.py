"""Plugin bundles and the agentic strategy through the real `gobtui` executable: `plugin
check` and `plugin inspect` on bundles written here, a preset naming a pinned bundle that
plans with `agentic`, refusals that run nothing (the plugin's marker file stays absent), and
the host's gates over what the plugin proposes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.planning.load import load_session
from gobtui.core.admission import protected_tail_start
from gobtui.core.model import Provider
from tests.gobtui.corpus_home import LOW, SESSION, source

__all__ = ["source"]  # a fixture, used by name

GOBTUI = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "gobtui"
TIMEOUT = 60
PLUGIN = f"""#!{sys.executable}
import json, os, pathlib, sys
data = json.load(sys.stdin)
pathlib.Path(os.environ["PLUGIN_SEEN"]).write_text(json.dumps({{"stdin": data, "env": dict(os.environ)}}))
reply = json.loads(pathlib.Path(os.environ["PLUGIN_REPLY"]).read_text())
reply["source_sha256"] = data["source_sha256"]
sys.stdout.write(json.dumps(reply))
"""
"""The plugin: records what it was given (its marker), answers what PLUGIN_REPLY holds."""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_bundle(folder: Path, **fields: Any) -> str:
    """A bundle in `folder` (plan.py and its manifest); the manifest's sha256."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "plan.py"
    script.write_text(PLUGIN)
    script.chmod(0o755)
    manifest = {
        "schema_version": 1,
        "name": "tiny",
        "version": "1.0.0",
        "description": "a test plugin",
        "command": ["plan.py"],
        "strategies": ["agentic"],
        "files": {"plan.py": sha(script.read_bytes())},
        "environment": ["PLUGIN_SEEN", "PLUGIN_REPLY"],
        "summaries": True,
        "timeout_secs": 20,
    } | fields
    raw = json.dumps(manifest, indent=2).encode()
    (folder / "gobtui-plugin.json").write_bytes(raw)
    return sha(raw)


@pytest.fixture
def env(tmp_path: Path, source: Path) -> dict[str, str]:
    """The environment of a `gobtui` run: the corpus session's Claude home, private data
    folders, and where the plugin records its input and reads its reply."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GOBTUI_", "CODEX_"))}
    return clean | {
        "HOME": str(tmp_path / "home"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "GOBTUI_DATA_DIR": str(tmp_path / "data"),
        "GOBTUI_CACHE_DIR": str(tmp_path / "cache"),
        "GOBTUI_CONFIG": str(tmp_path / "config.toml"),
        "PLUGIN_SEEN": str(tmp_path / "seen.json"),
        "PLUGIN_REPLY": str(tmp_path / "reply.json"),
        "GOBTUI_TEST_SECRET": "must-not-reach-the-plugin",
    }


def gobtui(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GOBTUI), *argv], env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def configure(env: dict[str, str], body: str) -> None:
    Path(env["GOBTUI_CONFIG"]).write_text(body)


def reply(env: dict[str, str], edits: list[dict[str, Any]]) -> None:
    Path(env["PLUGIN_REPLY"]).write_text(json.dumps({"edits": edits}))


def ran(env: dict[str, str]) -> bool:
    return Path(env["PLUGIN_SEEN"]).exists()


def lines_of(source: Path) -> tuple[list[int], int]:
    """(the elidable lines before the protected tail, the first protected line) of the
    session under the run's policy."""
    transcript = load_session(source, Provider.CLAUDE).transcript
    tail = protected_tail_start(transcript, 2)
    assert tail is not None
    free = [i.line_index for i in transcript.items if i.elidable and i.line_index < tail]
    assert free
    return free, tail


# check and inspect ---------------------------------------------------------------------------


def test_check_accepts_a_good_bundle_and_prints_its_pin(
    env: dict[str, str], tmp_path: Path
) -> None:
    pin = write_bundle(tmp_path / "bundle")
    done = gobtui(env, "plugin", "check", str(tmp_path / "bundle"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "ok: tiny 1.0.0 (gobtui-plugin.json, schema 1) offers agentic",
        f"manifest_sha256 {pin}",
    ]
    # The manifest file itself names the bundle too.
    named = gobtui(env, "plugin", "check", str(tmp_path / "bundle" / "gobtui-plugin.json"))
    assert named.returncode == 0 and pin in named.stdout
    assert not ran(env)  # checking runs nothing


def test_the_references_bundle_is_read(env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "reference"
    folder.mkdir()
    (folder / "editor.py").write_text(PLUGIN)
    (folder / "editor.py").chmod(0o755)
    manifest = {
        "protocol_version": 1,
        "id": "ref-editor",
        "version": "2.0.0",
        "executable": "editor.py",
        "files": {"editor.py": sha((folder / "editor.py").read_bytes())},
        "args": [],
        "capabilities": ["strategy"],
        "provider_ids": ["claude_code"],
        "timeout_ms": 5000,
        "max_input_bytes": 2097152,
        "max_output_bytes": 1048576,
        "environment": [],
    }
    (folder / "gobstopper-plugin.json").write_text(json.dumps(manifest))
    done = gobtui(env, "plugin", "check", str(folder))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: ref-editor 2.0.0 (gobstopper-plugin.json, schema 1)")
    shown = json.loads(gobtui(env, "plugin", "inspect", str(folder), "--json").stdout)
    assert (shown["dialect"], shown["command"], shown["providers"]) == (
        "gobstopper",
        ["editor.py"],
        ["claude"],
    )
    assert (shown["timeout_secs"], shown["summaries"]) == (5.0, False)  # no read_content


def _mutate(case: str, folder: Path) -> None:
    """Break a good bundle one way."""
    manifest = json.loads((folder / "gobtui-plugin.json").read_text())
    if case == "schema":
        manifest["schema_version"] = 2
    elif case == "unknown_field":
        manifest["shell"] = "sh -c"
    elif case == "strategy":
        manifest["strategies"] = ["agentic", "telepathy"]
    elif case == "hash":
        (folder / "plan.py").write_text(PLUGIN + "# changed after review\n")
    elif case == "undeclared":
        (folder / "helper.py").write_text("")
    elif case == "not_executable":
        (folder / "plan.py").chmod(0o644)
    elif case == "command":
        manifest["command"] = ["bin/missing.py"]
    elif case == "escape":
        outside = folder.parent / "outside.py"
        outside.write_text("")
        (folder / "link.py").symlink_to(outside)
        manifest["files"]["link.py"] = sha(b"")
    elif case == "traversal":
        manifest["files"]["../outside.py"] = sha(b"")
    (folder / "gobtui-plugin.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("schema", "schema_version must be 1"),
        ("unknown_field", "unknown field 'shell'"),
        ("strategy", "unknown strategy 'telepathy'"),
        ("hash", "'plan.py' does not match its sha256"),
        ("undeclared", "'helper.py' is in the bundle but not declared in files"),
        ("not_executable", "'plan.py' is not executable"),
        ("command", "'bin/missing.py' is not a declared file"),
        ("escape", "'link.py' is not a regular file"),
        ("traversal", "'../outside.py' is not a relative path inside the bundle"),
    ],
)
def test_check_names_each_problem(
    env: dict[str, str], tmp_path: Path, case: str, problem: str
) -> None:
    folder = tmp_path / "bundle"
    write_bundle(folder)
    _mutate(case, folder)
    done = gobtui(env, "plugin", "check", str(folder))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.splitlines()
    assert all(line.startswith(f"{folder / 'gobtui-plugin.json'}: ") for line in lines)
    assert any(problem in line for line in lines), lines


def test_every_problem_is_its_own_line(env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    write_bundle(folder, schema_version=3, name="no spaces allowed", strategies=[])
    (folder / "stray").write_text("")
    done = gobtui(env, "plugin", "check", str(folder))
    assert done.returncode == 1
    problems = [line.split(": ", 1)[1] for line in done.stderr.splitlines()]
    assert problems == [
        "schema_version must be 1",
        "name must be 1..128 characters of A-Z a-z 0-9 . _ -",
        'strategies must be a non-empty list (["agentic"])',
        "'stray' is in the bundle but not declared in files",
    ]
    missing = gobtui(env, "plugin", "check", str(tmp_path / "nothing-here"))
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    not_json = tmp_path / "broken"
    not_json.mkdir()
    (not_json / "gobtui-plugin.json").write_text("{")
    broken = gobtui(env, "plugin", "check", str(not_json))
    assert broken.returncode == 1 and "manifest is not JSON" in broken.stderr


def test_inspect_shows_what_it_declares_sanitized(env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    pin = write_bundle(folder, description="\x1b]0;pwned\x07 retitles your terminal")
    text = gobtui(env, "plugin", "inspect", str(folder))
    assert text.returncode == 0, text.stderr
    assert f"manifest_sha256  {pin}" in text.stdout
    assert "name             tiny 1.0.0" in text.stdout
    assert "command          plan.py" in text.stdout
    assert "strategies       agentic" in text.stdout
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout
    assert "retitles your terminal" in text.stdout
    shown = json.loads(gobtui(env, "plugin", "inspect", str(folder), "--json").stdout)
    assert shown["manifest_sha256"] == pin and shown["valid"] is True
    assert shown["description"].startswith("\x1b]0;pwned")  # exact in JSON, escaped on the wire
    assert shown["environment"] == ["PLUGIN_SEEN", "PLUGIN_REPLY"]
    assert list(shown["files"]) == ["plan.py"]
    _mutate("undeclared", folder)
    invalid = gobtui(env, "plugin", "inspect", str(folder), "--json")
    assert invalid.returncode == 1
    assert json.loads(invalid.stdout)["problems"] == [
        "'helper.py' is in the bundle but not declared in files"
    ]
    assert not ran(env)


# a preset naming a plugin ---------------------------------------------------------------------


def preset(folder: Path, pin: str | None) -> str:
    trust = "" if pin is None else f'trusted_plugin_sha256 = "{pin}"\n'
    return f'[presets.mine]\nplugin = "{folder}"\n{trust}keep_recent_tool_outputs = 2\n'


def plan(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return gobtui(env, "plan", SESSION, "--preset", "mine", *LOW, "--json")


def test_a_trusted_plugin_plans_with_agentic(
    env: dict[str, str], tmp_path: Path, source: Path
) -> None:
    folder = tmp_path / "bundle"
    configure(env, preset(folder, write_bundle(folder)))
    free, _tail = lines_of(source)
    reply(env, [{"op": "elide", "line_indexes": free}])
    done = plan(env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["strategy"] == "agentic"
    assert [(e["op"], e["line_indexes"]) for e in out["edits"]] == [("elide", free)]
    assert "plugin tiny 1.0.0" in out["rationale"]
    assert out["context_tokens_after"] < out["context_tokens_before"]
    seen = json.loads(Path(env["PLUGIN_SEEN"]).read_text())
    # A cleared environment: PATH and the variables the manifest names, nothing else.
    assert "GOBTUI_TEST_SECRET" not in seen["env"]
    assert {"PATH", "PLUGIN_SEEN", "PLUGIN_REPLY"} <= set(seen["env"])


def test_stdin_carries_item_summaries_and_usage(
    env: dict[str, str], tmp_path: Path, source: Path
) -> None:
    folder = tmp_path / "bundle"
    configure(env, preset(folder, write_bundle(folder)))
    reply(env, [])  # defers
    done = plan(env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reason_code"] == "empty_external_edits"
    given = json.loads(Path(env["PLUGIN_SEEN"]).read_text())["stdin"]
    transcript = load_session(source, Provider.CLAUDE).transcript
    summaries = [item.summary for item in transcript.items]
    assert any(summaries)
    assert [item["summary"] for item in given["items"]] == summaries
    assert [item["label"] for item in given["items"]] == [i.label for i in transcript.items]
    usage = given["usage"]
    assert usage["context_tokens"] == transcript.context_tokens()
    assert set(usage) >= {
        "lifetime_input_tokens",
        "lifetime_cached_tokens",
        "model_context_window",
    }
    assert usage["lifetime_input_tokens"] > 0 and usage["model_context_window"] > 0
    assert (given["operation"], given["strategy"], given["provider_id"]) == (
        "strategy",
        "agentic",
        "claude_code",
    )
    # A plugin that does not declare summaries is not sent them (they are transcript text).
    Path(env["PLUGIN_SEEN"]).unlink()
    configure(env, preset(folder, write_bundle(folder, summaries=False)))
    assert plan(env).returncode == 0
    quiet = json.loads(Path(env["PLUGIN_SEEN"]).read_text())["stdin"]
    assert all(item["summary"] is None for item in quiet["items"])
    assert quiet["usage"] == usage


def test_an_unpinned_plugin_is_refused_and_nothing_runs(
    env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "bundle"
    write_bundle(folder)
    reply(env, [])
    configure(env, preset(folder, None))
    done = plan(env)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert "presets.mine.plugin (line 2) runs a program: add trusted_plugin_sha256" in done.stderr
    assert not ran(env)


def test_a_plugin_not_the_one_pinned_is_refused_and_nothing_runs(
    env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "bundle"
    pin = write_bundle(folder)
    reply(env, [])
    configure(env, preset(folder, "0" * 64))
    done = plan(env)
    assert done.returncode == 1
    assert f"its manifest_sha256 is {pin}" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not ran(env)
    # Reviewed once, then changed: the old pin no longer runs it.
    configure(env, preset(folder, pin))
    write_bundle(folder, timeout_secs=25)
    changed = plan(env)
    assert changed.returncode == 1 and "is not the one trusted" in changed.stderr
    # A declared file changed under an unchanged manifest: the bundle does not check.
    write_bundle(folder)
    (folder / "plan.py").write_text(PLUGIN + "import shutil\n")
    edited = plan(env)
    assert edited.returncode == 1 and "does not match its sha256" in edited.stderr
    assert not ran(env)


def test_agentic_needs_a_preset_that_runs_something(env: dict[str, str]) -> None:
    configure(env, "")
    done = gobtui(env, "plan", SESSION, "--strategy", "agentic", *LOW)
    assert done.returncode == 2
    assert "agentic runs a preset's command or plugin" in done.stderr
    configure(env, '[presets.mine]\nplugin = "relative/bundle"\ntrusted_plugin_sha256 = "ab"\n')
    bad = gobtui(env, "plan", SESSION, "--preset", "mine", *LOW)
    assert bad.returncode == 2 and "must be an absolute path" in bad.stderr


# the host's gates -----------------------------------------------------------------------------


def test_host_validation_bounds_what_a_plugin_proposes(
    env: dict[str, str], tmp_path: Path, source: Path
) -> None:
    folder = tmp_path / "bundle"
    configure(env, preset(folder, write_bundle(folder)))
    free, tail = lines_of(source)
    # A card and nothing elided grows the context: no plan.
    reply(env, [{"op": "inject_digest", "digest": {"goal": "keep going"}}])
    grows = plan(env)
    assert grows.returncode == 0, grows.stderr
    assert json.loads(grows.stdout)["reason_code"] == "external_nonreducing_plan"
    # Protected recent output is the host's to keep.
    reply(env, [{"op": "elide", "line_indexes": [*free, tail]}])
    protected = plan(env)
    assert protected.returncode == 1
    assert "refused by admission" in protected.stderr and "protected" in protected.stderr
    # agentic proposes file edits; a provider control is not a proposal's to make.
    reply(env, [{"op": "provider_compact", "control": "/compact"}])
    control = plan(env)
    assert control.returncode == 1
    assert "file edits only" in control.stderr


def test_a_trusted_command_plans_with_agentic_too(
    env: dict[str, str], tmp_path: Path, source: Path
) -> None:
    script = tmp_path / "editor.py"
    script.write_text(PLUGIN)
    free, _tail = lines_of(source)
    reply(env, [{"op": "elide", "line_indexes": free}])
    # A command gets only PATH: env(1) in its argv says where to record and read.
    argv = ["/usr/bin/env", *(f"{k}={env[k]}" for k in ("PLUGIN_SEEN", "PLUGIN_REPLY"))]
    argv += [sys.executable, str(script)]
    configure(
        env,
        f'[presets.mine]\nstrategy = "agentic"\ncommand = {json.dumps(argv)}\n'
        "trusted_legacy_command = true\nkeep_recent_tool_outputs = 2\n",
    )
    done = plan(env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["strategy"] == "agentic" and out["edits"][0]["line_indexes"] == free
    given = json.loads(Path(env["PLUGIN_SEEN"]).read_text())["stdin"]
    assert any(item["summary"] for item in given["items"])  # a trusted command sees them
