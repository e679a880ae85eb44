"""Runtime Masking and Cleansing (Wu et al., 2020b), paper Example 1 and A.2.

Training time: D' = D ∪ (PGD adversarial examples of D on the base model, with their true labels).
Test time, for each incoming batch (RMC's own setting is one point per round): find the top-K nearest
neighbours in D' of every test point in the penultimate-layer feature space of the *base* model (D' is
embedded once, as in RMC), fine-tune the current model on them with Adam and early stopping on a held-out
share of the neighbours, and keep the fine-tuned model as the state for the next round (stateful Γ).

The authors' evaluation code (Chen et al.'s ``RMC/utils/rmc.py``; facts carried over, no code) adds, after each
round, a *calibration*: the state is fine-tuned on K clean training points drawn at random (12.5 % of them for
validation), the same loop and stopping rule (``calibration_k``, :meth:`RMC.next_state`). It also splits the
validation points from the nearest 20 % of the neighbours (``val_split="nearest"``), stops once the epoch's
training loss is below 0.01 and the validation loss has not decreased for ``patience`` epochs, keeping the last
weights (``stop_rule="authors"``), and fine-tunes with BatchNorm in training mode (``train_batchnorm``).
:meth:`RMC.warm_up` (optional) adapts on clean test points before the stream and makes the result the initial
state (§6: the attacks start from "the adapted model (with calibration in RMC)").
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import (
    check_bool,
    check_choice,
    check_float,
    check_images,
    check_int,
    check_seed,
)
from robustsuite_common.models import model_device

from ._validate import as_input, check_eps, check_generator, check_labels, check_positive, logits_model
from .networks import penultimate_features
from .pgd import PGD
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["RMC"]

FeatureFn = Callable[[nn.Module, torch.Tensor], torch.Tensor]


class RMC(TransductiveDefense):
    """RMC as a stateful Γ. Paper values (A.2.1, MNIST): K = 1024, augmentation PGD eps 0.3 / 100 steps / 0.01,
    one adversarial copy of D, Adam lr 2e-4 (CIFAR-10: 2.5e-5, four copies), at most 100 epochs, patience 5; the
    authors' code: ``val_split="nearest"``, ``stop_rule="authors"``, ``train_batchnorm=True``,
    ``calibration_k=1024`` (one point per round).

    ``features(model, x)`` defaults to the input of the model's last ``nn.Linear`` (penultimate layer). ``seed``
    is the training-time randomness of building D' (public, like D itself). The defaults (``"random"``
    validation split of ``val_fraction``, ``"patience"`` stopping with the best weights restored, frozen
    BatchNorm, no per-round calibration) are this package's compact variant. A batch of several points uses the
    union of their neighbourhoods (the paper uses |U| = 1). Departure from the authors' code: a fresh Adam per
    fine-tune (theirs keeps one optimizer across rounds).
    """

    stateful = True
    name = "RMC"

    def __init__(self, base_model: nn.Module, train_x: torch.Tensor, train_y: torch.Tensor, *, k: int = 1024,
                 aug_eps: float = 0.3, aug_steps: int = 100, aug_step_size: float | None = 0.01,
                 adv_copies: int = 1, lr: float = 2e-4, max_epochs: int = 100, patience: int = 5,
                 val_fraction: float = 0.2, batch_size: int = 128, features: FeatureFn | None = None,
                 val_split: str = "random", stop_rule: str = "patience", train_batchnorm: bool = False,
                 calibration_k: int = 0, seed: int = 0) -> None:
        base_model = logits_model("base_model", base_model)
        check_images("train_x", train_x)
        self.train_y = check_labels("train_y", train_y, train_x.shape[0], device=train_x.device,
                                    model=base_model, x=train_x)
        self.k = check_int("k", k, ge=1)
        self.aug_eps = check_eps(aug_eps, "aug_eps")
        self.aug_steps = check_int("aug_steps", aug_steps, ge=1)
        self.aug_step_size = None if aug_step_size is None else check_positive("aug_step_size", aug_step_size)
        self.adv_copies = check_int("adv_copies", adv_copies, ge=0)
        self.lr = check_positive("lr", lr)
        self.max_epochs = check_int("max_epochs", max_epochs, ge=1)
        self.patience = check_int("patience", patience, ge=1)
        self.val_fraction = check_float("val_fraction", val_fraction, gt=0.0, lt=1.0)
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.val_split = check_choice("val_split", val_split, ("random", "nearest"))
        self.stop_rule = check_choice("stop_rule", stop_rule, ("patience", "authors"))
        self.train_batchnorm = check_bool("train_batchnorm", train_batchnorm)
        self.calibration_k = check_int("calibration_k", calibration_k, ge=0)
        self.features = features if features is not None else penultimate_features
        self._base = base_model
        self.train_x = train_x
        self._augmented: tuple[torch.Tensor, torch.Tensor] | None = None
        self._augmented_features: torch.Tensor | None = None
        self._initial: nn.Module = self._base
        self._seed = check_seed("seed", seed)

    def initial_state(self) -> nn.Module:
        """The warmed-up model after :meth:`warm_up`, else the base model (public knowledge)."""
        return self._initial

    def warm_up(self, x: torch.Tensor, *, batch_size: int = 1, seed: int = 0) -> nn.Module:
        """Adapt on the clean points ``x`` (``batch_size`` per round, as on the test stream, with the per-round
        calibration) from the base model, and make the result the initial state of every later game."""
        check_images("x", x)
        batch_size = check_int("batch_size", batch_size, ge=1)
        check_seed("seed", seed)
        x = as_input(self._base, x)
        g = torch.Generator(device=x.device if x.device.type == "cuda" else "cpu").manual_seed(seed)
        state: nn.Module = self._base
        for i in range(0, x.shape[0], batch_size):
            state = self.next_state(self.adapt(x[i:i + batch_size], state=state, generator=g), generator=g)
        self._initial = state
        return state

    @property
    def augmented(self) -> tuple[torch.Tensor, torch.Tensor]:
        """D' (features, labels): the clean training set followed by ``adv_copies`` PGD copies."""
        if self._augmented is None:
            g = torch.Generator().manual_seed(self._seed)
            pgd = PGD(steps=self.aug_steps, step_size=self.aug_step_size, random_start=True)
            device = model_device(self._base)
            xs, ys = [as_input(self._base, self.train_x)], [self.train_y.to(device)]
            for _ in range(self.adv_copies):
                for i in range(0, self.train_x.shape[0], 512):
                    xb = xs[0][i:i + 512]
                    yb = ys[0][i:i + 512]
                    xs.append(pgd.run([self._base], xb, yb, eps=self.aug_eps, generator=g))
                    ys.append(yb)
            self._augmented = (torch.cat(xs).detach(), torch.cat(ys))
        return self._augmented

    def set_augmented(self, x: torch.Tensor, y: torch.Tensor) -> None:
        """Use a D' computed earlier (e.g. checkpointed: it is the costliest part of building RMC): ``x`` the
        clean training set followed by its PGD copies, as :attr:`augmented` returns them."""
        n = self.train_x.shape[0] * (1 + self.adv_copies)
        check_images("x", x)
        y = check_labels("y", y, x.shape[0], device=x.device)
        if x.shape[0] != n:
            raise ValueError(f"x must hold D and its {self.adv_copies} PGD copies ({n} images), got {x.shape[0]}")
        self._augmented = (as_input(self._base, x), y.to(model_device(self._base)))
        self._augmented_features = None

    def neighbour_matrix(self, x: torch.Tensor) -> torch.Tensor:
        """``(len(x), K)`` indices into D' of each point's K nearest neighbours, nearest first, in the base
        model's penultimate-layer features (D' is embedded once and cached)."""
        dx, _ = self.augmented
        if self._augmented_features is None:
            self._augmented_features = self.features(self._base, dx)
        fd = self._augmented_features
        fx = self.features(self._base, x.to(dx.device))
        k = min(self.k, dx.shape[0])
        return torch.cdist(fx, fd).topk(k, dim=1, largest=False).indices

    def neighbours(self, x: torch.Tensor) -> torch.Tensor:
        """Indices into D' of the union of the top-K nearest neighbours of each point of ``x``."""
        return torch.unique(self.neighbour_matrix(x).flatten())

    def _shuffle(self, idx: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return idx[torch.randperm(idx.shape[0], generator=generator, device=generator.device).to(idx.device)]

    def _split(self, x: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """(train, validation) indices into D' for the batch ``x``."""
        if self.val_split == "random":
            perm = self._shuffle(self.neighbours(x), generator)
            n_val = max(1, int(round(self.val_fraction * perm.shape[0]))) if perm.shape[0] > 1 else 0
            return perm[n_val:], perm[:n_val]
        # the authors': a quarter of the nearest 20 % validate, the rest of the K neighbours train
        nn_idx = self.neighbour_matrix(x)
        near = max(1, int(0.2 * nn_idx.shape[1]))
        val, train = [], [nn_idx[:, near:].flatten()]
        for row in nn_idx[:, :near]:
            row = self._shuffle(row, generator)
            n_val = int(round(0.25 * row.shape[0])) if row.shape[0] > 1 else 0
            val.append(row[:n_val])
            train.append(row[n_val:])
        v = torch.unique(torch.cat(val))
        t = torch.unique(torch.cat(train))
        t = t[~torch.isin(t, v)]
        return self._shuffle(t, generator), v

    def _fine_tune(self, model: nn.Module, xs: torch.Tensor, ys: torch.Tensor, tr: torch.Tensor, val: torch.Tensor,
                   generator: torch.Generator) -> nn.Module:
        """Adam on (xs[tr], ys[tr]) with early stopping on (xs[val], ys[val]) (the stopping rule of ``stop_rule``);
        ``model`` is a private copy, changed in place and returned in eval mode."""
        if tr.numel() == 0:
            tr = val
        opt = torch.optim.Adam(model.parameters(), lr=self.lr)

        def val_loss() -> float:
            v = val if val.numel() else tr
            model.eval()
            with torch.no_grad():
                return float(F.cross_entropy(model(xs[v]), ys[v]))

        authors = self.stop_rule == "authors"
        best_loss = float("inf") if authors else val_loss()
        best_state, bad = (None if authors else copy.deepcopy(model.state_dict())), 0
        for _ in range(self.max_epochs):
            order = self._shuffle(tr, generator)
            train_loss, seen = 0.0, 0
            for i in range(0, order.shape[0], self.batch_size):
                b = order[i:i + self.batch_size]
                model.train(self.train_batchnorm)
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(xs[b]), ys[b])
                loss.backward()
                opt.step()
                train_loss, seen = train_loss + float(loss.detach()) * b.numel(), seen + b.numel()
            loss = val_loss()
            if loss < best_loss - (0.0 if authors else 1e-7):
                best_loss, bad = loss, 0
                if not authors:
                    best_state = copy.deepcopy(model.state_dict())
            else:
                bad += 1
            if authors and train_loss / max(seen, 1) < 0.01 and bad >= self.patience:
                break
            if not authors and bad >= self.patience:
                break
        if best_state is not None:
            model.load_state_dict(best_state)
        model.eval()
        return model

    def _copy(self, state: nn.Module) -> nn.Module:
        model = copy.deepcopy(state).eval()  # never mutate the incoming state
        # a private copy: its train/eval mode is this object's (torch's stub: attributes are Tensor | Module)
        model.eval_mode = False  # pyright: ignore[reportArgumentType]
        return model

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images("x", x)
        check_generator(generator)
        current = self._initial if state is None else state
        dx, dy = self.augmented
        tr, val = self._split(as_input(self._base, x), generator)
        model = self._fine_tune(self._copy(current), dx, dy, tr, val, generator)
        return Adaptation(model=model, state=model)

    def next_state(self, adaptation: Adaptation, *, generator: torch.Generator) -> Any:
        """The state after a round: the adapted model, calibrated when ``calibration_k`` > 0 (fine-tuned on that
        many clean training points drawn with replacement, 12.5 % of them for validation, as the authors'
        ``calibrate()``)."""
        if self.calibration_k == 0:
            return adaptation.state
        check_generator(generator)
        xs = as_input(self._base, self.train_x)
        ys = self.train_y.to(xs.device)
        draw = torch.randint(0, xs.shape[0], (self.calibration_k,), generator=generator,
                             device=generator.device).to(xs.device)
        n_val = max(1, int(round(0.125 * self.calibration_k))) if self.calibration_k > 1 else 0
        pos = torch.arange(self.calibration_k, device=xs.device)
        cx, cy = xs[draw], ys[draw]
        return self._fine_tune(self._copy(adaptation.state), cx, cy, pos[n_val:], pos[:n_val], generator)
