"""Helpers the vault's damage and repair tests share."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gobtui.adapters.vault.vault import Vault
from gobtui.core.vault.errors import VaultError


def error_of(call: Callable[[], object]) -> VaultError:
    """The VaultError `call` raises (the test fails if it raises none)."""
    with pytest.raises(VaultError) as caught:
        call()
    return caught.value


def tree(vault: Vault) -> dict[str, bytes]:
    """Every file under the vault, by relative path, with its bytes."""
    return {
        str(p.relative_to(vault.root)): p.read_bytes() for p in vault.root.rglob("*") if p.is_file()
    }
