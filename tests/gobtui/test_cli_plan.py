"""plan / eval / tune / explain / presets / policy-check end to end on real fixture copies."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from gobtui.adapters.planning.load import load_session, plan_session
from gobtui.cli.dispatch import main
from gobtui.core.edits import CompactionPlan
from gobtui.core.model import Provider
from gobtui.core.policy import PolicyConfig
from gobtui.core.strategies import STRATEGIES
from tests.builders.common import rehydrate
from tests.gobtui.corpus_home import SPOTTER, place_spotter

CODEX_BIG = "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
LOW = ["--trigger", "20000", "--floor", "5000"]


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    project = home / "projects" / "-home-dev-spotter"
    project.mkdir(parents=True)
    place_spotter(project / f"{SPOTTER}.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return project / f"{SPOTTER}.jsonl"


@pytest.fixture
def codex_file(tmp_path: Path, fixtures_dir: Path) -> Path:
    """The 1 MB localpush rollout with its redacted outputs filled back to their sizes, so
    there is tool output to elide (the shared fixtures are sanitized)."""
    path = tmp_path / CODEX_BIG
    path.write_bytes(
        rehydrate((fixtures_dir / "codex" / f"madshn__localpush__{CODEX_BIG}").read_bytes())
    )
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> object:
    assert main(list(argv)) == code
    return orjson.loads(capsys.readouterr().out)


def test_plan_json_by_id_prefix_matches_the_service(
    claude_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = claude_home.read_bytes()
    data = run_json(capsys, "plan", SPOTTER[:8], "--strategy", "elide", *LOW, "--json")
    assert isinstance(data, dict)
    session = load_session(claude_home, Provider.CLAUDE)
    expected = plan_session(
        session, "elide", PolicyConfig(trigger_tokens=20_000, floor_tokens=5_000)
    ).result
    assert isinstance(expected, CompactionPlan)
    assert data["strategy"] == "elide"
    assert data["admission"] == {"admitted": True, "codes": []}
    assert data["context_tokens_before"] == expected.context_tokens_before > 20_000
    assert data["context_tokens_after"] == expected.context_tokens_after
    assert data["context_tokens_after"] < data["context_tokens_before"]
    ops = [edit["op"] for edit in data["edits"]]
    assert ops[0] == "elide"
    assert claude_home.read_bytes() == before  # planning never writes


def test_plan_below_trigger_is_a_no_plan_object(
    claude_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "plan", str(claude_home), "--json")
    context = load_session(claude_home, Provider.CLAUDE).transcript.context_tokens()
    assert isinstance(data, dict)
    why = data.pop("why")
    assert why.startswith(f"{context // 1000}k: ") and why.endswith("nothing to do yet")
    assert data == {
        "status": "no_plan",
        "reason_code": "below_trigger",
        "context_tokens_before": context,
        # 250k lowered to 90 % of the 200k window, as the board marks it
        "effective_trigger_tokens": 150_300,
        "target_context_tokens": 40_000,
        "min_savings_tokens": 4_096,
        "projected_context_tokens_after": None,
        "projected_savings_tokens": None,
    }


def test_plan_text_shows_the_state_card(
    codex_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(codex_file), "--strategy", "compacted", *LOW]) == 0
    out = capsys.readouterr().out
    assert "compacted:" in out and "[gobtui state card]" in out


def test_eval_json_has_a_row_per_strategy(
    codex_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = run_json(capsys, "eval", str(codex_file), *LOW, "--json")
    assert isinstance(rows, list)
    assert [row["strategy"] for row in rows] == list(STRATEGIES)
    assert sum(row["best"] for row in rows) <= 1
    planned = [row for row in rows if row["status"] == "plan" and not row["control"]]
    assert planned, "some file strategy must plan on a 1 MB Codex session at a 20k trigger"
    for row in planned:
        assert row["bytes_after"] < row["bytes_before"]
        assert row["valid"] is True
        assert 0.0 <= row["recall"] <= 1.0
        assert row["prefix_tokens"] <= row["context_tokens_before"]


def test_eval_text_shows_no_recall_for_a_provider_compaction(
    codex_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sawtooth asks the provider to compact: what its summary keeps is unknown, so the table
    shows no recall (the JSON keeps the reference's figure); a file plan shows its own."""
    argv = ["eval", str(codex_file), *LOW, "--strategy", "sawtooth", "--strategy", "elide"]
    rows = run_json(capsys, *argv, "--json")
    assert isinstance(rows, list) and rows[0]["control"] and rows[0]["recall"] is not None
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert "(live: written in the last 180 s; auto uses the provider's controls)" in out[0]
    lines = {line.split()[0]: line.split() for line in out[2:]}
    header = ["strategy", "status", "after", "saved", "prefix", "valid", "recall", "ms"]
    recall = header.index("recall")
    assert lines["sawtooth"][recall] == "-" and lines["sawtooth"][header.index("valid")] == "-"
    assert lines["elide"][recall] == f"{rows[1]['recall']:.0%}"
    os.utime(codex_file, (codex_file.stat().st_atime, codex_file.stat().st_mtime - 3600))
    assert main(argv) == 0  # idle an hour: no note
    assert "(live" not in capsys.readouterr().out.splitlines()[0]


