"""The schema of config.toml: tables, keys, value checks, and the one-line ConfigError.

The parser checks the tomllib result table by table. Each accepted key keeps its origin (the
dotted key and the line that defines it), so even an error found later, when layers combine,
names the key and line to fix.
"""

from __future__ import annotations

import difflib
import math
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from annotated_types import Ge, Le

from ...core.alerts import AlertChannel, AlertEvent, AlertSettings
from ...core.limits import (
    CONFIG_KEYMAP_MAX,
    CONFIG_TEXT_MAX_CHARS,
    EXTERNAL_MAX_ARGS,
    EXTERNAL_MAX_TIMEOUT_SECS,
)
from ...core.model import Provider
from ...core.policy import PRESETS, NativeProvider, PolicyConfig, PolicyProvider, QuotaPressure
from ...core.strategies import STRATEGIES
from ...core.strategies.external import AGENTIC_ID, EXTENSION_IDS
from .config_keys import Key, dotted

EXTERNAL = "external"
"""The strategy id of a preset `command` (run by adapters.planning.external, not a core strategy)."""
AGENTIC = AGENTIC_ID
"""The strategy id of a preset's command or plugin, file edits only (adapters.planning.agentic)."""

PROVIDER_TABLES: dict[PolicyProvider, str] = {
    Provider.CODEX: "codex",
    Provider.CLAUDE: "claude_code",
    NativeProvider.DEVIN: "devin",
}
"""[provider.<name>] tables, named as the reference names them."""


class ConfigErrorCode(StrEnum):
    UNREADABLE = "unreadable"
    TOO_LARGE = "too_large"
    NOT_UTF8 = "not_utf8"
    SYNTAX = "syntax"
    UNKNOWN_KEY = "unknown_key"
    BAD_TYPE = "bad_type"
    OUT_OF_RANGE = "out_of_range"
    INVALID_VALUE = "invalid_value"
    FLOOR_NOT_BELOW_TRIGGER = "floor_not_below_trigger"
    UNKNOWN_PRESET = "unknown_preset"
    UNKNOWN_STRATEGY = "unknown_strategy"
    UNTRUSTED_COMMAND = "untrusted_command"


