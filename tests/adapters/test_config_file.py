"""config.toml: layers, presets, and errors that name the key and the line to fix."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gobtui.adapters.config.config_file import (
    ConfigError,
    ConfigErrorCode,
    ExternalCommand,
    LoadedConfig,
    load_config,
)
from gobtui.adapters.config.config_keys import dotted, key_lines
from gobtui.adapters.config.paths import config_path
from gobtui.core.alerts import AlertChannel, AlertEvent
from gobtui.core.limits import CONFIG_MAX_BYTES, MAX_POLICY_TOKENS
from gobtui.core.model import Provider
from gobtui.core.policy import PRESETS, NativeProvider, PolicyConfig, QuotaPressure
from tests.corpus.spec_config import SPEC_CONFIG

LAYERED = """\
# every layer sets the trigger, so the winner shows the order
[policy]
trigger_tokens = 200_000
floor_tokens = 30_000
min_savings_tokens = 10_000
strategy = "scored"

[provider.codex]
trigger_tokens = 180_000
keep_recent_tool_outputs = 4

[presets.fast]
trigger = 120_000
min_savings_tokens = 20_000
description = "compact early"

[sessions."sess-1"]
trigger_tokens = 100_000
"""


def write(tmp_path: Path, text: str, name: str = "config.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    error = caught.value
    assert "\n" not in str(error)
    return error


def preset_error(tmp_path: Path, text: str, name: str = "x") -> ConfigError:
    """A preset's mistake: the file loads, the preset fails where a command names it."""
    config = load_config(write(tmp_path, text))
    config.resolve(Provider.CLAUDE, None, None, None)  # a command without it runs
    with pytest.raises(ConfigError) as caught:
        config.resolve(Provider.CLAUDE, None, name, None)
    error = caught.value
    assert "\n" not in str(error)
    return error


def test_missing_file_is_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path / "absent.toml")
    assert not config.found
    resolved = config.resolve(Provider.CLAUDE, "x", None, None)
    assert resolved.policy == PolicyConfig()
    assert resolved.strategy == "auto"
    assert resolved.layers == ["defaults"]
    assert config.ui_theme is None and config.ui_keymap == {}


def test_default_path_follows_the_environment(tmp_path: Path) -> None:
    # The autouse fixture points GOBTUI_CONFIG at a temporary file.
    config_path().write_text("[policy]\ntrigger_tokens = 123456\n", encoding="utf-8")
    config = load_config()
    assert config.found and config.path == config_path()
    assert config.resolve(Provider.CODEX, None, None, None).policy.trigger_tokens == 123_456


def test_layers_apply_policy_provider_preset_session(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, LAYERED))
    policy_only = config.resolve(Provider.CLAUDE, None, None, None)
    assert policy_only.policy.trigger_tokens == 200_000
    assert policy_only.strategy == "scored"
    assert policy_only.layers == ["defaults", "policy"]

    provider = config.resolve(Provider.CODEX, None, None, None)
    assert provider.policy.trigger_tokens == 180_000
    assert provider.policy.keep_recent_tool_outputs == 4
    assert provider.policy.floor_tokens == 30_000  # from [policy], untouched by later layers

    preset = config.resolve(Provider.CODEX, None, "fast", None)
    assert preset.policy.trigger_tokens == 120_000
    assert preset.policy.min_savings_tokens == 20_000
    assert preset.preset == "fast"

    session = config.resolve(Provider.CODEX, "sess-1", "fast", None)
    assert session.policy.trigger_tokens == 100_000
    assert session.policy.min_savings_tokens == 20_000
    assert session.layers == [
        "defaults",
        "policy",
        "provider.codex",
        "presets.fast",
        "sessions.sess-1",
    ]

    cli = config.resolve(Provider.CODEX, "sess-1", "fast", {"trigger_tokens": 90_000, "floor": 5})
    assert (cli.policy.trigger_tokens, cli.policy.floor_tokens) == (90_000, 5)
    assert cli.layers[-1] == "overrides"


