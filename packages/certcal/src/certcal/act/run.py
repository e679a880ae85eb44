"""The ACT comparison's run: fine-tune the start model with each method at each grid point and seed, certify the
test inputs with every fine-tuned model (each piece checkpointed), then select with the paper's rule
(:mod:`.selection`) and tabulate (:class:`~.result.ACTComparison`)."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from robustsuite_common.models import evaluating

from .._store import CERTIFICATE, Store, cached, fine_tuned, fingerprint
from .._validation import check_label_range, check_labelled_images, num_classes
from ..cce import ADMMConfig, certified_brier_score, certified_calibration_error
from ..confidence import confidence_bounds
from ..smoothing import CertifyResult, certify, max_certifiable_radius
from ..training import adversarial_calibration_training
from . import selection
from .config import ACT_GRID_KEYS, ACT_VARIANTS, USES, ACTComparisonConfig
from .result import ACTComparison, ACTWeights

__all__ = ["act_comparison", "weight_change"]


def weight_change(start: torch.nn.Module, tuned: torch.nn.Module) -> tuple[float, float, int]:
    """``(max, mean, count)`` of |w - w_start| over all parameters of two models of one architecture."""
    before = dict(start.named_parameters())
    diffs = [(p.detach().cpu().double() - before[k].detach().cpu().double()).abs().flatten()
             for k, p in tuned.named_parameters()]
    if not diffs:
        return 0.0, 0.0, 0
    d = torch.cat(diffs)
    return float(d.max()), float(d.mean()), int(d.numel())


def _grid_points(method: str, grid: Mapping[str, Sequence[Any]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """The Cartesian product of the grid keys that act on ``method`` (others stay at their base values)."""
    keys = [k for k in ACT_GRID_KEYS if k in grid and k in USES[method]]
    points = []
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
        points.append({**{k: base[k] for k in USES[method]}, **dict(zip(keys, combo, strict=True))})
    return points or [{}]


@dataclass
class _Fine:
    """Fine-tunes and certificates of one comparison, each under a key of every setting, the data and the start
    model's weights; records how far each fine-tune moved the weights."""

    model: torch.nn.Module
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    cfg: ACTComparisonConfig
    store: Store | None
    tag: str = ""
    weights: list[ACTWeights] = field(default_factory=list)

    def unit_name(self, method: str, params: dict[str, Any], seed: int) -> str:
        return f"act-{method}-{fingerprint(params, length=8)}-seed{seed}-{self.tag}"

    def tuned(self, method: str, params: dict[str, Any], seed: int) -> torch.nn.Module:
        if method == "none":
            return self.model
        c = self.cfg

        def train() -> torch.nn.Module:
            admm = c.admm if "rho_growth" not in params else ADMMConfig(
                **{**asdict(c.admm), "rho_growth": float(params["rho_growth"])})
            return adversarial_calibration_training(
                self.model, self.x_train, self.y_train, method=method, sigma=c.sigma,  # type: ignore[arg-type]
                eps=0.0 if method == "gaussian" else c.eps, epochs=c.epochs, batch_size=c.batch_size,
                num_noise=c.num_noise, attack_steps=int(params.get("attack_steps", c.attack_steps)),
                attack_step_factor=float(params.get("attack_step_factor", c.attack_step_factor)),
                lr=float(params.get("lr", c.lr)), n_bins=c.n_bins, warmup_epochs=c.warmup_epochs, admm=admm,
                optimizer=c.optimizer, momentum=c.momentum, weight_decay=c.weight_decay,  # type: ignore[arg-type]
                seed=seed).model

        return fine_tuned(self.store, f"{self.unit_name(method, params, seed)}.pt", train, self.model)

    def certificate(self, method: str, params: dict[str, Any], seed: int) -> CertifyResult:
        ft: list[torch.nn.Module] = []
        c = self.cfg

        def compute() -> CertifyResult:
            ft.append(self.tuned(method, params, seed))
            return certify(ft[0], self.x_test, sigma=c.sigma, n0=c.n0, n=c.n, alpha=c.alpha,
                           batch_size=c.certify_batch_size, seed=seed, return_scores=True)

        cert = cached(self.store, f"{self.unit_name(method, params, seed)}.npz", compute, CERTIFICATE)
        if method != "none":  # the weights' movement from the start (from the saved weights when resuming)
            net = ft[0] if ft else self.tuned(method, params, seed)
            mx, mean, count = weight_change(self.model, net)
            self.weights.append(ACTWeights(method, dict(params), seed, mx, mean, count))
        else:
            self.weights.append(ACTWeights(method, {}, seed, 0.0, 0.0,
                                           sum(p.numel() for p in self.model.parameters())))
        return cert


