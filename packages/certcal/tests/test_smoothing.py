import numpy as np
import pytest
import torch
from scipy.stats import binomtest, norm

from certcal import certify, clopper_pearson_lower, confidence_bounds, predict


class Linear2(torch.nn.Module):
    """logits = [w.x - t, 0]: under N(0, sigma^2 I) noise, P(class 0) = Phi((w.x - t) / (sigma ||w||))."""

    def __init__(self, w: torch.Tensor, t: float) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(w.clone(), requires_grad=False)
        self.t = t

    def forward(self, x):
        s = x.flatten(1) @ self.w - self.t
        return torch.stack([s, torch.zeros_like(s)], dim=1)


SIGMA = 0.5
W = torch.tensor([2.5, 2.5, 2.5, 2.5])  # ||w|| = 5; inputs along w stay in [0, 1] up to p = 0.9995


def inputs_with_pa(pas):
    """Inputs on a line along w with prescribed P(class 0)."""
    margins = SIGMA * 5.0 * norm.ppf(np.asarray(pas))  # w.x - t
    x = torch.zeros(len(pas), 1, 2, 2)
    # put w.x = 1 + margin with x along w / ||w||^2, t = 1; x in [0, 1] (certify refuses images outside it)
    d = (1.0 + torch.as_tensor(margins, dtype=torch.float32)) / 25.0
    x.view(len(pas), 4)[:] = d[:, None] * W
    assert 0 <= float(x.min()) and float(x.max()) <= 1, "p outside the range this helper keeps in [0, 1]"
    return x


def test_certify_radius_matches_closed_form():
    pas = [0.6, 0.8, 0.95, 0.99]
    model = Linear2(W, 1.0)
    x = inputs_with_pa(pas)
    n, alpha = 20_000, 0.001
    res = certify(model, x, sigma=SIGMA, n0=100, n=n, alpha=alpha, batch_size=8192, seed=0)
    assert np.all(res.prediction == 0)
    n_a = res.counts[:, 0]
    for i, p in enumerate(pas):
        assert abs(n_a[i] / n - p) <= 5 * np.sqrt(p * (1 - p) / n)
        # the radius is sigma * Phi^-1 of the one-sided Clopper-Pearson bound (independent scipy route)
        p_low = binomtest(int(n_a[i]), n).proportion_ci(confidence_level=1 - 2 * alpha, method="exact").low
        assert res.radius[i] == pytest.approx(SIGMA * norm.ppf(p_low), rel=1e-9)
        # for a linear classifier Cohen's radius is exact: true robust radius = sigma * Phi^-1(p_A)
        true_r = SIGMA * norm.ppf(p)
        assert res.radius[i] <= true_r + 1e-9
        assert res.radius[i] >= true_r - 0.15 * SIGMA
    # the exact robust radius is the distance to the decision boundary
    dist = (x.flatten(1) @ W - 1.0).numpy() / 5.0
    assert np.allclose(SIGMA * norm.ppf(pas), dist, atol=1e-5)


def test_certify_abstains_at_half_and_predict():
    model = Linear2(W, 1.0)
    x = inputs_with_pa([0.5, 0.999])
    res = certify(model, x, sigma=SIGMA, n0=100, n=2000, seed=1)
    assert res.prediction[0] == -1 and res.radius[0] == 0.0
    assert res.prediction[1] == 0 and res.radius[1] > 0
    pr = predict(model, x, sigma=SIGMA, n=2000, alpha=0.001, seed=1)
    assert list(pr.prediction) == [-1, 0]
    assert pr.p_value[0] > 0.001 and pr.p_value[1] < 1e-10
    assert pr.to_dict()["prediction"] == [-1, 0]


def test_clopper_pearson_matches_scipy_binomtest():
    for k, n in [(0, 10), (3, 10), (10, 10), (950, 1000)]:
        ref = 0.0 if k == 0 else binomtest(k, n).proportion_ci(0.98, method="exact").low
        assert clopper_pearson_lower(k, n, alpha=0.01) == pytest.approx(ref, abs=1e-12)