def test_an_explicit_strategy_wins_and_is_checked(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, LAYERED))
    assert config.resolve(Provider.CODEX, None, None, None, strategy="elide").strategy == "elide"
    with pytest.raises(ConfigError) as caught:
        config.resolve(Provider.CODEX, None, None, None, strategy="nope")
    assert caught.value.code is ConfigErrorCode.UNKNOWN_STRATEGY
    assert "--strategy" in str(caught.value)


@pytest.mark.parametrize("name", list(PRESETS))
def test_builtin_presets(name: str) -> None:
    resolved = LoadedConfig(Path("unused.toml")).resolve(Provider.CLAUDE, None, name, None)
    builtin = PRESETS[name]
    assert resolved.strategy == builtin.strategy
    assert resolved.policy == builtin.policy
    assert resolved.layers == ["defaults", f"built-in preset {name}"]


def test_builtin_preset_values_match_the_reference() -> None:
    config = LoadedConfig(Path("unused.toml"))
    deep = config.resolve(Provider.CODEX, None, "deep-work", None)
    assert (deep.strategy, deep.policy.trigger_tokens, deep.policy.floor_tokens) == (
        "elide",
        150_000,
        20_000,
    )
    cliff = config.resolve(Provider.CODEX, None, "cliff", None).policy
    assert (cliff.keep_recent_turns, cliff.result_max_bytes, cliff.keep_recent_tool_outputs) == (
        3,
        500,
        0,
    )


def test_builtin_preset_pins_only_its_own_fields(tmp_path: Path) -> None:
    text = "[policy]\ntrigger_tokens = 400000\nmin_savings_tokens = 9000\n"
    chatty = load_config(write(tmp_path, text)).resolve(Provider.CODEX, None, "chatty", None)
    assert chatty.policy.trigger_tokens == 180_000  # the preset pins this one
    assert chatty.policy.min_savings_tokens == 9_000  # ...and leaves this one alone


def test_config_preset_overrides_a_builtin_field_by_field(tmp_path: Path) -> None:
    text = '[presets.deep-work]\nfloor = 10_000\ndescription = "mine"\n'
    config = load_config(write(tmp_path, text))
    resolved = config.resolve(Provider.CLAUDE, None, "deep-work", None)
    assert resolved.strategy == "elide"  # built-in
    assert resolved.policy.trigger_tokens == 150_000  # built-in
    assert resolved.policy.floor_tokens == 10_000  # overridden
    assert resolved.layers == ["defaults", "built-in preset deep-work", "presets.deep-work"]
    assert config.preset_names()[: len(PRESETS)] == list(PRESETS)


def test_session_names_its_preset_and_the_cli_preset_wins(tmp_path: Path) -> None:
    text = '[presets.mine]\ntrigger = 111000\n[sessions.abc]\npreset = "deep-work"\n'
    config = load_config(write(tmp_path, text))
    assert config.resolve(Provider.CODEX, "abc", None, None).preset == "deep-work"
    assert config.resolve(Provider.CODEX, "abc", None, None).strategy == "elide"
    explicit = config.resolve(Provider.CODEX, "abc", "mine", None)
    assert (explicit.preset, explicit.policy.trigger_tokens) == ("mine", 111_000)


def test_command_preset(tmp_path: Path) -> None:
    text = (
        "[presets.ext]\n"
        'command = ["python3", "strategy.py", "--fast"]\n'
        "trusted_legacy_command = true\n"
        "timeout_secs = 5\n"
    )
    config = load_config(write(tmp_path, text))
    resolved = config.resolve(Provider.CODEX, None, "ext", None)
    assert resolved.strategy == "external"
    assert resolved.external_command == ExternalCommand(
        argv=["python3", "strategy.py", "--fast"],
        trusted=True,
        timeout_secs=5.0,
        source="presets.ext",
    )
    # An explicit built-in strategy drops the command.
    elide = config.resolve(Provider.CODEX, None, "ext", None, strategy="elide")
    assert elide.external_command is None


def test_ui_table(tmp_path: Path) -> None:
    text = '[ui]\ntheme = "nord"\nkeymap = { refresh = "ctrl+r", "quit app" = "q" }\n'
    config = load_config(write(tmp_path, text))
    assert config.ui_theme == "nord"
    assert config.ui_keymap == {"refresh": "ctrl+r", "quit app": "q"}
    assert config.ui_alerts.channels(AlertEvent.WAITING) == {AlertChannel.TOAST}


