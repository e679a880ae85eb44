"""Regression tests for the defects of issue 13 (each failed on the code before its fix)."""

import itertools

import numpy as np
import pytest
import torch
from _certcal_refs import interval_instances
from hypothesis import given, settings
from hypothesis import strategies as st

from certcal import (
    BetaACE,
    adaptive_calibration_error,
    adversarial_calibration_training,
    bin_edges,
    bin_index,
    brier_confidences,
    brier_score,
    certified_brier_score,
    certified_calibration_error,
    certify,
    clopper_pearson_lower,
    confidence_bounds,
    expected_calibration_error,
    predict,
    reliability_diagram,
    sample_counts,
)

# --- defect 1: one binning function; the returned worst case reproduces the returned CCE -----------------


@pytest.mark.parametrize("n_bins", [3, 7, 10, 15, 20, 30])
@pytest.mark.parametrize("method", ["exact", "brier", "admm"])
def test_returned_worst_case_reproduces_value_for_many_bin_counts(n_bins, method):
    rng = np.random.default_rng(n_bins)
    n = 120
    # interval ends exactly on bin edges (as computed by bin_edges), and random ones
    edges = bin_edges(n_bins=n_bins)
    k = rng.integers(0, n_bins + 1, size=(n, 2))
    lo_e, up_e = np.sort(edges[k], axis=1).T
    z = rng.uniform(0, 1, n)
    w = rng.uniform(0, 0.15, n)
    lo_r, up_r = np.clip(z - w, 0, 1), np.clip(z + w, 0, 1)
    pick = rng.uniform(size=n) < 0.5
    lo, up = np.where(pick, lo_e, lo_r), np.where(pick, up_e, up_r)
    c = (rng.uniform(size=n) < 0.7).astype(int)
    kwargs = {"admm": __import__("certcal").ADMMConfig(steps=50)} if method == "admm" else {}
    if method == "exact" and n_bins > 20:
        lo, up = lo_r, up_r  # keep the exact solver's window small
    res = certified_calibration_error(lo, up, c, n_bins=n_bins, method=method, **kwargs)
    assert np.all(res.confidences >= lo) and np.all(res.confidences <= up)
    assert np.array_equal(bin_index(res.confidences, n_bins=n_bins), res.bins)
    assert expected_calibration_error(res.confidences, c, n_bins=n_bins) == pytest.approx(res.value, abs=1e-7)


@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 13, 15, 30, 100])
def test_bin_edges_and_bin_index_agree_exactly(n_bins):
    edges = bin_edges(n_bins=n_bins)
    idx = bin_index(edges, n_bins=n_bins)
    # every edge k/M (k >= 1) is the right end of bin k - 1; 0 is in bin 0
    assert idx[0] == 0
    assert np.array_equal(idx[1:], np.arange(n_bins))
    # points just above an edge fall in the next bin
    above = np.nextafter(edges[1:-1], 2.0)
    assert np.array_equal(bin_index(above, n_bins=n_bins), np.arange(1, n_bins))


# --- defect 2: a zero-width interval on an interior edge has a determined bin ---------------------------


def true_ece_brute_force(lo, up, c, n_bins):
    """Sup of the ECE over z in the box, by the ECE itself on candidate points: interval ends, every bin edge
    inside the interval, and a point just above each such edge (an open left bin end is approached)."""
    edges = bin_edges(n_bins=n_bins)
    cands = []
    for l_, u_ in zip(lo, up, strict=True):
        pts = {l_, u_}
        for e in edges:
            if l_ <= e <= u_:
                pts.add(e)
            if l_ <= e < u_:
                pts.add(min(u_, e + 1e-12))
        cands.append(sorted(pts))
    return max(expected_calibration_error(np.array(zs), c, n_bins=n_bins) for zs in itertools.product(*cands))


def edge_interval(d, n_bins):
    if d(st.booleans()):  # zero width, on an edge
        v = d(st.integers(0, n_bins)) / n_bins
        return v, v
    a = d(st.integers(0, n_bins)) / n_bins
    b = d(st.one_of(st.floats(0, 1), st.integers(0, n_bins).map(lambda k, m=n_bins: k / m)))
    return min(a, b), max(a, b)


@settings(max_examples=80, deadline=None)
@given(interval_instances(n=(1, 4), n_bins=(2, 5), interval=edge_interval))
def test_cce_on_edge_instances_equals_brute_force(inst):
    lo, up, c, n_bins = inst
    res = certified_calibration_error(lo, up, c, n_bins=n_bins)
    assert res.value == pytest.approx(true_ece_brute_force(lo, up, c, n_bins), abs=1e-9)
    assert expected_calibration_error(res.confidences, c, n_bins=n_bins) == pytest.approx(res.value, abs=1e-7)


def test_zero_width_interval_on_interior_edge_is_not_double_counted():
    # both samples sit exactly on 1/2 = the right end of bin 0 for M = 2: one bin, gap (1 - 0.5) + (0 - 0.5) = 0
    lo = up = np.array([0.5, 0.5])
    c = np.array([1, 0])
    assert certified_calibration_error(lo, up, c, n_bins=2).value == pytest.approx(0.0)
    assert certified_calibration_error(lo, up, c, n_bins=2, method="milp").value == pytest.approx(0.0, abs=1e-9)


