"""Certified Brier score (Theorem 3.3) and certified calibration error (Definition 3.4, program (6)).

Inputs are per-sample certificate bounds ``lower <= z_n(x_n + gamma) <= upper`` for all admissible
perturbations (certificate C2) and the correctness ``correct`` of the certified prediction (certificate
C1 keeps it fixed). Only samples certified at the radius should be passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from robustsuite_common.checks import check_choice, check_device, check_float, check_int

from ._cce_admm import ADMMRun, run_admm_batch
from ._cce_dece import hard_ece, run_dece
from ._cce_exact import solve_exact
from ._cce_milp import solve_milp
from ._program import build_program, check_feasible, nudge_into_bins, objective
from ._validation import as_unit_interval, check_bounds
from .metrics import _bin_index

__all__ = [
    "ADMMConfig",
    "CCEResult",
    "DECEConfig",
    "CCE_METHODS",
    "brier_confidences",
    "certified_brier_score",
    "certified_calibration_error",
]

#: a method of :func:`certified_calibration_error`
CCEMethod = Literal["exact", "admm", "dece", "brier", "milp"]
CCE_METHODS = ("exact", "admm", "dece", "brier", "milp")


def certified_brier_score(lower: Any, upper: Any, correct: Any) -> float:
    """Certified (worst-case) top-label Brier score, Theorem 3.3 / Eq. (3):

    CBS = (1/N) sum_n [c_n (1 - l_n)^2 + (1 - c_n) u_n^2], attained at the bounds.
    """
    lo, up, c = check_bounds(lower, upper, correct)
    if lo.shape[0] == 0:
        raise ValueError("lower must not be empty")
    return float(np.mean(c * (1.0 - lo) ** 2 + (1.0 - c) * up**2))


def brier_confidences(lower: Any, upper: Any, correct: Any) -> np.ndarray:
    """The confidences attaining the certified Brier score: l_n where correct, u_n where wrong."""
    lo, up, c = check_bounds(lower, upper, correct)
    return np.where(c > 0, lo, up)


@dataclass(frozen=True)
class ADMMConfig:
    """ADMM hyper-parameters; defaults are the paper's one-size-fits-all setting (App. G.2-G.3).

    ``inits`` are the confidence initialisations tried (the larger result is kept): ``"clean"`` (the
    adversary-free confidences, falling back to the interval midpoints when none are given) and
    ``"brier"`` (the Brier-maximising confidences). ``polish`` replaces the paper's clip-projection of z by
    the optimal z for the projected assignment (closed form, never lower).
    """

    steps: int = 3000
    lr_a: float = 1e-3
    lr_z: float = 1e-3
    rho_init: float = 0.01
    rho_growth: float = 1.004
    rho_max: float = 10.0
    grad_clip: float = 5.0
    a_init: float | None = None
    inits: tuple[str, ...] = ("clean", "brier")
    polish: bool = True
    clip_z: bool = True

    def __post_init__(self) -> None:
        check_int("ADMMConfig.steps", self.steps, ge=1)
        for name in ("lr_a", "lr_z", "rho_init", "rho_max", "grad_clip"):
            check_float(f"ADMMConfig.{name}", getattr(self, name), gt=0)
        if self.rho_growth < 1.0:
            raise ValueError(f"ADMMConfig.rho_growth must be >= 1, got {self.rho_growth}")
        if not self.inits or any(i not in ("clean", "brier") for i in self.inits):
            raise ValueError(f"ADMMConfig.inits must be a non-empty subset of ('clean', 'brier'), got {self.inits}")


ADMM_GRID_LR_Z = (1e-3, 1e-2)
ADMM_GRID_LR_A = (1e-3, 1e-2)
ADMM_GRID_RHO_GROWTH = (1.002, 1.004)


def admm_grid(*, steps: int = 3000, polish: bool = True) -> tuple[ADMMConfig, ...]:
    """The 16-run ADMM grid of App. I.1: confidence initialisation {clean, Brier} x learning rate of z x
    learning rate of a x multiplicative rho schedule (2 x 2 x 2 x 2); the ACCE is the best feasible value
    over all runs. The paper's text lost the grid's numbers; ours are reconstructed from App. G.2 (learning
    rates 1e-3 and 1e-2, "larger are preferred"; rho growing 0.2 % or 0.4 % per step, within the range the
    paper found effective). Pass the result as ``admm=`` to ``certified_calibration_error``."""
    check_int("steps", steps, ge=1)
    return tuple(ADMMConfig(steps=steps, lr_z=lz, lr_a=la, rho_growth=gr, inits=("clean", "brier"), polish=polish)
                 for lz in ADMM_GRID_LR_Z for la in ADMM_GRID_LR_A for gr in ADMM_GRID_RHO_GROWTH)


@dataclass(frozen=True)
class DECEConfig:
    """Gradient ascent on the differentiable ECE (App. M.2): Adam, tau annealed from 1e-2 to 1e-6."""

    steps: int = 2000
    lr: float = 1e-2
    tau_start: float = 1e-2
    tau_end: float = 1e-6
    inits: tuple[str, ...] = ("clean", "brier")

    def __post_init__(self) -> None:
        check_int("DECEConfig.steps", self.steps, ge=1)
        for name in ("lr", "tau_start", "tau_end"):
            check_float(f"DECEConfig.{name}", getattr(self, name), gt=0)
        if not self.inits or any(i not in ("clean", "brier") for i in self.inits):
            raise ValueError(f"DECEConfig.inits must be a non-empty subset of ('clean', 'brier'), got {self.inits}")


@dataclass(frozen=True)
class CCEResult:
    """Worst-case ECE found by ``method``, with the confidences and bin assignment that attain it.

    ``value`` is the program's objective (1/N) sum_m |sum_{n in bin m} (c_n - z_n)| at (``bins``,
    ``confidences``); for "exact" and "milp" it is the optimum (an upper bound on the ECE any admissible
    attack can cause), for "admm", "dece" and "brier" a feasible lower estimate of it.
    """

    value: float
    method: str
    n_bins: int
    confidences: np.ndarray = field(repr=False)
    bins: np.ndarray = field(repr=False)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.confidences.shape[0])

    def to_dict(self, include_arrays: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"value": float(self.value), "method": self.method, "n_bins": self.n_bins,
                               "n": self.n, "info": dict(self.info)}
        if include_arrays:
            out["confidences"] = [float(v) for v in self.confidences]
            out["bins"] = [int(v) for v in self.bins]
        return out


def _initial(kind: str, clean: np.ndarray | None, lo: np.ndarray, up: np.ndarray, c: np.ndarray) -> np.ndarray:
    if kind == "brier":
        return np.where(c > 0, lo, up)
    if clean is None:
        return (lo + up) / 2
    return np.clip(clean, lo, up)


def certified_calibration_error(
    lower: Any,
    upper: Any,
    correct: Any,
    *,
    n_bins: int = 15,
    method: CCEMethod = "exact",
    confidences: Any = None,
    admm: ADMMConfig | Sequence[ADMMConfig] | None = None,
    dece: DECEConfig | None = None,
    device: torch.device | str | None = None,
    milp_time_limit: float | None = None,
) -> CCEResult:
    """Certified calibration error: max ECE over confidences within the certified bounds (Eq. 4, program 6).

    Methods: ``"exact"`` (default) the exact optimum by sign-pattern enumeration (see ``_cce_exact``);
    ``"admm"`` the paper's ADMM solver (ACCE, §3.4); ``"dece"`` gradient ascent on the differentiable
    ECE and ``"brier"`` the ECE of the Brier-maximising confidences (the paper's baselines, §5.2);
    ``"milp"`` the same program solved by HiGHS through cvxpy (small problems; a cross-check).
    ``confidences`` are the adversary-free confidences used by the "clean" initialisation. ``admm`` may be a
    sequence of configurations: ADMM then runs each and keeps the largest value (the paper evaluates the
    ACCE as the maximum over a grid of 16 runs, App. I.1).
    """
    check_int("n_bins", n_bins, ge=1)
    check_choice("method", method, CCE_METHODS)
    lo, up, c = check_bounds(lower, upper, correct)
    if lo.shape[0] == 0:
        raise ValueError("lower must not be empty")
    clean = None
    if confidences is not None:
        clean = as_unit_interval("confidences", confidences)
        if clean.shape != lo.shape:
            raise ValueError(f"confidences must have shape {lo.shape}, got {clean.shape}")
    admm_cfgs = [ADMMConfig()] if admm is None else [admm] if isinstance(admm, ADMMConfig) else list(admm)
    if not admm_cfgs or not all(isinstance(a, ADMMConfig) for a in admm_cfgs) or isinstance(admm, dict | str):
        raise TypeError(f"admm must be an ADMMConfig or a non-empty sequence of them, got {type(admm).__name__}")
    if dece is not None and not isinstance(dece, DECEConfig):
        raise TypeError(f"dece must be a DECEConfig, got {type(dece).__name__}")
    dev = check_device("device", device) if device is not None else torch.device("cpu")
    prog = build_program(lo, up, c, n_bins)
    info: dict[str, Any] = {}

    if method == "exact":
        bins, z, value = solve_exact(prog)
    elif method == "milp":
        bins, z, value = solve_milp(prog, milp_time_limit)
    elif method == "brier":
        z = np.where(c > 0, lo, up)
        bins = _bin_index(z, n_bins)
        value = hard_ece(z, c, n_bins)
    elif method == "dece":
        cfg = dece or DECEConfig()
        best = None
        for kind in cfg.inits:
            zz, val = run_dece(prog, _initial(kind, clean, lo, up, c), steps=cfg.steps, lr=cfg.lr,
                               tau_start=cfg.tau_start, tau_end=cfg.tau_end, device=dev)
            info[f"value_{kind}"] = val
            if best is None or val > best[1]:
                best = (zz, val, kind)
        assert best is not None
        z, value = best[0], best[1]
        bins = _bin_index(z, n_bins)
        info["init"] = best[2]
    else:  # admm: every (configuration, initialisation) pair is one run; runs of equal length share a batch
        runs, tags, lengths = [], [], []
        for i, cfg in enumerate(admm_cfgs):
            for kind in cfg.inits:
                runs.append(ADMMRun(lr_a=cfg.lr_a, lr_z=cfg.lr_z, rho_init=cfg.rho_init, rho_growth=cfg.rho_growth,
                                    rho_max=cfg.rho_max, grad_clip=cfg.grad_clip, a_init=cfg.a_init,
                                    polish=cfg.polish, clip_z=cfg.clip_z, z_init=_initial(kind, clean, lo, up, c)))
                tags.append(kind if len(admm_cfgs) == 1 else f"{kind}_{i}")
                lengths.append(cfg.steps)
        best = None
        for steps in sorted(set(lengths)):
            members = [j for j, s_ in enumerate(lengths) if s_ == steps]
            out = run_admm_batch(prog, [runs[j] for j in members], steps=steps, device=dev)
            for pos, j in enumerate(members):
                val = float(out.values[pos])
                info[f"value_{tags[j]}"] = val
                info[f"best_step_{tags[j]}"] = int(out.best_step[pos])
                if best is None or val > best[2]:
                    best = (out.bins[pos], out.confidences[pos], val, tags[j])
        assert best is not None
        bins, z, value = best[0], best[1], best[2]
        info["init"] = best[3]
        # the initial confidences in their own bins are a feasible point too: never report less than them
        for kind in sorted({k for cfg in admm_cfgs for k in cfg.inits}):
            z0 = _initial(kind, clean, lo, up, c)
            b0 = _bin_index(z0, n_bins)
            v0 = hard_ece(z0, c, n_bins)
            if v0 > value and check_feasible(prog, b0, z0):
                bins, z, value = b0, z0, v0
                info["init"] = f"{kind} (step 0)"
    if method in ("exact", "milp", "admm"):
        value = objective(prog, bins, z) if method != "milp" else value
        z = nudge_into_bins(prog, bins, z)
    return CCEResult(value=float(value), method=method, n_bins=n_bins, confidences=z.astype(np.float64),
                     bins=np.asarray(bins, dtype=np.int64), info=info)
