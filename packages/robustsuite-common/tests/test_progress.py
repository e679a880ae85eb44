"""Issue 37: the text of a run's progress — the time left from job sizes, the plain lines, the stage read from the
running code's tqdm bars."""

from __future__ import annotations

import io

import pytest

from robustsuite_common import progress


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def test_time_left_weighs_the_sizes_of_the_jobs_still_to_run(clock):
    t = progress.Tally(["a", "b", "c"], [1, 2, 1])
    assert t.remaining() is None  # nothing finished here yet
    assert t.line("a", "start", "A") == "[1/3] start A"
    t.start("a")
    clock[0] += 10
    assert t.end("a", "done") == 10
    assert t.remaining() == 30  # 10 s per size unit, sizes 2 + 1 left
    assert t.line("a", "done", "A", 10) == "[1/3] done A in 10.0 s (elapsed 0:00:10, about 0:00:30 left)"
    assert t.end("c", "skip") is None  # reused: takes no time, and is no longer to run
    assert t.remaining() == 20 and t.line("c", "skip", "C") == (
        "[3/3] reused C: already finished (by an earlier run, or another process on this run)")
    clock[0] += 5
    assert t.remaining() == 15  # counts down between two ends
    t.start("b")
    clock[0] += 3600
    t.end("b", "failed")
    assert t.remaining() == 0 and progress.clock(3725) == "1:02:05" and progress.clock(None) == "?"


def test_stage_names_the_open_bars_with_their_counts():
    tqdm = pytest.importorskip("tqdm.std").tqdm
    assert progress.stage() == ""
    with tqdm(total=2, desc="AutoAttack", unit="batch", file=io.StringIO()) as bar:
        bar.update(1)
        assert progress.stage() == "AutoAttack 1/2 batch"
        with tqdm(total=None, desc="cells", file=io.StringIO()) as inner:
            inner.update(3)
            assert progress.stage() == "AutoAttack 1/2 batch › cells 3 it"
        with tqdm(total=5, desc="hidden", disable=True):
            assert progress.stage() == "AutoAttack 1/2 batch"
    assert progress.stage() == ""