def _per_radius(cert: CertifyResult, y: np.ndarray, cfg: ACTComparisonConfig,
                radii: np.ndarray) -> list[dict[str, Any]]:
    """Per radius: the certified set, bounds, correctness, CA count, CBS and CCE of one certificate."""
    n_test = y.shape[0]
    correct = cert.prediction == y
    per_r = []
    for r in radii:
        mask = cert.certified_at(float(r))
        d: dict[str, Any] = {"k": int((mask & correct).sum()), "mask": mask, "correct": correct,
                             "cbs": None, "cce": None}
        if mask.any():
            assert cert.scores is not None
            lower, upper = np.zeros(n_test), np.zeros(n_test)
            b = confidence_bounds(cert.scores[mask], sigma=cfg.sigma, radius=float(r), alpha=cfg.alpha,
                                  method=cfg.bound)  # type: ignore[arg-type]
            lower[mask], upper[mask] = b.lower, b.upper
            d.update(lower=lower, upper=upper,
                     cbs=certified_brier_score(lower[mask], upper[mask], correct[mask]),
                     cce=certified_calibration_error(lower[mask], upper[mask], correct[mask],
                                                     n_bins=cfg.n_bins).value)
        per_r.append(d)
    return per_r


def _optimiser_key(cfg: ACTComparisonConfig) -> dict[str, Any]:
    """The optimiser's settings in a checkpoint key; empty for the former fixed one (Adam, weight decay 1e-4), so
    the keys of earlier runs stay valid."""
    if cfg.optimizer == "adam" and cfg.weight_decay == 1e-4:
        return {}
    return {"optimizer": cfg.optimizer, "momentum": cfg.momentum, "weight_decay": cfg.weight_decay}


_OLD_NAMES = {"epsilon": "eps"}


def _legacy_config(config: ACTComparisonConfig | None, settings: dict[str, Any]) -> ACTComparisonConfig:
    """``config``, or one made from the former keyword arguments (deprecated: pass ``config=``)."""
    if not settings:
        return ACTComparisonConfig() if config is None else config
    fields = set(ACTComparisonConfig.__dataclass_fields__)
    changes = {_OLD_NAMES.get(k, k): v for k, v in settings.items()}
    unknown = sorted(k for k in changes if k not in fields)
    if unknown:
        raise TypeError(f"act_comparison() got unexpected keyword argument(s) {unknown}")
    warnings.warn("act_comparison(..., sigma=..., n=..., ...) is deprecated; pass "
                  "config=certcal.ACTComparisonConfig(...)", DeprecationWarning, stacklevel=3)
    return (ACTComparisonConfig() if config is None else config).replace(**changes)


