import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transduct_attack import cross_entropy, cw_targeted, cw_untargeted, max_wrong_probability

logit_rows = st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=3, max_size=6)


@settings(max_examples=60, deadline=None)
@given(row=logit_rows, data=st.data())
def test_losses_against_brute_force(row, data):
    k = len(row)
    y = data.draw(st.integers(0, k - 1))
    t = data.draw(st.integers(0, k - 1).filter(lambda v: v != y))
    z = torch.tensor([row], dtype=torch.float64)
    yy, tt = torch.tensor([y]), torch.tensor([t])
    others = [row[j] for j in range(k) if j != y]
    assert float(cw_untargeted(z, yy)) == pytest.approx(max(others) - row[y], rel=1e-9, abs=1e-9)
    assert float(cw_targeted(z, yy, tt)) == pytest.approx(row[t] - row[y], rel=1e-9, abs=1e-9)
    m = max(row)
    lse = m + math.log(sum(math.exp(v - m) for v in row))
    assert float(cross_entropy(z, yy)) == pytest.approx(lse - row[y], rel=1e-9, abs=1e-6)
    p = float(max_wrong_probability(z, yy))
    assert math.isfinite(p) and 0.0 <= p <= 1.0
    assert p == pytest.approx(math.exp(max(others) - lse), rel=1e-9, abs=1e-12)


def test_intervals_against_closed_forms():
    import numpy as np
    import pytest

    from transduct_attack import bootstrap_mean, clopper_pearson, paired_difference

    # Clopper-Pearson edge cases have closed forms: k = 0 -> upper (α/2)^(1/n) complement; k = n symmetric
    lo, hi = clopper_pearson(0, 20)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 20))
    lo, hi = clopper_pearson(20, 20)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 20))
    lo, hi = clopper_pearson(7, 20)
    assert lo < 7 / 20 < hi
    # a paired record with a constant difference has a degenerate interval at that difference
    a = np.array([1, 1, 0, 1, 0, 1], dtype=bool)
    d, lo, hi = paired_difference(a, a)
    assert d == lo == hi == 0.0
    d, lo, hi = paired_difference(np.ones(50), np.r_[np.ones(25), np.zeros(25)], seed=1)
    assert d == 0.5 and lo < 0.5 < hi and lo > 0.3
    m, lo, hi = bootstrap_mean(np.array([0.2, 0.4]), seed=0)
    assert m == pytest.approx(0.3) and 0.2 <= lo <= m <= hi <= 0.4
    with pytest.raises(ValueError, match="k"):
        clopper_pearson(5, 4)
    with pytest.raises(ValueError, match="a and b"):
        paired_difference(np.ones(3), np.ones(4))
