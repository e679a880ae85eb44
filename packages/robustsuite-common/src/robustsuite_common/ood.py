"""Out-of-distribution 8×8 grey images: random patches of scikit-learn's two bundled sample photographs
(``china.jpg``, ``flower.jpg``), the OOD set beside the 8×8 digits.

Patch ``i`` is cut from photograph ``i mod 2`` at a random size in ``[sizes[0], sizes[1])`` pixels and position,
area-resized to 8×8 and min-max scaled to [0, 1] like the digits; one ``numpy.random.default_rng(seed)`` draws
size, top and left per patch, in that order.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .extras import optional_import

__all__ = ["photo_patches"]


def _grey_photos(grey: Literal["float64", "float32"], *, extra: str) -> list[Any]:
    import torch

    datasets = optional_import("sklearn.datasets", extra=extra, feature="the photo patches")
    images = datasets.load_sample_images().images
    if grey == "float64":  # the RGB mean in numpy float64, then float32, then / 255
        return [torch.from_numpy(im.mean(-1).astype(np.float32) / 255.0) for im in images]
    if grey == "float32":  # the RGB mean in torch float32, then / 255
        return [torch.tensor(im, dtype=torch.float32).mean(-1) / 255.0 for im in images]
    raise ValueError(f"grey must be 'float64' or 'float32', got {grey!r}")


def photo_patches(*, n: int, seed: int = 0, sizes: tuple[int, int] = (16, 64),
                  grey: Literal["float64", "float32"] = "float64", extra: str = "scikit-learn") -> Any:
    """``n`` patches (a float32 tensor (n, 1, 8, 8) in [0, 1]); ``sizes``: the half-open range of patch sizes in
    pixels; ``grey``: the precision the photographs' RGB mean is taken in (the two give different bits, and
    recorded runs depend on them); ``extra``: what to install when scikit-learn is missing."""
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(seed)
    photos = _grey_photos(grey, extra=extra)
    out = torch.empty(n, 1, 8, 8)
    for i in range(n):
        img = photos[i % len(photos)]
        size = int(rng.integers(sizes[0], sizes[1]))
        top = int(rng.integers(0, img.shape[0] - size))
        left = int(rng.integers(0, img.shape[1] - size))
        patch = F.interpolate(img[top:top + size, left:left + size][None, None], size=(8, 8), mode="area")[0]
        lo, hi = patch.min(), patch.max()
        out[i] = (patch - lo) / (hi - lo).clamp_min(1e-6)
    return out
