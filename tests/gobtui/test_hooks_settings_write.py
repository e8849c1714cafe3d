"""install-hooks --yes against a client that rewrites its settings.json meanwhile: the write
is a compare-and-swap, so the client's change is never lost (the install is refused). And the
user's numbers are written back as they were written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gobtui.adapters.files import atomic
from gobtui.adapters.hooks import settings as hook_settings
from gobtui.cli.dispatch import main
from gobtui.cli.exits import Exit

ORIGINAL = {"model": "opus", "hooks": {}}
CLIENTS = {"model": "sonnet", "theme": "dark", "hooks": {}}
"""What the client writes while gobtui edits (a different size, so any stat check sees it)."""


def _in_place(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _by_rename(path: Path, data: bytes) -> None:
    temp = path.with_name("settings.json.client-tmp")
    temp.write_bytes(data)
    os.replace(temp, path)


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    return home


def _race(
    monkeypatch: pytest.MonkeyPatch,
    module: ModuleType,
    name: str,
    client_write: Callable[[], object],
) -> None:
    """The client writes its file once, just as gobtui calls `module.name` (after the read)."""
    real = getattr(module, name)
    fired: list[bool] = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        if not fired:
            fired.append(True)
            client_write()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, racing)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("writer", [_in_place, _by_rename], ids=["in-place", "by-rename"])
@pytest.mark.parametrize(
    "where",
    [(hook_settings, "publish_new"), (atomic, "_write_temp")],
    ids=["while-the-backup-is-written", "while-the-new-file-is-written"],
)
def test_a_settings_file_the_client_rewrites_meanwhile_is_never_written_over(
    claude: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    writer: Callable[[Path, bytes], None],
    where: tuple[Any, str],
) -> None:
    settings = claude / "settings.json"
    settings.write_text(json.dumps(ORIGINAL))
    clients = json.dumps(CLIENTS).encode()
    _race(monkeypatch, *where, lambda: writer(settings, clients))

    code = main(["install-hooks", "--yes", "--provider", "claude"])

    err = capsys.readouterr().err
    assert settings.read_bytes() == clients  # the client's change survives as it wrote it
    assert code == Exit.REFUSED
    assert "changed while gobtui was editing it" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not list(claude.glob("settings.json.gobtui-bak-*"))  # no copy of a file not replaced
    assert not list(claude.glob(".gobtui-*"))  # nor a temporary file


@pytest.mark.timeout(60)
def test_the_same_bytes_under_a_new_inode_still_count_as_a_change(
    claude: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stat identity is compared too: a file renamed in with the bytes read is another file."""
    settings = claude / "settings.json"
    settings.write_text(json.dumps(ORIGINAL))
    same = settings.read_bytes()
    _race(monkeypatch, atomic, "_write_temp", lambda: _by_rename(settings, same))
    assert main(["install-hooks", "--yes", "--provider", "claude"]) == Exit.REFUSED
    assert settings.read_bytes() == same
    assert "changed while" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_a_settings_file_the_client_creates_meanwhile_is_not_clobbered(
    claude: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = claude / "settings.json"  # none yet: gobtui would create it
    clients = json.dumps(CLIENTS).encode()
    _race(monkeypatch, atomic, "_write_temp", lambda: settings.write_bytes(clients))
    assert main(["install-hooks", "--yes", "--provider", "claude"]) == Exit.REFUSED
    assert settings.read_bytes() == clients
    assert "changed while" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_without_a_race_the_install_still_writes(
    claude: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = claude / "settings.json"
    settings.write_text(json.dumps(ORIGINAL))
    assert main(["install-hooks", "--yes", "--provider", "claude"]) == 0
    doc = json.loads(settings.read_text())
    assert doc["model"] == "opus" and set(doc["hooks"]) == {"PreCompact", "SessionStart"}
    assert "wrote" in capsys.readouterr().out


NUMBERS = (
    b'{\n  "model": "opus",\n  "feedbackSurveyState": {"lastShownTime": 1754000000000},\n'
    b'  "id": 123456789012345678901234567890,\n  "ratio": 1.50,\n  "big": 1E+40,\n'
    b'  "tiny": 2.5e-35,\n  "zero": -0,\n  "list": [0.10, 7, -3.000]\n}\n'
)
LITERALS = [
    b": 1754000000000}",
    b": 123456789012345678901234567890,",
    b": 1.50,",
    b": 1E+40,",
    b": 2.5e-35,",
    b": -0,",
    b"0.10,",
    b"-3.000\n",
]


@pytest.mark.timeout(60)
def test_install_and_uninstall_keep_the_users_numbers_as_written(
    claude: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = claude / "settings.json"
    settings.write_bytes(NUMBERS)
    assert main(["install-hooks", "--provider", "claude"]) == 0  # the preview reads them too
    assert main(["install-hooks", "--yes", "--provider", "claude"]) == 0
    written = settings.read_bytes()
    assert json.loads(written)["hooks"]["PreCompact"]
    assert main(["uninstall-hooks", "--yes", "--provider", "claude"]) == 0
    back = settings.read_bytes()
    for text in (written, back):
        compact = text.replace(b"\n    ", b"").replace(b"\n  ", b"")  # the indent may differ
        for literal in LITERALS:
            assert literal in compact or literal in text, (literal, text)
        assert b"e+29" not in text and b"1.5," not in text
    assert "Traceback" not in capsys.readouterr().err
