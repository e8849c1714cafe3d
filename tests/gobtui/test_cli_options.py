"""Where options go and what detect reads: options before the command count the same as after
it, detect honours config.toml, and unreadable homes are said out loud."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from gobtui.cli.dispatch import _first_command, build_parser, main
from tests.adapters.test_discovery import needs_non_root
from tests.adapters.test_discovery_unreadable import deny

SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"
ROLLOUT = "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def homes(tmp_path: Path, fixtures_dir: Path) -> tuple[Path, Path]:
    """A Claude home with the spotter session and a Codex home with one rollout."""
    claude = tmp_path / "claude"
    codex = tmp_path / "codex"
    project = claude / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    shutil.copyfile(
        fixtures_dir / "claude" / f"marot__spotter__{SPOTTER}.jsonl", project / f"{SPOTTER}.jsonl"
    )
    day = codex / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / "codex" / f"madshn__localpush__{ROLLOUT}", day / ROLLOUT)
    return claude, codex


def home_args(homes: tuple[Path, Path]) -> list[str]:
    return ["--claude-home", str(homes[0]), "--codex-home", str(homes[1])]


def rows(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict[str, object]]:
    assert main(argv) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert isinstance(data, list)
    return data


# -- 1. options before the command ------------------------------------------------------------


def test_a_missing_home_before_the_command_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["--claude-home", str(missing), "detect"]) == 2
    assert capsys.readouterr().err == f"gobtui: error: claude home {missing} does not exist\n"


@pytest.mark.parametrize(
    ("argv", "named", "command"),
    [
        (["--theme", "nord", "detect"], "--theme", "detect"),
        (["--demo", "--no-watch", "vault"], "--demo, --no-watch", "vault"),
        (["--auto-demo", "plan", "x"], "--auto-demo", "plan"),
        (["--no-cache", "eval", "x"], "--no-cache", "eval"),
        (["--theme", "", "detect"], "--theme", "detect"),
    ],
)
def test_dashboard_options_with_a_command_are_refused(
    argv: list[str], named: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """They would do nothing there: a usage error says so rather than ignoring them."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{named}: for the dashboard only, not with `{command}`" in err


