"""URejectron (Goldwasser et al., 2020) in its basic form (T = 1 iteration), paper Example 3 and A.6.

The classifier F is fixed (trained on P). On receiving the test set x̃ (U'), a discriminator h is trained
to separate the training distribution P (label 0) from x̃ (label 1); the acceptance set is
S = {x : h(x)_1 < threshold}, and F|_S answers ⊥ outside S. The referee scores Eq. 1: the error on
accepted perturbed points err_{U'}(F|_S) and the rejection rate of the clean batch rej_U(S).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ._validate import check_generator, check_images, check_positive_float, check_positive_int
from .networks import SmallCNN, build
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["URejectron"]


class URejectron(TransductiveDefense):
    """URejectron as a stateless, rejecting Γ over a fixed ``classifier``.

    ``make_discriminator(generator)`` builds h (two logits; default a :class:`SmallCNN` without
    BatchNorm). Minibatches are balanced between D and x̃ (x̃ is resampled with replacement), as the
    training set is much larger than a test batch.
    """

    rejects = True
    name = "URejectron"

    def __init__(self, classifier: nn.Module, train_x: torch.Tensor, *,
                 make_discriminator: Callable[[torch.Generator], nn.Module] | None = None, epochs: int = 10,
                 lr: float = 1e-3, batch_size: int = 128, threshold: float = 0.5) -> None:
        if not isinstance(classifier, nn.Module):
            raise TypeError("classifier must be a torch.nn.Module")
        check_images(train_x, "train_x")
        self.train_x = train_x
        self.epochs = check_positive_int(epochs, "epochs")
        self.lr = check_positive_float(lr, "lr")
        self.batch_size = check_positive_int(batch_size, "batch_size")
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
        self.threshold = float(threshold)
        self._classifier = classifier.eval()
        if make_discriminator is None:
            c, h = train_x.shape[1], tuple(train_x.shape[-2:])

            def make_discriminator(g: torch.Generator) -> nn.Module:
                return build(lambda: SmallCNN(in_channels=c, n_classes=2, image_size=h, batch_norm=False), g,
                             device=train_x.device)
        self.make_discriminator = make_discriminator

    @property
    def base_model(self) -> nn.Module:
        return self._classifier

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images(x)
        check_generator(generator)
        h = self.make_discriminator(generator)
        dev = next(h.parameters()).device
        xp, xq = self.train_x.to(dev), x.detach().to(dev)
        opt = torch.optim.Adam(h.parameters(), lr=self.lr)
        half = max(1, self.batch_size // 2)
        n = xp.shape[0]
        for _ in range(self.epochs):
            order = torch.randperm(n, generator=generator, device=generator.device).to(dev)
            for i in range(0, n, half):
                b = order[i:i + half]
                t = torch.randint(0, xq.shape[0], (b.shape[0],), generator=generator,
                                  device=generator.device).to(dev)
                labels = torch.cat([torch.zeros(b.shape[0]), torch.ones(b.shape[0])]).long().to(dev)
                h.train()
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(h(torch.cat([xp[b], xq[t]])), labels).backward()
                opt.step()
        h.eval()
        log_threshold = math.log(self.threshold)

        def acceptor(inputs: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                return F.log_softmax(h(inputs.to(dev)), dim=1)[:, 1] < log_threshold

        return Adaptation(model=self._classifier, acceptor=acceptor)
