"""`config.toml`: layered policy, presets, per-session settings and [ui].

Layers apply in the reference's order, later wins: defaults -> [policy] -> [provider.<name>]
-> preset (built-in, then a [presets.<name>] of the same name, field by field) ->
[sessions."<id>"] -> command-line overrides. The file is checked whole when it is loaded; every
error is one line naming the file, the dotted key and the line that defines it.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...core.alerts import AlertSettings
from ...core.limits import CONFIG_MAX_BYTES, EXTERNAL_DEFAULT_TIMEOUT_SECS
from ...core.model import Provider
from ...core.policy import PRESETS, NativeProvider, PolicyConfig, PolicyProvider
from ...core.strategies.external import EXTENSION_IDS
from .config_keys import key_lines, syntax_error_line
from .config_schema import (
    AGENTIC,
    EXTERNAL,
    POLICY_CHECKS,
    PRESET_ALIASES,
    PROVIDER_TABLES,
    ConfigError,
    ConfigErrorCode,
    Layer,
    Origin,
    ParsedConfig,
    check_strategy,
    checked,
    error_at,
    parse_config,
    preset_names,
)
from .paths import config_path

__all__ = [
    "EXTERNAL",
    "ConfigError",
    "ConfigErrorCode",
    "ExternalCommand",
    "LoadedConfig",
    "ResolvedPolicy",
    "load_config",
]

_OVERRIDE_FLAGS = {"trigger_tokens": "--trigger", "floor_tokens": "--floor"}


class ExternalCommand(BaseModel):
    """A trusted preset command (argv, no shell) or plugin bundle, and the table that
    configured it. A plugin's argv comes from its manifest, read when it runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    argv: list[str] = []
    trusted: bool
    timeout_secs: float = EXTERNAL_DEFAULT_TIMEOUT_SECS
    source: str
    plugin: str | None = None
    """The bundle folder (or its manifest file)."""
    plugin_sha256: str | None = None
    """The manifest's sha256 the preset trusts; a bundle of another runs nothing."""


class ResolvedPolicy(BaseModel):
    """What one session runs with, and which layers contributed (for `explain`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: PolicyConfig
    strategy: str = "auto"
    preset: str | None = None
    external_command: ExternalCommand | None = None
    layers: list[str]


@dataclass(frozen=True)
class LoadedConfig:
    path: Path
    found: bool = False
    """False when the file does not exist (every value is a default)."""
    tables: ParsedConfig = field(default_factory=ParsedConfig)

    @property
    def ui_theme(self) -> str | None:
        return self.tables.theme

    @property
    def ui_keymap(self) -> dict[str, str]:
        """Binding id -> keys; free-form here (the app knows its binding ids)."""
        return dict(self.tables.keymap)

    @property
    def ui_alerts(self) -> AlertSettings:
        return self.tables.alerts

    def preset_names(self) -> list[str]:
        return preset_names({**self.tables.presets, **self.tables.broken_presets})

    def resolve(
        self,
        provider: PolicyProvider,
        session_id: str | None,
        preset: str | None,
        overrides: Mapping[str, int] | None,
        *,
        strategy: str | None = None,
    ) -> ResolvedPolicy:
        """The policy for one session. `preset`, `overrides` and `strategy` are the CLI's.

        A session may name its own preset; an explicit one wins. An explicit strategy other
        than `external` drops a preset command.
        """
        tables = self.tables
        session = tables.sessions.get(session_id) if session_id is not None else None
        chain = [tables.policy, tables.providers.get(PROVIDER_TABLES[provider])]
        preset_name = preset
        if preset_name is None and session is not None:
            preset_name = session.values.get("preset")
        if preset_name is not None:
            chain.extend(self._preset_layers(preset_name, None if preset else session))
        chain.append(session)

        values: dict[str, Any] = PolicyConfig().model_dump()
        origins = {name: Origin(f"default {name}") for name in values}
        chosen, strategy_origin = "auto", Origin("default strategy")
        command: ExternalCommand | None = None
        names = ["defaults"]
        for rank, layer in enumerate((x for x in chain if x is not None), start=1):
            names.append(layer.name)
            for name, value in layer.values.items():
                origin = Origin(layer.origins[name].label, layer.origins[name].line, rank)
                if name in POLICY_CHECKS:
                    values[name], origins[name] = value, origin
                elif name == "strategy":
                    chosen, strategy_origin = value, origin
                    command = command if value in EXTENSION_IDS else None
            values_ = layer.values
            timeout = values_.get("timeout_secs", EXTERNAL_DEFAULT_TIMEOUT_SECS)
            if "command" in values_:
                chosen = values_.get("strategy", EXTERNAL)
                strategy_origin = layer.origins.get("strategy", layer.origins["command"])
                command = ExternalCommand(
                    argv=list(values_["command"]),
                    trusted=values_.get("trusted_legacy_command", False),
                    timeout_secs=timeout,
                    source=layer.name,
                )
            elif "plugin" in values_:
                chosen, strategy_origin = AGENTIC, layer.origins["plugin"]
                path, pin = values_["plugin"]
                pin = values_.get("trusted_plugin_sha256", pin)
                command = ExternalCommand(
                    trusted=pin is not None,
                    timeout_secs=timeout,
                    source=layer.name,
                    plugin=path,
                    plugin_sha256=pin,
                )

        rank = len(names)
        if overrides or strategy is not None:
            names.append("overrides")
        for name, value in (overrides or {}).items():
            name = PRESET_ALIASES.get(name, name)
            if name not in POLICY_CHECKS:
                raise ConfigError(ConfigErrorCode.UNKNOWN_KEY, f"unknown override {name!r}")
            label = _OVERRIDE_FLAGS.get(name, f"override {name}")
            values[name] = checked(POLICY_CHECKS[name], value, Origin(label), None)
            origins[name] = Origin(label, None, rank)
        if strategy is not None:
            chosen = checked(check_strategy, strategy, Origin("--strategy"), None)
            strategy_origin = Origin("--strategy", None, rank)
            command = command if chosen in EXTENSION_IDS else None

        self._check_floor(values, origins)
        if chosen in EXTENSION_IDS and command is None:
            needs = "a command" if chosen == EXTERNAL else "a command or a plugin"
            raise self._error(
                ConfigErrorCode.UNKNOWN_STRATEGY,
                strategy_origin,
                f"{strategy_origin}: strategy {chosen!r} needs a preset with {needs}",
            )
        if chosen == EXTERNAL and command is not None and command.plugin is not None:
            chosen = AGENTIC  # a plugin proposes file edits only, whatever id named it
        return ResolvedPolicy(
            policy=PolicyConfig(**values),
            strategy=chosen,
            preset=preset_name,
            external_command=command,
            layers=names,
        )

    def _preset_layers(self, name: str, session: Layer | None) -> list[Layer]:
        """The built-in preset of that name, then the config's; `session` named it, if set."""
        broken = self.tables.broken_presets.get(name)
        if broken is not None and session is None:
            raise broken
        if broken is not None and session is not None:
            origin = session.origins["preset"]
            detail = f"{origin}: preset {name!r} does not load: {broken.detail}"
            raise self._error(broken.code, origin, detail)
        builtin, configured = PRESETS.get(name), self.tables.presets.get(name)
        if builtin is None and configured is None:
            detail = f"unknown preset {name!r} (known: {', '.join(self.preset_names())})"
            if session is None:
                raise ConfigError(ConfigErrorCode.UNKNOWN_PRESET, detail)
            origin = session.origins["preset"]
            raise self._error(ConfigErrorCode.UNKNOWN_PRESET, origin, f"{origin}: {detail}")
        layers = []
        if builtin is not None:
            label = f"built-in preset {name}"
            # Only the values the preset pins, so it does not reset earlier layers' others.
            pinned = {f: getattr(builtin.policy, f) for f in builtin.policy.model_fields_set}
            values = {"strategy": builtin.strategy, **pinned}
            layers.append(Layer(label, values, {key: Origin(label) for key in values}))
        if configured is not None:
            layers.append(configured)
        return layers

    def _check_floor(self, values: Mapping[str, Any], origins: Mapping[str, Origin]) -> None:
        floor, trigger = values["floor_tokens"], values["trigger_tokens"]
        if floor < trigger:
            return
        floor_at, trigger_at = origins["floor_tokens"], origins["trigger_tokens"]
        # The later of the two layers made the conflict: its key is the one to fix.
        blamed = floor_at if floor_at.rank >= trigger_at.rank else trigger_at
        from_file = floor_at.line is not None or trigger_at.line is not None
        raise error_at(
            ConfigErrorCode.FLOOR_NOT_BELOW_TRIGGER,
            blamed,
            f"floor_tokens {floor} (from {floor_at}) must be below trigger_tokens {trigger} "
            f"(from {trigger_at})",
            self.path if from_file else None,
        )

    def _error(self, code: ConfigErrorCode, origin: Origin, detail: str) -> ConfigError:
        """An error about a resolved value; the file is named only if the value came from it."""
        return error_at(code, origin, detail, self.path if origin.line is not None else None)


