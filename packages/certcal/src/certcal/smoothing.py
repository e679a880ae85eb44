"""Gaussian randomized smoothing (Cohen et al. 2019; paper App. A.1): CERTIFY and PREDICT.

The smoothed classifier g(x) = argmax_k P(f(x + delta) = k), delta ~ N(0, sigma^2 I). Noise draws for many
inputs are flattened into one stream of (input, draw) pairs and evaluated ``batch_size`` at a time, so one
forward pass serves several inputs (or one input's many draws).

Where the noise comes from (``certify(..., stream=)``):

- ``"batch"`` (default): one generator seeded with ``seed`` feeds the whole call, so an input's noise depends
  on the inputs before it and on ``batch_size``.
- ``"per_input"``: input number ``first_index + i`` gets its own noise, drawn in blocks of
  :data:`NOISE_BLOCK` draws, each block from a generator seeded by ``SeedSequence([seed, index, phase,
  block])``, and every forward pass holds whole noise blocks of one input. An input's certificate then depends
  only on the seed, its global index, its pixels and ``batch_size``, never on the other inputs of the call:
  certifying a dataset in shards (``first_index`` = the shard's offset) and concatenating
  (:meth:`CertifyResult.concatenate`) equals certifying it in one call, bit for bit, which is what lets a long
  certification run as many independent tasks. (Its counts do not depend on ``batch_size`` either; its scores
  can differ in the last float bits, because a model's arithmetic can depend on the size of the batch.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import (
    check_choice,
    check_float,
    check_int,
    check_labels,
    check_probability,
    check_seed,
)
from robustsuite_common.models import as_model_input, evaluating, model_device, model_dtype

from ._validation import check_images, check_model, check_outputs, make_generator, model_logits, num_classes

__all__ = [
    "NOISE_BLOCK",
    "NOISE_STREAMS",
    "CertifyResult",
    "PredictResult",
    "certify",
    "clopper_pearson_lower",
    "max_certifiable_radius",
    "predict",
    "sample_counts",
]


NOISE_STREAMS = ("batch", "per_input")
NOISE_BLOCK = 256  # draws per independently seeded block of one input's noise (stream="per_input")


class _PerInputNoise:
    """Noise rows ``[start, stop)`` of the flattened (input, draw) stream of one sampling phase, where input
    ``i``'s draw ``j`` comes from block ``j // NOISE_BLOCK`` of input ``first_index + i`` (see module doc)."""

    def __init__(self, seed: int, first_index: int, phase: int, num: int, device, dtype) -> None:
        self.seed, self.first, self.phase, self.num = seed, first_index, phase, num
        self.device, self.dtype = device, dtype
        self._key: tuple[int, int] | None = None
        self._block: torch.Tensor | None = None

    def block(self, i: int, k: int, shape: tuple[int, ...]) -> torch.Tensor:
        if self._key != (i, k):
            state = np.random.SeedSequence([self.seed, self.first + i, self.phase, k]).generate_state(1, np.uint64)
            gen = torch.Generator(device=self.device)
            gen.manual_seed(int(state[0]) >> 1)  # torch seeds are < 2**63
            count = min(NOISE_BLOCK, self.num - k * NOISE_BLOCK)
            self._key = (i, k)
            self._block = torch.randn((count, *shape), generator=gen, device=self.device, dtype=self.dtype)
        assert self._block is not None
        return self._block

    def __call__(self, start: int, stop: int, shape: tuple[int, ...]) -> torch.Tensor:
        parts = []
        r = start
        while r < stop:
            i, j = divmod(r, self.num)
            k = j // NOISE_BLOCK
            end = min(stop, i * self.num + min((k + 1) * NOISE_BLOCK, self.num))
            off = j - k * NOISE_BLOCK
            parts.append(self.block(i, k, shape)[off: off + end - r])
            r = end
        return parts[0].clone() if len(parts) == 1 else torch.cat(parts)  # callers add to it in place