def test_home_options_before_detect_match_those_after_it(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before = rows(capsys, [*home_args(homes), "--all", "detect", "--json"])
    after = rows(capsys, ["detect", "--json", "--all", *home_args(homes)])
    assert len(before) == 2 and before == after


def test_live_secs_before_detect_counts_and_after_it_wins(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    minute_ago = time.time() - 60
    for path in [*homes[0].rglob("*.jsonl"), *homes[1].rglob("*.jsonl")]:
        os.utime(path, (minute_ago, minute_ago))
    base = ["detect", "--json", "--all", *home_args(homes)]
    assert [r["live"] for r in rows(capsys, base)] == [True, True]  # default: live for 180 s
    assert [r["live"] for r in rows(capsys, ["--live-secs", "30", *base])] == [False, False]
    later = ["--live-secs", "30", *base, "--live-secs", "900"]
    assert [r["live"] for r in rows(capsys, later)] == [True, True]


def test_no_cache_before_detect_counts(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cursors = Path(os.environ["GOBTUI_CACHE_DIR"]) / "cursors"
    rows(capsys, ["--no-cache", *home_args(homes), "detect", "--json"])
    assert not cursors.exists()
    rows(capsys, [*home_args(homes), "detect", "--json"])
    assert cursors.exists()  # so the check above could fail


def test_home_options_before_plan_are_searched(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*home_args(homes), "--all", "plan", SPOTTER[:8], "--trigger", "20000"]
    assert main([*argv, "--floor", "5000"]) in (0, 1)  # 1: a plan admission refused
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"Claude {SPOTTER}")


def test_first_command_skips_option_values() -> None:
    parser = build_parser(only_detect=True)
    assert _first_command(["--claude-home", "DIR", "detect"], parser) == "detect"
    assert _first_command(["--claude-home=DIR", "detect"], parser) == "detect"
    assert _first_command(["--th", "detect", "plan", "x"], parser) == "plan"  # --theme detect
    assert _first_command(["--all", "--live-secs", "5", "detect"], parser) == "detect"
    assert _first_command(["--all"], parser) is None


def test_detect_after_home_options_stays_lean(
    homes: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reduced parser is still chosen, so no other command module is imported; nor is
    the config machinery when there is no config file, nor pydantic (its import alone was a
    third of a warm `detect`), cold or warm."""
    monkeypatch.setenv("GOBTUI_CACHE_DIR", str(tmp_path / "cache"))
    code = (
        "import sys\n"
        "from gobtui.cli.dispatch import COMMAND_MODULES, main\n"
        f"assert main({[*home_args(homes), 'detect', '--json']!r}) == 0\n"
        "heavy = ['gobtui.cli.' + m for m in COMMAND_MODULES]\n"
        "heavy += ['gobtui.adapters.config.config_file', 'pydantic']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    for _ in ("cold", "warm"):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
        )
        assert done.stdout.splitlines()[-1] == "[]"
    assert (tmp_path / "cache").is_dir()


def test_the_board_starts_without_the_config_machinery_when_there_is_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's settings without a config.toml are an empty file's (theme, keymap,
    alerts, each session's trigger on the board), and neither the config machinery nor
    pydantic is imported for them, nor by the app itself."""
    from gobtui.cli.dispatch import _ui_settings
    from gobtui.core.board import BoardPolicy, build_row
    from gobtui.core.model import Provider, SessionSummary

    monkeypatch.setenv("GOBTUI_CONFIG", str(tmp_path / "absent.toml"))
    absent = _ui_settings()
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("GOBTUI_CONFIG", str(tmp_path / "empty.toml"))
    empty = _ui_settings()
    assert (absent.theme, absent.keymap, absent.alerts) == (empty.theme, empty.keymap, empty.alerts)
    assert absent.trigger is None and empty.trigger is not None
    for provider in Provider:
        summary = SessionSummary(provider=provider, session_id="s", path="/x/s.jsonl")
        by_default = build_row(summary, BoardPolicy(), now=0.0).trigger_tokens
        assert (
            by_default
            == build_row(summary, BoardPolicy(session_trigger=empty.trigger), 0.0).trigger_tokens
        )
    code = (
        "import sys\n"
        "from gobtui.cli.dispatch import _ui_settings\n"
        "import gobtui.app\n"
        "_ui_settings()\n"
        "heavy = ['gobtui.adapters.config.config_file', 'pydantic']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    env = {**os.environ, "GOBTUI_CONFIG": str(tmp_path / "absent.toml")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.splitlines()[-1] == "[]"


# -- 2. detect reads config.toml --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[policy\ntrigger_tokens = 1\n", "invalid TOML"),
        ("[policy]\ntrigger_tokens = -5\n", "trigger_tokens"),
    ],
)
def test_detect_refuses_a_bad_config_like_plan(
    homes: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    needle: str,
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    monkeypatch.setenv("GOBTUI_CONFIG", str(config))
    assert main(["detect", *home_args(homes)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gobtui: error: ") and err.count("\n") == 1 and needle in err
    assert main(["presets"]) == 2  # the same file, the same verdict
    assert capsys.readouterr().err == err


def test_without_a_config_file_the_board_default_is_the_policy_default(tmp_path: Path) -> None:
    """detect skips loading a config file that does not exist (start-up cost): that is only
    right while the board's default trigger is what the missing file resolves to."""
    from gobtui.adapters.config.config_file import load_config
    from gobtui.core.board import BoardPolicy
    from gobtui.core.model import Provider

    missing = load_config(tmp_path / "absent.toml")
    for provider in Provider:
        resolved = missing.resolve(provider, "any-session", None, None)
        assert resolved.policy.effective_trigger() == BoardPolicy().trigger_tokens


def test_detect_reports_the_configured_trigger(
    homes: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[policy]\ntrigger_tokens = 100000\n")
    monkeypatch.setenv("GOBTUI_CONFIG", str(config))
    found = rows(capsys, ["detect", "--json", "--all", *home_args(homes)])
    assert len(found) == 2 and all(r["trigger_tokens"] == 100_000 for r in found)


# -- 3. unreadable homes ----------------------------------------------------------------------


def test_an_unreadable_named_home_is_an_error(
    homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deny(monkeypatch, "scandir", homes[0])
    assert main(["--all", "detect", *home_args(homes)]) == 2
    expected = f"gobtui: error: claude home {homes[0]} cannot be read: permission denied\n"
    assert capsys.readouterr().err == expected


def test_an_unreadable_directory_inside_a_home_is_a_warning(
    homes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = homes[0] / "projects"
    deny(monkeypatch, "scandir", projects)
    found = rows(capsys, ["detect", "--json", "--all", "--no-cache", *home_args(homes)])
    assert [r["provider"] for r in found] == ["codex"]
    warning = f"gobtui: warning: cannot read {projects}: permission denied\n"
    assert main(["detect", "--all", "--no-cache", *home_args(homes)]) == 0
    assert capsys.readouterr().err == warning
    # plan cannot find the session either, but now says why.
    assert main([*home_args(homes), "plan", SPOTTER[:8]]) == 2
    assert capsys.readouterr().err.splitlines() == [
        warning.strip(),
        f"gobtui: error: no session matches {SPOTTER[:8]!r}",
    ]


@needs_non_root
def test_chmod_000_homes(homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    projects = homes[0] / "projects"
    for locked, code, needle in [
        (projects, 0, f"gobtui: warning: cannot read {projects}: permission denied"),
        (homes[0], 2, f"gobtui: error: claude home {homes[0]} cannot be read"),
    ]:
        locked.chmod(0)
        try:
            assert main(["detect", "--all", *home_args(homes)]) == code
        finally:
            locked.chmod(0o755)
        assert needle in capsys.readouterr().err