def test_alerts_table_overrides_an_event_and_an_empty_list_turns_it_off(tmp_path: Path) -> None:
    text = '[ui.alerts]\nwaiting = ["toast", "tmux", "bell"]\ntrigger = []\n'
    alerts = load_config(write(tmp_path, text)).ui_alerts
    assert alerts.channels(AlertEvent.WAITING) == set(AlertChannel)
    assert alerts.channels(AlertEvent.TRIGGER) == frozenset()


def test_quota_pressure_and_threshold(tmp_path: Path) -> None:
    text = '[policy]\nquota_pressure = "high"\nkeep_score_threshold = 0.5\nadaptive = true\n'
    policy = load_config(write(tmp_path, text)).resolve(Provider.CODEX, None, None, None).policy
    assert policy.quota_pressure is QuotaPressure.HIGH
    assert policy.keep_score_threshold == 0.5 and policy.adaptive


# Errors: each names the file, the key and its line ------------------------------------------


def test_syntax_error_keeps_tomllib_position(tmp_path: Path) -> None:
    error = load_error(tmp_path, "[policy]\ntrigger_tokens = 1\n[provider\n")
    assert error.code is ConfigErrorCode.SYNTAX
    assert error.line == 3
    assert "line 3" in str(error) and str(tmp_path) in str(error)


def test_unknown_key_names_key_and_line(tmp_path: Path) -> None:
    error = load_error(tmp_path, "# typo below\n[policy]\ntriger_tokens = 1000\n")
    assert error.code is ConfigErrorCode.UNKNOWN_KEY
    assert (error.key, error.line) == ("policy.triger_tokens", 3)
    assert "unknown key policy.triger_tokens (line 3)" in str(error)
    assert "did you mean trigger_tokens?" in str(error)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("[polcy]\n", "polcy", 1),
        ("[provider.claude]\ntrigger_tokens = 1\n", "provider.claude", 1),
        ("\n[ui]\ncolour = 'x'\n", "ui.colour", 3),
        ('[sessions."a.b"]\n\nfoo = 1\n', 'sessions."a.b".foo', 3),
        ("[provider]\ncodex.trigger_tokens = 5\ncodex.bogus = 1\n", "provider.codex.bogus", 3),
    ],
)
def test_unknown_keys_anywhere(tmp_path: Path, text: str, key: str, line: int) -> None:
    error = load_error(tmp_path, text)
    assert error.code is ConfigErrorCode.UNKNOWN_KEY
    assert (error.key, error.line) == (key, line)
    assert f"{key} (line {line})" in str(error)


def test_an_unknown_key_in_a_preset_fails_only_that_preset(tmp_path: Path) -> None:
    text = '[presets.x]\nstrategy = "elide"\ntrigger_tokens = 9\ncolor = 1\n'
    error = preset_error(tmp_path, text)
    assert error.code is ConfigErrorCode.UNKNOWN_KEY
    assert (error.key, error.line) == ("presets.x.color", 4)
    assert "presets.x.color (line 4)" in str(error)