def test_certify_deterministic_and_not_mutating(noisy_model, digits):
    _, _, xte, _ = digits
    x = xte[:20].clone()
    a = certify(noisy_model, x, sigma=0.25, n0=50, n=300, batch_size=512, seed=3)
    b = certify(noisy_model, x, sigma=0.25, n0=50, n=300, batch_size=512, seed=3)
    c = certify(noisy_model, x, sigma=0.25, n0=50, n=300, batch_size=512, seed=4)
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.radius, b.radius)
    assert not np.array_equal(a.counts, c.counts)
    assert torch.equal(x, xte[:20])
    g = torch.Generator().manual_seed(3)
    d = certify(noisy_model, x, sigma=0.25, n0=50, n=300, batch_size=512, seed=None, generator=g)
    assert np.array_equal(a.counts, d.counts)
    assert a.counts.sum(axis=1).tolist() == [300] * 20


def test_smoothed_accuracy_reasonable(noisy_model, digits):
    _, _, xte, yte = digits
    res = certify(noisy_model, xte[:100], sigma=0.25, n0=50, n=500, batch_size=4096, seed=0)
    assert res.certified_accuracy(yte[:100].numpy(), 0.0) > 0.7
    # certified accuracy can only fall with the radius
    cas = [res.certified_accuracy(yte[:100].numpy(), r) for r in (0.0, 0.1, 0.25, 0.5)]
    assert all(a >= b for a, b in zip(cas, cas[1:], strict=False))


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"sigma": 0.0}, ValueError),
        ({"sigma": 0.25, "alpha": 1.5}, ValueError),
        ({"sigma": 0.25, "n": 0}, ValueError),
        ({"sigma": 0.25, "batch_size": 0}, ValueError),
        ({"sigma": 0.25, "seed": "x"}, TypeError),
    ],
)
def test_certify_bad_inputs(kwargs, exc):
    model = Linear2(W, 1.0)
    with pytest.raises(exc):
        certify(model, inputs_with_pa([0.9]), **kwargs)


def test_certify_rejects_non_image_and_non_module():
    model = Linear2(W, 1.0)
    with pytest.raises(ValueError):
        certify(model, torch.zeros(3, 4), sigma=0.25)
    with pytest.raises(TypeError):
        certify(lambda x: x, inputs_with_pa([0.9]), sigma=0.25)


# ---- confidence certificates (Kumar et al. 2020) ----

