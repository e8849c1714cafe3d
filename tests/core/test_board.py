"""core.board: occupancy, bands, headroom, burn rate, ETA, live, sorting, filtering."""

from __future__ import annotations

from dataclasses import replace

from gobtui.core.board import (
    Band,
    BoardPolicy,
    SortKey,
    build_board,
    build_row,
    burn_rate,
    crossed_trigger,
    effective_trigger,
    filter_rows,
    project_name,
    sort_rows,
)
from gobtui.core.model import ContextState, Provider, SessionSummary, UsageSample
from gobtui.core.status import Status

NOW = 1_800_000_000.0


def summary(
    path: str = "/h/a.jsonl",
    tokens: int | None = 100_000,
    window: int | None = 200_000,
    mtime: float = NOW - 10,
    history: list[tuple[float, int]] | None = None,
    provider: Provider = Provider.CLAUDE,
    cwd: str | None = "/home/dev/src/proj",
    state: ContextState = ContextState.REPORTED,
    title: str | None = "Fix the flaky test",
) -> SessionSummary:
    return SessionSummary(
        provider=provider,
        session_id=path.rsplit("/", 1)[-1].split(".")[0],
        path=path,
        cwd=cwd,
        title=title,
        context_tokens=tokens,
        context_window=window,
        context_state=state,
        mtime=mtime,
        usage_history=[UsageSample(ts=t, context_tokens=n) for t, n in (history or [])],
    )


def test_effective_trigger_fires_before_the_client_compacts_by_itself() -> None:
    policy = BoardPolicy(trigger_tokens=250_000)
    # Claude Code compacts a 200k session at 167k: 90 % of that
    assert effective_trigger(policy, summary(window=200_000)) == 150_300
    assert effective_trigger(policy, summary(window=None)) == 150_300
    assert effective_trigger(policy, summary(window=1_000_000)) == 250_000
    # Codex at 90 % of its 272k model window (244,800), whatever window the rollout records
    codex = summary(provider=Provider.CODEX, window=258_400)
    assert effective_trigger(policy, codex) == 220_320


def test_occupancy_band_headroom_and_over_trigger() -> None:
    policy = BoardPolicy()
    row = build_row(summary(tokens=100_000), policy, NOW)
    assert row.occupancy == 0.5
    assert row.band is Band.WARN
    assert row.headroom_tokens == 50_300  # to the 150,300 trigger
    assert not row.over_trigger
    hot = build_row(summary(tokens=190_000), policy, NOW)
    assert hot.band is Band.ALERT and hot.over_trigger and hot.headroom_tokens == -39_700
    cool = build_row(summary(tokens=20_000), policy, NOW)
    assert cool.band is Band.OK
    unknown = build_row(summary(tokens=None, state=ContextState.RESET), policy, NOW)
    assert (
        unknown.band is Band.UNKNOWN
        and unknown.occupancy is None
        and unknown.headroom_tokens is None
    )


def test_burn_rate_uses_the_rising_run_after_the_last_compaction() -> None:
    history = [(NOW - 600, 150_000), (NOW - 300, 30_000), (NOW - 120, 42_000), (NOW - 60, 54_000)]
    # 30k -> 54k over 240 s = 6,000 tokens/min; the 150k before the drop is ignored.
    assert burn_rate([UsageSample(ts=t, context_tokens=n) for t, n in history]) == 6_000.0
    assert burn_rate([UsageSample(ts=NOW, context_tokens=5)]) is None
    assert burn_rate([UsageSample(ts=None, context_tokens=5)] * 3) is None