@pytest.mark.parametrize(
    ("text", "code", "key", "line"),
    [
        (
            "[policy]\ntrigger_tokens = -5\n",
            ConfigErrorCode.OUT_OF_RANGE,
            "policy.trigger_tokens",
            2,
        ),
        (
            f"[policy]\n\ntrigger_tokens = {MAX_POLICY_TOKENS + 1}\n",
            ConfigErrorCode.OUT_OF_RANGE,
            "policy.trigger_tokens",
            3,
        ),
        ("[policy]\nfloor_tokens = 1.5\n", ConfigErrorCode.BAD_TYPE, "policy.floor_tokens", 2),
        ("[policy]\nadaptive = 1\n", ConfigErrorCode.BAD_TYPE, "policy.adaptive", 2),
        (
            "[policy]\nmin_interval_secs = 86401\n",
            ConfigErrorCode.OUT_OF_RANGE,
            "policy.min_interval_secs",
            2,
        ),
        (
            "[provider.codex]\nkeep_score_threshold = 1.5\n",
            ConfigErrorCode.OUT_OF_RANGE,
            "provider.codex.keep_score_threshold",
            2,
        ),
        (
            '[policy]\nquota_pressure = "extreme"\n',
            ConfigErrorCode.INVALID_VALUE,
            "policy.quota_pressure",
            2,
        ),
        ("[policy]\ntrigger_tokens = true\n", ConfigErrorCode.BAD_TYPE, "policy.trigger_tokens", 2),
        ('[ui]\ntheme = "a\\u0007b"\n', ConfigErrorCode.INVALID_VALUE, "ui.theme", 2),
        ("[ui]\nkeymap = { quit = 1 }\n", ConfigErrorCode.BAD_TYPE, "ui.keymap.quit", 2),
        (
            '[ui.alerts]\nwaiting = ["popup"]\n',
            ConfigErrorCode.INVALID_VALUE,
            "ui.alerts.waiting",
            2,
        ),
        ('[ui.alerts]\nwaiting = "bell"\n', ConfigErrorCode.INVALID_VALUE, "ui.alerts.waiting", 2),
        ("[ui.alerts]\ncrashed = []\n", ConfigErrorCode.UNKNOWN_KEY, "ui.alerts.crashed", 2),
        ("policy = 3\n", ConfigErrorCode.BAD_TYPE, "policy", 1),
    ],
)
def test_bad_values_name_key_and_line(
    tmp_path: Path, text: str, code: ConfigErrorCode, key: str, line: int
) -> None:
    error = load_error(tmp_path, text)
    assert error.code is code
    assert (error.key, error.line) == (key, line)
    assert f"{key} (line {line})" in str(error)
    assert str(error).startswith(str(tmp_path / "config.toml") + ": ")


@pytest.mark.parametrize(
    ("text", "code", "key", "line"),
    [
        (
            "[presets.x]\ncommand = 3\ntrusted_legacy_command = true\n",
            ConfigErrorCode.BAD_TYPE,
            "presets.x.command",
            2,
        ),
        (
            "[presets.x]\ncommand = 'python3 \"x.py'\ntrusted_legacy_command = true\n",
            ConfigErrorCode.INVALID_VALUE,
            "presets.x.command",
            2,
        ),
        (
            "[presets.x]\ncommand = ' '\ntrusted_legacy_command = true\n",
            ConfigErrorCode.INVALID_VALUE,
            "presets.x.command",
            2,
        ),
        (
            "[presets.x]\ncommand = []\ntrusted_legacy_command = true\n",
            ConfigErrorCode.INVALID_VALUE,
            "presets.x.command",
            2,
        ),
        (
            "[presets.x]\ncommand = ['p']\ntrusted_legacy_command = true\ntimeout_secs = 0\n",
            ConfigErrorCode.OUT_OF_RANGE,
            "presets.x.timeout_secs",
            4,
        ),
        (
            "[presets.x]\ntimeout_secs = 3\n",
            ConfigErrorCode.INVALID_VALUE,
            "presets.x.timeout_secs",
            2,
        ),
        (
            "[presets.x]\ntrigger = 200000\ntrigger_tokens = 200000\n",
            ConfigErrorCode.INVALID_VALUE,
            "presets.x.trigger_tokens",
            3,
        ),
    ],
)
def test_bad_preset_values_name_key_and_line(
    tmp_path: Path, text: str, code: ConfigErrorCode, key: str, line: int
) -> None:
    error = preset_error(tmp_path, text)
    assert error.code is code
    assert (error.key, error.line) == (key, line)
    assert f"{key} (line {line})" in str(error)
    assert str(error).startswith(str(tmp_path / "config.toml") + ": ")


def test_unknown_strategy(tmp_path: Path) -> None:
    error = load_error(tmp_path, '[policy]\nstrategy = "fastest"\n')
    assert error.code is ConfigErrorCode.UNKNOWN_STRATEGY
    assert (error.key, error.line) == ("policy.strategy", 2)
    assert "'fastest'" in str(error) and "elide" in str(error)


