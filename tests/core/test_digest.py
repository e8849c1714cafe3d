"""core.digest: the state card over elided items, with salient lines."""

from __future__ import annotations

from gobtui.core.digest import cut_utf8, state_card_digest, tool_name
from gobtui.core.edits import CARD_MARKER, DigestBlock
from gobtui.core.limits import DIGEST_LIST_MAX, MAX_DIGEST_BYTES
from gobtui.core.model import ItemKind, Provider, TranscriptItem
from gobtui.core.salience import Salience, salience
from tests.builders.items import item, output, transcript


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


def test_salience_by_content_not_by_tool() -> None:
    """Prohibitions, pending effects, revocations and approvals are salient; a plain negation
    in command output, a zero count and a success status are not."""
    for line in (
        "Do NOT restart the worker while the queue drains",
        "Approval NOT granted for the production deploy",
        "Writes to /etc are forbidden in this sandbox",
        "You must not retry the charge",
        "The API key was revoked this morning",
        "This flag is superseded by --strict",
        "We agreed to ship on Friday",
        "Deploy approved by the on-call lead",
    ):
        assert salience(line) is Salience.DECISION, line
    for line in (
        "The refund is still pending",
        "The migration is in-flight; confirm it finished before retrying",
        "the index is not yet built",
        "awaiting the reviewer",
    ):
        assert salience(line) is Salience.OPEN_TASK, line
    assert salience("fatal: cannot lock ref 'refs/heads/x'") is Salience.ERROR
    assert salience("Exit code: 1") is Salience.ERROR
    for line in (
        "Changes not staged for commit:",
        "The pattern can never match the type.",
        "No :ignore_warnings opt specified in mix.exs",
        "14 doctests, 410 tests, 0 failures",
        "Exit code: 0",
        "I do not know why",
    ):
        assert salience(line) is None, line


def test_cut_utf8() -> None:
    assert cut_utf8("abc", 10) == "abc"
    assert cut_utf8("é" * 100, 120) == "é" * 58 + "..."
    assert len(cut_utf8("é" * 100, 120).encode()) <= 120


