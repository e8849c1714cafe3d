"""Fixtures of the real-client suite: the installed clients and the originals resumed once
per worker (the table of figures at the end is tests/e2e/report.py's, a root plugin)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.clients import Clients, ClientUnavailable, ensure_clients, npm
from tests.e2e.harness import Resumed


@pytest.fixture(scope="session")
def clients() -> Clients:
    if npm() is None:
        pytest.skip("npm is not on PATH: the real-client suite needs it to install the clients")
    try:
        return ensure_clients()
    except ClientUnavailable as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def originals() -> Iterator[dict[str, Resumed]]:
    """Each session resumed as it is, once per worker, to judge its forks against."""
    yield {}