def test_burn_rate_follows_a_session_that_speeds_up() -> None:
    # 1k/min for 12 minutes, then 10k/min over the last minute (three samples): the pace
    # the forecast needs is the recent one, not the 15-minute average (about 2k/min).
    slow = [(NOW - 810 + 60 * i, 100_000 + 1_000 * i) for i in range(13)]
    fast = [(NOW - 60, 117_000), (NOW - 30, 122_000), (NOW, 127_000)]
    samples = [UsageSample(ts=t, context_tokens=n) for t, n in slow + fast]
    assert burn_rate(samples) == 10_000.0
    # One big output in the last seconds is not a pace: two recent samples keep the average.
    jump = [*slow, (NOW, 150_000)]
    rate = burn_rate([UsageSample(ts=t, context_tokens=n) for t, n in jump])
    assert rate is not None and round(rate) == round((150_000 - 100_000) * 60 / 810)
    # A session slowing down keeps the higher, longer-run rate (the earlier warning).
    slowing = [(NOW - 600, 50_000), (NOW - 300, 100_000), (NOW - 55, 101_000),
               (NOW - 30, 101_500), (NOW, 102_000)]  # fmt: skip
    assert burn_rate([UsageSample(ts=t, context_tokens=n) for t, n in slowing]) == 5_200.0


def test_eta_only_for_live_sessions_with_a_rate() -> None:
    history = [(NOW - 120, 100_000), (NOW - 60, 110_000)]
    live = build_row(summary(tokens=110_000, history=history, mtime=NOW - 5), BoardPolicy(), NOW)
    # headroom 150.3k - 110k = 40.3k at 10k/min -> 241.8 s
    assert live.live and live.burn_per_min == 10_000.0 and live.eta_secs == 241.8
    idle = build_row(summary(tokens=110_000, history=history, mtime=NOW - 4000), BoardPolicy(), NOW)
    assert not idle.live and idle.eta_secs is None


def test_live_threshold_is_configurable() -> None:
    s = summary(mtime=NOW - 200)
    assert not build_row(s, BoardPolicy(), NOW).live
    assert build_row(s, BoardPolicy(hot_secs=300), NOW).live


def test_live_sessions_keep_their_places_as_they_write() -> None:
    """Two agents writing every second: by last write they would swap on every tick, and the
    cursor's row with them. Live rows go first, newest started first; idle ones by last write."""

    def board(old_written: float, new_written: float) -> list[str]:
        old = replace(summary("/h/old.jsonl", mtime=old_written), first_ts=NOW - 3600)
        new = replace(summary("/h/new.jsonl", mtime=new_written), first_ts=NOW - 600)
        idle = summary("/h/idle.jsonl", mtime=NOW - 4000)
        rows = build_board([old, new, idle], BoardPolicy(), NOW)
        return [r.key for r in sort_rows(rows, SortKey.ACTIVITY)]

    expected = ["/h/new.jsonl", "/h/old.jsonl", "/h/idle.jsonl"]
    assert board(NOW - 1, NOW - 2) == expected
    assert board(NOW - 2, NOW - 1) == expected
    # gone idle: back among the others by its last write (newest first)
    old_idle = replace(summary("/h/old.jsonl", mtime=NOW - 3000), first_ts=1.0)
    rows = build_board([old_idle, summary("/h/idle.jsonl", mtime=NOW - 4000)], BoardPolicy(), NOW)
    assert [r.key for r in sort_rows(rows, SortKey.ACTIVITY)] == ["/h/old.jsonl", "/h/idle.jsonl"]


def test_sort_orders_are_deterministic() -> None:
    rows = build_board(
        [
            summary("/h/b.jsonl", tokens=50_000, mtime=NOW - 50, cwd="/x/zeta"),
            summary("/h/a.jsonl", tokens=150_000, mtime=NOW - 50, cwd="/x/alpha"),
            summary(
                "/h/c.jsonl", tokens=None, mtime=NOW - 5, cwd="/x/mid", state=ContextState.ABSENT
            ),
        ],
        BoardPolicy(),
        NOW,
    )
    assert [r.key for r in sort_rows(rows, SortKey.ACTIVITY)] == [
        "/h/c.jsonl",
        "/h/a.jsonl",
        "/h/b.jsonl",
    ]
    assert [r.key for r in sort_rows(rows, SortKey.OCCUPANCY)] == [
        "/h/a.jsonl",
        "/h/b.jsonl",
        "/h/c.jsonl",
    ]
    assert [r.project for r in sort_rows(rows, SortKey.PROJECT)] == ["alpha", "mid", "zeta"]
    # reversed: the same order, last first (a second click on the header)
    for key in SortKey:
        assert sort_rows(rows, key, reverse=True) == sort_rows(rows, key)[::-1]
    assert SortKey.PROJECT.next() is SortKey.ATTENTION
    assert SortKey.ATTENTION.next() is SortKey.ACTIVITY


