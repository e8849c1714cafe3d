"""The planning limits are checked before the work they bound: a transcript of more lines
than MAX_PLAN_RECORDS is refused from a count, before any line is decoded."""

from __future__ import annotations

from pathlib import Path

import pytest

from gobtui.adapters.planning import load
from gobtui.adapters.planning.load import PlanningError, PlanningErrorCode, load_session
from gobtui.core.limits import MAX_PLAN_RECORDS
from gobtui.core.model import Provider
from tests.builders.sessions import claude_work_session


def test_a_file_of_too_many_tiny_records_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = claude_work_session(20_000, "tiny").write(tmp_path / "projects")
    with path.open("ab") as handle:
        handle.write(b'{"type":"x"}\n' * MAX_PLAN_RECORDS)

    def no_parse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("parsed before the limit was checked")

    monkeypatch.setattr(load, "parse_data", no_parse)
    with pytest.raises(PlanningError) as refused:
        load_session(path, Provider.CLAUDE)
    assert refused.value.code == PlanningErrorCode.TOO_MANY_RECORDS
    assert f"over the planning limit of {MAX_PLAN_RECORDS}" in str(refused.value)


def test_a_file_under_the_record_limit_is_parsed(tmp_path: Path) -> None:
    path = claude_work_session(20_000, "small").write(tmp_path / "projects")
    assert load_session(path, Provider.CLAUDE).transcript.items
