"""core.digest: the state card over elided items, with salient lines."""

from __future__ import annotations

from gobtui.core.digest import cut_utf8, state_card_digest, tool_name
from gobtui.core.edits import CARD_MARKER, DigestBlock
from gobtui.core.limits import MAX_DIGEST_BYTES
from gobtui.core.model import ItemKind, Provider, TranscriptItem
from gobtui.core.salience import Salience, salience
from tests.core.transcripts import item, output, transcript


def test_tool_name() -> None:
    assert tool_name("Read") == "read"
    assert tool_name("Bash(ls -la)") == "bash"
    assert tool_name("web search") == "web"
    assert tool_name("") == ""


def test_salience_classes_and_precedence() -> None:
    assert salience("error: cannot open file") is Salience.ERROR  # error beats negation
    assert salience("File not found") is Salience.ERROR
    assert salience("TODO: wire the cache") is Salience.OPEN_TASK
    assert salience("follow-up with the vault") is Salience.OPEN_TASK
    assert salience("We decided to keep the parser") is Salience.DECISION
    assert salience("use orjson instead of json") is Salience.DECISION
    assert salience("Do not edit the generated files") is Salience.DECISION
    assert salience("never push to main") is Salience.DECISION
    assert salience("don't rename the module") is Salience.DECISION
    assert salience("listing of the src directory") is None
    assert salience("nothing to see") is None  # "not" only as a word


def test_cut_utf8() -> None:
    assert cut_utf8("abc", 10) == "abc"
    assert cut_utf8("é" * 100, 120) == "é" * 58 + "..."
    assert len(cut_utf8("é" * 100, 120).encode()) <= 120


def sample() -> list[TranscriptItem]:
    return [
        item(0, ItemKind.USER, 20, label="user", summary="<command-name>/clear</command-name>"),
        item(1, ItemKind.USER, 20, label="user", summary="Fix the flaky parser test"),
        item(2, ItemKind.ASSISTANT, 20, label="assistant", summary="Looking at the parser."),
        output(3, label="Read", summary="Read(/src/parser.py) => def parse(): ..."),
        output(4, label="Bash", summary="Bash(pytest) => error: 3 failed"),
        output(5, label="Bash", summary="Bash(cat notes) => TODO: add a fixture"),
        output(6, label="grep", summary="grep(x) => we decided to keep the old API"),
        output(7, label="web", summary="a result with no slash", tool_use_ids=("t7",)),
        item(8, ItemKind.ASSISTANT, 20, label="Bash", summary="Bash(ls)", tool_use_ids=("t9",)),
        item(9, ItemKind.USER, 20, label="Bash", summary="Bash(ls) => a b", tool_use_ids=("t9",)),
    ]


def test_reference_fields() -> None:
    t = transcript(sample(), provider=Provider.CODEX)
    card = state_card_digest(t, [3, 4, 5, 6, 7])
    assert card.goal == "Fix the flaky parser test"  # markup and tool results are skipped
    assert card.summary == card.goal
    assert card.current_work == "Looking at the parser."  # a tool call is not prose
    assert card.context == "provider: codex"
    assert card.covers_items == 5
    assert card.concepts == ["bash", "grep", "read", "web"]
    # Beyond the reference: what a file viewer (read, grep, glob, ls) shows is file content,
    # so its call (which file) is kept, not its output ("we decided" in a grepped file).
    assert card.files_touched == [
        "Read(/src/parser.py)",
        "grep(x)",
        "a result with no slash",  # a tool result goes to files even without a slash
    ]
    assert card.errors == ["Bash(pytest) => error: 3 failed"]
    assert card.open_tasks == ["Bash(cat notes) => TODO: add a fixture"]
    assert card.decisions == []
    assert DigestBlock.parse(card.render()) == card


def test_non_result_without_slash_is_a_decision_and_summary_cut() -> None:
    long_goal = "g" * 200
    t = transcript(
        [
            item(0, ItemKind.USER, 20, label="user", summary=long_goal),
            item(1, ItemKind.SYSTEM, 20, elidable=400, label="note", summary="plain words"),
        ]
    )
    card = state_card_digest(t, [1])
    assert card.decisions == ["plain words"]
    assert card.summary == "g" * 117 + "..."
    empty = state_card_digest(transcript([]), [])
    assert empty.summary == "gobtui state card covering 0 elided items"
    assert empty.goal == "" and empty.covers_items == 0


