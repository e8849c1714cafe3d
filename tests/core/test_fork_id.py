"""core.fork_id: a fork's id names its size; a client's own ids are not taken for forks."""

from __future__ import annotations

import hashlib
import uuid

from gobtui.core.fork_id import MAX_TAGGED_SIZE, fork_session_id, published_size


def _operation(n: int) -> str:
    return hashlib.sha256(n.to_bytes(4, "big")).hexdigest()


def test_an_id_says_the_size_and_is_a_version_4_uuid() -> None:
    for n, size in enumerate([0, 1, 178_308, 512 << 20, MAX_TAGGED_SIZE]):
        fork_id = fork_session_id(_operation(n), size)
        parsed = uuid.UUID(fork_id)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == fork_id
        assert published_size(fork_id) == size
        assert fork_session_id(_operation(n), size) == fork_id  # a rerun names the same fork
    assert published_size(fork_session_id(_operation(9), MAX_TAGGED_SIZE + 5)) == MAX_TAGGED_SIZE


def test_other_operations_and_sizes_name_other_forks() -> None:
    ids = {fork_session_id(_operation(n), size) for n in range(200) for size in (10, 11)}
    assert len(ids) == 400


def test_ids_the_clients_write_are_not_forks() -> None:
    assert not any(published_size(str(uuid.uuid4())) is not None for _ in range(20_000))
    v7 = "019a0a58-418e-7f56-8ef1-4bc688e82af5"  # Codex's own
    assert published_size(v7) is None
    one = fork_session_id(_operation(1), 4096)
    flipped = one[:-1] + ("0" if one[-1] != "0" else "1")  # one bit of the tag off
    for text in (flipped, one.upper().replace("-", ""), "not-a-uuid", "", one + "0"):
        assert published_size(text) is None
