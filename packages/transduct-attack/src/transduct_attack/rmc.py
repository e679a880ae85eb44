"""Runtime Masking and Cleansing (Wu et al., 2020b), paper Example 1 and A.2.

Training time: D' = D ∪ (PGD adversarial examples of D on the base model, with their true labels).
Before the test stream, :meth:`RMC.calibrate` runs the adaptation on clean data and makes the result the
initial state (the calibration step; the paper's attacks start from "the adapted model (with calibration in
RMC)", §6). Test time, for each incoming batch (RMC's own setting is one point per round): find the top-K
nearest neighbours in D' of every test point in the penultimate-layer feature space of the *base* model
(D' is embedded once, as in RMC), fine-tune the current model on them with Adam and early stopping on a
held-out share of the neighbours, and keep the fine-tuned model as the state for the next round (stateful Γ).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ._validate import (
    check_eps,
    check_generator,
    check_images,
    check_int,
    check_labels,
    check_positive,
    logits_model,
    model_device,
    n_classes,
)
from .networks import penultimate_features
from .pgd import PGD
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["RMC"]

FeatureFn = Callable[[nn.Module, torch.Tensor], torch.Tensor]


class RMC(TransductiveDefense):
    """RMC as a stateful Γ. Paper values (MNIST): K=1024, augmentation PGD eps 0.3 / 100 steps / 0.01,
    one adversarial copy of D, Adam lr 2e-4, at most 100 epochs, patience 5.

    ``features(model, x)`` defaults to the input of the model's last ``nn.Linear`` (penultimate
    layer). ``seed`` is the training-time randomness of building D' (public, like D itself).
    Departure: BatchNorm statistics are frozen during fine-tuning (the neighbourhood is tiny), and a
    batch of several points uses the union of their neighbourhoods (the paper uses |U| = 1).
    """

    stateful = True
    name = "RMC"

    def __init__(self, base_model: nn.Module, train_x: torch.Tensor, train_y: torch.Tensor, *, k: int = 1024,
                 aug_eps: float = 0.3, aug_steps: int = 100, aug_step_size: float | None = 0.01,
                 adv_copies: int = 1, lr: float = 2e-4, max_epochs: int = 100, patience: int = 5,
                 val_fraction: float = 0.2, batch_size: int = 128, features: FeatureFn | None = None,
                 seed: int = 0) -> None:
        base_model = logits_model("base_model", base_model)
        check_images("train_x", train_x)
        self.train_y = check_labels("train_y", train_y, train_x.shape[0], device=train_x.device,
                                    n_classes=n_classes(base_model))
        self.k = check_int("k", k, ge=1)
        self.aug_eps = check_eps(aug_eps)
        self.aug_steps = check_int("aug_steps", aug_steps, ge=1)
        self.aug_step_size = aug_step_size
        self.adv_copies = check_int("adv_copies", adv_copies, ge=0)
        self.lr = check_positive("lr", lr)
        self.max_epochs = check_int("max_epochs", max_epochs, ge=1)
        self.patience = check_int("patience", patience, ge=1)
        if not 0.0 < val_fraction < 1.0:
            raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
        self.val_fraction = float(val_fraction)
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.features = features if features is not None else penultimate_features
        self._base = base_model
        self.train_x = train_x
        self._augmented: tuple[torch.Tensor, torch.Tensor] | None = None
        self._augmented_features: torch.Tensor | None = None
        self._initial: nn.Module = self._base
        self._seed = seed

    @property
    def base_model(self) -> nn.Module:
        return self._base

    def initial_state(self) -> nn.Module:
        """The calibrated model after :meth:`calibrate`, else the base model (public knowledge)."""
        return self._initial

    def calibrate(self, x: torch.Tensor, *, batch_size: int = 1, seed: int = 0) -> nn.Module:
        """Calibration: adapt on the clean points ``x`` (``batch_size`` per round, as on the test stream) from
        the base model, and make the result the initial state of every later game. Returns the calibrated model.
        """
        check_images("x", x)
        batch_size = check_int("batch_size", batch_size, ge=1)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        g = torch.Generator(device=x.device if x.device.type == "cuda" else "cpu").manual_seed(seed)
        state: nn.Module = self._base
        for i in range(0, x.shape[0], batch_size):
            state = self.adapt(x[i:i + batch_size], state=state, generator=g).state
        self._initial = state
        return state

    @property
    def augmented(self) -> tuple[torch.Tensor, torch.Tensor]:
        """D' (features, labels): the clean training set followed by ``adv_copies`` PGD copies."""
        if self._augmented is None:
            g = torch.Generator().manual_seed(self._seed)
            pgd = PGD(steps=self.aug_steps, step_size=self.aug_step_size, random_start=True)
            device = model_device(self._base)
            xs, ys = [self.train_x.to(device)], [self.train_y.to(device)]
            for _ in range(self.adv_copies):
                for i in range(0, self.train_x.shape[0], 512):
                    xb = self.train_x[i:i + 512].to(device)
                    yb = self.train_y[i:i + 512].to(device)
                    xs.append(pgd.run([self._base], xb, yb, eps=self.aug_eps, generator=g))
                    ys.append(yb)
            self._augmented = (torch.cat(xs).detach(), torch.cat(ys))
        return self._augmented

    def neighbours(self, x: torch.Tensor) -> torch.Tensor:
        """Indices into D' of the union of the top-K nearest neighbours of each point of ``x``, in the base
        model's penultimate-layer features (D' is embedded once and cached)."""
        dx, _ = self.augmented
        if self._augmented_features is None:
            self._augmented_features = self.features(self._base, dx)
        fd = self._augmented_features
        fx = self.features(self._base, x.to(dx.device))
        k = min(self.k, dx.shape[0])
        idx = torch.cdist(fx, fd).topk(k, dim=1, largest=False).indices
        return torch.unique(idx.flatten())

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images("x", x)
        check_generator(generator)
        current = self._initial if state is None else state
        model = copy.deepcopy(current).eval()  # never mutate the incoming state
        model.eval_mode = False  # a private copy: its train/eval mode is this method's
        dx, dy = self.augmented
        idx = self.neighbours(x)
        perm = idx[torch.randperm(idx.shape[0], generator=generator, device=generator.device).to(idx.device)]
        n_val = max(1, int(round(self.val_fraction * perm.shape[0]))) if perm.shape[0] > 1 else 0
        val, tr = perm[:n_val], perm[n_val:]
        if tr.numel() == 0:
            tr = perm
        opt = torch.optim.Adam(model.parameters(), lr=self.lr)

        def val_loss() -> float:
            v = val if val.numel() else tr
            with torch.no_grad():
                return float(F.cross_entropy(model(dx[v]), dy[v]))

        best_loss, best_state, bad = val_loss(), copy.deepcopy(model.state_dict()), 0
        for _ in range(self.max_epochs):
            order = tr[torch.randperm(tr.shape[0], generator=generator, device=generator.device).to(tr.device)]
            for i in range(0, order.shape[0], self.batch_size):
                b = order[i:i + self.batch_size]
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(model(dx[b]), dy[b]).backward()
                opt.step()
            loss = val_loss()
            if loss < best_loss - 1e-7:
                best_loss, best_state, bad = loss, copy.deepcopy(model.state_dict()), 0
            else:
                bad += 1
                if bad >= self.patience:
                    break
        model.load_state_dict(best_state)
        model.eval()
        return Adaptation(model=model, state=model)