def smoothed_score_reference(margin: float, shift: float) -> float:
    """E[sigmoid(margin + shift + sigma ||w|| Z)] by Gauss-Hermite quadrature (independent of certcal)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(120)
    vals = 1.0 / (1.0 + np.exp(-(margin + shift + SIGMA * 5.0 * nodes)))
    return float((weights * vals).sum() / np.sqrt(2 * np.pi))


@pytest.mark.parametrize("method", ["standard", "cdf"])
def test_bounds_contain_true_smoothed_confidence(method):
    pas = [0.7, 0.9, 0.97]
    model = Linear2(W, 1.0)
    x = inputs_with_pa(pas)
    res = certify(model, x, sigma=SIGMA, n0=100, n=20_000, seed=5, return_scores=True, batch_size=8192)
    radii = np.array([0.0, 0.1, 0.3, 0.6])
    b = confidence_bounds(res.scores, sigma=SIGMA, radius=radii, alpha=0.001, method=method)
    margins = (x.flatten(1) @ W - 1.0).numpy()
    for i in range(len(pas)):
        for j, r in enumerate(radii):
            # h = softmax_0 = sigmoid(w.x - t) is monotone along w: the extremes over the ball are at +-r w/||w||
            lo_true = smoothed_score_reference(margins[i], -5.0 * r)
            hi_true = smoothed_score_reference(margins[i], +5.0 * r)
            assert b.lower[i, j] <= lo_true + 1e-9
            assert b.upper[i, j] >= hi_true - 1e-9


def test_bounds_contain_mc_estimate_and_widen(noisy_model, digits):
    _, _, xte, _ = digits
    res = certify(noisy_model, xte[:40], sigma=0.25, n0=50, n=2000, batch_size=8192, seed=2, return_scores=True)
    radii = np.linspace(0.0, 1.0, 9)
    widths = {}
    for method in ("standard", "cdf"):
        b0 = confidence_bounds(res.scores, sigma=0.25, radius=0.0, method=method)
        assert np.all(b0.lower <= b0.mean + 1e-12) and np.all(b0.mean <= b0.upper + 1e-12)
        assert np.allclose(b0.mean, res.scores.mean(axis=1))
        b = confidence_bounds(res.scores, sigma=0.25, radius=radii, method=method)
        assert np.all(np.diff(b.lower, axis=1) <= 1e-12)
        assert np.all(np.diff(b.upper, axis=1) >= -1e-12)
        widths[method] = b.width
    # the paper (App. C): CDF bounds are tighter than the Standard ones
    assert np.all(widths["cdf"].mean(axis=0) < widths["standard"].mean(axis=0))
    # ... and, with every sample as a threshold (n <= 4096), tighter for every input and radius
    assert np.all(widths["cdf"] <= widths["standard"] + 1e-12)


def test_confidence_bounds_bad_inputs():
    s = np.full((2, 10), 0.5)
    with pytest.raises(ValueError):
        confidence_bounds(s, sigma=0.25, method="hoeffding")
    with pytest.raises(ValueError):
        confidence_bounds(s + 1.0, sigma=0.25)
    with pytest.raises(ValueError):
        confidence_bounds(s, sigma=0.25, radius=-0.1)
    with pytest.raises(ValueError):
        confidence_bounds(s[0], sigma=0.25)


# ---- per-input noise streams: shards of a dataset certify as one call ----

def _same(a, b) -> bool:
    return (np.array_equal(a.prediction, b.prediction) and np.array_equal(a.counts, b.counts)
            and np.array_equal(a.radius, b.radius) and np.array_equal(a.p_lower, b.p_lower)
            and np.array_equal(a.scores, b.scores))


def test_per_input_stream_shards_equal_one_call(noisy_model, digits):
    from certcal import NOISE_BLOCK, CertifyResult

    _, _, xte, _ = digits
    x = xte[:13]
    n = NOISE_BLOCK + 90  # an input's draws span two noise blocks
    kw = dict(n0=40, n=n, alpha=0.01, seed=5, return_scores=True, stream="per_input")
    whole = certify(noisy_model, x, sigma=0.25, batch_size=1000, **kw)
    # other batch sizes (one straddles inputs and blocks) and shards at uneven offsets give the same result
    assert _same(whole, certify(noisy_model, x, sigma=0.25, batch_size=77, **kw))
    cuts = [0, 4, 5, 13]
    parts = [certify(noisy_model, x[a:b], sigma=0.25, batch_size=131, first_index=a, **kw)
             for a, b in zip(cuts, cuts[1:], strict=False)]
    assert _same(whole, CertifyResult.concatenate(parts))
    # a shard that forgets its offset draws other noise
    assert not np.array_equal(certify(noisy_model, x[5:], sigma=0.25, batch_size=1000, **kw).scores, whole.scores[5:])
    # the batch stream is not shard-invariant: that is why per_input exists
    batch = {k: v for k, v in kw.items() if k != "stream"}
    one = certify(noisy_model, x, sigma=0.25, batch_size=1000, **batch)
    two = CertifyResult.concatenate([certify(noisy_model, x[:5], sigma=0.25, batch_size=1000, **batch),
                                     certify(noisy_model, x[5:], sigma=0.25, batch_size=1000, **batch)])
    assert not np.array_equal(one.scores, two.scores)


def test_per_input_stream_gives_each_input_its_own_noise(noisy_model, digits):
    _, _, xte, _ = digits
    x = xte[:1].repeat(2, 1, 1, 1)  # the same image at two indices
    res = certify(noisy_model, x, sigma=0.25, n0=20, n=300, seed=0, return_scores=True, stream="per_input")
    assert not np.array_equal(res.scores[0], res.scores[1])
    other_seed = certify(noisy_model, x, sigma=0.25, n0=20, n=300, seed=1, return_scores=True, stream="per_input")
    assert not np.array_equal(res.scores, other_seed.scores)


def test_per_input_stream_radius_matches_closed_form():
    """The per-input noise is standard Gaussian noise: Cohen's radius of a linear model stays exact."""
    pas = [0.6, 0.8, 0.95]
    x = inputs_with_pa(pas)
    n = 20_000
    res = certify(Linear2(W, 1.0), x, sigma=SIGMA, n0=100, n=n, alpha=0.001, batch_size=8192, seed=0, stream="per_input")
    assert np.all(res.prediction == 0)
    for i, p in enumerate(pas):
        assert abs(res.counts[i, 0] / n - p) <= 5 * np.sqrt(p * (1 - p) / n)
        assert res.radius[i] <= SIGMA * norm.ppf(p) + 1e-9


