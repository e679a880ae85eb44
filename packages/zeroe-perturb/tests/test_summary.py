"""s*(p) over attack seeds (summarize_seeds), the chance lines, Table 5 beside the measurement, and the defense
result's round trip: every number checked against a computation written out here."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import zeroe_perturb as zp
from zeroe_perturb.benchmark import AttackScore, BenchmarkResult
from zeroe_perturb.defense import DefenseResult, FineTuneConfig

ATT = ("visual", "intrude", "truncate", "segment")
LEVELS = (0.2, 0.8)
# s*(p) per seed, attacker, level: visual and intrude tie at 0.8 on average, segment is never ranked by POS
REL = {
    0: {("visual", 0.2): 0.6, ("visual", 0.8): 0.2, ("intrude", 0.2): 0.8, ("intrude", 0.8): 0.3,
        ("truncate", 0.2): 0.9, ("truncate", 0.8): 0.7, ("segment", 0.2): 0.95, ("segment", 0.8): 0.5},
    1: {("visual", 0.2): 0.5, ("visual", 0.8): 0.3, ("intrude", 0.2): 0.7, ("intrude", 0.8): 0.2,
        ("truncate", 0.2): 0.85, ("truncate", 0.8): 0.6, ("segment", 0.2): 0.9, ("segment", 0.8): 0.45},
    2: {("visual", 0.2): 0.55, ("visual", 0.8): 0.1, ("intrude", 0.2): 0.75, ("intrude", 0.8): 0.1,
        ("truncate", 0.2): 0.8, ("truncate", 0.8): 0.65, ("segment", 0.2): 1.0, ("segment", 0.8): 0.4},
}


def _runs(attacks=ATT, s0: float = 0.8) -> list[BenchmarkResult]:
    out = []
    for seed, rel in REL.items():
        scores = tuple(AttackScore(a, p, s0 * rel[(a, p)], rel[(a, p)], 10 * p + len(a) / 7, p) for a in attacks
                       for p in LEVELS)
        out.append(BenchmarkResult("accuracy", s0, 50, seed, scores, LEVELS))
    return out


def test_mean_relative_is_the_attacker_average():
    r = _runs()[1]
    assert r.mean_relative(0.8) == pytest.approx(np.mean([REL[1][(a, 0.8)] for a in ATT]))


def test_mean_relative_interval_mean_and_extreme_quantiles():
    runs = _runs()
    per_seed = [np.mean([REL[s][(a, 0.8)] for a in ATT]) for s in REL]
    m, lo, hi = zp.mean_relative_interval(runs, 0.8, n_boot=4000, seed=3)
    assert m == pytest.approx(np.mean(per_seed)) and min(per_seed) <= lo < m < hi <= max(per_seed)
    # at 99.9 % the bootstrap reaches "all three resamples the same seed" (probability 1/27 each): the extremes
    _, lo, hi = zp.mean_relative_interval(runs, 0.8, confidence=0.999, n_boot=4000, seed=3)
    assert (lo, hi) == (pytest.approx(min(per_seed)), pytest.approx(max(per_seed)))
    # one attacker: the attacker average is that attacker's s*, so relative_intervals (the per-cell bootstrap, the
    # same seeded draws for its first cell) must give the same interval
    solo = [BenchmarkResult("accuracy", 0.8, 50, s, (AttackScore("visual", 0.8, 0.8 * v, v, 3.0, 0.8),), (0.8,))
            for s, v in enumerate([0.31, 0.12, 0.27, 0.2, 0.45, 0.05])]
    assert zp.mean_relative_interval(solo, 0.8, seed=4) == zp.relative_intervals(solo, seed=4)[("visual", 0.8)]
    one = zp.mean_relative_interval(runs[:1], 0.8)
    assert one[0] == one[1] == one[2] == pytest.approx(per_seed[0])
    assert zp.mean_relative_interval(runs, 0.8, seed=5) == zp.mean_relative_interval(runs, 0.8, seed=5)
    with pytest.raises(ValueError, match="confidence"):
        zp.mean_relative_interval(runs, 0.8, confidence=1.5)
    with pytest.raises(ValueError, match="n_boot"):
        zp.mean_relative_interval(runs, 0.8, n_boot=0)


def test_summarize_seeds_numbers_against_a_direct_computation():
    runs = _runs()
    sm = zp.summarize_seeds(runs, chance=0.2, paper_task="TC", seed=7)
    assert sm.high == 0.8 and sm.clean_score == 0.8 and sm.n == 50 and sm.attacks == ATT
    assert sm.intervals == zp.relative_intervals(runs, seed=7)
    assert sm.mean_relative_high == zp.mean_relative_interval(runs, 0.8, seed=7)
    assert sm.agreement == zp.ranking_agreement(runs, 0.8, "TC", seed=7)
    mean08 = {a: np.mean([REL[s][(a, 0.8)] for s in REL]) for a in ATT}
    assert sm.most_harmful == "visual"  # visual and intrude tie at 0.2: the first in attacker order wins
    assert mean08["visual"] == pytest.approx(mean08["intrude"])
    assert sm.chance_relative == pytest.approx(0.25)
    for p in LEVELS:
        lows = {a: sm.intervals[(a, p)][1] for a in ATT}
        highs = {a: sm.intervals[(a, p)][2] for a in ATT}
        assert sm.n_above_chance(p) == sum(v > 0.25 for v in lows.values())
        assert sm.n_below_chance(p) == sum(v < 0.25 for v in highs.values())
    assert sm.n_above_chance(0.2) == 4 and sm.n_above_chance(0.8) == 2  # truncate, segment clear of 0.25
    # chance line 0.44: segment's mean s*(0.8) (0.45) is above it but its interval (from 0.40) is not
    line = zp.summarize_seeds(runs, chance=0.8 * 0.44)
    assert line.n_above_chance(0.8) == 1 and line.n_below_chance(0.8) == 2  # truncate; visual, intrude
    # p = 0.2 as the summary level: the most harmful attacker changes
    assert zp.summarize_seeds(runs, p=0.2).most_harmful == "visual"
    assert zp.summarize_seeds(runs, p=0.2).mean_relative_high == zp.mean_relative_interval(runs, 0.2)


def test_summary_tables():
    runs = _runs()
    sm = zp.summarize_seeds(runs, chance=0.2, paper_task="TC")
    cols, rows = sm.levels_table()
    first_cols, first_rows = runs[0].table()
    assert cols[: len(first_cols)] == first_cols
    assert cols[len(first_cols):] == ["edits(0.2)", "edits(0.8)", "mean s*(0.2)", "mean s*(0.2)_ci_low",
                                      "mean s*(0.2)_ci_high", "mean s*(0.8)", "mean s*(0.8)_ci_low",
                                      "mean s*(0.8)_ci_high"]
    for r, fr, a in zip(rows, first_rows, ATT, strict=True):
        assert r[: len(fr)] == fr
        assert r[len(fr):len(fr) + 2] == [round(10 * p + len(a) / 7, 2) for p in LEVELS]
        assert r[-3:] == [round(v, 4) for v in sm.intervals[(a, 0.8)]]
    cols, rows = sm.tasks_table()
    assert cols[:2] == ["attack", "s(0)"] and [r[0] for r in rows] == list(ATT)
    assert rows[2][2:5] == [round(v, 4) for v in sm.intervals[("truncate", 0.2)]]
    cols, row = sm.summary_row()
    got = dict(zip(cols, row, strict=True))
    assert got["most harmful"] == "visual" and got["its s*"] == round(sm.intervals[("visual", 0.8)][0], 4)
    assert got["chance s*"] == 0.25 and got["attackers above chance"] == 2 and got["attackers"] == 4
    assert got["mean s*(0.8)"] == round(sm.mean_relative_high[0], 4)
    d = json.loads(json.dumps(sm.to_dict()))
    assert d["most_harmful"] == "visual" and d["n_above_chance"] == {"0.2": 4, "0.8": 2}
    assert BenchmarkResult.from_dict(d["results"][2]) == runs[2]


def test_agreement_only_with_three_ranked_attackers_and_no_chance_line():
    runs = _runs(attacks=("visual", "segment"))
    assert zp.summarize_seeds(runs, paper_task="POS").agreement is None  # POS ranks visual only
    sm = zp.summarize_seeds(_runs(), paper_task={"visual": 1, "intrude": 2, "truncate": 3})
    assert sm.agreement is not None and sm.agreement["taus"][0] == pytest.approx(1.0)
    none = zp.summarize_seeds(_runs())
    assert none.agreement is None and np.isnan(none.chance_relative) and none.n_above_chance(0.2) == 0
    assert json.dumps(none.to_dict())


def test_summarize_seeds_bad_input():
    runs = _runs()
    with pytest.raises(TypeError, match="results"):
        zp.summarize_seeds([])
    with pytest.raises(TypeError, match="results"):
        zp.summarize_seeds([r.to_dict() for r in runs])
    with pytest.raises(ValueError, match="results"):
        zp.summarize_seeds([runs[0], _runs(attacks=("visual",))[1]])
    with pytest.raises(ValueError, match="p must"):
        zp.summarize_seeds(runs, p=0.5)
    with pytest.raises(ValueError, match="task"):
        zp.summarize_seeds(runs, paper_task="QA")
    with pytest.raises(TypeError, match="chance"):
        zp.summarize_seeds(runs, chance="0.2")
    with pytest.raises(ValueError, match="confidence"):
        zp.summarize_seeds(runs, confidence=0.0)


def test_ranking_table_beside_table5():
    r = _runs()[0]
    cols, rows = zp.ranking_table(r, 0.8, "POS")
    assert cols == ["rank", "attack", "s*", "paper rank"]
    assert [x[1] for x in rows] == ["visual", "intrude", "segment", "truncate"]  # lowest s*(0.8) first
    assert [x[3] for x in rows] == [zp.PAPER_TABLE5["POS"]["visual"], zp.PAPER_TABLE5["POS"]["intrude"], "-",
                                    zp.PAPER_TABLE5["POS"]["truncate"]]
    assert [x[2] for x in rows] == [0.2, 0.3, 0.5, 0.7] and [x[0] for x in rows] == [1, 2, 3, 4]


def test_tagging_chance_score_and_attackers():
    tags = [[0, -1, 1, 1], [2, 1, -1], [], [0]]
    counts = Counter(t for ts in tags for t in ts if t >= 0)
    assert zp.tagging_chance_score(tags) == pytest.approx(max(counts.values()) / sum(counts.values()))
    assert zp.tagging_chance_score(np.array([[3, 3, -1], [1, -1, -1]])) == pytest.approx(2 / 3)
    assert np.isnan(zp.tagging_chance_score([[-1, -1]]))
    with pytest.raises(TypeError, match="tags"):
        zp.tagging_chance_score(5)
    assert zp.TAGGING_ATTACKS == tuple(a for a in zp.ATTACKS if a != "segment")


def test_defense_result_round_trip_and_table():
    cfg = FineTuneConfig(epochs=1, lr=1e-3)
    res = DefenseResult("1-1", "accuracy", 0.8, (0.2, 0.8),
                        baseline={("intrude", 0.2): 0.7, ("intrude", 0.8): 0.4, ("visual", 0.2): 0.6,
                                  ("visual", 0.8): 0.3},
                        defended={(tr, te, p): 0.5 + 0.1 * p + (0.2 if tr == te else 0.0)
                                  for tr in ("intrude", "visual") for te in ("intrude", "visual")
                                  for p in (0.0, 0.2, 0.8)},
                        config=cfg)
    back = DefenseResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back == res
    cols, rows = res.table()
    assert cols == ["trained on", "tested on", "p", "s*(p)", "σ(p)/s(0)", "Δ"] and len(rows) == 12
    for tr, te, p, base, sig, delta in rows:
        assert base == (1.0 if p == 0 else res.baseline[(te, p)])
        assert delta == round(res.delta(tr, te, p), 4) == round(sig - base, 4)
    diag = [res.delta(a, a, p) for a in ("intrude", "visual") for p in (0.2, 0.8)]
    assert res.mean_improvement(diagonal_only=True) == pytest.approx(np.mean(diag))
