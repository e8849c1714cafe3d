"""Plugin bundles: a folder with a versioned manifest, checked without running anything.

gobtui's manifest is `gobtui-plugin.json` (README, "Plugins"); the reference's
`gobstopper-plugin.json` is read too, mapped onto the same fields. A bundle is usable only
when every check passes: the manifest's schema, and each declared file present, regular,
inside the folder and of the sha256 it declares, with nothing undeclared beside them. The
manifest's own sha256 is what a preset pins (`trusted_plugin_sha256`): any change to the
manifest or to a declared file needs a new review and a new pin. Checking reads; it never
executes the bundle.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from ...core.limits import (
    EXTERNAL_DEFAULT_TIMEOUT_SECS,
    EXTERNAL_MAX_ARGS,
    EXTERNAL_MAX_STDOUT_BYTES,
    EXTERNAL_MAX_TIMEOUT_SECS,
    PLUGIN_ID_MAX_CHARS,
    PLUGIN_MANIFEST_MAX_BYTES,
    PLUGIN_MAX_BUNDLE_BYTES,
    PLUGIN_MAX_DEPTH,
    PLUGIN_MAX_ENTRIES,
    PLUGIN_MAX_ENVIRONMENT,
    PLUGIN_MAX_FILES,
    PLUGIN_MAX_STDIN_BYTES,
)
from ...core.strategies.external import AGENTIC_ID
from ..files.regular import NotRegular, open_regular

MANIFEST_NAME = "gobtui-plugin.json"
REFERENCE_MANIFEST_NAME = "gobstopper-plugin.json"
SCHEMA_VERSION = 1
PROVIDERS = ("claude", "codex")
"""Provider ids a gobtui manifest may name (a plugin for only some sessions)."""
_REFERENCE_PROVIDERS = {"claude_code": "claude", "codex": "codex"}
_IDENTIFIER = re.compile(r"[A-Za-z0-9._-]+")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_GOBTUI_KEYS = {
    "schema_version",
    "name",
    "version",
    "description",
    "command",
    "strategies",
    "providers",
    "files",
    "timeout_secs",
    "environment",
    "summaries",
}
_REFERENCE_KEYS = {
    "protocol_version",
    "id",
    "version",
    "executable",
    "files",
    "args",
    "capabilities",
    "provider_ids",
    "timeout_ms",
    "max_input_bytes",
    "max_output_bytes",
    "environment",
}


class PluginError(Exception):
    """The path names no manifest gobtui can read (one line)."""


@dataclass
class Manifest:
    """What a manifest declares, in gobtui's terms (a reference manifest mapped)."""

    path: Path
    dialect: str
    """"gobtui" or "gobstopper" (the reference's schema)."""
    sha256: str
    schema_version: Any = None
    name: str = ""
    version: str = ""
    description: str = ""
    command: list[str] = field(default_factory=list)
    strategies: list[str] = field(default_factory=list)
    providers: list[str] | None = None
    """None: every provider."""
    files: dict[str, str] = field(default_factory=dict)
    timeout_secs: float = EXTERNAL_DEFAULT_TIMEOUT_SECS
    environment: list[str] = field(default_factory=list)
    summaries: bool = False
    """Whether the plugin is sent item summaries (transcript text); off unless declared."""
    max_stdin_bytes: int = PLUGIN_MAX_STDIN_BYTES
    max_stdout_bytes: int = EXTERNAL_MAX_STDOUT_BYTES

    @property
    def root(self) -> Path:
        return self.path.parent

    def program(self) -> str:
        """command[0] as it runs: a declared bundle file by its absolute path, else as
        written (a program found on PATH, an interpreter)."""
        first = self.command[0]
        return str(self.root / first) if first in self.files else first


