"""The typed settings of the ACT comparison (paper §5.3, App. I.2-I.3, J.1), checked once when made: the methods,
seeds and grid compared, the fine-tuning recipe, the certification and the calibration measured after it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustsuite_common.checks import check_choice, check_float, check_int

from ..cce import ADMMConfig
from ..confidence import BOUND_METHODS
from ..training import OPTIMIZERS, TRAINING_METHODS

__all__ = ["ACT_GRID_KEYS", "ACT_METHODS", "ACT_VARIANTS", "ACTComparisonConfig", "USES"]

#: "none" is the un-fine-tuned base model (the paper's pre-trained baseline row); the others train
ACT_METHODS = ("none",) + TRAINING_METHODS
#: the ACT methods (§4) whose CCE is compared with AT's by a paired bootstrap (``paired_baseline``)
ACT_VARIANTS = ("brier_act", "acce_act", "acce_act_exact")
#: hyper-parameters a grid may vary (App. I.3): weight learning rate, attack step factor, attack steps, and
#: ACCE-ACT's multiplicative rho schedule; each method uses only the keys that act on it
ACT_GRID_KEYS = ("lr", "attack_step_factor", "attack_steps", "rho_growth")
USES = {"none": (), "gaussian": ("lr",), "smoothadv": ("lr", "attack_step_factor", "attack_steps"),
        "brier_act": ("lr", "attack_step_factor", "attack_steps"),
        "acce_act": ACT_GRID_KEYS, "acce_act_exact": ("lr", "attack_step_factor", "attack_steps")}


@dataclass(frozen=True)
class ACTComparisonConfig:
    """Everything :func:`certcal.act_comparison` varies, checked here (``ValueError`` naming the field).

    Compared: ``methods`` (of :data:`ACT_METHODS`; ``"none"`` is the start model itself), ``seeds``, ``grid``
    (lists of values for some of :data:`ACT_GRID_KEYS`; unset keys keep the scalars below, ``rho_growth`` that of
    ``admm``) and ``selection_margin`` (the paper's 3 % CA band, App. J.1; ``None``: each method's lowest-CCE model
    without the band). Fine-tuning (App. I.3): ``sigma`` (the smoothing σ), ``eps`` (L2 radius of the inner
    attack), ``epochs``, ``batch_size``, ``num_noise`` (Gaussian draws per input), ``attack_steps``,
    ``attack_step_factor``, ``lr``, ``warmup_epochs``, ``admm`` (ACCE-ACT's adversary), ``optimizer`` (``"adam"``
    or the paper's ``"sgd"``), ``momentum`` (SGD's) and ``weight_decay`` (App. I.3: 1e-4). Certification (App. I.2):
    ``n0``, ``n``, ``alpha``, ``certify_batch_size``. Calibration: ``radii`` (L2), ``n_bins``, ``bound`` (the
    confidence certificate), ``n_boot`` (BCa resamples). ``paired_baseline``: the method every ACT variant of
    :data:`ACT_VARIANTS` that was run is compared with by a paired bootstrap of the CCE difference (the AT
    baseline, Table 2 / 7; None: no paired differences; skipped when it is not among ``methods``)."""

    methods: tuple[str, ...] = ("none", "gaussian", "smoothadv", "brier_act", "acce_act", "acce_act_exact")
    seeds: tuple[int, ...] = (0, 1, 2)
    sigma: float = 0.25
    eps: float = 0.25
    radii: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5)
    epochs: int = 2
    batch_size: int = 256
    num_noise: int = 2
    attack_steps: int = 4
    attack_step_factor: float = 1.0
    lr: float = 1e-3
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    selection_margin: float | None = 0.03
    n0: int = 100
    n: int = 1000
    alpha: float = 0.001
    certify_batch_size: int = 1024
    n_bins: int = 15
    bound: str = "cdf"
    n_boot: int = 100
    warmup_epochs: int = 3
    admm: ADMMConfig = field(default_factory=ADMMConfig)
    paired_baseline: str | None = "smoothadv"
    optimizer: str = "adam"
    momentum: float = 0.9
    weight_decay: float = 1e-4

    def __post_init__(self) -> None:
        methods = tuple(self.methods)
        if not methods:
            raise ValueError("methods must not be empty")
        for m in methods:
            check_choice("methods", m, ACT_METHODS)
        if len(set(methods)) != len(methods):
            raise ValueError(f"methods must not repeat a method, got {list(methods)}")
        seeds = tuple(check_int("seeds", s, ge=0) for s in self.seeds)
        if not seeds:
            raise ValueError("seeds must not be empty")
        check_float("sigma", self.sigma, gt=0)
        check_float("eps", self.eps, ge=0)
        check_float("lr", self.lr, gt=0)
        check_float("attack_step_factor", self.attack_step_factor, gt=0)
        check_int("attack_steps", self.attack_steps, ge=1)
        check_choice("bound", self.bound, BOUND_METHODS)
        check_int("n_boot", self.n_boot, ge=1)
        check_int("n", self.n, ge=1)
        check_int("n0", self.n0, ge=1)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check_float("momentum", self.momentum, ge=0, lt=1)
        check_float("weight_decay", self.weight_decay, ge=0)
        if self.paired_baseline is not None:
            check_choice("paired_baseline", self.paired_baseline, ACT_METHODS)
        if self.selection_margin is not None:
            check_float("selection_margin", self.selection_margin, ge=0, le=1)
        radii = tuple(self.radii)
        radii_arr = np.asarray(radii, dtype=np.float64)
        if radii_arr.ndim != 1 or radii_arr.size == 0 or not np.all(np.isfinite(radii_arr)) or np.any(radii_arr < 0):
            raise ValueError("radii must be a non-empty sequence of finite non-negative radii")
        object.__setattr__(self, "methods", methods)
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "radii", radii)
        object.__setattr__(self, "grid", _check_grid(self.grid))
        if self.admm is None:  # the former keyword's default
            object.__setattr__(self, "admm", ADMMConfig())

    def replace(self, **changes: Any) -> ACTComparisonConfig:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)


def _check_grid(grid: Mapping[str, Sequence[Any]] | None) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for k, vals in ({} if grid is None else dict(grid)).items():
        if k not in ACT_GRID_KEYS:
            raise ValueError(f"grid keys must be among {ACT_GRID_KEYS}, got {k!r}")
        vals = list(vals)
        if not vals:
            raise ValueError(f"grid[{k!r}] must list at least one value")
        for v in vals:
            if k == "attack_steps":
                check_int("grid['attack_steps']", v, ge=1)
            elif k == "rho_growth":
                check_float("grid['rho_growth']", v, ge=1.0)
            else:
                check_float(f"grid[{k!r}]", v, gt=0)
        out[k] = vals
    return out