def test_external_strategy_needs_a_command(tmp_path: Path) -> None:
    error = load_error(tmp_path, '[policy]\nmin_savings_tokens = 0\nstrategy = "external"\n')
    assert error.code is ConfigErrorCode.UNKNOWN_STRATEGY
    assert (error.key, error.line) == ("policy.strategy", 3)


@pytest.mark.parametrize("command", ["['python3', 'x.py']", "'python3 x.py'"])
def test_command_needs_trust(tmp_path: Path, command: str) -> None:
    error = preset_error(tmp_path, f"[presets.x]\n\ncommand = {command}\n")
    assert error.code is ConfigErrorCode.UNTRUSTED_COMMAND
    assert (error.key, error.line) == ("presets.x.command", 3)
    assert "trusted_legacy_command = true" in str(error)


def test_the_spec_sample_config_loads_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    config = load_config(SPEC_CONFIG)
    claude = config.resolve(Provider.CLAUDE, None, None, None)
    assert claude.strategy == "auto"
    assert (claude.policy.trigger_tokens, claude.policy.floor_tokens) == (250_000, 40_000)
    assert (claude.policy.min_savings_tokens, claude.policy.adaptive) == (4_096, True)
    codex = config.resolve(Provider.CODEX, None, None, None)
    assert codex.policy.trigger_tokens == 200_000 and codex.layers[-1] == "provider.codex"
    devin = config.resolve(NativeProvider.DEVIN, None, None, None)
    assert (devin.policy.trigger_tokens, devin.policy.floor_tokens) == (200_000, 40_000)
    assert devin.layers == ["defaults", "policy", "provider.devin"]
    session = config.resolve(Provider.CLAUDE, "01a08d7c-…", None, None)
    assert (session.strategy, session.policy.trigger_tokens) == ("structured", 120_000)
    deep = config.resolve(Provider.CODEX, None, "deep-work", None)
    assert (deep.strategy, deep.policy.trigger_tokens, deep.policy.floor_tokens) == (
        "elide",
        150_000,
        20_000,  # the built-in preset's floor: the config pins only what it names
    )
    script = config.resolve(Provider.CLAUDE, None, "custom-script", None)
    assert script.strategy == "external"
    assert script.external_command == ExternalCommand(
        argv=["python3", str(tmp_path / "bin" / "my_compactor.py")],
        trusted=True,
        source="presets.custom-script",
    )


def test_a_string_command_is_split_into_words_without_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    text = (
        "[presets.x]\n"
        """command = "run '~/my dir/x.py' --out=~/o ~ $HOME a*b | tee log"\n"""
        "trusted_legacy_command = true\n"
    )
    command = load_config(write(tmp_path, text)).resolve(Provider.CODEX, None, "x", None)
    assert command.external_command is not None
    # Quotes group words and a leading ~ is the home; variables, globs and pipes stay words.
    assert command.external_command.argv == [
        "run",
        "/home/me/my dir/x.py",
        "--out=~/o",
        "/home/me",
        "$HOME",
        "a*b",
        "|",
        "tee",
        "log",
    ]


def test_a_bad_preset_fails_only_the_commands_that_use_it(tmp_path: Path) -> None:
    text = (
        "[policy]\ntrigger_tokens = 200_000\n\n"
        "[presets.good]\ntrigger = 100_000\n\n"
        "[presets.bad]\ntrigger = 100_000\nfloor = 100_000\n\n"
        "[presets.worse]\ncolour = 1\n"
    )
    config = load_config(write(tmp_path, text))
    assert config.resolve(Provider.CODEX, None, None, None).policy.trigger_tokens == 200_000
    assert config.resolve(Provider.CODEX, None, "good", None).policy.trigger_tokens == 100_000
    assert config.preset_names()[len(PRESETS) :] == ["good", "bad", "worse"]
    for name, key, line in (("bad", "presets.bad.floor", 9), ("worse", "presets.worse.colour", 12)):
        with pytest.raises(ConfigError) as caught:
            config.resolve(Provider.CODEX, None, name, None)
        assert (caught.value.key, caught.value.line) == (key, line)
        assert f"{key} (line {line})" in str(caught.value)
    # A session that names a broken preset cannot be shown with its policy: the file fails,
    # naming the session's key and the preset's mistake.
    error = load_error(tmp_path, text + '\n[sessions.abc]\npreset = "worse"\n')
    assert (error.key, error.line) == ("sessions.abc.preset", 15)
    assert "preset 'worse' does not load" in str(error) and "presets.worse.colour" in str(error)