def sample() -> list[TranscriptItem]:
    return [
        item(0, ItemKind.USER, 20, label="user", summary="<command-name>/clear</command-name>"),
        item(1, ItemKind.USER, 20, label="user", summary="Fix the flaky parser test"),
        item(2, ItemKind.ASSISTANT, 20, label="assistant", summary="Looking at the parser."),
        output(
            3,
            label="Read",
            summary="Read(/src/parser.py) => def parse(): ...",
            paths=("/src/parser.py",),
            file_view=True,
        ),
        output(4, label="Bash", summary="Bash(pytest) => error: 3 failed", failed=True),
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
    assert card.summary == ""  # no field repeats another
    assert card.current_work == "Looking at the parser."  # a tool call is not prose
    assert card.context == "provider: codex"
    assert card.covers_items == 5
    assert card.concepts == []  # tool names are no concepts
    # A file view (a read of a named file) gives its path; its output is the file's content.
    assert card.files_touched == ["/src/parser.py"]
    assert card.errors == ["Bash(pytest) => error: 3 failed"]
    assert card.open_tasks == ["Bash(cat notes) => TODO: add a fixture"]
    # grep named no file: no file view, but what a tool printed is nobody's decision
    assert card.decisions == [] and card.constraints == []
    assert DigestBlock.parse(card.render()) == card


def test_a_line_that_says_nothing_is_not_kept_and_no_field_repeats_the_goal() -> None:
    long_goal = "g" * 200
    t = transcript(
        [
            item(0, ItemKind.USER, 20, label="user", summary=long_goal),
            item(1, ItemKind.SYSTEM, 20, elidable=400, label="note", summary="plain words"),
            output(2, summary="Bash(git status) => Changes not staged for commit:"),
        ]
    )
    card = state_card_digest(t, [1, 2])
    assert card.decisions == [] and card.files_touched == [] and card.covers_items == 2
    assert card.goal == long_goal and card.summary == ""
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
    # a rule an output states is a constraint; decisions are what the user and agent said
    assert card.constraints == ["Do not delete the migration table; it is still referenced."]
    assert card.decisions == []
    assert "filler" not in card.render()
    # and a payload's lines that say nothing are not kept, not even the first
    plain = state_card_digest(t, [1], {1: "\n  …  \nfirst meaningful line\nsecond line"})
    assert "first meaningful line" not in plain.render() and "second line" not in plain.render()


def test_file_content_never_reaches_the_card() -> None:
    """What Read or Grep shows is a file's content, and Edit shows numbered file lines: their
    "error", "not" or "TODO" says nothing about the session. The call (which file) stays."""
    code = "     1→func run() error {\n     2→\t// TODO: do not retry\n     3→}"
    t = transcript(
        [
            item(0, ItemKind.USER, 20, label="user", summary="Fix the runner"),
            output(
                1,
                14_000,
                label="Read",
                summary="Read(/src/run.go) => …1→func run() error {",
                paths=("/src/run.go",),
                file_view=True,
            ),
            output(
                2,
                14_000,
                label="Grep",
                summary="Grep(retry) => src/a.go:3:// do not retry",
                paths=("src",),
                file_view=True,
            ),
            output(
                3,
                14_000,
                label="Edit",
                summary="Edit(/src/run.go) => …2→ // TODO: later",
                paths=("/src/run.go",),
            ),
        ]
    )
    payloads = {
        1: code,
        2: "src/a.go:3:// do not retry",
        3: "The file /src/run.go was updated.\n" + code,
    }
    card = state_card_digest(t, [1, 2, 3], payloads)
    assert card.errors == [] and card.open_tasks == [] and card.decisions == []
    assert card.files_touched == ["src", "/src/run.go"]  # a path stands where it was last seen


def test_salient_lines_bounded_per_item_and_deduplicated() -> None:
    payload = "\n".join(f"error: case {i} failed in step {i}" for i in range(20))
    payload += "\nTODO: a" + "\nTODO: b" * 5
    t = transcript([output(1, summary="run => error: case 0 failed", failed=True)])
    card = state_card_digest(t, [1], {1: payload})
    # the item line plus at most 4 payload lines; one error signature stands once, newest
    assert card.errors == ["run => error: case 0 failed", "error: case 3 failed in step 3"]
    assert card.open_tasks == []  # the cap was reached before them
    passed = transcript([output(1, summary="run => error: case 0 failed")])
    assert state_card_digest(passed, [1], {1: payload}).errors == []  # the call succeeded


def test_lists_keep_the_newest_in_the_order_they_happened() -> None:
    items = [
        item(i, ItemKind.ASSISTANT, 50, elidable=400, label=f"t{i}", summary=f"never do X{i}")
        for i in range(DIGEST_LIST_MAX + 2)
    ]  # turns of prose a strategy drops whole
    items.append(item(99, ItemKind.ASSISTANT, 50, elidable=400, label="z", summary="plain note"))
    card = state_card_digest(transcript(items), [*range(DIGEST_LIST_MAX + 2), 99])
    assert card.decisions == [f"never do X{i}" for i in range(2, DIGEST_LIST_MAX + 2)]
    assert card.concepts == []


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


def test_elided_edits_give_their_files_and_reasoning_nothing() -> None:
    edit = item(
        1, ItemKind.ASSISTANT, 300, elidable=4000, label="Edit",
        summary='Edit({"file_path":"/src/shop/totals.py"})', paths=("/src/shop/totals.py",),
    )  # fmt: skip
    thought = item(
        2, ItemKind.REASONING, 60, elidable=9000, label="reasoning",
        summary="**Fixing the error** I decided to rewrite quickstart.md and docs/api.md first",
    )  # fmt: skip
    card = state_card_digest(transcript([edit, thought]), [1, 2])
    assert card.files_touched == ["/src/shop/totals.py"]  # files come from calls only
    # the model's narrative is no decision or error of the session's, nor is code an edit wrote
    assert card.decisions == [] and card.errors == []


def test_the_goal_is_there_whenever_the_session_has_a_prompt() -> None:
    card_record = (
        "[gobtui state card] goal: Port the exporter to streaming file: /src/x.py "
        "(covers 3 earlier records)"
    )
    cases = [
        # a fork of a fork: the earlier card's goal
        ([item(0, ItemKind.USER, 20, summary=card_record), output(1)], "Port the exporter to streaming"),
        # only a prompt from before a compaction
        ([item(0, ItemKind.USER, 20, summary="Fix the parser", active=False), output(1)], "Fix the parser"),
        # a slash command's words, without its tags
        (
            [item(0, ItemKind.USER, 20, summary="<command-name>/review</command-name> "
                  "<command-args>the billing module</command-args>"), output(1)],
            "/review the billing module",
        ),
        # a client's notice is nobody's prompt
        ([item(0, ItemKind.USER, 20, summary="<task-notification> <task-id>b7</task-id>"), output(1)], ""),
    ]  # fmt: skip
    for items, goal in cases:
        assert state_card_digest(transcript(items), [1]).goal == goal


def test_errors_come_from_failed_calls_only() -> None:
    log = "[warning] Malformed JSON in /tmp/idx/a.jsonl: error at line 3"
    t = transcript(
        [
            item(0, ItemKind.USER, 20, summary="Fix the index"),
            output(1, summary=f"Bash(pytest -q) => {log} 41 passed in 0.3s"),
            output(2, summary="Bash(make) => boom", failed=True),
            output(3, summary="Bash(cargo test) => … test result: FAILED. 1 passed; 2 failed"),
        ]
    )
    payloads = {1: log + "\n41 passed in 0.3s", 2: "error: boom at 0x1f\nerror: boom at 0x2e"}
    card = state_card_digest(t, [1, 2, 3], payloads)
    assert not any("Malformed" in e for e in card.errors)  # a run that passed
    assert "error: boom at 0x2e" in card.errors and "error: boom at 0x1f" not in card.errors
    assert any("test result: FAILED" in e for e in card.errors)  # a failing summary
    assert card.files_touched == []  # never a path out of error text
