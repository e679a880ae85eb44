"""Kendall τ of a measured harmfulness ranking against the paper's Table 5."""

import itertools

import numpy as np
import pytest

from zeroe_perturb import ATTACKS
from zeroe_perturb.benchmark import AttackScore, BenchmarkResult
from zeroe_perturb.ranking import PAPER_TABLE5, kendall_tau_vs_paper


def _result(rel: dict[str, float], p: float = 0.8, seed: int = 0) -> BenchmarkResult:
    scores = tuple(AttackScore(a, p, 0.9 * v, v, 1.0, 0.5) for a, v in rel.items())
    return BenchmarkResult("accuracy", 0.9, 10, seed, scores, (p,))


def _brute_tau_b(x, y) -> float:
    """Kendall's τ-b from its definition (concordant − discordant pairs over the tie-corrected count)."""
    c = d = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if sx == 0 and sy == 0:
            continue
        if sx == 0:
            tx += 1
        elif sy == 0:
            ty += 1
        elif sx == sy:
            c += 1
        else:
            d += 1
    return (c - d) / np.sqrt((c + d + tx) * (c + d + ty))


def test_table5_columns_cover_the_attackers():
    assert set(PAPER_TABLE5["TC"]) == set(ATTACKS) and set(PAPER_TABLE5["NLI"]) == set(ATTACKS)
    assert set(PAPER_TABLE5["POS"]) == set(ATTACKS) - {"segment"}
    assert sorted(PAPER_TABLE5["TC"].values()) == list(range(1, 11))
    assert PAPER_TABLE5["NLI"]["visual"] == PAPER_TABLE5["NLI"]["intrude"] == 1


def test_same_order_gives_one_and_reversed_minus_one():
    ref = PAPER_TABLE5["TC"]
    same = _result({a: 0.05 * r for a, r in ref.items()})
    rev = _result({a: 1 - 0.05 * r for a, r in ref.items()})
    assert kendall_tau_vs_paper(same, p=0.8, task="TC")[0] == pytest.approx(1.0)
    assert kendall_tau_vs_paper(rev, p=0.8, task="TC")[0] == pytest.approx(-1.0)


def test_tau_matches_brute_force_with_ties_and_missing_attackers():
    rng = np.random.default_rng(3)
    for task in ("POS", "NLI", "TC"):
        rel = {a: float(v) for a, v in zip(ATTACKS, rng.choice([0.2, 0.4, 0.6, 0.8], size=len(ATTACKS)),
                                           strict=True)}
        res = _result(rel)
        common = [a for a in ATTACKS if a in PAPER_TABLE5[task]]
        want = _brute_tau_b([rel[a] for a in common], [PAPER_TABLE5[task][a] for a in common])
        assert kendall_tau_vs_paper(res, p=0.8, task=task)[0] == pytest.approx(want)


def test_bad_reference_is_refused():
    res = _result({a: 0.5 for a in ATTACKS})
    with pytest.raises(ValueError, match="task"):
        kendall_tau_vs_paper(res, p=0.8, task="QA")
    with pytest.raises(ValueError, match="at least 3"):
        kendall_tau_vs_paper(_result({"visual": 0.1, "intrude": 0.2}), p=0.8, task="TC")