def clopper_pearson_lower(successes: Any, trials: int, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson lower bound: the Beta(alpha; k, n - k + 1) quantile (0 if k = 0).

    Vectorised over ``successes``: ``robustsuite_common.intervals.proportion_lower``.
    """
    from robustsuite_common.intervals import proportion_lower

    trials = check_int("trials", trials, ge=1)
    check_probability("alpha", alpha)
    return proportion_lower(_as_counts("successes", successes, trials), trials, alpha=alpha)


def max_certifiable_radius(sigma: float, n: int, alpha: float = 0.001) -> float:
    """The largest L2 radius CERTIFY can return with ``n`` draws at level ``alpha``: the radius at
    p_lower = the one-sided Clopper-Pearson bound with all ``n`` draws on one class, alpha^(1/n) (the
    Beta(alpha; n, 1) quantile), i.e. sigma * Phi^-1(alpha^(1/n)). No input, however robust, is certified
    beyond it, so a comparison at a larger radius cannot be decided by this draw budget (n = 400 at
    alpha = 0.001 caps sigma = 0.25 at about 0.53; the paper's n = 100,000 at about 0.95)."""
    from scipy.stats import norm

    sigma = check_float("sigma", sigma, gt=0)
    n = check_int("n", n, ge=1)
    alpha = check_probability("alpha", alpha)
    p = float(clopper_pearson_lower(n, n, alpha))
    return float(sigma * norm.ppf(p)) if p > 0.5 else 0.0


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
    outputs: str = "logits",
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
    check_float("sigma", sigma, gt=0)
    check_int("num", num, ge=1)
    check_int("batch_size", batch_size, ge=1)
    check_outputs(outputs)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    with evaluating(model):
        k = num_classes(model, x, outputs)
        if score_classes is not None:
            check_labels("score_classes", score_classes, n_classes=k, length=int(x.shape[0]))
        return _sample_counts(model, x, sigma, num, batch_size=batch_size, generator=generator,
                              score_classes=score_classes, progress=progress, outputs=outputs)


@torch.no_grad()
def _sample_counts(model, x, sigma, num, *, batch_size, generator, score_classes=None, progress=False,
                   noise=None, outputs="logits"):
    """``sample_counts`` without the argument checks (callers have made them); ``noise(start, stop, shape)``
    (a :class:`_PerInputNoise`) replaces the draws from ``generator`` when given."""
    device = model_device(model)
    b = x.shape[0]
    xd = as_model_input(model, x)  # the model's device and dtype (float64 / half inputs are cast)
    total = b * num
    counts: torch.Tensor | None = None
    finite = torch.ones((), dtype=torch.bool, device=device)
    scores = None
    if score_classes is not None:
        cls = torch.as_tensor(score_classes, dtype=torch.int64).to(device)
        if cls.shape != (b,):
            raise ValueError(f"score_classes must have shape ({b},), got {tuple(cls.shape)}")
        scores = torch.empty(total, dtype=torch.float32, device=device)
    if noise is None:
        chunks = [(start, min(start + batch_size, total)) for start in range(0, total, batch_size)]
    else:
        # per-input noise: each forward pass holds whole noise blocks of ONE input, so an input's logits never
        # depend on which other inputs share the call (float arithmetic can differ with a batch's make-up)
        step = max(NOISE_BLOCK, batch_size // NOISE_BLOCK * NOISE_BLOCK)
        chunks = [(i * num + j, i * num + min(num, j + step)) for i in range(b) for j in range(0, num, step)]
    iterator: Any = chunks
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(chunks, desc="smoothing", unit="batch", leave=False)
    steps = torch.arange(max(stop - start for start, stop in chunks), device=device)
    for start, stop in iterator:
        owner = (steps[: stop - start] + start).div_(num, rounding_mode="floor")
        batch = xd.index_select(0, owner)
        if noise is None:
            noisy = torch.randn(batch.shape, generator=generator, device=device, dtype=batch.dtype)
        else:
            noisy = noise(start, stop, tuple(batch.shape[1:]))
        noisy.mul_(sigma).add_(batch)
        logits = model_logits(model(noisy), stop - start, outputs, first=start == 0)
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
    if counts.shape[1] < 2:
        raise ValueError(f"model must return logits for at least 2 classes, got {counts.shape[1]}: a smoothed "
                         "classifier needs a runner-up class")
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

    @property
    def n_classes(self) -> int:
        """The number of classes the base model returns (the width of ``counts``)."""
        return int(self.counts.shape[1])

    def certified_accuracy(self, labels: Any, radius: float = 0.0) -> float:
        """Fraction of all inputs whose prediction is certified at L2 ``radius`` (>= 0) and equals the label
        (``labels``: one class index in [0, ``n_classes``) per input)."""
        radius = check_float("radius", radius, ge=0)
        y = check_labels("labels", labels, n_classes=self.n_classes, length=int(self.prediction.shape[0]))
        return float(np.mean(self.certified_at(radius) & (self.prediction == y)))

    # --- saving: a certificate is the expensive part of every experiment (n draws per input) ---

    _ARRAYS = ("prediction", "radius", "p_lower", "counts", "scores")

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The result as named numpy arrays (``scores`` only when kept), with the scalars as 0-d arrays:
        what :meth:`save` writes and :meth:`from_arrays` reads (the ``NUMPY`` codec of a checkpoint store)."""
        out = {k: np.asarray(getattr(self, k)) for k in self._ARRAYS if getattr(self, k) is not None}
        out.update(sigma=np.float64(self.sigma), n0=np.int64(self.n0), n=np.int64(self.n),
                   alpha=np.float64(self.alpha))
        return out

    @classmethod
    def from_arrays(cls, arrays: Any) -> CertifyResult:
        missing = [k for k in ("prediction", "radius", "p_lower", "counts", "sigma", "n0", "n", "alpha")
                   if k not in arrays]
        if missing:
            raise ValueError(f"arrays lack {missing} (written by CertifyResult.to_arrays?)")
        return cls(prediction=np.asarray(arrays["prediction"]), radius=np.asarray(arrays["radius"]),
                   p_lower=np.asarray(arrays["p_lower"]), counts=np.asarray(arrays["counts"]),
                   sigma=float(arrays["sigma"]), n0=int(arrays["n0"]), n=int(arrays["n"]),
                   alpha=float(arrays["alpha"]),
                   scores=np.asarray(arrays["scores"]) if "scores" in arrays else None)

    def save(self, path: Any) -> Any:
        """Write the result as a compressed ``.npz`` (atomically: a killed run leaves no half file)."""
        import io

        from robustsuite_common.io import write_bytes

        buf = io.BytesIO()
        np.savez_compressed(buf, **self.to_arrays())
        return write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: Any) -> CertifyResult:
        """Read a result written by :meth:`save` (plain arrays, no pickles)."""
        with np.load(path, allow_pickle=False) as f:
            return cls.from_arrays({k: f[k] for k in f.files})

    def to_dict(self) -> dict[str, Any]:
        return {
            "prediction": [int(v) for v in self.prediction],
            "radius": [float(v) for v in self.radius],
            "p_lower": [float(v) for v in self.p_lower],
            "sigma": self.sigma, "n0": self.n0, "n": self.n, "alpha": self.alpha,
        }

    @classmethod
    def concatenate(cls, parts: list[CertifyResult]) -> CertifyResult:
        """The results of consecutive shards of one dataset as one result (inputs in the order given).

        With ``certify(..., stream="per_input", first_index=offset)`` per shard this equals certifying the
        whole dataset in one call. The shards must share sigma, n0, n and alpha, and all or none keep scores.
        """
        parts = list(parts)
        if not parts or not all(isinstance(p, CertifyResult) for p in parts):
            raise TypeError("parts must be a non-empty list of CertifyResult")
        first = parts[0]
        for k, p in enumerate(parts[1:], 1):
            theirs, ours = (p.sigma, p.n0, p.n, p.alpha), (first.sigma, first.n0, first.n, first.alpha)
            if theirs != ours:
                raise ValueError(f"parts[{k}] has (sigma, n0, n, alpha) = {theirs}, parts[0] has {ours}")
        with_scores = [p.scores is not None for p in parts]
        if any(with_scores) and not all(with_scores):
            raise ValueError("parts must all keep scores (return_scores=True) or none")
        k_max = max(p.counts.shape[1] for p in parts)
        if any(p.counts.shape[1] != k_max for p in parts):
            raise ValueError("parts have counts over different numbers of classes")
        return cls(prediction=np.concatenate([p.prediction for p in parts]),
                   radius=np.concatenate([p.radius for p in parts]),
                   p_lower=np.concatenate([p.p_lower for p in parts]),
                   counts=np.concatenate([p.counts for p in parts]), sigma=first.sigma, n0=first.n0, n=first.n,
                   alpha=first.alpha,
                   scores=np.concatenate([p.scores for p in parts]) if all(with_scores) else None)


def _check_common(model: Any, x: Any, sigma: Any, alpha: Any, batch_size: Any) -> None:
    check_model(model)
    check_images("x", x)
    check_float("sigma", sigma, gt=0)
    check_probability("alpha", alpha)
    check_int("batch_size", batch_size, ge=1)


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
    stream: str = "batch",
    first_index: int = 0,
    outputs: str = "logits",
) -> CertifyResult:
    """CERTIFY for a batch of inputs ``x`` (N, C, H, W) in [0, 1].

    n0 draws select the top class c_A, n fresh draws count n_A, p_lower is the one-sided Clopper-Pearson
    lower bound at level alpha, and the radius is sigma * Phi^-1(p_lower) when p_lower > 1/2 (else abstain).
    ``return_scores`` keeps the (N, n) softmax probabilities of c_A for the confidence certificates.

    ``stream="per_input"`` gives every input noise of its own, keyed by ``seed`` and its global index
    ``first_index + i`` (see the module doc), so shards of a dataset certified separately and concatenated
    equal one call; ``"batch"`` (default) draws all noise from one generator (``seed`` or ``generator``).

    The model is evaluated in eval mode and given back as it came (mode, buffers, ``requires_grad``); its
    outputs may be a tensor, a tuple (first element), a dict with ``"logits"`` or a ``ModelOutput``
    (``outputs="probabilities"`` if it returns softmax probabilities). Refused before any noise is drawn:
    images outside [0, 1] (the observed range is named), non-finite or empty batches, a single image without
    batch dimension, and a model with fewer than two outputs (one forward pass on ``x[:1]`` reads them).

    Paper: CERTIFY of Cohen et al. (2019), which the paper builds on (App. A.1).
    """
    _check_common(model, x, sigma, alpha, batch_size)
    check_int("n0", n0, ge=1)
    check_int("n", n, ge=1)
    check_outputs(outputs)
    check_choice("stream", stream, NOISE_STREAMS)
    if seed is not None:
        check_seed("seed", seed)  # [0, 2**63 - 1], before any forward pass
    if isinstance(first_index, bool) or not isinstance(first_index, int | np.integer) or first_index < 0:
        raise ValueError(f"first_index must be an integer >= 0, got {first_index!r}")
    if stream == "per_input":
        if generator is not None:
            raise ValueError("generator cannot be used with stream='per_input' (each input's noise is keyed by "
                             "seed and its index); pass seed instead")
        if seed is None:
            raise ValueError("seed must be an integer >= 0 with stream='per_input', got None")
    elif first_index:
        raise ValueError("first_index only applies to stream='per_input' (the batch stream cannot start mid-way)")
    with evaluating(model):
        num_classes(model, x, outputs)  # one input: refuses a one-output model before any noise is drawn
        device = model_device(model)
        dtype = model_dtype(model)
        if stream == "per_input":
            gen = None
            noise0 = _PerInputNoise(int(seed), int(first_index), 0, n0, device, dtype)
            noise1 = _PerInputNoise(int(seed), int(first_index), 1, n, device, dtype)
        else:
            gen = make_generator(seed, generator, device)
            noise0 = noise1 = None
        counts0, _ = _sample_counts(model, x, sigma, n0, batch_size=batch_size, generator=gen, progress=progress,
                                    noise=noise0, outputs=outputs)
        top = counts0.argmax(axis=1)
        counts, scores = _sample_counts(
            model, x, sigma, n, batch_size=batch_size, generator=gen,
            score_classes=torch.as_tensor(top) if return_scores else None, progress=progress, noise=noise1,
            outputs=outputs)
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
    outputs: str = "logits",
) -> PredictResult:
    """PREDICT: top-two counts n1, n2 of n draws; abstain unless the two-sided binomial test of n1 out of
    n1 + n2 at p = 1/2 has p-value <= alpha (then the error probability is at most alpha).

    Paper: PREDICT of Cohen et al. (2019), which the paper builds on (App. A.1).
    """
    _check_common(model, x, sigma, alpha, batch_size)
    check_int("n", n, ge=1)
    check_outputs(outputs)
    with evaluating(model):
        num_classes(model, x, outputs)
        gen = make_generator(seed, generator, model_device(model))
        counts, _ = _sample_counts(model, x, sigma, n, batch_size=batch_size, generator=gen, progress=progress,
                                   outputs=outputs)
    order = np.argsort(-counts, axis=1, kind="stable")
    n1 = counts[np.arange(len(counts)), order[:, 0]]
    n2 = counts[np.arange(len(counts)), order[:, 1]] if counts.shape[1] > 1 else np.zeros_like(n1)
    pv = _two_sided_half_pvalue(n1, n2)
    prediction = np.where(pv <= alpha, order[:, 0], -1).astype(np.int64)
    return PredictResult(prediction=prediction, p_value=pv, counts=counts, sigma=float(sigma), n=int(n),
                         alpha=float(alpha))
