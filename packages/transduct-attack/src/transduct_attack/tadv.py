"""Transductive adversarial training (TADV), §6 and A.5.

On receiving a test batch, the defender adversarially retrains a model *from scratch* on the training
set D with fresh private randomness (initialisation, shuffling, PGD random starts), 50% clean and 50%
adversarial examples per minibatch. The transduction lies in the timing: the randomness is drawn after
the attacker's move, so the attacker can only attack models trained with its own randomness (the
test batch itself is not used for training, as in the paper).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import check_images, check_int

from ._validate import check_eps, check_generator, check_labels, logits_model
from .networks import SmallCNN, image_factory
from .threat_model import Adaptation, TransductiveDefense
from .training import train_classifier

__all__ = ["TADV"]


class TADV(TransductiveDefense):
    """TADV as a stateless Γ. ``base_model`` is the static adversarially trained model (Madry et al.),
    the target of transfer attacks and F^(0) of FPA/GMSA. ``make_model(generator)`` builds the
    architecture (default :class:`~transduct_attack.networks.SmallCNN` sized from ``train_x``).
    Paper (MNIST): eps 0.3, PGD 40 steps of 0.01, 100 epochs, Adam lr 1e-3, batch 128.

    Paper: the transductive adversarial training evaluated in Table 4.
    """

    name = "TADV"

    def __init__(self, train_x: torch.Tensor, train_y: torch.Tensor, *, base_model: nn.Module, eps: float,
                 make_model: Callable[[torch.Generator], nn.Module] | None = None, epochs: int = 100,
                 lr: float = 1e-3, batch_size: int = 128, adv_steps: int = 40, adv_step_size: float | None = None,
                 clean_fraction: float = 0.5) -> None:
        self._base = logits_model("base_model", base_model)
        check_images("train_x", train_x)
        self.train_y = check_labels("train_y", train_y, train_x.shape[0], device=train_x.device,
                                    model=self._base, x=train_x)
        self.train_x = train_x
        self.eps = check_eps(eps)
        self.epochs = check_int("epochs", epochs, ge=1)
        self.lr = lr
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.adv_steps = check_int("adv_steps", adv_steps, ge=1)
        self.adv_step_size = adv_step_size
        if not 0.0 <= clean_fraction <= 1.0:
            raise ValueError(f"clean_fraction must be in [0, 1], got {clean_fraction!r}")
        self.clean_fraction = clean_fraction
        if make_model is None:
            make_model = image_factory(SmallCNN, train_x, n_classes=int(self.train_y.max()) + 1)
        self.make_model = make_model

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images("x", x)
        check_generator(generator)
        model = self.make_model(generator)
        train_classifier(model, self.train_x, self.train_y, epochs=self.epochs, generator=generator, lr=self.lr,
                         batch_size=self.batch_size, adversarial_eps=self.eps, adv_steps=self.adv_steps,
                         adv_step_size=self.adv_step_size, clean_fraction=self.clean_fraction,
                         in_place=True)  # a fresh model of its own: no copy needed
        return Adaptation(model=model)