def test_payload_salient_lines_survive() -> None:
    """One critical sentence at the top of a huge output reaches the card."""
    filler = "\n".join("public synthetic diagnostic payload unchanged" for _ in range(300))
    payload = "Do not delete the migration table; it is still referenced.\n" + filler
    t = transcript(
        [
            item(0, ItemKind.USER, 20, label="user", summary="Clean up the schema"),
            output(1, 14_000, label="bash", summary="bash() => …payload unchanged"),
            output(2, 400, label="status", summary="status() => ok"),
        ]
    )
    without = state_card_digest(t, [1])
    assert "migration" not in without.render()
    card = state_card_digest(t, [1], {1: payload})
    assert "Do not delete the migration table; it is still referenced." in card.decisions
    assert "filler" not in card.render()
    # and the generic first line of a payload is kept when it is not salient
    plain = state_card_digest(t, [1], {1: "\n  …  \nfirst meaningful line\nsecond line"})
    assert "first meaningful line" in plain.files_touched
    assert "second line" not in plain.render()


def test_file_content_never_reaches_the_card() -> None:
    """What Read or Grep shows is a file's content, and Edit shows numbered file lines: their
    "error", "not" or "TODO" says nothing about the session. The call (which file) stays."""
    code = "     1→func run() error {\n     2→\t// TODO: do not retry\n     3→}"
    t = transcript(
        [
            item(0, ItemKind.USER, 20, label="user", summary="Fix the runner"),
            output(1, 14_000, label="Read", summary="Read(/src/run.go) => …1→func run() error {"),
            output(2, 14_000, label="Grep", summary="Grep(retry) => src/a.go:3:// do not retry"),
            output(3, 14_000, label="Edit", summary="Edit(/src/run.go) => …2→ // TODO: later"),
        ]
    )
    payloads = {
        1: code,
        2: "src/a.go:3:// do not retry",
        3: "The file /src/run.go was updated.\n" + code,
    }
    card = state_card_digest(t, [1, 2, 3], payloads)
    assert card.errors == [] and card.open_tasks == [] and card.decisions == []
    assert card.files_touched == [
        "Read(/src/run.go)",
        "Grep(retry)",
        "Edit(/src/run.go)",
        "The file /src/run.go was updated.",
    ]


def test_salient_lines_bounded_per_item_and_deduplicated() -> None:
    payload = "\n".join(f"error: case {i} failed" for i in range(20))
    t = transcript([output(1, summary="run => error: case 0 failed")])
    card = state_card_digest(t, [1], {1: payload})
    # the item line plus at most 4 payload lines; the duplicate of the summary is dropped
    assert card.errors[0] == "run => error: case 0 failed"
    assert len(card.errors) <= 5
    assert len(set(e.casefold() for e in card.errors)) == len(card.errors)


def test_lists_bounded_to_eight_and_decisions_tiered() -> None:
    items = [
        item(i, ItemKind.SYSTEM, 50, elidable=400, label=f"t{i}", summary=f"plain note {i}")
        for i in range(10)
    ]
    items.append(item(10, ItemKind.SYSTEM, 50, elidable=400, label="z", summary="never do X"))
    card = state_card_digest(transcript(items), range(11))
    assert len(card.decisions) == 8
    assert card.decisions[0] == "never do X"  # explicit decisions and negations first
    assert len(card.concepts) == 8


def test_digest_within_cap() -> None:
    items = [output(i, summary=f"error {i}: " + "x" * 400, label=f"tool{i}") for i in range(1, 200)]
    payloads = {
        i: "\n".join(f"decided {i}.{j} " + "y" * 300 for j in range(30)) for i in range(200)
    }
    card = state_card_digest(transcript(items), range(200), payloads)
    text = card.render()
    assert text.startswith(CARD_MARKER)
    assert len(text.encode()) <= MAX_DIGEST_BYTES
    assert DigestBlock.parse(text) == card


def test_the_goal_is_never_the_provider_s_own_compaction_summary() -> None:
    """After a Claude Code compaction the newest "user" message is its summary of the
    conversation; the goal is the user's prompt before it."""
    t = transcript(
        [
            item(0, ItemKind.USER, 20, label="user", summary="Port the exporter to streaming"),
            output(1),
            item(
                2,
                ItemKind.USER,
                900,
                label="user",
                summary="This session is being continued from a previous conversation that ran "
                "out of context. The conversation is summarized below: …",
            ),
        ]
    )
    assert state_card_digest(t, [1]).goal == "Port the exporter to streaming"
