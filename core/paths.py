"""File paths a tool call names: what the state card lists under `file:`.

A path is taken from where a call names one (its arguments: a `file_path`, a `path`, a
file its provider's own notation names (a Codex patch's file lines), a shell command's words,
file names among them) and from
output lines the card keeps (an error's `src/app.py:12:`). A token is a path when it has a
directory part and either starts like one (`/`, `~/`, `./`, `../`) or ends in a file name with
an extension; URLs, ratios ("1/2") and words joined by a slash ("and/or") are not.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .limits import CALL_PATHS_MAX, PATH_MAX_CHARS, PATH_SCAN_CHARS

PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "target_file")
"""Argument keys whose string value is a file or folder the call works on."""
PATHS_KEYS = ("paths", "files")
"""Argument keys whose list holds such paths."""

EXTENSIONS = [  # what a bare file name ends in (README.md, pyproject.toml)
    "rs",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "py",
    "go",
    "rb",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "swift",
    "toml",
    "json",
    "jsonl",
    "yaml",
    "yml",
    "md",
    "txt",
    "sh",
    "sql",
    "html",
    "css",
    "xml",
    "lock",
    "cfg",
    "ini",
]

READ_TOOLS = frozenset({"read", "ls", "notebookread", "view", "read_file", "list_dir"})
"""Tools whose output is what a named file or folder holds."""
SEARCH_TOOLS = frozenset({"grep", "glob", "search_files", "file_search"})
"""Tools whose output is what files hold, searched from the working folder when no path is
given."""
SEARCH_COMMANDS = frozenset({"rg", "grep", "find", "ls", "tree", "git"})
"""Shell words that show files with no path named (the working folder)."""
READ_COMMANDS = frozenset(
    {"cat", "sed", "head", "tail", "nl", "less", "more", "bat", "rg", "grep", "ls", "find",
     "tree", "wc", "awk", "cut", "sort", "uniq", "jq", "stat", "file", "diff", "git", "cd",
     "echo", "printf"}
)  # fmt: skip
"""Shell words that only read: a command made of them shows files, it does not act."""
_SHELL_WRAPPERS = ("bash", "sh", "zsh", "-lc", "-c", "-l")
_GIT_READS = (["show"], ["diff"], ["log"], ["blame"], ["grep"])
_SEGMENTS = re.compile(r"&&|\|\||[;|\n]")

_TOKEN = re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+/?")
_ROOTED = ("/", "~/", "./", "../")
_FILE_NAME = re.compile(r"[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}")
_KNOWN_EXTENSION = re.compile(r"\.(?:" + "|".join(EXTENSIONS) + r")$")
_CUT = ("…", "...")


def _is_path(token: str) -> bool:
    if len(token) > PATH_MAX_CHARS:
        return False
    if token.startswith(_ROOTED):
        return len(token.strip("/.~")) > 0
    return _FILE_NAME.fullmatch(token.rstrip("/").rsplit("/", 1)[-1]) is not None


_BARE_NAME = re.compile(
    r"(?<![\w/.~@+-])[\w@+-][\w.@+-]*\.(?:" + "|".join(EXTENSIONS) + r")\b(?![/\w])"
)


def file_names_in(text: str) -> list[str]:
    """The paths of `text` (paths_in), then the bare file names (`quickstart.md`: a known
    extension, no directory part) no path of it ends in, in order, without repeats."""
    found = paths_in(text)
    for match in _BARE_NAME.finditer(text):
        name = match.group(0)
        if name not in found and not any(path.endswith("/" + name) for path in found):
            found.append(name)
    return found


def paths_in(text: str) -> list[str]:
    """The path tokens of `text`, in order, without repeats; one cut short (followed by an
    ellipsis) is left out, and a URL has none (a token never starts after `:` or `/`)."""
    found: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        after = text[match.end() : match.end() + 3]
        if after.startswith(_CUT):
            continue
        token = token.rstrip(".")
        if _is_path(token) and token not in found:
            found.append(token)
    return found


def _strings(value: Any) -> Iterable[str]:
    if type(value) is str:
        yield value
    elif type(value) is list:
        yield from (v for v in value if type(v) is str)


def call_paths(
    arguments: Any, noted: Callable[[str], Sequence[str]] | None = None
) -> tuple[str, ...]:
    """The paths a call's arguments name: its path keys, then the paths each text argument
    names (those `noted` finds in it, in the provider's own notation, when it finds any: a
    patch's file lines), then the file names of a shell command (at most CALL_PATHS_MAX)."""
    found: list[str] = []

    def add(paths: Iterable[str]) -> None:
        for path in paths:
            path = path.strip()
            if path and len(path) <= PATH_MAX_CHARS and path not in found:
                found.append(path)

    if type(arguments) is dict:
        for key in PATH_KEYS:
            add(v for v in _strings(arguments.get(key)) if "\n" not in v)
        for key in PATHS_KEYS:
            add(v for v in _strings(arguments.get(key)) if "\n" not in v)
        texts = [
            v for key, value in arguments.items() for v in _strings(value) if key not in PATH_KEYS
        ]
    else:
        texts = list(_strings(arguments))
    for text in texts:
        named = noted(text) if noted is not None else ()
        add(named if named else paths_in(text[:PATH_SCAN_CHARS]))
    command = shell_command(arguments)
    if command is not None:  # a shell word that is a file name is a file here: `cat README.md`
        add(
            word
            for word in (w.strip("'\"") for w in command[:PATH_SCAN_CHARS].split())
            if "/" not in word and _FILE_NAME.fullmatch(word) and _KNOWN_EXTENSION.search(word)
        )
    return tuple(found[:CALL_PATHS_MAX])


def shell_command(arguments: Any) -> str | None:
    """The command line of a shell call's arguments (`command` or `cmd`, a string or a list
    of words), or None."""
    if type(arguments) is dict:
        arguments = arguments.get("command", arguments.get("cmd"))
    if type(arguments) is list:
        arguments = " ".join(v for v in arguments if type(v) is str)
    return arguments if type(arguments) is str else None


def _segments(command: str) -> list[list[str]]:
    """The words of each simple command of `command` (split at |, ||, &&, ; and &, quotes
    respected); on a quote left open, split at those marks regardless."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and all(char in "|&;()<>" for char in token):
                segments.append([])
            else:
                segments[-1].append(token)
    except ValueError:
        return [segment.split() for segment in _SEGMENTS.split(command)]
    return segments


def _only_reads(command: str, *, searching: bool = False) -> bool:
    """Whether every simple command of `command` is a reading word (`searching`: and one of
    them searches the working folder)."""
    words_seen = False
    searched = False
    for words in _segments(command[:PATH_SCAN_CHARS]):
        while words and (words[0] in _SHELL_WRAPPERS or "=" in words[0]):
            words.pop(0)  # `bash -lc '...'`, `LC_ALL=C sort`
        if not words:
            continue
        if len(words) == 1 and " " in words[0]:  # `bash -lc 'a | b'`: the quoted script
            return _only_reads(words[0], searching=searching)
        if words[0] not in READ_COMMANDS or (words[0] == "git" and words[1:2] not in _GIT_READS):
            return False
        words_seen = True
        searched = searched or words[0] in SEARCH_COMMANDS
    return words_seen and (searched or not searching)


def is_file_view(name: str, arguments: Any, paths: tuple[str, ...]) -> bool:
    """Whether a call only shows what files hold: a reading tool that names a path, a search
    tool, or a shell command of reading words that names a path or searches. A tool called
    read with no path is no file view."""
    tool = name.lower()
    if tool in READ_TOOLS:
        return bool(paths)
    if tool in SEARCH_TOOLS:
        return True
    command = shell_command(arguments)
    return command is not None and _only_reads(command, searching=not paths)
