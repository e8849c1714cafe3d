"""gobtui: a dashboard for the context windows of Claude Code and Codex sessions.

In a checkout, gobtui/core, gobtui/adapters and gobtui/styles are symlinks to the top-level
folders (one namespace, as the wheel installs it). A clone made without symlink support holds
them as small text files instead; that is said here in words, not as a puzzling import error.
"""

import os as _os

__version__ = "0.1.0"

for _name in ("core", "adapters", "styles"):
    _where = _os.path.join(_os.path.dirname(__file__), _name)
    if _os.path.isfile(_where):  # git writes a link it cannot make as a file of its target
        raise ImportError(
            f"gobtui: {_where} is a file, not a link to ../{_name}: this checkout was made "
            "without symlinks (git core.symlinks=false, or a file system without them); "
            "clone it again with them: git -c core.symlinks=true clone ..."
        )