def test_the_devin_table_is_a_numeric_policy(tmp_path: Path) -> None:
    text = "[provider.devin]\ntrigger_tokens = 90_000\nquota_pressure = 'high'\n"
    config = load_config(write(tmp_path, text))
    devin = config.resolve(NativeProvider.DEVIN, None, None, None).policy
    assert (devin.trigger_tokens, devin.quota_pressure) == (90_000, QuotaPressure.HIGH)
    assert config.resolve(Provider.CLAUDE, None, None, None).policy.trigger_tokens == 250_000
    for key in ("strategy = 'elide'", "adaptive = true", "drop_old_images = false"):
        error = load_error(tmp_path, f"[provider.devin]\ntrigger_tokens = 90_000\n{key}\n")
        name = key.split()[0]
        assert error.code is ConfigErrorCode.UNKNOWN_KEY
        assert (error.key, error.line) == (f"provider.devin.{name}", 3)
        assert "numeric policy" in str(error) and "/compact" in str(error)
    error = load_error(tmp_path, "[provider.devin]\nfloor_tokens = 300_000\n")
    assert (error.key, error.line) == ("provider.devin.floor_tokens", 2)


def test_command_preset_cannot_name_another_strategy(tmp_path: Path) -> None:
    text = "[presets.x]\ncommand = ['p']\ntrusted_legacy_command = true\nstrategy = 'elide'\n"
    error = preset_error(tmp_path, text)
    assert (error.key, error.line) == ("presets.x.strategy", 4)


def test_floor_at_or_above_trigger_in_one_table(tmp_path: Path) -> None:
    error = load_error(tmp_path, "[policy]\ntrigger_tokens = 50000\nfloor_tokens = 50000\n")
    assert error.code is ConfigErrorCode.FLOOR_NOT_BELOW_TRIGGER
    assert (error.key, error.line) == ("policy.floor_tokens", 3)


def test_floor_against_an_earlier_layer_blames_the_later_key(tmp_path: Path) -> None:
    # [policy] alone is fine; the codex table lowers the trigger under the floor.
    text = "[policy]\nfloor_tokens = 100000\n\n[provider.codex]\ntrigger_tokens = 90000\n"
    error = load_error(tmp_path, text)
    assert error.code is ConfigErrorCode.FLOOR_NOT_BELOW_TRIGGER
    assert (error.key, error.line) == ("provider.codex.trigger_tokens", 5)
    assert "policy.floor_tokens (line 2)" in str(error)


def test_floor_above_the_default_trigger(tmp_path: Path) -> None:
    error = load_error(tmp_path, "[policy]\nfloor_tokens = 300000\n")
    assert (error.key, error.line) == ("policy.floor_tokens", 2)
    assert "default trigger_tokens" in str(error)


def test_config_preset_over_a_builtin_is_checked_together(tmp_path: Path) -> None:
    error = preset_error(tmp_path, "[presets.deep-work]\nfloor = 160000\n", "deep-work")
    assert (error.key, error.line) == ("presets.deep-work.floor", 2)


def test_cli_override_conflict_names_the_flag(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "[policy]\ntrigger_tokens = 200000\n"))
    with pytest.raises(ConfigError) as caught:
        config.resolve(Provider.CLAUDE, None, None, {"floor_tokens": 250_000})
    error = caught.value
    assert error.code is ConfigErrorCode.FLOOR_NOT_BELOW_TRIGGER
    assert "--floor" in str(error) and "policy.trigger_tokens (line 2)" in str(error)
    with pytest.raises(ConfigError) as caught:
        config.resolve(Provider.CLAUDE, None, None, {"trigger_tokens": 0})
    assert caught.value.code is ConfigErrorCode.OUT_OF_RANGE and "--trigger" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        config.resolve(Provider.CLAUDE, None, None, {"bogus": 1})
    assert caught.value.code is ConfigErrorCode.UNKNOWN_KEY


