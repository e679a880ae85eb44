"""PREDICT (Cohen et al. 2019, Alg. 1): the smoothed classifier's prediction, or an abstention, with its p-value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import check_int
from robustsuite_common.models import evaluating, model_device

from .._validation import check_outputs, make_generator, num_classes
from .bounds import two_sided_half_pvalue
from .certificate import check_common
from .noise import sample_counts_unchecked

__all__ = ["PredictResult", "predict"]


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
    *,
    sigma: float,
    n: int = 1000,
    alpha: float = 0.001,
    batch_size: int = 1000,
    seed: int | None = 0,
    generator: torch.Generator | None = None,
    progress: bool = False,
    outputs: str = "logits",
) -> PredictResult:
    """PREDICT: top-two counts n1, n2 of n draws; abstain unless the two-sided binomial test of n1 out of
    n1 + n2 at p = 1/2 has p-value <= alpha (then the error probability is at most alpha).

    Paper: PREDICT of Cohen et al. (2019), which the paper builds on (App. A.1).
    """
    check_common(model, x, sigma, alpha, batch_size)
    check_int("n", n, ge=1)
    check_outputs(outputs)
    with evaluating(model):
        num_classes(model, x, outputs)
        gen = make_generator(seed, generator, model_device(model))
        counts, _ = sample_counts_unchecked(model, x, sigma, n, batch_size=batch_size, generator=gen, progress=progress,
                                   outputs=outputs)
    order = np.argsort(-counts, axis=1, kind="stable")
    n1 = counts[np.arange(len(counts)), order[:, 0]]
    n2 = counts[np.arange(len(counts)), order[:, 1]] if counts.shape[1] > 1 else np.zeros_like(n1)
    pv = two_sided_half_pvalue(n1, n2)
    prediction = np.where(pv <= alpha, order[:, 0], -1).astype(np.int64)
    return PredictResult(prediction=prediction, p_value=pv, counts=counts, sigma=float(sigma), n=int(n),
                         alpha=float(alpha))