class ConfigError(Exception):
    """A one-line message: the file, then the dotted key and its line where one applies."""

    def __init__(
        self,
        code: ConfigErrorCode,
        detail: str,
        *,
        path: Path | None = None,
        key: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(f"{path}: {detail}" if path is not None else detail)
        self.code, self.path, self.key, self.line = code, path, key, line
        self.detail = detail


# Value checks -------------------------------------------------------------------------------


class _Bad(Exception):
    def __init__(self, code: ConfigErrorCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code


Check = Callable[[Any], object]


def _bounded_int(name: str) -> Check:
    """Integer bounds come from PolicyConfig itself, so a checked value always validates."""
    meta = PolicyConfig.model_fields[name].metadata
    low = cast(int, next(m.ge for m in meta if isinstance(m, Ge)))
    high = cast(int, next(m.le for m in meta if isinstance(m, Le)))

    def check(value: Any) -> int:
        if type(value) is not int:
            raise _Bad(ConfigErrorCode.BAD_TYPE, f"must be an integer, not {_type(value)}")
        if not low <= value <= high:
            raise _Bad(
                ConfigErrorCode.OUT_OF_RANGE, f"must be between {low} and {high}, got {value}"
            )
        return value

    return check


def _boolean(value: Any) -> bool:
    if type(value) is not bool:
        raise _Bad(ConfigErrorCode.BAD_TYPE, f"must be true or false, not {_type(value)}")
    return value


def _number(value: Any, low: float, high: float, *, open_low: bool = False) -> float:
    if type(value) not in (int, float):
        raise _Bad(ConfigErrorCode.BAD_TYPE, f"must be a number, not {_type(value)}")
    above_low = value > low if open_low else value >= low
    if not (math.isfinite(value) and above_low and value <= high):
        raise _Bad(ConfigErrorCode.OUT_OF_RANGE, f"must be between {low} and {high}, got {value}")
    return float(value)


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _Bad(ConfigErrorCode.BAD_TYPE, f"must be a string, not {_type(value)}")
    if not value or len(value) > CONFIG_TEXT_MAX_CHARS or not value.isprintable():
        raise _Bad(
            ConfigErrorCode.INVALID_VALUE,
            f"must be 1..{CONFIG_TEXT_MAX_CHARS} printable characters on one line",
        )
    return value


def _channels(value: Any) -> frozenset[AlertChannel]:
    choices = [c.value for c in AlertChannel]
    if type(value) is not list or not all(type(c) is str and c in choices for c in value):
        raise _Bad(
            ConfigErrorCode.INVALID_VALUE,
            f"must be a list of {', '.join(choices)} (an empty list turns it off)",
        )
    return frozenset(AlertChannel(c) for c in value)


def check_strategy(value: Any) -> str:
    name = _text(value)
    if name not in STRATEGIES and name not in EXTENSION_IDS:
        known = ", ".join([*STRATEGIES, *EXTENSION_IDS])
        raise _Bad(ConfigErrorCode.UNKNOWN_STRATEGY, f"unknown strategy {name!r} (known: {known})")
    return name


def _quota(value: Any) -> QuotaPressure:
    choices = [q.value for q in QuotaPressure]
    if type(value) is not str or value not in choices:
        raise _Bad(ConfigErrorCode.INVALID_VALUE, f"must be one of {', '.join(choices)}")
    return QuotaPressure(value)


def _argv(value: Any) -> tuple[str, ...]:
    """A list is the argv as it is. A string (the reference's legacy form) is split into words
    as a POSIX shell splits them, and a leading `~` of a word is the home folder; nothing else
    is interpreted and no shell runs it (no variables, globs, pipes or redirections)."""
    if type(value) is str:
        try:
            value = [os.path.expanduser(word) for word in shlex.split(value)]
        except ValueError as error:  # an unclosed quote, a trailing backslash
            raise _Bad(
                ConfigErrorCode.INVALID_VALUE, f"cannot be split into words: {error}"
            ) from None
    if type(value) is not list or not all(type(arg) is str for arg in value):
        raise _Bad(
            ConfigErrorCode.BAD_TYPE,
            "must be a list of strings (program, then arguments) or one command line",
        )
    if not 1 <= len(value) <= EXTERNAL_MAX_ARGS or not value[0]:
        raise _Bad(
            ConfigErrorCode.INVALID_VALUE,
            f"must name a program and hold at most {EXTERNAL_MAX_ARGS} strings",
        )
    if any("\0" in arg for arg in value):
        raise _Bad(ConfigErrorCode.INVALID_VALUE, "must not contain NUL characters")
    return tuple(value)


def _plugin(value: Any) -> tuple[str, str | None]:
    """A bundle folder (or its manifest file), absolute once a leading `~` is the home
    folder; the reference's table `{ manifest = "...", trusted_sha256 = "..." }` too.
    Returns (path, the pin the table gave or None)."""
    pin: Any = None
    if type(value) is dict:
        if set(value) != {"manifest", "trusted_sha256"}:
            raise _Bad(
                ConfigErrorCode.INVALID_VALUE,
                "as a table takes exactly manifest and trusted_sha256",
            )
        value, pin = value["manifest"], _sha256(value["trusted_sha256"])
    path = os.path.expanduser(_text(value))
    if not os.path.isabs(path):
        raise _Bad(ConfigErrorCode.INVALID_VALUE, "must be an absolute path (or start with ~/)")
    return path, pin


def _sha256(value: Any) -> str:
    if (
        type(value) is not str
        or len(value) != 64
        or not all(c in "0123456789abcdef" for c in value.lower())
    ):
        raise _Bad(
            ConfigErrorCode.INVALID_VALUE,
            "must be the 64 hex digits `gobtui plugin check DIR` prints as manifest_sha256",
        )
    return value.lower()


def _type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names |= {dict: "a table", list: "a list"}
    return names.get(type(value), "a date or time")


_COUNTS = (
    "trigger_tokens",
    "floor_tokens",
    "keep_recent_tool_outputs",
    "min_interval_secs",
    "apply_hold_secs",
    "min_savings_tokens",
    "keep_recent_turns",
    "result_max_bytes",
)
POLICY_CHECKS: dict[str, Check] = {name: _bounded_int(name) for name in _COUNTS}
POLICY_CHECKS |= {
    "adaptive": _boolean,
    "drop_old_reasoning": _boolean,
    "drop_old_thinking": _boolean,
    "drop_old_images": _boolean,
    "quota_pressure": _quota,
    "keep_score_threshold": lambda v: _number(v, 0.0, 1.0),
}
POLICY_TABLE = {**POLICY_CHECKS, "strategy": check_strategy}
NATIVE_TABLE = {**{name: POLICY_CHECKS[name] for name in _COUNTS}, "quota_pressure": _quota}
"""[provider.devin]: a numeric policy. The client compacts its sessions itself (gobtui never
reads them), so a strategy or a switch about what a fork leaves out does not apply."""
_PRESET_TABLE = {
    **POLICY_TABLE,
    "description": _text,
    "command": _argv,
    "trusted_legacy_command": _boolean,
    "plugin": _plugin,
    "trusted_plugin_sha256": _sha256,
    "timeout_secs": lambda v: _number(v, 0.0, EXTERNAL_MAX_TIMEOUT_SECS, open_low=True),
}
_SESSION_TABLE = {**POLICY_TABLE, "preset": _text}
PRESET_ALIASES = {"trigger": "trigger_tokens", "floor": "floor_tokens"}
"""Short preset keys (the reference's) for two policy fields."""


@dataclass(frozen=True, slots=True)
class Origin:
    label: str
    line: int | None = None
    rank: int = 0
    """Position of the layer in the chain: a later layer is to blame for a conflict."""

    def __str__(self) -> str:
        return self.label if self.line is None else f"{self.label} (line {self.line})"


@dataclass(frozen=True, slots=True)
class Layer:
    name: str
    values: Mapping[str, Any]
    """Normalized keys (aliases resolved) -> checked values."""
    origins: Mapping[str, Origin]


@dataclass(frozen=True, slots=True)
class ParsedConfig:
    """Every table of a checked config file, as layers."""

    policy: Layer | None = None
    providers: Mapping[str, Layer] = field(default_factory=dict)
    presets: Mapping[str, Layer] = field(default_factory=dict)
    sessions: Mapping[str, Layer] = field(default_factory=dict)
    theme: str | None = None
    keymap: Mapping[str, str] = field(default_factory=dict)
    alerts: AlertSettings = field(default_factory=AlertSettings)
    broken_presets: Mapping[str, ConfigError] = field(default_factory=dict)
    """[presets.<name>] tables that do not check, with why: only a command using one fails."""


def preset_names(configured: Mapping[str, object]) -> list[str]:
    """Built-in presets first (in their order), then the config's own."""
    return [*PRESETS, *(name for name in configured if name not in PRESETS)]


def error_at(code: ConfigErrorCode, origin: Origin, detail: str, path: Path | None) -> ConfigError:
    key = origin.label if origin.line is not None else None
    return ConfigError(code, detail, path=path, key=key, line=origin.line)


def checked(check: Check, value: Any, origin: Origin, path: Path | None) -> Any:
    try:
        return check(value)
    except _Bad as bad:
        raise error_at(bad.code, origin, f"{origin} {bad}", path) from None


def parse_config(path: Path, lines: Mapping[Key, int], data: dict[str, Any]) -> ParsedConfig:
    """Check a tomllib result; `lines` (config_keys.key_lines) places keys in the text."""
    return _Parser(path, lines).parse(data)


class _Parser:
    """Checks the parsed TOML against the schema, keeping each key's line for messages."""

    def __init__(self, path: Path, lines: Mapping[Key, int]) -> None:
        self.path, self.lines = path, lines

    def origin(self, key: Key) -> Origin:
        for n in range(len(key), 0, -1):
            if key[:n] in self.lines:
                return Origin(dotted(key), self.lines[key[:n]])
        return Origin(dotted(key))

    def fail(self, code: ConfigErrorCode, key: Key, detail: str) -> ConfigError:
        return error_at(code, self.origin(key), detail, self.path)

    def fail_at(self, code: ConfigErrorCode, origin: Origin, detail: str) -> ConfigError:
        return error_at(code, origin, detail, self.path)

    def unknown(self, key: Key, expected: Mapping[str, object] | list[str]) -> ConfigError:
        close = difflib.get_close_matches(key[-1], list(expected), n=1)
        hint = f"did you mean {close[0]}?" if close else f"expected: {', '.join(expected)}"
        return self.fail(
            ConfigErrorCode.UNKNOWN_KEY, key, f"unknown key {self.origin(key)}; {hint}"
        )

    def table(self, key: Key, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(ConfigErrorCode.BAD_TYPE, key, f"{self.origin(key)} must be a table")
        return value

    def names(self, key: Key, value: Any) -> dict[str, dict[str, Any]]:
        """A table of named tables ([provider.<name>], [sessions."<id>"])."""
        return {name: self.named(key, name, sub) for name, sub in self.table(key, value).items()}

    def named(self, key: Key, name: str, sub: Any) -> dict[str, Any]:
        if not name or len(name) > CONFIG_TEXT_MAX_CHARS or not name.isprintable():
            raise self.fail(
                ConfigErrorCode.INVALID_VALUE, (*key, name), f"bad name {dotted((*key, name))}"
            )
        return self.table((*key, name), sub)

    def parse(self, data: dict[str, Any]) -> ParsedConfig:
        known = {"policy", "provider", "presets", "sessions", "ui"}
        for name in data:
            if name not in known:
                raise self.unknown((name,), sorted(known))
        policy = self.layer(("policy",), data["policy"], POLICY_TABLE) if "policy" in data else None
        providers = {}
        native = {PROVIDER_TABLES[p] for p in NativeProvider}
        for name, table in self.names(("provider",), data.get("provider", {})).items():
            if name not in PROVIDER_TABLES.values():
                raise self.unknown(("provider", name), list(PROVIDER_TABLES.values()))
            if name in native:
                self.numbers_only(("provider", name), table)
            schema = NATIVE_TABLE if name in native else POLICY_TABLE
            providers[name] = self.layer(("provider", name), table, schema)
        presets: dict[str, Layer] = {}
        broken: dict[str, ConfigError] = {}
        for name, sub in self.table(("presets",), data.get("presets", {})).items():
            try:
                presets[name] = self.layer(
                    ("presets", name), self.named(("presets",), name, sub), _PRESET_TABLE
                )
            except ConfigError as error:  # the commands that name it say so, the others run
                broken[name] = error
        sessions = {
            name: self.layer(("sessions", name), table, _SESSION_TABLE)
            for name, table in self.names(("sessions",), data.get("sessions", {})).items()
        }
        theme, keymap, alerts = self.ui(self.table(("ui",), data.get("ui", {})))
        config = ParsedConfig(
            policy, providers, presets, sessions, theme, keymap, alerts, broken_presets=broken
        )
        every_preset = {**presets, **broken}
        for session_id, layer in sessions.items():
            preset = layer.values.get("preset")
            if preset is not None and preset not in PRESETS and preset not in every_preset:
                raise self.fail(
                    ConfigErrorCode.UNKNOWN_PRESET,
                    ("sessions", session_id, "preset"),
                    f"{layer.origins['preset']}: unknown preset {preset!r} "
                    f"(known: {', '.join(preset_names(every_preset))})",
                )
        return config

    def numbers_only(self, key: Key, table: Mapping[str, Any]) -> None:
        """A policy key a native-only provider's table does not take, named as such."""
        for written in table:
            if written in POLICY_TABLE and written not in NATIVE_TABLE:
                raise self.fail(
                    ConfigErrorCode.UNKNOWN_KEY,
                    (*key, written),
                    f"{self.origin((*key, written))} does not apply: [{dotted(key)}] is a "
                    f"numeric policy (the client compacts itself with /compact); it takes "
                    f"{', '.join(NATIVE_TABLE)}",
                )

    def layer(self, key: Key, value: Any, schema: Mapping[str, Check]) -> Layer:
        values: dict[str, Any] = {}
        origins: dict[str, Origin] = {}
        for written, raw in self.table(key, value).items():
            name = PRESET_ALIASES.get(written, written) if schema is _PRESET_TABLE else written
            origin = self.origin((*key, written))
            if name not in schema:
                raise self.unknown((*key, written), schema)
            if name in values:
                raise self.fail_at(
                    ConfigErrorCode.INVALID_VALUE, origin, f"{origin} repeats {origins[name]}"
                )
            values[name] = checked(schema[name], raw, origin, self.path)
            origins[name] = origin
        self.check_table(key, values, origins)
        return Layer(dotted(key), values, origins)

    def check_table(
        self, key: Key, values: Mapping[str, Any], origins: Mapping[str, Origin]
    ) -> None:
        floor, trigger = values.get("floor_tokens"), values.get("trigger_tokens")
        if floor is not None and trigger is not None and floor >= trigger:
            raise self.fail_at(
                ConfigErrorCode.FLOOR_NOT_BELOW_TRIGGER,
                origins["floor_tokens"],
                f"{origins['floor_tokens']}: floor {floor} must be below trigger {trigger} "
                f"({origins['trigger_tokens']})",
            )
        if "command" in values and "plugin" in values:
            raise self.fail_at(
                ConfigErrorCode.INVALID_VALUE,
                origins["plugin"],
                f"{origins['plugin']}: a preset runs a command or a plugin, not both",
            )
        if "plugin" in values:
            self.check_plugin(values, origins)
        elif "command" in values:
            if values.get("trusted_legacy_command") is not True:
                raise self.fail_at(
                    ConfigErrorCode.UNTRUSTED_COMMAND,
                    origins["command"],
                    f"{origins['command']} runs a program: add trusted_legacy_command = true "
                    "to allow it",
                )
            if values.get("strategy", EXTERNAL) not in EXTENSION_IDS:
                raise self.fail_at(
                    ConfigErrorCode.INVALID_VALUE,
                    origins["strategy"],
                    f"{origins['strategy']}: a preset with a command runs strategy 'external' "
                    "or 'agentic'",
                )
        for orphan, needs in (
            ("trusted_legacy_command", "command"),
            ("trusted_plugin_sha256", "plugin"),
        ):
            if orphan in values and needs not in values:
                raise self.fail_at(
                    ConfigErrorCode.INVALID_VALUE,
                    origins[orphan],
                    f"{origins[orphan]} applies only to a preset with a {needs}",
                )
        if "timeout_secs" in values and "command" not in values and "plugin" not in values:
            raise self.fail_at(
                ConfigErrorCode.INVALID_VALUE,
                origins["timeout_secs"],
                f"{origins['timeout_secs']} applies only to a preset with a command or plugin",
            )

    def check_plugin(self, values: Mapping[str, Any], origins: Mapping[str, Origin]) -> None:
        """A plugin runs only pinned: the manifest's sha256, from `gobtui plugin check`."""
        _path, table_pin = values["plugin"]
        if table_pin is not None and "trusted_plugin_sha256" in values:
            raise self.fail_at(
                ConfigErrorCode.INVALID_VALUE,
                origins["trusted_plugin_sha256"],
                f"{origins['trusted_plugin_sha256']} repeats the plugin table's trusted_sha256",
            )
        if table_pin is None and "trusted_plugin_sha256" not in values:
            raise self.fail_at(
                ConfigErrorCode.UNTRUSTED_COMMAND,
                origins["plugin"],
                f'{origins["plugin"]} runs a program: add trusted_plugin_sha256 = "<the '
                'manifest_sha256 `gobtui plugin check DIR` prints>" to allow it',
            )
        if values.get("strategy", AGENTIC) != AGENTIC:
            raise self.fail_at(
                ConfigErrorCode.INVALID_VALUE,
                origins["strategy"],
                f"{origins['strategy']}: a preset with a plugin runs strategy 'agentic'",
            )

    def ui(self, table: dict[str, Any]) -> tuple[str | None, dict[str, str], AlertSettings]:
        theme: str | None = None
        keymap: dict[str, str] = {}
        alerts = AlertSettings()
        for name, value in table.items():
            origin = self.origin(("ui", name))
            if name == "theme":
                theme = checked(_text, value, origin, self.path)
            elif name == "keymap":
                bindings = self.table(("ui", "keymap"), value)
                if len(bindings) > CONFIG_KEYMAP_MAX:
                    raise self.fail(
                        ConfigErrorCode.OUT_OF_RANGE,
                        ("ui", "keymap"),
                        f"{origin} holds more than {CONFIG_KEYMAP_MAX} bindings",
                    )
                for binding, keys in bindings.items():
                    at = self.origin(("ui", "keymap", binding))
                    keymap[checked(_text, binding, at, self.path)] = checked(
                        _text, keys, at, self.path
                    )
            elif name == "alerts":
                alerts = self.alerts(self.table(("ui", "alerts"), value))
            else:
                raise self.unknown(("ui", name), ["theme", "keymap", "alerts"])
        return theme, keymap, alerts

    def alerts(self, table: dict[str, Any]) -> AlertSettings:
        """`waiting = ["toast", "tmux"]`: per event, the channels; `[]` turns it off."""
        alerts = AlertSettings()
        events = [e.value for e in AlertEvent]
        for name, value in table.items():
            if name not in events:
                raise self.unknown(("ui", "alerts", name), events)
            alerts = alerts.with_channels(
                AlertEvent(name),
                checked(_channels, value, self.origin(("ui", "alerts", name)), self.path),
            )
        return alerts