def test_unknown_preset_lists_the_known_ones(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "[presets.mine]\ntrigger = 100000\n"))
    with pytest.raises(ConfigError) as caught:
        config.resolve(Provider.CODEX, None, "nope", None)
    assert caught.value.code is ConfigErrorCode.UNKNOWN_PRESET
    assert "deep-work" in str(caught.value) and "mine" in str(caught.value)


def test_unknown_preset_named_by_a_session(tmp_path: Path) -> None:
    error = load_error(tmp_path, '[sessions.abc]\nkeep_recent_turns = 2\npreset = "nope"\n')
    assert error.code is ConfigErrorCode.UNKNOWN_PRESET
    assert (error.key, error.line) == ("sessions.abc.preset", 3)


def test_file_level_errors(tmp_path: Path) -> None:
    big = load_error(tmp_path, "#" * (CONFIG_MAX_BYTES + 1))
    assert big.code is ConfigErrorCode.TOO_LARGE
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[policy]\n\xff = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(bad)
    assert (caught.value.code, caught.value.line) == (ConfigErrorCode.NOT_UTF8, 2)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.code is ConfigErrorCode.UNREADABLE


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[policy]\n")
    path.chmod(0)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.code is ConfigErrorCode.UNREADABLE


# Where keys are: the scanner against tricky TOML -------------------------------------------


def test_key_lines_tricky_text() -> None:
    text = (
        "title = '''\n[fake]\nkey = 1\n'''\n"  # 1-4: a multi-line literal string
        'array = [\n  "a]", # ] in a comment\n  "b",\n]\n'  # 5-8
        '[ tab . "dotted.key" ]  # header comment\n'  # 9
        'inner = """x\\"""\ny"""\n'  # 10-11: escaped quotes in a multi-line string
        "after = { a = 1, b = [1, 2] }\n"  # 12
        "\r\n"  # 13: CRLF blank line
        "[[arr]]\n"  # 14
        "x = 'y'\n"  # 15
    )
    tomllib.loads(text)  # the scanner only ever sees valid TOML
    lines = key_lines(text)
    assert lines[("title",)] == 1
    assert ("fake",) not in lines and ("key",) not in lines
    assert lines[("array",)] == 5
    assert lines[("tab", "dotted.key")] == 9
    assert lines[("tab", "dotted.key", "inner")] == 10
    assert lines[("tab", "dotted.key", "after")] == 12
    assert lines[("arr", "x")] == 15
    assert dotted(("tab", "dotted.key", "inner")) == 'tab."dotted.key".inner'


_NAMES = st.sampled_from(["a", "b-c", "d_1", "with space", "dot.ted", "ü"])
_VALUES = st.sampled_from(
    ["1", "'x'", '"y # not a comment"', "[1,\n 2]", '"""\nk = 1\n"""', "{ p = 1 }", "true"]
)


@settings(max_examples=50, deadline=None)
@given(
    tables=st.lists(
        st.tuples(_NAMES, st.lists(st.tuples(_NAMES, _VALUES), unique_by=lambda kv: kv[0])),
        unique_by=lambda table: table[0],
        max_size=4,
    ),
    blank=st.sampled_from(["", "\n", "# c\n", "  \n"]),
)
def test_key_lines_property(tables: list[tuple[str, list[tuple[str, str]]]], blank: str) -> None:
    """Every key of a generated document is placed on the line where it is written."""
    out: list[str] = []
    expected: dict[tuple[str, ...], int] = {}

    def emit(chunk: str) -> int:
        line = sum(part.count("\n") for part in out) + 1
        out.append(chunk)
        return line

    for table, pairs in tables:
        emit(blank)
        expected[(table,)] = emit(f"[{dotted((table,))}]\n")
        for key, value in pairs:
            emit(blank)
            expected[(table, key)] = emit(f"{dotted((key,))} = {value}\n")
    text = "".join(out)
    tomllib.loads(text)
    lines = key_lines(text)
    for path, line in expected.items():
        assert lines[path] == line
