"""Results of one attack seed: the attacker average, Table 5 beside the measurement, the tagging chance line and
the defense result's round trip: every number checked against a computation written out here."""

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



def test_ranking_table_beside_table5():
    r = _runs()[0]
    cols, rows = zp.ranking_table(r, p=0.8, task="POS")
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
