"""CERTIFY (Cohen et al. 2019, Alg. 1; paper App. A.1) and its per-input outcome, :class:`CertifyResult`."""

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
from robustsuite_common.models import evaluating, model_device, model_dtype

from .._validation import check_images, check_model, check_outputs, make_generator, num_classes
from .bounds import clopper_pearson_lower
from .noise import NOISE_STREAMS, PerInputNoise, sample_counts_unchecked

__all__ = ["CertifyResult", "certify", "check_common"]


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

    def to_arrays(self) -> dict[str, Any]:
        """The result as named numpy arrays (``scores`` only when kept), with the scalars as numpy scalars:
        what :meth:`save` writes and :meth:`from_arrays` reads (the ``NUMPY`` codec of a checkpoint store)."""
        out: dict[str, Any] = {k: np.asarray(getattr(self, k)) for k in self._ARRAYS if getattr(self, k) is not None}
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
                   scores=np.concatenate([p.scores for p in parts if p.scores is not None])
                   if all(with_scores) else None)


def check_common(model: Any, x: Any, sigma: Any, alpha: Any, batch_size: Any) -> None:
    check_model(model)
    check_images("x", x)
    check_float("sigma", sigma, gt=0)
    check_probability("alpha", alpha)
    check_int("batch_size", batch_size, ge=1)


def certify(
    model: torch.nn.Module,
    x: torch.Tensor,
    *,
    sigma: float,
    n0: int = 100,
    n: int = 100_000,
    alpha: float = 0.001,
    batch_size: int = 1000,
    seed: int | None = 0,
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
    check_common(model, x, sigma, alpha, batch_size)
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
            assert seed is not None  # checked above
            gen = None
            noise0 = PerInputNoise(int(seed), int(first_index), 0, n0, device, dtype)
            noise1 = PerInputNoise(int(seed), int(first_index), 1, n, device, dtype)
        else:
            gen = make_generator(seed, generator, device)
            noise0 = noise1 = None
        counts0, _ = sample_counts_unchecked(model, x, sigma, n0, batch_size=batch_size, generator=gen, progress=progress,
                                    noise=noise0, outputs=outputs)
        top = counts0.argmax(axis=1)
        counts, scores = sample_counts_unchecked(
            model, x, sigma, n, batch_size=batch_size, generator=gen,
            score_classes=torch.as_tensor(top) if return_scores else None, progress=progress, noise=noise1,
            outputs=outputs)
    from scipy.stats import norm

    n_a = counts[np.arange(counts.shape[0]), top]
    p_lower = clopper_pearson_lower(n_a, n, alpha=alpha)
    ok = p_lower > 0.5
    radius = np.where(ok, sigma * norm.ppf(np.where(ok, p_lower, 0.75)), 0.0)
    prediction = np.where(ok, top, -1).astype(np.int64)
    return CertifyResult(prediction=prediction, radius=radius.astype(np.float64), p_lower=p_lower,
                         counts=counts, sigma=float(sigma), n0=int(n0), n=int(n), alpha=float(alpha),
                         scores=scores)