class BatchSensitive(torch.nn.Module):
    """The noisy model's logits plus a last-bits term that depends on how many inputs share the batch: what
    float arithmetic of real models (BLAS, oneDNN) does when a batch's size changes."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x) + 1e-6 * (x.shape[0] % 7)


def test_per_input_shards_equal_one_call_bit_for_bit(noisy_model, digits):
    """Shards of a dataset certified apart and concatenated give the one-call certificate exactly, scores
    included, even for a model whose arithmetic depends on the batch's size (each forward pass holds noise
    blocks of one input only; it failed when batches mixed inputs across shard boundaries)."""
    from certcal import CertifyResult

    _, _, xte, _ = digits
    model, x = BatchSensitive(noisy_model), xte[:7]
    kw = dict(sigma=0.25, n0=20, n=300, batch_size=128, seed=0, return_scores=True, stream="per_input")
    whole = certify(model, x, **kw)
    parts = CertifyResult.concatenate([certify(model, x[:3], **kw), certify(model, x[3:], first_index=3, **kw)])
    for k in ("prediction", "radius", "p_lower", "counts", "scores"):
        assert np.array_equal(getattr(whole, k), getattr(parts, k)), k


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"stream": "chunked"}, "stream"),
        ({"stream": "per_input", "first_index": -1}, "first_index"),
        ({"stream": "per_input", "seed": -3}, "seed"),
        ({"stream": "per_input", "generator": torch.Generator()}, "generator"),
        ({"first_index": 4}, "first_index"),
    ],
)
def test_per_input_stream_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        certify(Linear2(W, 1.0), inputs_with_pa([0.9]), sigma=SIGMA, n0=10, n=10, **kwargs)


def test_concatenate_rejects_mismatched_parts():
    from certcal import CertifyResult

    x = inputs_with_pa([0.9, 0.8])
    a = certify(Linear2(W, 1.0), x, sigma=SIGMA, n0=10, n=50, seed=0)
    with pytest.raises(ValueError, match="sigma, n0, n, alpha"):
        CertifyResult.concatenate([a, certify(Linear2(W, 1.0), x, sigma=SIGMA, n0=10, n=60, seed=0)])
    with pytest.raises(ValueError, match="scores"):
        CertifyResult.concatenate([a, certify(Linear2(W, 1.0), x, sigma=SIGMA, n0=10, n=50, seed=0, return_scores=True)])
    with pytest.raises(TypeError):
        CertifyResult.concatenate([])
    both = CertifyResult.concatenate([a, a])
    assert both.prediction.shape == (4,) and both.counts.shape == (4, 2)


def test_certify_result_saves_and_loads_exactly(tmp_path, noisy_model, digits):
    from certcal import CertifyResult

    _, _, xte, _ = digits
    for scores in (True, False):
        cert = certify(noisy_model, xte[:5], sigma=0.25, n0=10, n=50, seed=0, return_scores=scores)
        path = cert.save(tmp_path / f"c{scores}.npz")
        back = CertifyResult.load(path)
        assert (back.sigma, back.n0, back.n, back.alpha) == (cert.sigma, cert.n0, cert.n, cert.alpha)
        for k in ("prediction", "radius", "p_lower", "counts"):
            assert np.array_equal(getattr(back, k), getattr(cert, k)) and getattr(back, k).dtype == getattr(cert, k).dtype
        assert (back.scores is None) == (not scores) and (not scores or np.array_equal(back.scores, cert.scores))
    with pytest.raises(ValueError, match="lack"):
        CertifyResult.from_arrays({"prediction": np.zeros(2)})
