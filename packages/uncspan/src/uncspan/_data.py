"""Input handling shared by the attacks and the span: a tensor or a re-iterable loader of batches, streamed
to the model's device one batch at a time (memory does not grow with the dataset, issue 14)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_images, check_labels


def model_device(model: nn.Module, fallback: torch.device) -> torch.device:
    """The device of the model's first parameter (or buffer); ``fallback`` for a parameter-free model."""
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return fallback


def is_loader(x: object) -> bool:
    return not isinstance(x, torch.Tensor) and isinstance(x, Iterable)


def check_data(x: object, name: str = "x", *, reiterable: bool = False) -> object:
    """A tensor (N, C, H, W) in [0, 1], or an iterable of batches (tensors or ``(x, y, ...)`` tuples such as a
    ``torch.utils.data.DataLoader``). ``reiterable``: the data is read more than once, so a one-shot
    iterator (a generator) is refused."""
    if isinstance(x, torch.Tensor):
        return check_images(name, x)
    if not is_loader(x) or isinstance(x, str | bytes | np.ndarray):
        raise TypeError(f"{name} must be a torch.Tensor of shape (N, C, H, W) in [0, 1] or a loader of such "
                        f"batches; got {type(x).__name__}")
    if reiterable and iter(cast(Iterable, x)) is x:
        raise TypeError(f"{name} is a one-shot iterator but is read more than once: pass a tensor or a "
                        f"re-iterable loader (e.g. torch.utils.data.DataLoader)")
    return x


def iter_batches(x: object, y: torch.Tensor | None, batch_size: int,
                 name: str = "x") -> Iterator[tuple[torch.Tensor, torch.Tensor | None]]:
    """Yield ``(x_batch, y_batch or None)`` on the data's own device: slices of a tensor, or the loader's
    batches as they come (labels from ``(x, y, ...)`` tuples; ``y`` given explicitly wins for tensors)."""
    if isinstance(x, torch.Tensor):
        for i in range(0, x.shape[0], batch_size):
            yield x[i : i + batch_size], None if y is None else y[i : i + batch_size]
        return
    for item in cast(Iterable, x):
        if isinstance(item, list | tuple):
            if not item:
                raise ValueError(f"{name} yielded an empty batch tuple")
            xb = item[0]
            yb = item[1] if len(item) > 1 else None
        else:
            xb, yb = item, None
        check_images(f"a batch of {name}", xb)
        if yb is not None:
            yb = torch.as_tensor(check_labels(f"the labels (y) in the batches of {name}", yb, length=xb.shape[0]))
        yield xb, yb


def labels_of(x: object, y: object, name: str = "y") -> torch.Tensor:
    """The labels: ``y`` for a tensor ``x`` (checked), or gathered from a loader's ``(x, y)`` batches."""
    if isinstance(x, torch.Tensor):
        if y is None:
            raise TypeError(f"{name} must hold the integer labels of x ({x.shape[0]},), got None")
        return torch.as_tensor(check_labels(name, y, length=x.shape[0]))
    if y is not None:
        raise TypeError(f"{name} must be None when x is a loader: the labels come from its (x, y) batches")
    out = []
    for _, yb in iter_batches(x, None, 1):
        if yb is None:
            raise ValueError("the loader must yield (x, y) batches: labels are needed here")
        out.append(yb.cpu())
    if not out:
        raise ValueError("the loader yielded no batches")
    return torch.cat(out)


def check_label_range(name: str, y: torch.Tensor, k: int) -> None:
    """Labels ``y`` must index the model's ``k`` classes (checked after one forward pass told ``k``)."""
    check_labels(name, y, n_classes=k)


def per_sample_seed(seed: int, restart: int, index: int) -> int:
    """A seed for one sample's random start that depends only on (seed, restart, sample index), so that the
    starts, hence the results, do not depend on the batch size or on the device's batching."""
    return int(np.random.SeedSequence([seed, restart, index]).generate_state(1, np.uint64)[0] >> 1)
