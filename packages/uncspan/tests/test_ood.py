import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from uncspan import detection_metrics, ood_under_attack
from uncspan._demo import load_digits_split, train_digits_model


def _brute(s_in, s_out):
    pairs = [(o > i) + 0.5 * (o == i) for o in s_out for i in s_in]
    auroc = float(np.mean(pairs))
    k = math.ceil(0.95 * len(s_in))
    tau = np.sort(s_in)[k - 1]  # accept as in-distribution when entropy <= tau (95 % of ID accepted)
    fpr = float(np.mean(np.asarray(s_out) <= tau))
    return auroc, fpr


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=2, max_size=30), st.lists(st.integers(0, 8), min_size=1, max_size=30))
def test_detection_metrics_against_brute_force(s_in, s_out):
    m = detection_metrics(np.array(s_in, float), np.array(s_out, float))
    auroc, fpr = _brute(s_in, s_out)
    assert m.auroc == pytest.approx(auroc)
    assert m.fpr_at_95_tpr == pytest.approx(fpr)
    assert 0 <= m.aupr_in <= 1 and 0 <= m.aupr_out <= 1


def test_auroc_ci_brackets_the_auroc_and_narrows_with_data():
    from uncspan import auroc_ci

    rng = np.random.default_rng(0)
    small_in, small_out = rng.normal(0, 1, 30), rng.normal(1, 1, 30)
    big_in, big_out = rng.normal(0, 1, 600), rng.normal(1, 1, 600)
    lo, hi = auroc_ci(small_in, small_out).ci
    assert lo <= detection_metrics(small_in, small_out).auroc <= hi
    blo, bhi = auroc_ci(big_in, big_out).ci
    assert blo <= detection_metrics(big_in, big_out).auroc <= bhi
    assert bhi - blo < hi - lo
    # the population AUROC of N(1,1) vs N(0,1) is Phi(1/sqrt 2) = 0.7602
    assert blo <= 0.7602 <= bhi


def test_aupr_in_and_out_hand_computed_asymmetric_case():
    """In-distribution entropies 1, 2, 3 and one outlier at 2.5. AUPR-OUT (outliers positive, ranked by
    entropy descending): 3 (in), 2.5 (out) -> precision 1/2 at recall 1, AP = 1/2. AUPR-IN (in-distribution
    positive, ranked by entropy ascending): 1, 2 (precision 1 at recall 1/3, 2/3), then 2.5 (out), 3 ->
    precision 3/4 at recall 1, AP = 1/3 + 1/3 + 1/3 * 3/4 = 11/12. A swap of the two fails here."""
    m = detection_metrics([1.0, 2.0, 3.0], [2.5])
    assert m.aupr_out == pytest.approx(0.5)
    assert m.aupr_in == pytest.approx(11 / 12)
    assert m.auroc == pytest.approx(2 / 3)  # the outlier scores above two of the three in-distribution inputs


def test_detection_metrics_perfect_and_inverted():
    m = detection_metrics([0.1, 0.2, 0.3], [1.0, 2.0])
    assert (m.auroc, m.aupr_in, m.aupr_out, m.fpr_at_95_tpr) == (1.0, 1.0, 1.0, 0.0)
    m = detection_metrics([1.0, 2.0], [0.1, 0.2])
    assert m.auroc == 0.0 and m.fpr_at_95_tpr == 1.0
    with pytest.raises(ValueError, match="scores_out"):
        detection_metrics([0.1], [])
    with pytest.raises(ValueError, match="tpr"):
        detection_metrics([0.1], [0.2], tpr=0)


@pytest.fixture(scope="module")
def osr():
    known = tuple(range(8))
    xtr, ytr, xte, _ = load_digits_split(0, classes=known)
    _, _, ax, ay = load_digits_split(0)
    x_open = ax[np.isin(ay.numpy(), (8, 9))]
    return train_digits_model(xtr, ytr, n_classes=8, epochs=10, seed=0), xte[:150], x_open[:100]


def test_open_set_detection_degrades_under_attack(osr):
    """Table V's effect: the over-confidence attack on the outliers lowers AUROC/AUPR and raises FPR95."""
    model, x_in, x_out = osr
    before = x_out.clone()
    res = ood_under_attack(model, x_in, x_out, eps=[0.0, 0.05, 0.1], steps=20, seed=0)
    assert torch.equal(x_out, before)
    clean, mid, big = (r.metrics for r in res.rows)
    assert [r.eps for r in res.rows] == [0.0, 0.05, 0.1]
    assert clean.auroc > 0.8  # entropy separates unseen digits on clean data
    assert clean.auroc > mid.auroc > big.auroc
    assert big.fpr_at_95_tpr > clean.fpr_at_95_tpr
    assert res.rows[2].mean_entropy_out < res.rows[0].mean_entropy_out
    assert res.rows[0].mean_entropy_in == res.rows[2].mean_entropy_in  # ID stays clean
    assert res.to_dict()["rows"][0]["eps"] == 0.0


def test_ood_bad_inputs(osr):
    model, x_in, x_out = osr
    with pytest.raises(ValueError, match="sample shape"):
        ood_under_attack(model, x_in, x_out[:, :, :4, :4], eps=[0.0])
    with pytest.raises(ValueError, match="eps"):
        ood_under_attack(model, x_in, x_out, eps=[-0.1])
    with pytest.raises(ValueError, match="eps"):
        ood_under_attack(model, x_in, x_out, eps=[])


def test_known_classes_model_restricts_logits(make_linear):
    from uncspan import KnownClassesModel

    base = make_linear(4, 5, 0)
    x = torch.rand(3, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    sub = KnownClassesModel(base, [0, 2, 3])
    with torch.no_grad():
        np.testing.assert_allclose(sub(x).numpy(), base(x)[:, [0, 2, 3]].numpy())
    with pytest.raises(ValueError, match="classes"):
        KnownClassesModel(base, [1, 1])
