"""Gaussian randomized smoothing (Cohen et al. 2019; paper App. A.1): CERTIFY and PREDICT.

The smoothed classifier g(x) = argmax_k P(f(x + delta) = k), delta ~ N(0, sigma^2 I). Noise draws for many
inputs are flattened into one stream of (input, draw) pairs and evaluated ``batch_size`` at a time, so one
forward pass serves several inputs (or one input's many draws).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ._validation import (
    as_logits,
    check_images,
    check_model,
    check_positive_float,
    check_positive_int,
    check_probability,
    make_generator,
    model_device,
)

__all__ = [
    "CertifyResult",
    "PredictResult",
    "certify",
    "clopper_pearson_lower",
    "predict",
    "sample_counts",
]


def clopper_pearson_lower(successes: Any, trials: int, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson lower bound: the Beta(alpha; k, n - k + 1) quantile (0 if k = 0).

    Vectorised over ``successes`` (one ``scipy.stats.beta.ppf`` call for all inputs).
    """
    from scipy.stats import beta

    trials = check_positive_int("trials", trials)
    check_probability("alpha", alpha)
    k = _as_counts("successes", successes, trials)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(alpha, k, trials - k + 1)
    return np.where(k > 0, out, 0.0)


def _as_counts(name: str, value: Any, trials: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must be integer counts, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
        raise ValueError(f"{name} must be whole numbers")
    if arr.size and (arr.min() < 0 or arr.max() > trials):
        raise ValueError(f"{name} must lie in [0, trials = {trials}], got range [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def _two_sided_half_pvalue(n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """p-value of the two-sided exact binomial test of n1 successes out of n1 + n2 at p = 1/2, vectorised.

    The Binomial(n, 1/2) law is symmetric, so the outcomes at most as likely as n1 are the two tails beyond
    min(n1, n2): p = min(1, 2 P(X <= min(n1, n2))) (equals scipy.stats.binomtest(...).pvalue).
    """
    from scipy.stats import binom

    tot = n1 + n2
    pv = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(n1, n2), tot, 0.5))
    return np.where(tot > 0, pv, 1.0)


def sample_counts(
    model: torch.nn.Module,
    x: torch.Tensor,
    sigma: float,
    num: int,
    *,
    batch_size: int,
    generator: torch.Generator,
    score_classes: torch.Tensor | None = None,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Class counts (B, K) of the base model's argmax under ``num`` Gaussian draws per input.

    When ``score_classes`` (B,) is given, also returns the softmax probability of that class for every draw,
    shape (B, num) float32 (the scores Kumar et al.'s confidence certificates need).

    Everything stays on the model's device until the end (no host synchronisation per batch): counts are
    accumulated with ``index_add_``, scores written into a device buffer, and a finiteness flag of the
    logits is reduced on the device and checked once.
    """
    check_model(model)
    check_images("x", x)
    check_positive_float("sigma", sigma)
    check_positive_int("num", num)
    check_positive_int("batch_size", batch_size)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return _sample_counts(model, x, sigma, num, batch_size=batch_size, generator=generator,
                          score_classes=score_classes, progress=progress)


@torch.no_grad()
def _sample_counts(model, x, sigma, num, *, batch_size, generator, score_classes=None, progress=False):
    """``sample_counts`` without the argument checks (callers have made them)."""
    device = model_device(model)
    b = x.shape[0]
    xd = x.to(device)
    total = b * num
    counts: torch.Tensor | None = None
    finite = torch.ones((), dtype=torch.bool, device=device)
    scores = None
    if score_classes is not None:
        cls = torch.as_tensor(score_classes, dtype=torch.int64).to(device)
        if cls.shape != (b,):
            raise ValueError(f"score_classes must have shape ({b},), got {tuple(cls.shape)}")
        scores = torch.empty(total, dtype=torch.float32, device=device)
    iterator = range(0, total, batch_size)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="smoothing", unit="batch", leave=False)
    steps = torch.arange(batch_size, device=device)
    for start in iterator:
        stop = min(start + batch_size, total)
        owner = (steps[: stop - start] + start).div_(num, rounding_mode="floor")
        batch = xd.index_select(0, owner)
        noisy = torch.randn(batch.shape, generator=generator, device=device, dtype=batch.dtype)
        noisy.mul_(sigma).add_(batch)
        logits = as_logits(model(noisy), stop - start)
        finite &= torch.isfinite(logits).all()
        if counts is None:
            counts = torch.zeros(b, logits.shape[1], dtype=torch.int64, device=device)
        k = logits.shape[1]
        pred = logits.argmax(dim=1)
        counts.view(-1).index_add_(0, owner * k + pred, torch.ones_like(pred))
        if scores is not None:
            logp = torch.log_softmax(logits.double(), dim=1)
            scores[start:stop] = logp.gather(1, cls[owner][:, None]).squeeze(1).exp().float()
    assert counts is not None  # total >= 1: x is non-empty and num >= 1
    if not bool(finite):
        raise ValueError("model returned non-finite logits (NaN or inf) under noise: nothing can be certified")
    return counts.cpu().numpy(), (None if scores is None else scores.view(b, num).cpu().numpy())


@dataclass(frozen=True)
class CertifyResult:
    """Per-input outcome of CERTIFY (Cohen et al. 2019, Alg. 1).

    ``prediction`` is -1 where the smoothed classifier abstains (p_lower < 1/2); ``radius`` is the certified
    L2 radius sigma * Phi^-1(p_lower) (0 where it abstains); ``counts`` are the class counts of the n
    estimation draws; ``scores`` (optional) the per-draw softmax probability of the predicted class.
    """

    prediction: np.ndarray
    radius: np.ndarray
    p_lower: np.ndarray
    counts: np.ndarray = field(repr=False)
    sigma: float
    n0: int
    n: int
    alpha: float
    scores: np.ndarray | None = field(default=None, repr=False)

    @property
    def abstained(self) -> np.ndarray:
        return self.prediction < 0

    def certified_at(self, radius: float) -> np.ndarray:
        """Boolean mask of inputs whose prediction is certified at L2 ``radius``."""
        return (self.prediction >= 0) & (self.radius >= radius)

    def certified_accuracy(self, labels: Any, radius: float = 0.0) -> float:
        y = np.asarray(labels)
        return float(np.mean(self.certified_at(radius) & (self.prediction == y)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "prediction": [int(v) for v in self.prediction],
            "radius": [float(v) for v in self.radius],
            "p_lower": [float(v) for v in self.p_lower],
            "sigma": self.sigma, "n0": self.n0, "n": self.n, "alpha": self.alpha,
        }


def _check_common(model: Any, x: Any, sigma: Any, alpha: Any, batch_size: Any) -> None:
    check_model(model)
    check_images("x", x)
    check_positive_float("sigma", sigma)
    check_probability("alpha", alpha)
    check_positive_int("batch_size", batch_size)


def certify(
    model: torch.nn.Module,
    x: torch.Tensor,
    sigma: float,
    n0: int = 100,
    n: int = 100_000,
    alpha: float = 0.001,
    batch_size: int = 1000,
    seed: int | None = 0,
    *,
    generator: torch.Generator | None = None,
    return_scores: bool = False,
    progress: bool = False,
) -> CertifyResult:
    """CERTIFY for a batch of inputs ``x`` (N, C, H, W) in [0, 1].

    n0 draws select the top class c_A, n fresh draws count n_A, p_lower is the one-sided Clopper-Pearson
    lower bound at level alpha, and the radius is sigma * Phi^-1(p_lower) when p_lower > 1/2 (else abstain).
    ``return_scores`` keeps the (N, n) softmax probabilities of c_A for the confidence certificates.
    """
    _check_common(model, x, sigma, alpha, batch_size)
    check_positive_int("n0", n0)
    check_positive_int("n", n)
    was_training = model.training
    model.eval()
    try:
        gen = make_generator(seed, generator, model_device(model))
        counts0, _ = _sample_counts(model, x, sigma, n0, batch_size=batch_size, generator=gen, progress=progress)
        top = counts0.argmax(axis=1)
        counts, scores = _sample_counts(
            model, x, sigma, n, batch_size=batch_size, generator=gen,
            score_classes=torch.as_tensor(top) if return_scores else None, progress=progress)
    finally:
        model.train(was_training)
    from scipy.stats import norm

    n_a = counts[np.arange(counts.shape[0]), top]
    p_lower = clopper_pearson_lower(n_a, n, alpha)
    ok = p_lower > 0.5
    radius = np.where(ok, sigma * norm.ppf(np.where(ok, p_lower, 0.75)), 0.0)
    prediction = np.where(ok, top, -1).astype(np.int64)
    return CertifyResult(prediction=prediction, radius=radius.astype(np.float64), p_lower=p_lower,
                         counts=counts, sigma=float(sigma), n0=int(n0), n=int(n), alpha=float(alpha),
                         scores=scores)


@dataclass(frozen=True)
class PredictResult:
    """Per-input outcome of PREDICT (Cohen et al. 2019, Alg. 1): class or -1 (abstain), with the p-value."""

    prediction: np.ndarray
    p_value: np.ndarray
    counts: np.ndarray = field(repr=False)
    sigma: float
    n: int
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        return {"prediction": [int(v) for v in self.prediction], "p_value": [float(v) for v in self.p_value],
                "sigma": self.sigma, "n": self.n, "alpha": self.alpha}


def predict(
    model: torch.nn.Module,
    x: torch.Tensor,
    sigma: float,
    n: int = 1000,
    alpha: float = 0.001,
    batch_size: int = 1000,
    seed: int | None = 0,
    *,
    generator: torch.Generator | None = None,
    progress: bool = False,
) -> PredictResult:
    """PREDICT: top-two counts n1, n2 of n draws; abstain unless the two-sided binomial test of n1 out of
    n1 + n2 at p = 1/2 has p-value <= alpha (then the error probability is at most alpha)."""
    _check_common(model, x, sigma, alpha, batch_size)
    check_positive_int("n", n)
    was_training = model.training
    model.eval()
    try:
        gen = make_generator(seed, generator, model_device(model))
        counts, _ = _sample_counts(model, x, sigma, n, batch_size=batch_size, generator=gen, progress=progress)
    finally:
        model.train(was_training)
    order = np.argsort(-counts, axis=1, kind="stable")
    n1 = counts[np.arange(len(counts)), order[:, 0]]
    n2 = counts[np.arange(len(counts)), order[:, 1]] if counts.shape[1] > 1 else np.zeros_like(n1)
    pv = _two_sided_half_pvalue(n1, n2)
    prediction = np.where(pv <= alpha, order[:, 0], -1).astype(np.int64)
    return PredictResult(prediction=prediction, p_value=pv, counts=counts, sigma=float(sigma), n=int(n),
                         alpha=float(alpha))