def test_eval_only_named_strategies(codex_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(
        capsys, "eval", str(codex_file), "--strategy", "elide", "--strategy", "dedupe", "--json"
    )
    assert isinstance(rows, list)
    assert [row["strategy"] for row in rows] == ["elide", "dedupe"]
    twice = ["--strategy", "dedupe", "--strategy", "elide", "--strategy", "dedupe"]
    rows = run_json(capsys, "eval", str(codex_file), *twice, "--json")
    assert isinstance(rows, list)
    assert [row["strategy"] for row in rows] == ["dedupe", "elide"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["plan", "nope-no-such-session"], "no session matches"),
        (["plan", "{path}", "--strategy", "bogus"], "unknown strategy 'bogus'"),
        (["plan", "{path}", "--preset", "bogus"], "bogus"),
        (["plan", "{path}", "--trigger", "-5"], "must be between 1 and 10,000,000 tokens, got -5"),
        (["plan", "{path}", "--trigger", "0"], "must be between 1 and 10,000,000 tokens, got 0"),
        (["plan", "{path}", "--trigger", "99999999999"], "must be between 1 and 10,000,000"),
        (["plan", "{path}", "--floor", "-1"], "must be between 0 and 10,000,000 tokens, got -1"),
        (["plan", ""], "empty session selector"),
        (
            ["policy-check", "--provider", "claude", "--context-tokens", "1", "--session", ""],
            "empty session selector",
        ),
        (["explain", "--window", "0"], "must be between 10,000 and 10,000,000 tokens, got 0"),
        (["explain", "--window", "1"], "must be between 10,000 and 10,000,000 tokens, got 1"),
        (["plan", "{path}", "--trigger", "1000", "--floor", "2000"], "floor"),
        (["eval", "{path}", "--strategy", "bogus"], "unknown strategy"),
        (["plan", "{path}", "--strategy", "external"], "name a preset"),
        (["eval", "{path}", "--strategy", "external"], "gobtui plan <session> --preset NAME"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(
    codex_file: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    argv = [arg.replace("{path}", str(codex_file)) for arg in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse type errors exit 2 by themselves
        code = int(exit_.code or 0)
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_ambiguous_prefix_lists_the_matches(
    tmp_path: Path,
    fixtures_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    for source in sorted((fixtures_dir / "codex").glob("madshn__localpush__*.jsonl")):
        shutil.copyfile(source, day / source.name.removeprefix("madshn__localpush__"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert main(["plan", "019c8a"]) == 2
    err = capsys.readouterr().err
    assert "matches 3 sessions" in err and "019c8a59" in err


def test_tune_json_caps_the_trigger_to_a_quarter_window(
    claude_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "tune", SPOTTER, "--json")
    assert isinstance(data, dict)
    assert data["context_window"] == 200_000 and data["adaptive"] is False
    tuned = data["tuned"]
    assert (tuned["trigger_tokens"], tuned["floor_tokens"]) == (50_000, 25_000)
    assert "trigger_capped_to_window_fraction" in tuned["reasons"]
    assert "trigger capped to 25% of the context window" in tuned["reasons_words"]
    # adaptive off: what decides is the one trigger explain states for that window
    explained = run_json(capsys, "explain", "--window", "200000", "--json")
    assert isinstance(explained, dict)
    assert data["trigger_tokens"] == explained["trigger_tokens"] == 150_300


def test_config_file_layers_reach_plan(
    claude_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[policy]\ntrigger_tokens = 30000\nfloor_tokens = 5000\n\n[sessions."{SPOTTER}"]\nstrategy = "dedupe"\n'
    )
    monkeypatch.setenv("GOBTUI_CONFIG", str(config))
    data = run_json(capsys, "plan", SPOTTER, "--json")
    assert isinstance(data, dict)
    assert data.get("strategy") == "dedupe" or data.get("reason_code") in {
        "strategy_returned_no_plan",
        "minimum_savings_not_met",
    }
    config.write_text("[policy]\ntriger_tokens = 1\n")
    assert main(["plan", SPOTTER]) == 2
    assert "policy.triger_tokens" in capsys.readouterr().err


def test_presets_and_policy_check(capsys: pytest.CaptureFixture[str]) -> None:
    presets = run_json(capsys, "presets", "--json")
    assert isinstance(presets, list)
    assert {p["name"] for p in presets} >= {"deep-work", "chatty", "compact-window", "cliff"}
    deep = next(p for p in presets if p["name"] == "deep-work")
    assert (deep["strategy"], deep["trigger_tokens"], deep["floor_tokens"]) == (
        "elide",
        150_000,
        20_000,
    )
    live = run_json(
        capsys, "policy-check", "--provider", "claude", "--context-tokens", "300000",
        "--session-active", "--json",
    )  # fmt: skip
    assert live == {
        "action": "provider_compact",
        "strategy": "sawtooth",
        "control": "/compact",
        "context_tokens": 300_000,
        "effective_trigger_tokens": 250_000,  # no window: nothing to lower it to
        "floor_tokens": 40_000,
        "tune_reasons": [],  # adaptive is off
    }
    idle = run_json(
        capsys, "policy-check", "--provider", "codex", "--context-tokens", "100000", "--json"
    )
    assert isinstance(idle, dict) and idle["action"] == "none"
    high = run_json(
        capsys, "policy-check", "--provider", "codex", "--context-tokens", "200000",
        "--quota-pressure", "high", "--json",
    )  # fmt: skip
    assert isinstance(high, dict)
    assert (high["action"], high["effective_trigger_tokens"]) == ("transcript_compact", 175_000)
    windowed = run_json(  # as plan and the board: 250k lowered to fire before the client
        capsys, "policy-check", "--provider", "claude", "--context-tokens", "185000",
        "--window", "200000", "--json",
    )  # fmt: skip
    assert isinstance(windowed, dict)
    assert (windowed["action"], windowed["effective_trigger_tokens"]) == (
        "transcript_compact",
        150_300,
    )


def test_explain_prints_the_resolved_sawtooth(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--preset", "deep-work", "--window", "400000"]) == 0
    out = capsys.readouterr().out
    assert "trigger 150,000 tokens (38% of the window)" in out
    assert "each cycle reclaims about 130,000 tokens" in out
    assert "average occupancy about 85,000 tokens" in out


def test_explain_uses_the_trigger_plan_uses_for_that_window(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "--window", "200000"]) == 0
    out = capsys.readouterr().out
    assert "trigger 150,300 tokens (75% of the window)" in out
    assert "the policy's 250,000, lowered to fire before the client does" in out
    assert "the client compacts by itself at 167,000 (84% of the window)" in out
    assert "each cycle reclaims about 110,300 tokens" in out
    assert "provider wins" not in out
    assert main(["explain", "--window", "200000", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert (data["policy_trigger_tokens"], data["trigger_tokens"]) == (250_000, 150_300)
    assert data["provider_compacts_at_tokens"] == 167_000
    assert data["cycle_reclaims_tokens"] == 110_300
    assert data["tuned"]["trigger_tokens"] == 50_000


DRIVEN = Path(__file__).resolve().parents[1] / "corpus" / "driven" / "three-prompts.jsonl"


def test_explain_a_session_says_what_fills_its_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / DRIVEN.name
    shutil.copyfile(DRIVEN, path)
    data = run_json(capsys, "explain", str(path), "--json")
    assert isinstance(data, dict)
    comp = data["composition"]
    parts = comp["parts"]
    assert set(parts) == {
        "fixed", "reasoning", "tool_outputs", "edit_inputs", "images", "conversation"
    }  # fmt: skip
    assert parts["reasoning"]["tokens"] > 0 and parts["reasoning"]["reclaimable_tokens"] > 0
    assert parts["fixed"]["reachable"] is False and parts["fixed"]["reclaimable_tokens"] == 0
    total = sum(p["tokens"] for p in parts.values())
    assert abs(total - comp["reported_tokens"]) < 0.05 * comp["reported_tokens"]
    assert main(["explain", str(path)]) == 0
    text = capsys.readouterr().out
    assert "earlier thinking" in text and "no fork reaches it" in text
    assert "fit error" in text


def test_detect_json_carries_the_composition_when_asked(
    claude_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = run_json(capsys, "detect", "--json", "--all")
    assert isinstance(plain, list) and plain and "composition" not in plain[0]
    rows = run_json(capsys, "detect", "--json", "--all", "--composition")
    assert isinstance(rows, list)
    comp = rows[0]["composition"]
    assert comp["fit_points"] > 10 and comp["parts"]["tool_outputs"]["tokens"] > 0


def test_a_plan_with_no_plan_says_why(
    claude_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "plan", SPOTTER[:8], "--strategy", "compacted", "--json")
    assert isinstance(data, dict) and data["status"] == "no_plan"
    assert data["reason_code"] == "below_trigger"
    assert "fixed overhead" in data["why"] and "below the trigger" in data["why"]
    assert main(["plan", SPOTTER[:8], "--strategy", "compacted"]) == 0
    assert "fixed overhead" in capsys.readouterr().out


def test_plan_text_numbers_records_as_the_file_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plan reads from the newest compaction on, but names records by the file's own
    numbers (1-based): the range it elides lies in the live part, on tool results."""
    from tests.adapters.test_live_part import _claude

    path, start = _claude(tmp_path)
    first = path.read_bytes().count(b"\n", 0, start) + 1
    assert main(["plan", str(path), "--strategy", "elide", *LOW]) == 0
    out = capsys.readouterr().out
    assert f"(read from record {first:,}, the newest compaction" in out
    low, high = (
        int(n.replace(",", ""))
        for n in out.split(" outputs (records ")[1].split(")")[0].split("..")
    )
    lines = path.read_bytes().splitlines()
    assert first < low <= high <= len(lines)
    assert b'"tool_result"' in lines[low - 1] and b'"tool_result"' in lines[high - 1]


def test_a_named_model_scorer_is_said_to_be_unavailable(
    claude_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["plan", SPOTTER[:8], "--strategy", "scored", *LOW, "--json"]
    assert main(argv) == 0
    plain = capsys.readouterr()
    assert "scorer" not in plain.err
    monkeypatch.setenv("GOBSTOPPER_SCORER", "jev")
    assert main(argv) == 0
    named = capsys.readouterr()
    assert named.out == plain.out  # the same plan: the heuristic ranked it
    (line,) = named.err.strip().splitlines()
    assert "GOBSTOPPER_SCORER=jev" in line and "deterministic heuristic" in line
    assert main(["detect", "--json"]) == 0  # nothing is scored there: nothing is said
    assert capsys.readouterr().err == ""
