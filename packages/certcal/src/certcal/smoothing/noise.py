"""Monte-Carlo sampling of the smoothed classifier: the base model's class counts (and scores) under Gaussian
draws, from one generator (``stream="batch"``) or from noise keyed per input (``stream="per_input"``, see
:mod:`certcal.smoothing`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import check_float, check_int, check_labels
from robustsuite_common.models import as_model_input, evaluating, model_device

from .._validation import check_images, check_model, check_outputs, model_logits, num_classes

__all__ = ["NOISE_BLOCK", "NOISE_STREAMS", "PerInputNoise", "sample_counts"]

NOISE_STREAMS = ("batch", "per_input")
NOISE_BLOCK = 256  # draws per independently seeded block of one input's noise (stream="per_input")


class PerInputNoise:
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


def sample_counts(
    model: torch.nn.Module,
    x: torch.Tensor,
    *,
    sigma: float,
    num: int,
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
        return sample_counts_unchecked(model, x, sigma, num, batch_size=batch_size, generator=generator,
                              score_classes=score_classes, progress=progress, outputs=outputs)


@torch.no_grad()
def sample_counts_unchecked(model, x, sigma, num, *, batch_size, generator, score_classes=None, progress=False,
                   noise=None, outputs="logits"):
    """``sample_counts`` without the argument checks (callers have made them); ``noise(start, stop, shape)``
    (a :class:`PerInputNoise`) replaces the draws from ``generator`` when given."""
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