def load_config(path: Path | None = None) -> LoadedConfig:
    """Read and check config.toml (default: adapters.config.paths.config_path()).

    A missing file means defaults. Every layer combination reachable without command-line
    flags is resolved once here, so a bad file fails at start-up, not in the middle of a run.
    A preset is checked when a command names it (--preset, or a session's `preset`): a bad
    one fails the commands that use it, with its key and line, and no other.
    """
    path = config_path() if path is None else path
    text = _read_text(path)
    if text is None:
        return LoadedConfig(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        detail = f"invalid TOML: {error}"
        line = syntax_error_line(error)
        raise ConfigError(ConfigErrorCode.SYNTAX, detail, path=path, line=line) from None
    except RecursionError:  # tomllib recurses per nesting level; no config needs 100
        detail = "invalid TOML: arrays or tables nest too deep"
        raise ConfigError(ConfigErrorCode.SYNTAX, detail, path=path) from None
    config = LoadedConfig(path, True, parse_config(path, key_lines(text), data))
    for provider in (*Provider, *NativeProvider):
        config.resolve(provider, None, None, None)
        for session_id in config.tables.sessions:
            config.resolve(provider, session_id, None, None)
    return config


def _read_text(path: Path) -> str | None:
    """The file's text; None when it does not exist. Symlinks are followed (dotfile managers)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _unreadable(path, error) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(ConfigErrorCode.UNREADABLE, "is not a regular file", path=path)
        raw = b""
        while len(raw) <= CONFIG_MAX_BYTES and (chunk := os.read(fd, CONFIG_MAX_BYTES + 1)):
            raw += chunk
    except OSError as error:
        raise _unreadable(path, error) from None
    finally:
        os.close(fd)
    if len(raw) > CONFIG_MAX_BYTES:
        detail = f"is larger than {CONFIG_MAX_BYTES} bytes"
        raise ConfigError(ConfigErrorCode.TOO_LARGE, detail, path=path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        detail = f"is not UTF-8 (line {line})"
        raise ConfigError(ConfigErrorCode.NOT_UTF8, detail, path=path, line=line) from None


def _unreadable(path: Path, error: OSError) -> ConfigError:
    return ConfigError(ConfigErrorCode.UNREADABLE, f"cannot read: {error.strerror}", path=path)
