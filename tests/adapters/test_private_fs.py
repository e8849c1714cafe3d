"""adapters.files.private_fs on real folders: real symlinks, real modes (umask 000 included), real
owners (chown when root, and a run as the unprivileged `nobody` where setpriv allows it)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gobtui.adapters.files.private_fs import (
    PrivateError,
    PrivateErrorCode,
    check_private_file,
    create_private,
    open_private,
    private_dir,
)

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
SETPRIV = shutil.which("setpriv")

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="making a folder another user's (chown) needs root"
)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask_000() -> Iterator[None]:
    """The loosest umask: whatever gobtui creates must still come out private."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder a symlink points at (think /etc): its mode and contents must not change."""
    target = tmp_path / "victim"
    target.mkdir()
    target.chmod(0o755)
    (target / "keep").write_text("x")
    return target


def refused(code: PrivateErrorCode, call: Any, *args: Any, **kwargs: Any) -> PrivateError:
    with pytest.raises(PrivateError) as caught:
        call(*args, **kwargs)
    assert caught.value.code is code
    assert "\n" not in str(caught.value) and str(caught.value)
    return caught.value


def untouched(victim: Path) -> None:
    assert mode_of(victim) == 0o755
    assert sorted(os.listdir(victim)) == ["keep"]


# -- folders -------------------------------------------------------------------------------


def test_missing_levels_are_made_0700_even_under_umask_000(tmp_path: Path, umask_000: None) -> None:
    tmp_path.chmod(0o755)
    target = tmp_path / "home" / "share" / "gobtui" / "cursors"
    assert private_dir(target, "cache folder", root=tmp_path / "home" / "share" / "gobtui") == []
    for level in (target, *list(target.parents)[:3]):
        assert mode_of(level) == 0o700, level
    assert mode_of(tmp_path) == 0o755  # what was there already is the user's


def test_a_symlinked_folder_is_refused_and_its_target_untouched(
    tmp_path: Path, victim: Path
) -> None:
    link = tmp_path / "data"
    link.symlink_to(victim)
    error = refused(PrivateErrorCode.SYMLINK, private_dir, link, "data folder")
    assert str(error) == f"data folder {link} is a symlink; gobtui does not follow it"
    untouched(victim)