def act_comparison(
    model: torch.nn.Module,
    x_train: torch.Tensor,
    y_train: Any,
    x_test: torch.Tensor,
    y_test: Any,
    *,
    config: ACTComparisonConfig | None = None,
    checkpoint_dir: str | Path | None = None,
    store: Store | None = None,
    progress: Callable[[str], None] | None = None,
    **settings: Any,
) -> ACTComparison:
    """Fine-tune ``model`` (a smoothing base at ``config.sigma``) with each of ``config.methods`` at each grid
    point and seed, certify the test inputs, select per radius with the paper's rule and return CA, CBS and CCE
    (exact) across ``config.radii`` with 95 % intervals (see :mod:`certcal.act`). "none" is the base model itself
    (the paper's pre-trained row), "gaussian" noise-only fine-tuning, "smoothadv" the AT baseline (Table 2).

    ``config``: an :class:`ACTComparisonConfig` (default: its defaults); the former keyword arguments
    (``sigma=``, ``epsilon=``, ``n=``, ...) still work for one release, with a ``DeprecationWarning``.
    ``store`` (a checkpoint store: ``get``/``put`` bytes by key) or ``checkpoint_dir`` (a directory store):
    each (method, grid point, seed)'s fine-tuned weights and certificate are saved there under keys that carry
    a hash of every setting, of the data and of the start model's weights, so an interrupted run resumes where
    it stopped and a finished one is recomputed from the saved certificates without retraining. ``progress``: a
    callback given one message per fine-tune. The caller's ``model`` is not changed (each method fine-tunes a
    copy)."""
    cfg = _legacy_config(config, settings)
    yt = check_labelled_images(model, x_train, y_train, x_name="x_train", y_name="y_train")
    yte = check_labelled_images(model, x_test, y_test, x_name="x_test", y_name="y_test")
    if store is not None and checkpoint_dir is not None:
        raise ValueError("pass store or checkpoint_dir, not both")
    if checkpoint_dir is not None:
        from robustsuite_common.experiment import DirStore

        store = DirStore(Path(checkpoint_dir))
    radii = np.asarray(cfg.radii, dtype=np.float64)
    with evaluating(model):  # the number of classes, from one forward pass on two inputs
        k_classes = num_classes(model, x_test)
    check_label_range("y_train", yt, k_classes)
    check_label_range("y_test", yte, k_classes)
    base_params = {"lr": cfg.lr, "attack_step_factor": cfg.attack_step_factor, "attack_steps": cfg.attack_steps,
                   "rho_growth": cfg.admm.rho_growth}
    points = {m: _grid_points(m, cfg.grid, base_params) for m in cfg.methods}
    y_np = yte.numpy()
    fine = _Fine(model, x_train, yt, x_test, cfg, store)
    if store is not None:
        fine.tag = fingerprint({"sigma": cfg.sigma, "epsilon": cfg.eps, "epochs": cfg.epochs,
                                "batch_size": cfg.batch_size, "num_noise": cfg.num_noise, "n0": cfg.n0, "n": cfg.n,
                                "alpha": cfg.alpha, "n_bins": cfg.n_bins, "warmup_epochs": cfg.warmup_epochs,
                                "admm": asdict(cfg.admm), **_optimiser_key(cfg)}, x_train, yt, x_test, yte, model)
    units: dict[selection.Key, list[dict[str, Any]]] = {}
    certs: dict[selection.Key, CertifyResult] = {}
    for method in cfg.methods:
        for gi, params in enumerate(points[method]):
            for seed in cfg.seeds:
                if progress is not None:
                    progress(f"{method} {params} seed {seed}")
                certs[(method, gi, seed)] = cert = fine.certificate(method, params, seed)
                units[(method, gi, seed)] = _per_radius(cert, y_np, cfg, radii)
    n_test = y_np.shape[0]
    model_rows, chosen = selection.select(units, points, cfg.seeds, radii, n_test,
                                          selection_margin=cfg.selection_margin)
    ceiling = max_certifiable_radius(sigma=cfg.sigma, n=cfg.n, alpha=cfg.alpha)
    rows = selection.rows(units, chosen, points, cfg.seeds, radii, n_test, ceiling=ceiling, n_bins=cfg.n_bins,
                          n_boot=cfg.n_boot)
    base = cfg.paired_baseline
    diffs = [] if base is None or base not in cfg.methods else selection.differences(
        units, chosen, [m for m in cfg.methods if m in ACT_VARIANTS], cfg.seeds, radii, baseline=base,
        n_bins=cfg.n_bins, n_boot=cfg.n_boot)
    summary = {"optimizer": cfg.optimizer, "momentum": cfg.momentum, "weight_decay": cfg.weight_decay,
               "epochs": cfg.epochs, "batch_size": cfg.batch_size, "num_noise": cfg.num_noise,
               "attack_steps": cfg.attack_steps, "attack_step_factor": cfg.attack_step_factor, "lr": cfg.lr,
               "grid": {k: list(v) for k, v in cfg.grid.items()}, "selection_margin": cfg.selection_margin,
               "warmup_epochs": cfg.warmup_epochs, "n0": cfg.n0, "n": cfg.n, "alpha": cfg.alpha,
               "n_bins": cfg.n_bins, "bound": cfg.bound, "n_boot": cfg.n_boot, "radii": [float(r) for r in radii],
               "n_test": n_test, "n_train": int(yt.shape[0]), "paired_baseline": base}
    return ACTComparison(sigma=float(cfg.sigma), epsilon=float(cfg.eps), seeds=cfg.seeds, methods=cfg.methods,
                         rows=tuple(rows), config=summary, models=tuple(model_rows), max_radius=ceiling,
                         weights=tuple(fine.weights), certificates=certs,
                         grid_points={m: tuple(dict(p) for p in points[m]) for m in cfg.methods},
                         differences=tuple(diffs))