def test_filters() -> None:
    rows = build_board(
        [
            summary("/h/a.jsonl", provider=Provider.CLAUDE, mtime=NOW - 5, title="Port the parser"),
            summary("/h/b.jsonl", provider=Provider.CODEX, mtime=NOW - 5000, title="Write docs"),
        ],
        BoardPolicy(),
        NOW,
    )
    assert [r.key for r in filter_rows(rows, provider=Provider.CODEX)] == ["/h/b.jsonl"]
    assert [r.key for r in filter_rows(rows, live_only=True)] == ["/h/a.jsonl"]
    assert [r.key for r in filter_rows(rows, text="PARSER")] == ["/h/a.jsonl"]


def test_crossed_trigger_fires_once() -> None:
    below = build_row(summary(tokens=140_000), BoardPolicy(), NOW)
    above = build_row(summary(tokens=160_000), BoardPolicy(), NOW)
    assert crossed_trigger(below, above)
    assert not crossed_trigger(above, above)


def test_project_name_falls_back_to_the_folder_slug() -> None:
    assert (
        project_name(summary(cwd=None, path="/c/projects/-home-dev-src-gobtui/x.jsonl")) == "gobtui"
    )
    assert project_name(summary(cwd="/home/dev/src/app/")) == "app"


def test_a_fork_not_yet_resumed_is_not_live_nor_over_and_sorts_after_its_source() -> None:
    """A fork is dated as its source's last write: of a live source, it would read as live
    (and waiting, and over its trigger) for minutes, above the session it came from."""
    source = summary("/h/b-source.jsonl", tokens=190_000, mtime=NOW - 5)
    fork = replace(
        summary("/h/a-fork.jsonl", tokens=190_000, mtime=NOW - 5),
        fork_as_published=True,
        first_ts=NOW - 60,
    )
    rows = {r.key: r for r in build_board([source, fork], BoardPolicy(), NOW)}
    assert rows[source.path].live and rows[source.path].over_trigger
    assert not rows[fork.path].live and not rows[fork.path].over_trigger
    assert rows[fork.path].status is Status.IDLE and rows[fork.path].eta_secs is None
    assert [r.key for r in sort_rows(rows.values(), SortKey.ACTIVITY)] == [source.path, fork.path]
    # both idle, the same date: still the source first (the path alone would put the fork first)
    idle = [replace(s, mtime=NOW - 4000) for s in (source, fork)]
    ordered = sort_rows(build_board(idle, BoardPolicy(), NOW), SortKey.ACTIVITY)
    assert [r.key for r in ordered] == [source.path, fork.path]
    # once a client writes to it, it is a session like any other
    resumed = replace(fork, fork_as_published=False)
    assert build_row(resumed, BoardPolicy(), NOW).live


def test_a_1m_session_over_its_trigger_is_in_the_alert_band() -> None:
    """31 % of a 1M window is little, but over the trigger is past the line that matters."""
    policy = BoardPolicy()
    row = build_row(summary(tokens=311_000, window=1_000_000), policy, NOW)
    assert row.over_trigger and row.occupancy is not None and row.occupancy < 0.5
    assert row.band is Band.ALERT
    under = build_row(summary(tokens=100_000, window=1_000_000), policy, NOW)
    assert not under.over_trigger and under.band is Band.OK