def test_a_symlink_at_a_level_below_the_root_is_refused(tmp_path: Path, victim: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    (root / "cursors").symlink_to(victim)
    error = refused(
        PrivateErrorCode.SYMLINK, private_dir, root / "cursors" / "x", "cache folder", root=root
    )
    assert str(error) == f"cache folder {root / 'cursors'} is a symlink; gobtui does not follow it"
    untouched(victim)


def test_a_symlinked_root_with_a_missing_level_below_creates_nothing_in_the_target(
    tmp_path: Path, victim: Path
) -> None:
    (tmp_path / "cache").symlink_to(victim)
    refused(
        PrivateErrorCode.SYMLINK,
        private_dir,
        tmp_path / "cache" / "cursors",
        "cache folder",
        root=tmp_path / "cache",
    )
    untouched(victim)


def test_a_dangling_symlink_is_not_created_through(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(tmp_path / "nowhere")
    refused(PrivateErrorCode.SYMLINK, private_dir, tmp_path / "data", "data folder")
    refused(PrivateErrorCode.SYMLINK, private_dir, tmp_path / "data" / "x", "data folder")
    assert not (tmp_path / "nowhere").exists()


def test_a_symlinked_folder_above_the_root_is_the_users_and_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o755)
    (tmp_path / "share").symlink_to(real)  # say ~/.local/share on another disk
    assert private_dir(tmp_path / "share" / "gobtui", "data folder") == []
    assert mode_of(real / "gobtui") == 0o700
    assert mode_of(real) == 0o755


def test_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("")
    error = refused(PrivateErrorCode.NOT_DIRECTORY, private_dir, tmp_path / "data", "data folder")
    assert str(error) == f"data folder {tmp_path / 'data'} is not a directory"
    refused(PrivateErrorCode.NOT_DIRECTORY, private_dir, tmp_path / "data" / "x", "data folder")


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o711, 0o705])
def test_a_readable_folder_it_owns_is_tightened_and_said_once(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(mode)
    assert private_dir(folder, "data folder") == [
        f"data folder {folder} was {mode:04o}; made it 0700 (private to you)"
    ]
    assert mode_of(folder) == 0o700
    assert private_dir(folder, "data folder") == []


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757, 0o720])
def test_a_folder_others_can_write_to_is_refused_as_it_is(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(mode)
    error = refused(PrivateErrorCode.WRITABLE_BY_OTHERS, private_dir, folder, "data folder")
    assert f"(mode {mode:04o})" in str(error)
    assert mode_of(folder) == mode  # not blessed by a chmod: what is in it is unknown


def test_a_parent_anyone_can_write_to_is_refused_unless_sticky(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    error = refused(PrivateErrorCode.OPEN_PARENT, private_dir, shared / "data", "data folder")
    assert "anyone can write to (mode 0777, no sticky bit)" in str(error)
    shared.chmod(0o1777)  # as /tmp: others cannot rename or remove what is ours
    assert private_dir(shared / "data", "data folder") == []


@needs_root
@pytest.mark.parametrize("mode", [0o700, 0o755, 0o777])
def test_a_folder_of_another_user_is_refused_and_not_chmodded(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(mode)
    os.chown(folder, NOBODY, NOBODY)
    error = refused(PrivateErrorCode.FOREIGN_OWNER, private_dir, folder, "data folder")
    assert str(error) == f"data folder {folder} is owned by uid {NOBODY}, not by you (uid 0)"
    assert mode_of(folder) == mode
    refused(
        PrivateErrorCode.FOREIGN_OWNER, private_dir, folder / "cursors", "cache folder", root=folder
    )
    assert not (folder / "cursors").exists()


def test_a_level_another_process_creates_meanwhile_is_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def racing(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
        real_mkdir(path, 0o700, dir_fd=dir_fd)  # the other gobtui wins the race
        raise FileExistsError(17, "File exists", path)

    monkeypatch.setattr(os, "mkdir", racing)
    target = tmp_path / "a" / "b"
    assert private_dir(target, "data folder") == []
    assert mode_of(target) == 0o700


def test_concurrent_callers_all_get_the_folder(tmp_path: Path) -> None:
    target = tmp_path / "x" / "y" / "data"
    errors: list[BaseException] = []

    def make() -> None:
        try:
            private_dir(target, "data folder")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and mode_of(target) == 0o700


def test_root_must_be_the_folder_or_above_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        private_dir(tmp_path / "a", "data folder", root=tmp_path / "b")


# -- files ---------------------------------------------------------------------------------


def test_a_new_file_is_0600_even_under_umask_000(tmp_path: Path, umask_000: None) -> None:
    fd, notes = open_private(tmp_path / "f", os.O_WRONLY | os.O_CREAT, "events file")
    os.close(fd)
    assert notes == [] and mode_of(tmp_path / "f") == 0o600
    assert create_private(tmp_path / "g") and mode_of(tmp_path / "g") == 0o600
    assert not create_private(tmp_path / "g")


def test_a_symlinked_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "passwd"
    target.write_text("root\n")
    target.chmod(0o644)
    link = tmp_path / "events.jsonl"
    link.symlink_to(target)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    error = refused(PrivateErrorCode.SYMLINK, open_private, link, flags, "events file")
    assert str(error) == f"events file {link} is a symlink; gobtui does not follow it"
    refused(PrivateErrorCode.SYMLINK, check_private_file, link, "cache file")
    assert not create_private(link)
    assert target.read_text() == "root\n" and mode_of(target) == 0o644


def test_a_dangling_symlink_is_not_created_through_either(tmp_path: Path) -> None:
    link = tmp_path / "cache.db"
    link.symlink_to(tmp_path / "elsewhere")
    refused(PrivateErrorCode.SYMLINK, open_private, link, os.O_WRONLY | os.O_CREAT, "events file")
    assert not create_private(link)
    assert not (tmp_path / "elsewhere").exists()


def test_a_fifo_or_a_folder_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name in ("fifo", "dir"):
        for flags in (os.O_RDONLY, os.O_WRONLY | os.O_APPEND | os.O_CREAT):
            refused(PrivateErrorCode.NOT_REGULAR, open_private, tmp_path / name, flags, "file")
        refused(PrivateErrorCode.NOT_REGULAR, check_private_file, tmp_path / name, "file")


def test_a_readable_file_is_tightened_and_a_shared_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("")
    path.chmod(0o644)
    fd, notes = open_private(path, os.O_RDONLY, "events file")
    os.close(fd)
    assert notes == [f"events file {path} was 0644; made it 0600 (private to you)"]
    assert mode_of(path) == 0o600
    path.chmod(0o640)
    assert check_private_file(path, "cache file") == [
        f"cache file {path} was 0640; made it 0600 (private to you)"
    ]
    assert check_private_file(tmp_path / "absent", "cache file") == []
    path.chmod(0o666)
    refused(PrivateErrorCode.WRITABLE_BY_OTHERS, open_private, path, os.O_RDONLY, "events file")
    refused(PrivateErrorCode.WRITABLE_BY_OTHERS, check_private_file, path, "cache file")
    assert mode_of(path) == 0o666


def test_a_missing_file_is_not_an_error_of_this_module(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_private(tmp_path / "absent", os.O_RDONLY, "events file")


@needs_root
def test_a_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("")
    os.chown(path, NOBODY, NOBODY)
    refused(PrivateErrorCode.FOREIGN_OWNER, open_private, path, os.O_RDONLY, "events file")
    refused(PrivateErrorCode.FOREIGN_OWNER, check_private_file, path, "cache file")


# -- as an unprivileged user ----------------------------------------------------------------


def as_nobody(
    code: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `python -c code args` as uid/gid 65534 with no groups."""
    command = [SETPRIV or "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return subprocess.run(
        [*command, sys.executable, "-c", code, *args],
        cwd=REPO,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A sticky world-writable folder outside pytest's private tmp (as /tmp is), which root
    and nobody can both reach; only root can switch uid, so the test needs root and setpriv."""
    if os.geteuid() != 0 or SETPRIV is None:
        pytest.skip("running a step as another user needs root and setpriv")
    probe = as_nobody("import adapters.files.private_fs")
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot run this checkout's python: {probe.stderr.strip()[-200:]}")
    folder = Path(tempfile.mkdtemp(prefix="gobtui-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


SNIPPET = """
import os, sys
from pathlib import Path
from gobtui.adapters.files.private_fs import PrivateError, private_dir
os.umask(0)
try:
    print(private_dir(Path(sys.argv[1]), "data folder"))
except PrivateError as error:
    print(error.code.value, error, sep="|")
"""


def test_as_nobody_a_folder_root_made_is_refused_and_its_own_is_private(shared_tmp: Path) -> None:
    planted = shared_tmp / "data"
    planted.mkdir()
    planted.chmod(0o777)  # root's, and open: nobody must not use it (nor could chmod it)
    done = as_nobody(SNIPPET, str(planted))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"foreign_owner|data folder {planted} is owned by uid 0, not by you (uid {NOBODY})"
    )
    own = shared_tmp / "home" / ".local" / "share" / "gobtui"
    done = as_nobody(SNIPPET, str(own))
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
    for level in (own, own.parent, own.parent.parent, own.parent.parent.parent):
        st = os.lstat(level)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (NOBODY, 0o700), level


def test_as_nobody_a_symlink_root_planted_is_refused(shared_tmp: Path) -> None:
    target = shared_tmp / "roots"
    target.mkdir(mode=0o755)
    (shared_tmp / "data").symlink_to(target)
    done = as_nobody(SNIPPET, str(shared_tmp / "data"))
    assert done.stdout.strip().startswith("symlink|"), done.stderr
    assert mode_of(target) == 0o755 and os.listdir(target) == []
