"""Domain-Adversarial Neural Networks as a transductive defense (§6, A.4; Ajakan et al. 2014, Ganin et al. 2016).

For every test batch U' a fresh DANN is trained *from scratch* with the defender's private randomness:
source domain = the labeled training set D, target domain = U' (unlabeled). The encoder learns
features that predict labels on D while a domain discriminator behind a gradient-reversal layer
cannot tell D from U'. The reversal weight follows the progressive schedule
α(p) = (2 / (1 + exp(-10 p)) - 1) · α_max, p going linearly from 0 to 1 over training
(α_max = 0.1 on MNIST, 1 on CIFAR-10 in the paper).

Each step runs the source minibatch and the target minibatch through the encoder in *separate* forward
passes, as the authors do, so BatchNorm normalises each domain with its own batch statistics. The
optimiser and schedule are parameters: MNIST (A.4) uses Adam, lr 1e-3, batch 128, 100 epochs; CIFAR-10 uses
SGD with Nesterov momentum 0.9, weight decay 1e-4, lr 0.1 divided by 10 at epochs 50, 75 and 90, batch 64.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int

from ._validate import check_generator, check_labels, check_positive, logits_model
from .networks import DomainAdversarialNet, image_factory
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["DANN", "dann_alpha"]


def dann_alpha(progress: float, alpha_max: float = 0.1) -> float:
    """Progressive reversal weight of Ganin et al. (2016): 0 at p = 0, → alpha_max as p → 1."""
    return (2.0 / (1.0 + math.exp(-10.0 * progress)) - 1.0) * alpha_max


class DANN(TransductiveDefense):
    """DANN retrained per test batch. ``make_network(generator)`` must return a network with
    ``encoder``, ``predictor`` and ``domain_logits(features)`` (default :class:`DomainAdversarialNet`
    sized from ``train_x``); ``base_model`` is the standard model on D (the transfer-attack target and
    F^(0) of FPA/GMSA, as in the paper). Paper (MNIST): 100 epochs, Adam lr 1e-3, batch 128, α_max 0.1 (the
    defaults); CIFAR-10: ``optimizer="sgd", lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4,
    lr_milestones=(50, 75, 90), lr_gamma=0.1, batch_size=64, alpha_max=1.0``. Milestones are epochs.
    Departure: α multiplies the reversed gradient (Ganin et al.'s λ) rather than the discriminator's loss,
    so the discriminator itself always trains at full strength.

    Paper: the domain-adversarial defense evaluated in Table 3.
    """

    name = "DANN"

    def __init__(self, train_x: torch.Tensor, train_y: torch.Tensor, *, base_model: nn.Module,
                 make_network: Callable[[torch.Generator], DomainAdversarialNet] | None = None,
                 epochs: int = 100,
                 lr: float = 1e-3, batch_size: int = 128, alpha_max: float = 0.1, optimizer: str = "adam",
                 momentum: float = 0.9, nesterov: bool = True, weight_decay: float = 0.0,
                 lr_milestones: tuple[int, ...] = (), lr_gamma: float = 0.1) -> None:
        self._base = logits_model("base_model", base_model)
        check_images("train_x", train_x)
        self.train_y = check_labels("train_y", train_y, train_x.shape[0], device=train_x.device,
                                    model=self._base, x=train_x)
        self.train_x = train_x
        self.epochs = check_int("epochs", epochs, ge=1)
        self.lr = check_positive("lr", lr)
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.alpha_max = check_positive("alpha_max", alpha_max, allow_zero=True)
        self.optimizer = check_choice("optimizer", optimizer, ("adam", "sgd"))
        self.momentum = check_positive("momentum", momentum, allow_zero=True)
        self.nesterov = bool(nesterov)
        self.weight_decay = check_positive("weight_decay", weight_decay, allow_zero=True)
        milestones = tuple(int(m) for m in lr_milestones)
        if any(m < 1 for m in milestones) or list(milestones) != sorted(set(milestones)):
            raise ValueError(f"lr_milestones must be increasing positive epochs, got {lr_milestones!r}")
        self.lr_milestones = milestones
        self.lr_gamma = check_positive("lr_gamma", lr_gamma)
        if make_network is None:
            make_network = image_factory(DomainAdversarialNet, train_x, n_classes=int(self.train_y.max()) + 1)
        self.make_network = make_network

    def make_optimizer(self, net: nn.Module) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
        """The optimiser and the per-epoch learning-rate schedule (MultiStepLR over ``lr_milestones``)."""
        if self.optimizer == "sgd":
            opt = torch.optim.SGD(net.parameters(), lr=self.lr, momentum=self.momentum,
                                  nesterov=self.nesterov and self.momentum > 0, weight_decay=self.weight_decay)
        else:
            opt = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        return opt, torch.optim.lr_scheduler.MultiStepLR(opt, milestones=list(self.lr_milestones),
                                                          gamma=self.lr_gamma)

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images("x", x)
        check_generator(generator)
        net = self.make_network(generator)
        dev = next(net.parameters()).device
        xs, ys, xt = self.train_x.to(dev), self.train_y.to(dev), x.detach().to(dev)
        opt, schedule = self.make_optimizer(net)
        n = xs.shape[0]
        steps_per_epoch = math.ceil(n / self.batch_size)
        total = self.epochs * steps_per_epoch
        step = 0
        for _ in range(self.epochs):
            order = torch.randperm(n, generator=generator, device=generator.device).to(dev)
            for i in range(0, n, self.batch_size):
                b = order[i:i + self.batch_size]
                # target minibatch of the same size, sampled with replacement from U' (it is small)
                t = torch.randint(0, xt.shape[0], (b.shape[0],), generator=generator,
                                  device=generator.device).to(dev)
                net.reversal.alpha = dann_alpha(step / max(total - 1, 1), self.alpha_max)
                net.train()
                opt.zero_grad(set_to_none=True)
                # separate passes: each domain is normalised with its own BatchNorm batch statistics
                source = net.encoder(xs[b])
                target = net.encoder(xt[t])
                label_loss = F.cross_entropy(net.predictor(source), ys[b])
                zeros = torch.zeros(b.shape[0], dtype=torch.long, device=dev)
                domain_loss = (F.cross_entropy(net.domain_logits(source), zeros)
                               + F.cross_entropy(net.domain_logits(target), zeros + 1))
                (label_loss + domain_loss).backward()
                opt.step()
                step += 1
            schedule.step()
        net.eval()
        return Adaptation(model=net)
