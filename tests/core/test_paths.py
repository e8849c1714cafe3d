"""core.paths: the file paths a call names, and which calls only show files."""

from __future__ import annotations

import pytest

from gobtui.core.paths import call_paths, file_names_in, is_file_view, paths_in


def test_paths_in_text_are_paths_and_nothing_else() -> None:
    text = (
        "see src/app.py:12: error and /etc/hosts, https://x.com/a/b.html, 1/2, and/or "
        "lib/spotter_web… ./run.sh ~/notes/todo.md"
    )
    # a URL, a ratio, words joined by a slash and a path cut short are none
    assert paths_in(text) == ["src/app.py", "/etc/hosts", "./run.sh", "~/notes/todo.md"]
    assert paths_in("src/app.py and src/app.py again") == ["src/app.py"]


def test_call_paths_read_the_arguments() -> None:
    assert call_paths({"file_path": "/home/u/p/lib/a.ex", "limit": 20}) == ("/home/u/p/lib/a.ex",)
    assert call_paths({"command": "pytest tests/test_x.py -k foo"}) == ("tests/test_x.py",)
    patch = "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** Add File: docs/x.md\n"
    assert call_paths(patch) == ("src/main.rs", "docs/x.md")
    assert call_paths({"command": ["bash", "-lc", "sed -n 1,80p core/edits.py"]}) == (
        "core/edits.py",
    )
    assert call_paths({"resource": "ops://ingest/state"}) == ()
    assert call_paths(None) == () and call_paths(42) == ()


@pytest.mark.parametrize(
    ("name", "arguments", "view"),
    [
        ("Read", {"file_path": "/a/b.py"}, True),
        ("read", {"resource": "ops://state"}, False),  # a tool called read, no file named
        ("Grep", {"pattern": "x", "output_mode": "content"}, True),  # searches the folder
        ("Bash", {"command": "cat lib/a.ex"}, True),
        ("Bash", {"command": "cd /x && rg -n foo src/app.py | head"}, True),
        ("Bash", {"command": "rg -n foo"}, True),
        ("shell", {"command": 'rg -n "start|state container" /srv/app/src'}, True),  # quoted |
        ("Bash", {"command": "make test; cat a/b.py"}, False),
        ("Bash", {"command": 'echo "unbalanced'}, False),
        ("Bash", {"command": "mix test test/a_test.exs"}, False),
        ("Bash", {"command": "echo hi"}, False),
        ("shell", {"command": ["bash", "-lc", "git diff src/x.py"]}, True),
        ("shell", {"command": ["bash", "-lc", "git commit -m x src/x.py"]}, False),
    ],
)
def test_a_file_view_only_shows_files(name: str, arguments: object, view: bool) -> None:
    assert is_file_view(name, arguments, call_paths(arguments)) is view


def test_file_names_in_gives_paths_then_bare_names_no_path_ends_in() -> None:
    text = (
        "I'm organizing research.md, data-model.md, contracts/openapi.yaml and openapi.yaml; "
        "see src/a.py and a.py, v1.2, e.g. foo.bar and https://x.io/page.html"
    )
    assert file_names_in(text) == [
        "contracts/openapi.yaml",
        "src/a.py",
        "research.md",
        "data-model.md",
    ]
