"""The paired bootstrap of a CCE difference between two models on the same test inputs (certcal.act.paired):
every draw recomputes both models' exact CCE on one resample of the shared inputs."""

import numpy as np
import pytest
from scipy.stats import norm

from certcal import certified_calibration_error
from certcal.act import CertifiedSet, cce_differences, paired_cce_difference
from robustsuite_common.intervals import bootstrap


def _set(z: np.ndarray, correct: np.ndarray, shift: float, mask: np.ndarray | None = None) -> CertifiedSet:
    """CDF-style bounds Φ(Φ⁻¹(z) ∓ shift) around confidences z."""
    q = norm.ppf(np.clip(z, 1e-6, 1 - 1e-6))
    return CertifiedSet(norm.cdf(q - shift), norm.cdf(q + shift), correct,
                        np.ones(z.shape[0], bool) if mask is None else mask)


def _random_set(rng: np.random.Generator, n: int) -> CertifiedSet:
    z = rng.uniform(0.3, 1.0, n)
    return _set(z, (rng.uniform(size=n) < z).astype(float), rng.uniform(0.05, 0.6), rng.uniform(size=n) < 0.8)


def _cce_on(s: CertifiedSet, idx: np.ndarray) -> float:
    """The reference: the exact CCE of the resampled inputs the model certifies, by the public solver."""
    keep = idx[s.mask[idx]]
    return certified_calibration_error(s.lower[keep], s.upper[keep], s.correct[keep], n_bins=15).value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_draw_is_both_models_cce_on_the_same_resample(seed):
    rng = np.random.default_rng(seed)
    n = 60
    a = [_random_set(rng, n), _random_set(rng, n)]  # two seeds' selected models
    b = [_random_set(rng, n), _random_set(rng, n)]
    idx = rng.integers(0, n, size=(6, n))
    got = cce_differences(a, b, idx)
    for row, value in zip(idx, got, strict=True):
        want = np.mean([_cce_on(s, row) for s in a]) - np.mean([_cce_on(s, row) for s in b])
        assert value == pytest.approx(want, abs=1e-12)
    # the identity resample is the difference on the data
    on_data = cce_differences(a, b, np.arange(n))[0]
    assert on_data == pytest.approx(np.mean([_cce_on(s, np.arange(n)) for s in a])
                                    - np.mean([_cce_on(s, np.arange(n)) for s in b]), abs=1e-12)


def test_identical_models_give_exactly_zero_with_a_zero_width_interval():
    rng = np.random.default_rng(3)
    a = _random_set(rng, 80)
    est, iv = paired_cce_difference([a], [a], n_boot=200, seed=0)
    assert est == 0.0
    assert iv is not None and iv.low == 0.0 and iv.high == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_interval_contains_the_point_difference(seed):
    rng = np.random.default_rng(10 + seed)
    n = 80
    a, b = _random_set(rng, n), _random_set(rng, n)
    est, iv = paired_cce_difference([a], [b], n_boot=300, seed=seed)
    assert est == pytest.approx(_cce_on(a, np.arange(n)) - _cce_on(b, np.arange(n)), abs=1e-12)
    assert iv is not None
    assert iv.low - 1e-12 <= est <= iv.high + 1e-12
    assert iv.high > iv.low  # two different models: the resamples vary the difference


def _correlated_pair(n: int) -> tuple[CertifiedSet, CertifiedSet]:
    """Two models that share which inputs are hard: model b is model a with every third input's confidence
    raised by 0.04 (deterministic: a fixed confidence ladder and a fixed pattern of errors)."""
    z = np.linspace(0.4, 0.98, n)
    correct = ((np.arange(n) * 7) % 10 < 7).astype(float)  # 70 % correct, spread over the ladder
    zb = z.copy()
    zb[::3] = np.minimum(zb[::3] + 0.04, 0.99)
    return _set(z, correct, 0.3), _set(zb, correct, 0.3)


def test_paired_interval_is_narrower_than_unpaired_ones_for_correlated_models():
    n, n_boot = 150, 300
    a, b = _correlated_pair(n)
    zero = CertifiedSet(np.ones(n), np.ones(n), np.ones(n), np.ones(n, bool))  # CCE 0 on every resample
    est, paired = paired_cce_difference([a], [b], n_boot=n_boot, seed=0)
    assert paired is not None and paired.low <= est <= paired.high

    def one(s):  # each model's own BCa interval, as the ACT rows carry them
        return bootstrap(np.arange(n, dtype=float), lambda i, axis=-1: _apply(cce_differences, [s], [zero], i, axis),
                         seed=0, n_resamples=n_boot)

    ia, ib = one(a), one(b)
    conservative = (ia.low - ib.high, ia.high - ib.low)  # what an unpaired reading can claim
    independent = bootstrap((np.arange(n, dtype=float), np.arange(n, dtype=float)),
                            lambda i, j, axis=-1: (_apply(cce_differences, [a], [zero], i, axis)
                                                   - _apply(cce_differences, [b], [zero], j, axis)),
                            seed=0, n_resamples=n_boot, paired=False)
    assert paired.width < 0.5 * (conservative[1] - conservative[0])
    assert paired.width < 0.5 * independent.width


def _apply(fn, a, b, idx, axis):
    flat = np.moveaxis(np.asarray(idx), axis, -1)
    return fn(a, b, flat.reshape(-1, flat.shape[-1]).astype(np.int64)).reshape(flat.shape[:-1])


def test_same_seed_same_interval_and_the_seed_matters():
    rng = np.random.default_rng(5)
    a, b = _random_set(rng, 70), _random_set(rng, 70)
    one = paired_cce_difference([a], [b], n_boot=150, seed=4)
    assert one == paired_cce_difference([a], [b], n_boot=150, seed=4)
    assert one[1].ci != paired_cce_difference([a], [b], n_boot=150, seed=5)[1].ci


def test_bad_input_is_refused_before_any_work():
    rng = np.random.default_rng(6)
    a, b = _random_set(rng, 30), _random_set(rng, 31)
    with pytest.raises(ValueError, match="same 30 test inputs"):
        paired_cce_difference([a], [b])
    with pytest.raises(ValueError, match="n_boot"):
        paired_cce_difference([a], [a], n_boot=0)
    with pytest.raises(ValueError, match="a must hold"):
        paired_cce_difference([], [a])
    with pytest.raises(ValueError, match="upper"):
        CertifiedSet(np.zeros(3), np.zeros(4), np.zeros(3), np.ones(3, bool))
    with pytest.raises(ValueError, match="indices"):
        cce_differences([a], [a], np.array([[0, 30]]))
    empty = CertifiedSet(a.lower, a.upper, a.correct, np.zeros(30, bool))
    with pytest.raises(ValueError, match="certify at least one"):
        paired_cce_difference([empty], [a])