@dataclass
class BundleCheck:
    manifest: Manifest
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def manifest_path(path: Path) -> Path:
    """The manifest a path names: the file itself, or in a folder gobtui's, else the
    reference's. The folder is resolved (a bundle is run from where it really is)."""
    path = Path(os.path.abspath(os.path.expanduser(path)))
    if path.is_dir():
        root = path.resolve()
        for name in (MANIFEST_NAME, REFERENCE_MANIFEST_NAME):
            if (root / name).exists():
                return root / name
        raise PluginError(f"{path}: no {MANIFEST_NAME} (or {REFERENCE_MANIFEST_NAME}) in it")
    if not path.exists():
        raise PluginError(f"{path}: no such plugin folder or manifest")
    return path.parent.resolve() / path.name


def check_bundle(path: Path) -> BundleCheck:
    """Every problem of the bundle at `path` (a folder or its manifest); PluginError when
    there is no manifest to read at all."""
    where = manifest_path(path)
    raw = _read_manifest(where)
    manifest = Manifest(where, _dialect(where), hashlib.sha256(raw).hexdigest())
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return BundleCheck(manifest, [f"manifest is not JSON ({error.msg})"])
    if not isinstance(data, dict):
        return BundleCheck(manifest, ["manifest must be a JSON object"])
    problems: list[str] = []
    if manifest.dialect == "gobtui":
        _read_gobtui(data, manifest, problems)
    else:
        _read_reference(data, manifest, problems)
    _check_files(manifest, problems)
    return BundleCheck(manifest, problems)


def _dialect(where: Path) -> str:
    return "gobstopper" if where.name == REFERENCE_MANIFEST_NAME else "gobtui"


def _read_manifest(where: Path) -> bytes:
    try:
        fd = open_regular(where)
    except NotRegular as error:
        raise PluginError(f"{where}: {error.strerror}") from None
    except OSError as error:
        raise PluginError(f"{where}: cannot read: {error.strerror or error}") from None
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(PLUGIN_MANIFEST_MAX_BYTES + 1)
    if len(raw) > PLUGIN_MANIFEST_MAX_BYTES:
        raise PluginError(f"{where}: larger than {PLUGIN_MANIFEST_MAX_BYTES} bytes")
    return raw


# Fields --------------------------------------------------------------------------------------


def _identifier(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= PLUGIN_ID_MAX_CHARS
        and _IDENTIFIER.fullmatch(value) is not None
    )


def _relative(value: Any) -> bool:
    """A path below the bundle folder, written plainly: no `..`, no `.`, not absolute."""
    if not isinstance(value, str) or not value or "\\" in value or "\0" in value:
        return False
    parts = PurePosixPath(value).parts
    return not value.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _strings(value: Any, most: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) <= most
        and all(isinstance(v, str) and "\0" not in v for v in value)
    )


def _unknown(data: dict[str, Any], known: set[str], problems: list[str]) -> None:
    for key in sorted(set(data) - known):
        problems.append(f"unknown field {key[:40]!r}")


def _read_gobtui(data: dict[str, Any], m: Manifest, problems: list[str]) -> None:
    _unknown(data, _GOBTUI_KEYS, problems)
    m.schema_version = data.get("schema_version")
    if m.schema_version != SCHEMA_VERSION or type(m.schema_version) is not int:
        problems.append(f"schema_version must be {SCHEMA_VERSION}")
    _identity(data.get("name"), data.get("version"), m, problems)
    description = data.get("description", "")
    if not isinstance(description, str) or len(description) > 256:
        problems.append("description must be a string of at most 256 characters")
    else:
        m.description = description
    command = data.get("command")
    if not _strings(command, EXTERNAL_MAX_ARGS) or not command or not command[0]:
        problems.append(
            f"command must be a list of 1..{EXTERNAL_MAX_ARGS} strings (program, then arguments)"
        )
    else:
        m.command = list(command)
    strategies = data.get("strategies")
    if not _strings(strategies, 8) or not strategies:
        problems.append(f'strategies must be a non-empty list (["{AGENTIC_ID}"])')
    else:
        m.strategies = list(strategies)
        for name in strategies:
            if name != AGENTIC_ID:
                problems.append(f"strategies: unknown strategy {name[:40]!r} (known: agentic)")
    if "providers" in data:
        providers = data["providers"]
        if not _strings(providers, len(PROVIDERS)) or not providers:
            problems.append(f"providers must be a non-empty list of {', '.join(PROVIDERS)}")
        else:
            m.providers = [p for p in providers if p in PROVIDERS]
            for name in providers:
                if name not in PROVIDERS:
                    problems.append(f"providers: unknown provider {name[:40]!r}")
    _files(data.get("files"), m, problems)
    timeout = data.get("timeout_secs", EXTERNAL_DEFAULT_TIMEOUT_SECS)
    if type(timeout) not in (int, float) or not 0 < timeout <= EXTERNAL_MAX_TIMEOUT_SECS:
        problems.append(
            f"timeout_secs must be a number above 0, at most {EXTERNAL_MAX_TIMEOUT_SECS:g}"
        )
    else:
        m.timeout_secs = float(timeout)
    _environment(data.get("environment", []), m, problems)
    summaries = data.get("summaries", False)
    if type(summaries) is not bool:
        problems.append("summaries must be true or false")
    else:
        m.summaries = summaries
    if m.command and "/" in m.command[0] and m.command[0] not in m.files:
        problems.append(f"command: {m.command[0][:80]!r} is not a declared file")