# --- defect 3: non-finite inputs, bounds outside [0, 1], lower > upper, length mismatch -----------------


class Const(torch.nn.Module):
    def __init__(self, out=None):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.out = out

    def forward(self, x):
        z = self.lin(x.flatten(1))
        if self.out == "nan":
            return z * float("nan")
        if self.out == "dict":
            return {"logits": z}
        if self.out == "hf":
            from transformers.modeling_outputs import SequenceClassifierOutput

            return SequenceClassifierOutput(logits=z)
        return z


def _x(n=3):
    return torch.rand(n, 1, 2, 2, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("fn", ["certify", "predict", "sample_counts", "ace", "train"])
def test_nan_images_rejected_everywhere(fn):
    model = Const()
    x = _x()
    x[1, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="x"):
        _call(fn, model, x)


@pytest.mark.parametrize("fn", ["certify", "predict", "sample_counts", "ace"])
def test_nan_logits_rejected(fn):
    with pytest.raises(ValueError, match="non-finite|logits"):
        _call(fn, Const("nan"), _x())


def _call(fn, model, x, y=None):
    y = torch.zeros(x.shape[0], dtype=torch.int64) if y is None else y
    if fn == "certify":
        return certify(model, x, sigma=0.25, n0=5, n=10, batch_size=8)
    if fn == "predict":
        return predict(model, x, sigma=0.25, n=10, batch_size=8)
    if fn == "sample_counts":
        return sample_counts(model, x, sigma=0.25, num=10, batch_size=8, generator=torch.Generator().manual_seed(0))
    if fn == "ace":
        return BetaACE(steps=2)(model, x, y, 0.1)
    if fn == "train":
        return adversarial_calibration_training(model, x, y, method="gaussian", epochs=1, batch_size=2)
    raise AssertionError(fn)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: expected_calibration_error([0.5, np.nan], [1, 0]), "confidences"),
        (lambda: expected_calibration_error([0.5, 1.5], [1, 0]), "confidences"),
        (lambda: expected_calibration_error([0.5, 0.6], [1, 0, 1]), "correct"),
        (lambda: adaptive_calibration_error([0.5, np.inf], [1, 0]), "confidences"),
        (lambda: brier_score([0.5, -0.1], [1, 0]), "confidences"),
        (lambda: reliability_diagram([0.5, 0.6], [1]), "correct"),
        (lambda: bin_index([0.5, np.nan]), "confidences"),
        (lambda: bin_index([0.5, 1.2]), "confidences"),
        (lambda: certified_brier_score([0.2, np.nan], [0.3, 0.4], [1, 0]), "lower"),
        (lambda: certified_brier_score([0.2, 0.1], [0.3, np.inf], [1, 0]), "upper"),
        (lambda: certified_brier_score([0.2, 0.5], [0.3, 0.4], [1, 0]), "lower"),
        (lambda: certified_brier_score([0.2], [0.3, 0.4], [1, 0]), "upper"),
        (lambda: brier_confidences([0.2, 0.1], [0.3, 1.4], [1, 0]), "upper"),
        (lambda: certified_calibration_error([0.2, 0.1], [0.3, 0.4], [1, 0, 1]), "correct"),
        (lambda: certified_calibration_error([-0.2, 0.1], [0.3, 0.4], [1, 0]), "lower"),
        (lambda: certified_calibration_error([0.2, 0.1], [0.3, 0.4], [1, 0], confidences=[0.25, np.nan]),
         "confidences"),
        (lambda: confidence_bounds(np.array([[0.5, np.nan]]), sigma=0.25), "scores"),
        (lambda: confidence_bounds(np.array([[0.5, 0.6]]), sigma=0.25, radius=np.nan), "radius"),
        (lambda: confidence_bounds(np.array([[0.5, 0.6]]), sigma=float("nan")), "sigma"),
        (lambda: clopper_pearson_lower([5, 11], 10, alpha=0.001), "successes"),
        (lambda: clopper_pearson_lower([5, -1], 10, alpha=0.001), "successes"),
        (lambda: clopper_pearson_lower([5.5], 10, alpha=0.001), "successes"),
        (lambda: clopper_pearson_lower([5], 0, alpha=0.001), "trials"),
    ],
)
def test_bad_numeric_inputs_name_the_argument(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_label_length_mismatch_rejected_before_work():
    model = Const()
    with pytest.raises(ValueError, match="y"):
        BetaACE(steps=2)(model, _x(3), torch.zeros(2, dtype=torch.int64), 0.1)
    with pytest.raises(ValueError, match="y"):
        adversarial_calibration_training(model, _x(3), torch.zeros(4, dtype=torch.int64), method="gaussian")


# --- defect 4: CDF bound with ties uses P(h > a) ---------------------------------------------------------


def direct_cdf_bounds(s, sigma, r, e, grid=200_001):
    """Integrate the certified tail functions over t on a fine grid (independent of certcal's thresholds):
    upper = int_0^1 Phi(Phi^-1(min(1, P(h >= t) + e)) + r / sigma) dt, lower likewise with - e and - r."""
    from scipy.stats import norm

    t = (np.arange(grid) + 0.5) / grid
    tail = (s[None, :] >= t[:, None]).mean(axis=1)
    up = norm.cdf(norm.ppf(np.clip(tail + e, 0, 1)) + r / sigma).mean()
    lo = norm.cdf(norm.ppf(np.clip(tail - e, 0, 1)) - r / sigma).mean()
    return lo, up


@pytest.mark.parametrize("r", [0.0, 0.1, 0.5])
def test_cdf_bound_with_tied_scores_matches_direct_computation(r):
    # quantised / saturated softmax: heavily tied scores
    rng = np.random.default_rng(0)
    s = rng.choice([0.1, 0.4, 0.4, 0.75, 1.0, 1.0, 1.0], size=400)
    sigma, alpha = 0.25, 0.001
    e = np.sqrt(np.log(2.0 / alpha) / (2.0 * s.size))
    b = confidence_bounds(s[None], sigma=sigma, radius=r, alpha=alpha, method="cdf")
    lo, up = direct_cdf_bounds(s, sigma, r, e)
    assert b.upper[0] == pytest.approx(up, abs=2e-5)
    assert b.lower[0] == pytest.approx(lo, abs=2e-5)


def test_cdf_bound_without_ties_matches_direct_computation():
    rng = np.random.default_rng(1)
    s = rng.beta(5, 2, size=300)
    e = np.sqrt(np.log(2.0 / 0.001) / 600)
    b = confidence_bounds(s[None], sigma=0.5, radius=0.2, method="cdf")
    lo, up = direct_cdf_bounds(s, 0.5, 0.2, e)
    assert b.upper[0] == pytest.approx(up, abs=2e-5)
    assert b.lower[0] == pytest.approx(lo, abs=2e-5)


# --- defect 5: empty batches ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["certify", "predict", "sample_counts", "ace", "train"])
def test_empty_batch_is_a_clear_error(fn):
    with pytest.raises(ValueError, match="empty|at least one"):
        _call(fn, Const(), torch.zeros(0, 1, 2, 2))


def test_empty_scores_and_bounds_are_clear_errors():
    with pytest.raises(ValueError, match="empty|at least one"):
        confidence_bounds(np.zeros((0, 10)), sigma=0.25)
    with pytest.raises(ValueError, match="empty"):
        certified_brier_score([], [], [])


# --- defect 6: Hugging Face ModelOutput / dict with logits ----------------------------------------------


@pytest.mark.parametrize("kind", ["dict", "hf"])
def test_model_returning_logits_container_is_accepted(kind):
    if kind == "hf":
        pytest.importorskip("transformers")
    plain, wrapped = Const(), Const(kind)
    wrapped.load_state_dict(plain.state_dict())
    x = _x(4)
    y = torch.tensor([0, 1, 2, 0])
    a = certify(plain, x, sigma=0.25, n0=20, n=50, batch_size=32, seed=1, return_scores=True)
    b = certify(wrapped, x, sigma=0.25, n0=20, n=50, batch_size=32, seed=1, return_scores=True)
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.scores, b.scores)
    pa = predict(plain, x, sigma=0.25, n=30, seed=1)
    pb = predict(wrapped, x, sigma=0.25, n=30, seed=1)
    assert np.array_equal(pa.counts, pb.counts)
    ra = BetaACE(steps=3, norm="l2")(plain, x, y, 0.3)
    rb = BetaACE(steps=3, norm="l2")(wrapped, x, y, 0.3)
    assert torch.equal(ra.x_adv, rb.x_adv)
    ta = adversarial_calibration_training(plain, x, y, method="smoothadv", epochs=1, batch_size=4, eps=0.1)
    tb = adversarial_calibration_training(wrapped, x, y, method="smoothadv", epochs=1, batch_size=4, eps=0.1)
    assert ta.loss_history == tb.loss_history


def test_model_returning_something_else_is_a_clear_error():
    class Bad(torch.nn.Module):  # a tuple with logits first is accepted (issue 25 item 5); this is not logits
        def forward(self, x):
            return {"scores": x.flatten(1)}

    with pytest.raises(ValueError, match="logits"):
        certify(Bad(), _x(2), sigma=0.25, n0=5, n=5)


# --- item 9: the vectorised statistics equal scipy's per-input tests -----------------------------------


def test_vectorised_predict_pvalue_equals_binomtest():
    from scipy.stats import binomtest

    from certcal.smoothing.bounds import two_sided_half_pvalue as _two_sided_half_pvalue

    n1 = np.array([0, 1, 5, 10, 37, 50, 99, 500, 1000, 3])
    n2 = np.array([0, 0, 5, 3, 40, 49, 1, 420, 0, 9])
    want = [binomtest(int(a), int(a + b), 0.5).pvalue if a + b else 1.0 for a, b in zip(n1, n2, strict=True)]
    assert np.allclose(_two_sided_half_pvalue(n1, n2), want, rtol=1e-10, atol=1e-300)
