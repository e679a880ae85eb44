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