def _read_reference(data: dict[str, Any], m: Manifest, problems: list[str]) -> None:
    """The reference's schema (docs/plugin-protocol.md there), mapped to gobtui's fields."""
    _unknown(data, _REFERENCE_KEYS, problems)
    m.schema_version = data.get("protocol_version")
    if m.schema_version != 1 or type(m.schema_version) is not int:
        problems.append("protocol_version must be 1")
    _identity(data.get("id"), data.get("version"), m, problems)
    executable, args = data.get("executable"), data.get("args", [])
    if not _relative(executable):
        problems.append("executable must be a relative path inside the bundle")
    elif not _strings(args, EXTERNAL_MAX_ARGS - 1):
        problems.append(f"args must be a list of at most {EXTERNAL_MAX_ARGS - 1} strings")
    else:
        m.command = [str(executable), *args]
    capabilities = data.get("capabilities")
    known = ("strategy", "provider_read", "read_content")
    if not _strings(capabilities, 3) or not capabilities:
        problems.append(f"capabilities must be a non-empty list of {', '.join(known)}")
    else:
        for name in capabilities:
            if name not in known:
                problems.append(f"capabilities: unknown capability {name[:40]!r}")
        if "strategy" in capabilities:
            m.strategies = [AGENTIC_ID]
        else:
            problems.append("capabilities: no strategy (gobtui runs strategy plugins only)")
        m.summaries = "read_content" in capabilities
    provider_ids = data.get("provider_ids")
    if not _strings(provider_ids, 16) or not provider_ids:
        problems.append("provider_ids must be a non-empty list")
    else:
        m.providers = [_REFERENCE_PROVIDERS[p] for p in provider_ids if p in _REFERENCE_PROVIDERS]
        if not m.providers:
            problems.append("provider_ids: none of codex, claude_code")
    _files(data.get("files"), m, problems)
    if m.command and m.command[0] not in m.files:
        problems.append(f"executable: {m.command[0][:80]!r} is not a declared file")
    timeout_ms = data.get("timeout_ms")
    if type(timeout_ms) is not int or not 0 < timeout_ms <= 30_000:
        problems.append("timeout_ms must be an integer 1..30000")
    else:
        m.timeout_secs = timeout_ms / 1000
    for key, bound, attr in (
        ("max_input_bytes", PLUGIN_MAX_STDIN_BYTES, "max_stdin_bytes"),
        ("max_output_bytes", EXTERNAL_MAX_STDOUT_BYTES, "max_stdout_bytes"),
    ):
        value = data.get(key)
        if type(value) is not int or not 0 < value <= bound:
            problems.append(f"{key} must be an integer 1..{bound}")
        else:
            setattr(m, attr, value)
    _environment(data.get("environment", []), m, problems)


