"""The defense row of zeroe-perturb's paper_effects: 1-1 (α, α) against leave-one-out, paired over the cells."""

from __future__ import annotations

import pytest

from robustsuite_common.effects import effect_verdict
from robustsuite_common.experiment import Table
from zeroe_perturb.experiment.effects import defense_metrics, effects_spec, paper_effects

COLS = ("defense", "trained on", "tested on", "p", "s*(p)", "σ(p)/s(0)", "Δ")


def _table(rows):
    return {"defense": Table("defense", "t", COLS, tuple(rows))}


def test_defense_gap_pairs_the_diagonal_with_the_held_out_model_on_the_same_cells():
    rows = [("1-1", a, a, p, 0.5, 0.5 + d, d) for a, d0 in (("visual", 0.3), ("intrude", 0.2), ("truncate", 0.1))
            for p, d in ((0.0, 0.01), (0.2, d0), (0.8, d0 + 0.1))]
    rows += [("1-1", "visual", "intrude", 0.8, 0.5, 0.9, 0.4)]  # off the diagonal: not 1-1 (α, α)
    rows += [("LOO", f"loo-{a}", a, p, 0.5, 0.5 + d, d) for a, d0 in (("visual", 0.1), ("intrude", 0.15))
             for p, d in ((0.0, 0.0), (0.2, d0), (0.8, d0))]
    m = defense_metrics(_table(rows), seed=0)["defense_one_one_minus_loo"]
    # shared attacked cells: visual and intrude at p 0.2 and 0.8 (truncate has no LOO model, p = 0 is not attacked)
    want = [(0.3 - 0.1), (0.4 - 0.1), (0.2 - 0.15), (0.3 - 0.15)]
    assert m.value == pytest.approx(sum(want) / 4)
    assert m.interval.low <= m.value <= m.interval.high
    assert "4 attacked cells" in m.label
    row = paper_effects({"defense_one_one_minus_loo": m}).records()[-1]
    assert (row["measured"], row["low"], row["high"]) == (m.value, m.interval.low, m.interval.high)
    e = next(e for e in effects_spec() if e.key == "defense_ordering")
    assert row["verdict"] == effect_verdict(m.value, m.interval.low, m.interval.high, paper_value=e.paper_value)


def test_no_defense_table_or_no_shared_cells_means_not_tested():
    assert defense_metrics({}, seed=0) == {}
    only_one_one = [("1-1", "visual", "visual", 0.8, 0.5, 0.7, 0.2), ("1-1", "intrude", "intrude", 0.8, 0.5, 0.7, 0.2)]
    assert defense_metrics(_table(only_one_one), seed=0) == {}
    assert paper_effects({}).records()[-1]["verdict"] == "not tested"


def test_loo_against_cross_pairs_each_held_out_cell_with_the_mean_of_the_other_attackers_models():
    """Table 3's second step: leave-one-out − 1-1 (α, β ≠ α), the off-diagonal models averaged per tested cell."""
    cross = {("intrude", "visual"): 0.05, ("truncate", "visual"): 0.01, ("visual", "intrude"): 0.12,
             ("truncate", "intrude"): 0.02}
    rows = [("1-1", a, b, 0.8, 0.5, 0.5 + d, d) for (a, b), d in cross.items()]
    rows += [("1-1", a, a, 0.8, 0.5, 0.9, 0.4) for a in ("visual", "intrude")]  # the diagonal is not averaged in
    rows += [("1-1", "intrude", "visual", 0.0, 1.0, 0.99, -0.01)]  # p = 0 is not an attacked cell
    rows += [("LOO", f"loo-{a}", a, 0.8, 0.5, 0.5 + d, d) for a, d in (("visual", 0.1), ("intrude", 0.2))]
    got = defense_metrics(_table(rows), seed=0)
    m = got["defense_loo_minus_one_one_off"]
    want = [0.1 - (0.05 + 0.01) / 2, 0.2 - (0.12 + 0.02) / 2]
    assert m.value == pytest.approx(sum(want) / 2, abs=1e-12)
    assert m.interval.low <= m.value <= m.interval.high and "2 attacked cells" in m.label
    # the first step pairs the same cells with the diagonal
    assert got["defense_one_one_minus_loo"].value == pytest.approx(((0.4 - 0.1) + (0.4 - 0.2)) / 2, abs=1e-12)