def _identity(name: Any, version: Any, m: Manifest, problems: list[str]) -> None:
    label = "name" if m.dialect == "gobtui" else "id"
    for key, value in ((label, name), ("version", version)):
        if not _identifier(value):
            problems.append(
                f"{key} must be 1..{PLUGIN_ID_MAX_CHARS} characters of A-Z a-z 0-9 . _ -"
            )
        else:
            setattr(m, "name" if key == label else "version", value)


def _files(files: Any, m: Manifest, problems: list[str]) -> None:
    if not isinstance(files, dict) or not files:
        problems.append("files must be an object of path -> sha256 (the bundle's files)")
        return
    if len(files) > PLUGIN_MAX_FILES:
        problems.append(f"files declares {len(files)} files, over {PLUGIN_MAX_FILES}")
        return
    for name, digest in files.items():
        if not _relative(name):
            problems.append(f"files: {name[:80]!r} is not a relative path inside the bundle")
        elif name in (MANIFEST_NAME, REFERENCE_MANIFEST_NAME):
            problems.append(f"files: {name!r} is the manifest itself")
        elif not isinstance(digest, str) or _SHA256.fullmatch(digest) is None:
            problems.append(f"files: {name[:80]!r} needs a sha256 of 64 lowercase hex digits")
        else:
            m.files[name] = digest


def _environment(value: Any, m: Manifest, problems: list[str]) -> None:
    if not _strings(value, PLUGIN_MAX_ENVIRONMENT) or not all(map(_identifier, value)):
        problems.append(f"environment must list at most {PLUGIN_MAX_ENVIRONMENT} variable names")
    else:
        m.environment = [name for name in value if name != "PATH"]


# The bundle on disk --------------------------------------------------------------------------


def _check_files(m: Manifest, problems: list[str]) -> None:
    """Each declared file as declared; nothing else in the folder (a plugin cannot load
    code its pin does not cover)."""
    root = m.root
    manifests = {MANIFEST_NAME, REFERENCE_MANIFEST_NAME}
    entries = 0
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        if depth > PLUGIN_MAX_DEPTH:
            problems.append(f"bundle nests deeper than {PLUGIN_MAX_DEPTH} folders")
            return
        try:
            children = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as error:
            problems.append(f"cannot list {folder}: {error.strerror or error}")
            return
        for entry in children:
            entries += 1
            if entries > PLUGIN_MAX_ENTRIES:
                problems.append(f"bundle holds more than {PLUGIN_MAX_ENTRIES} entries")
                return
            name = Path(entry.path).relative_to(root).as_posix()
            if entry.is_dir(follow_symlinks=False):
                pending.append((Path(entry.path), depth + 1))
            elif depth == 0 and name in manifests:
                continue
            elif not entry.is_file(follow_symlinks=False):
                problems.append(f"{name[:80]!r} is not a regular file")
            elif name not in m.files:
                problems.append(f"{name[:80]!r} is in the bundle but not declared in files")
    total = 0
    for name, digest in m.files.items():
        try:
            data = _read_declared(root / name)
        except OSError as error:
            problems.append(f"files: {name[:80]!r}: {error.strerror or error}")
            continue
        total += len(data)
        if total > PLUGIN_MAX_BUNDLE_BYTES:
            problems.append(f"declared files add up to over {PLUGIN_MAX_BUNDLE_BYTES} bytes")
            return
        if hashlib.sha256(data).hexdigest() != digest:
            problems.append(f"files: {name[:80]!r} does not match its sha256")
    if m.command and m.command[0] in m.files:
        mode = _mode(root / m.command[0])
        if mode is not None and not mode & stat.S_IXUSR:
            problems.append(f"command: {m.command[0][:80]!r} is not executable")


def _read_declared(path: Path) -> bytes:
    """A declared file's bytes, opened without following a symlink at its last part; a
    symlinked folder on the way is refused by the walk above (it is not a folder there)."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(PLUGIN_MAX_BUNDLE_BYTES + 1)


def _mode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return None
