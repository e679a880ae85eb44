"""The ACT comparison of paper §5.3 / Table 2 (App. F, I.2-I.3, J.1): fine-tune one smoothing base model with
each training method on a hyper-parameter grid and several seeds, certify every fine-tuned model, select per
radius with the paper's rule, and tabulate certified accuracy, CBS and CCE across radii with 95 % intervals.

Selection rule (§5.3, App. J.1: "we compare all models that come within 3 % of the highest certified accuracy
achieved by any model at a given radius, and evaluate the best certified calibration of these models"): for
each seed and radius, every model of every method (grid points, and the un-fine-tuned base ``"none"``) is
eligible when its certified accuracy is at least the best one minus ``selection_margin``; each method then
reports its eligible model with the lowest CCE (its CA is that model's) and, separately, the lowest CBS. In a
seed where none of a method's models is eligible, the method's CA is its best model's and it contributes no
CBS/CCE: those are means over the ``n_selected`` seeds that had an eligible model (None when no seed had one).

Intervals: certified accuracy pools the selected models' test predictions over seeds (Clopper-Pearson on k of
seeds x N); CBS and CCE (exact optimum) are means over seeds with a percentile bootstrap that resamples the
seeds and the test inputs together (the same resampled indices for every method), so the interval includes
the seed-to-seed spread; the selection itself is not redone inside the bootstrap.

Departures from the paper, and why: the grid is the caller's (the paper's 16-point grids lost their values
in our copy, and 16 x methods x seeds fine-tunes do not fit a CPU); CCE is the exact optimum (an upper bound
on the paper's ACCE, the max over 16 ADMM runs); the base model is whatever the caller passes (the paper
fine-tunes SmoothAdv-trained models).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ._validation import check_choice, check_labelled_images, check_positive_float, check_positive_int
from .calibration_error import ADMMConfig, certified_brier_score, certified_calibration_error
from .confidence import BOUND_METHODS, confidence_bounds
from .smoothing import CertifyResult, certify
from .training import TRAINING_METHODS, adversarial_calibration_training

__all__ = ["ACT_GRID_KEYS", "ACT_METHODS", "ACTComparison", "ACTModel", "ACTRow", "ACTVerdict", "act_comparison"]

#: "none" is the un-fine-tuned base model (the paper's pre-trained baseline row); the others train
ACT_METHODS = ("none",) + TRAINING_METHODS
#: hyper-parameters a grid may vary (App. I.3): weight learning rate, attack step factor, attack steps, and
#: ACCE-ACT's multiplicative rho schedule; each method uses only the keys that act on it
ACT_GRID_KEYS = ("lr", "attack_step_factor", "attack_steps", "rho_growth")
_USES = {"none": (), "gaussian": ("lr",), "smoothadv": ("lr", "attack_step_factor", "attack_steps"),
         "brier_act": ("lr", "attack_step_factor", "attack_steps"),
         "acce_act": ACT_GRID_KEYS, "acce_act_exact": ("lr", "attack_step_factor", "attack_steps")}


@dataclass(frozen=True)
class ACTRow:
    """One (method, radius) cell of the comparison; metrics are fractions in [0, 1] (None: nothing certified)."""

    method: str
    radius: float
    certified_accuracy: float
    certified_accuracy_ci_low: float
    certified_accuracy_ci_high: float
    cbs: float | None
    cbs_ci_low: float | None
    cbs_ci_high: float | None
    cce: float | None
    cce_ci_low: float | None
    cce_ci_high: float | None
    n_certified: float  # mean over seeds (of the CCE-selected models)
    n_selected: int = 0  # seeds in which the method had a model within the selection margin
    cce_per_seed: tuple[float | None, ...] = ()
    selected: tuple[dict[str, Any] | None, ...] = ()  # the CCE-selected grid point per seed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTModel:
    """One fine-tuned model (method, grid point, seed) at one radius, before selection."""

    method: str
    params: dict[str, Any]
    seed: int
    radius: float
    certified_accuracy: float
    cbs: float | None
    cce: float | None
    eligible: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTVerdict:
    """One ACT method against the baseline at the largest radius where both have a selected model with a CCE.

    ``radius`` is None when there is no such radius (then every metric is None). ``overlap``: the two closed CCE
    95 % intervals share a point (no difference shown); ``lowers``: the method's CCE is the lower point estimate
    (a difference is shown only where ``overlap`` is False)."""

    method: str
    baseline: str
    radius: float | None
    cce: float | None = None
    cce_ci: tuple[float, float] | None = None
    baseline_cce: float | None = None
    baseline_cce_ci: tuple[float, float] | None = None
    certified_accuracy: float | None = None
    baseline_certified_accuracy: float | None = None
    overlap: bool | None = None
    lowers: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: the method a verdict compares by default: the paper's proposal first (§4), the AT baseline last
VERDICT_PREFERENCE = ("acce_act", "brier_act", "acce_act_exact", "smoothadv")


@dataclass(frozen=True)
class ACTComparison:
    sigma: float
    epsilon: float
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    rows: tuple[ACTRow, ...] = field(default_factory=tuple)
    config: dict[str, Any] = field(default_factory=dict)
    models: tuple[ACTModel, ...] = field(default_factory=tuple)

    def row(self, method: str, radius: float) -> ACTRow:
        for r in self.rows:
            if r.method == method and abs(r.radius - radius) < 1e-12:
                return r
        raise KeyError((method, radius))

    def verdict(self, method: str | None = None, baseline: str | None = None) -> ACTVerdict | None:
        """Does ACT change the certified calibration error? (paper §5.3, Table 2 / 7)

        Compares ``method`` (default: the first of ACCE-ACT, Brier-ACT, exact ACCE-ACT, SmoothAdv that was run)
        with ``baseline`` (default: the un-fine-tuned model ``"none"``, else the first method) at the largest radius
        where both have a CCE (a selected model within the margin), and says whether their CCE intervals
        overlap. None when there is no method to compare (only the baseline was run)."""
        base = baseline if baseline is not None else ("none" if "none" in self.methods else self.methods[0])
        act = method if method is not None else next((m for m in VERDICT_PREFERENCE if m in self.methods), None)
        for m, what in ((base, "baseline"), (act, "method")):
            if m is not None and m not in self.methods:
                raise ValueError(f"{what} must be one of the compared methods {list(self.methods)}, got {m!r}")
        if act is None or act == base:
            return None
        for r in sorted({row.radius for row in self.rows}, reverse=True):
            a, b = self.row(act, r), self.row(base, r)
            if a.cce is None or b.cce is None:
                continue
            overlap = not (a.cce_ci_high < b.cce_ci_low or b.cce_ci_high < a.cce_ci_low)
            return ACTVerdict(act, base, r, a.cce, (a.cce_ci_low, a.cce_ci_high), b.cce, (b.cce_ci_low, b.cce_ci_high),
                              a.certified_accuracy, b.certified_accuracy, overlap, bool(a.cce < b.cce))
        return ACTVerdict(act, base, None)

    def to_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "epsilon": self.epsilon, "seeds": list(self.seeds),
                "methods": list(self.methods), "rows": [r.to_dict() for r in self.rows], "config": dict(self.config),
                "models": [m.to_dict() for m in self.models]}


def _fine_tune(ckpt: Path | None, name: str, train: Callable[[], torch.nn.Module],
               like: torch.nn.Module) -> torch.nn.Module:
    """Train, or load the weights saved under ``ckpt / name`` by an earlier (interrupted) run."""
    if ckpt is None:
        return train()
    path = ckpt / name
    if path.exists():
        m = copy.deepcopy(like)
        m.load_state_dict(torch.load(path, weights_only=True, map_location=next(like.parameters()).device))
        return m.eval()
    m = train()
    tmp = path.with_name(path.name + ".tmp")
    torch.save(m.state_dict(), tmp)
    os.replace(tmp, path)
    return m.eval()


def _cp(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def _grid_points(method: str, grid: Mapping[str, Sequence[Any]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """The Cartesian product of the grid keys that act on ``method`` (others stay at their base values)."""
    keys = [k for k in ACT_GRID_KEYS if k in grid and k in _USES[method]]
    points = []
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
        points.append({**{k: base[k] for k in _USES[method]}, **dict(zip(keys, combo, strict=True))})
    return points or [{}]


def act_comparison(
    model: torch.nn.Module,
    x_train: torch.Tensor,
    y_train: Any,
    x_test: torch.Tensor,
    y_test: Any,
    *,
    methods: Sequence[str] = ("none", "gaussian", "smoothadv", "brier_act", "acce_act", "acce_act_exact"),
    seeds: Sequence[int] = (0, 1, 2),
    sigma: float = 0.25,
    epsilon: float = 0.25,
    radii: Sequence[float] = (0.0, 0.1, 0.25, 0.5),
    epochs: int = 2,
    batch_size: int = 256,
    num_noise: int = 2,
    attack_steps: int = 4,
    attack_step_factor: float = 1.0,
    lr: float = 1e-3,
    grid: Mapping[str, Sequence[Any]] | None = None,
    selection_margin: float | None = 0.03,
    n0: int = 100,
    n: int = 1000,
    alpha: float = 0.001,
    certify_batch_size: int = 1024,
    n_bins: int = 15,
    bound: str = "cdf",
    n_boot: int = 100,
    warmup_epochs: int = 3,
    admm: ADMMConfig | None = None,
    checkpoint_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> ACTComparison:
    """Fine-tune ``model`` (a smoothing base at ``sigma``) with each of ``methods`` at each ``grid`` point and
    seed, certify the test inputs, select per radius with the paper's rule and return CA, CBS and CCE (exact)
    across ``radii`` with 95 % intervals (see module doc). "none" is the base model itself (the paper's
    pre-trained row), "gaussian" noise-only fine-tuning, "smoothadv" the AT baseline (paper Table 2).

    ``grid``: lists of values for some of ``ACT_GRID_KEYS`` ("lr", "attack_step_factor", "attack_steps",
    "rho_growth"); unset keys keep the scalar arguments (``rho_growth`` that of ``admm``). ``selection_margin``:
    the paper's 3 % CA band (App. J.1); ``None`` picks each method's lowest-CCE model without the CA band.
    ``checkpoint_dir``: each (method, grid point, seed)'s fine-tuned weights and certificate are saved there
    (atomic writes, names carry a hash of every setting and of the data), so an interrupted run resumes where
    it stopped and a finished one is recomputed from the saved certificates without retraining."""
    yt = check_labelled_images(model, x_train, y_train)
    yte = check_labelled_images(model, x_test, y_test)
    methods = tuple(methods)
    if not methods:
        raise ValueError("methods must not be empty")
    for m in methods:
        check_choice("methods", m, ACT_METHODS)
    if len(set(methods)) != len(methods):
        raise ValueError(f"methods must not repeat a method, got {list(methods)}")
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    check_positive_float("sigma", sigma)
    check_positive_float("epsilon", epsilon, allow_zero=True)
    check_positive_float("lr", lr)
    check_positive_float("attack_step_factor", attack_step_factor)
    check_positive_int("attack_steps", attack_steps)
    check_choice("bound", bound, BOUND_METHODS)
    check_positive_int("n_boot", n_boot)
    if selection_margin is not None and not (0.0 <= float(selection_margin) <= 1.0):
        raise ValueError(f"selection_margin must be in [0, 1] or None, got {selection_margin}")
    admm_base = admm or ADMMConfig()
    grid = {} if grid is None else dict(grid)
    for k, vals in grid.items():
        if k not in ACT_GRID_KEYS:
            raise ValueError(f"grid keys must be among {ACT_GRID_KEYS}, got {k!r}")
        vals = list(vals)
        if not vals:
            raise ValueError(f"grid[{k!r}] must list at least one value")
        for v in vals:
            if k == "attack_steps":
                check_positive_int("grid['attack_steps']", v)
            elif k == "rho_growth":
                if not (isinstance(v, int | float) and np.isfinite(v) and v >= 1.0):
                    raise ValueError(f"grid['rho_growth'] values must be finite and >= 1, got {v!r}")
            else:
                check_positive_float(f"grid[{k!r}]", v)
    radii_arr = np.asarray(list(radii), dtype=np.float64)
    if radii_arr.ndim != 1 or radii_arr.size == 0 or not np.all(np.isfinite(radii_arr)) or np.any(radii_arr < 0):
        raise ValueError("radii must be a non-empty sequence of finite non-negative radii")
    base_params = {"lr": lr, "attack_step_factor": attack_step_factor, "attack_steps": attack_steps,
                   "rho_growth": admm_base.rho_growth}
    points = {m: _grid_points(m, grid, base_params) for m in methods}
    y_np = yte.numpy()
    n_test = y_np.shape[0]
    ckpt, tag = None, ""
    if checkpoint_dir is not None:
        ckpt = Path(checkpoint_dir)
        ckpt.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha256(json.dumps({
            "sigma": sigma, "epsilon": epsilon, "epochs": epochs, "batch_size": batch_size, "num_noise": num_noise,
            "n0": n0, "n": n, "alpha": alpha, "n_bins": n_bins, "warmup_epochs": warmup_epochs,
            "admm": asdict(admm_base)}, sort_keys=True, default=str).encode())
        for t in (x_train, yt, x_test, yte, *model.state_dict().values()):
            h.update(t.detach().cpu().contiguous().numpy().tobytes())
        tag = h.hexdigest()[:12]

    def unit_name(method: str, params: dict[str, Any], seed: int) -> str:
        ph = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
        return f"act-{method}-{ph}-seed{seed}-{tag}"

    def certificate(method: str, params: dict[str, Any], seed: int) -> CertifyResult:
        name = unit_name(method, params, seed)
        cert_path = None if ckpt is None else ckpt / f"{name}.npz"
        if cert_path is not None and cert_path.exists():
            with np.load(cert_path) as f:
                return CertifyResult(prediction=f["prediction"], radius=f["radius"], p_lower=f["p_lower"],
                                     counts=f["counts"], sigma=float(sigma), n0=n0, n=n, alpha=alpha,
                                     scores=f["scores"])
        if method == "none":
            ft = model
        else:
            def train() -> torch.nn.Module:
                cfg = admm_base if "rho_growth" not in params else ADMMConfig(
                    **{**asdict(admm_base), "rho_growth": float(params["rho_growth"])})
                return adversarial_calibration_training(
                    model, x_train, yt, method=method, sigma=sigma,  # type: ignore[arg-type]
                    epsilon=0.0 if method == "gaussian" else epsilon, epochs=epochs, batch_size=batch_size,
                    num_noise=num_noise, attack_steps=int(params.get("attack_steps", attack_steps)),
                    attack_step_factor=float(params.get("attack_step_factor", attack_step_factor)),
                    lr=float(params.get("lr", lr)), n_bins=n_bins, warmup_epochs=warmup_epochs, admm=cfg,
                    seed=seed).model

            ft = _fine_tune(ckpt, f"{name}.pt", train, model)
        cert = certify(ft, x_test, sigma, n0=n0, n=n, alpha=alpha, batch_size=certify_batch_size, seed=seed,
                       return_scores=True)
        if cert_path is not None:
            tmp = cert_path.with_name(cert_path.name + ".tmp.npz")
            np.savez_compressed(tmp, prediction=cert.prediction, radius=cert.radius, p_lower=cert.p_lower,
                                counts=cert.counts, scores=cert.scores)
            os.replace(tmp, cert_path)
        return cert

    # every unit: per radius the certified set, bounds, correctness, CA count, CBS, CCE
    units: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for method in methods:
        for gi, params in enumerate(points[method]):
            for seed in seeds:
                if progress is not None:
                    progress(f"{method} {params} seed {seed}")
                cert = certificate(method, params, seed)
                correct = cert.prediction == y_np
                per_r = []
                for r in radii_arr:
                    mask = cert.certified_at(float(r))
                    d: dict[str, Any] = {"k": int((mask & correct).sum()), "mask": mask, "correct": correct,
                                         "cbs": None, "cce": None}
                    if mask.any():
                        lower, upper = np.zeros(n_test), np.zeros(n_test)
                        b = confidence_bounds(cert.scores[mask], sigma, float(r), alpha=alpha,
                                              method=bound)  # type: ignore[arg-type]
                        lower[mask], upper[mask] = b.lower, b.upper
                        d.update(lower=lower, upper=upper,
                                 cbs=certified_brier_score(lower[mask], upper[mask], correct[mask]),
                                 cce=certified_calibration_error(lower[mask], upper[mask], correct[mask],
                                                                 n_bins).value)
                    per_r.append(d)
                units[(method, gi, seed)] = per_r

    boot_idx = np.random.default_rng(12345).integers(0, n_test, size=(n_boot, n_test))
    # seed resamples for each number of seeds that had a selected model
    boot_seed = {c: np.random.default_rng(54321 + c).integers(0, c, size=(n_boot, c)) for c in range(1, len(seeds) + 1)}
    boot_cache: dict[tuple[str, int, int, int], tuple[np.ndarray, np.ndarray]] = {}

    def boot(key: tuple[str, int, int], j: int) -> tuple[np.ndarray, np.ndarray]:
        """Bootstrap CBS and CCE of one unit at radius index j over the shared resampled test indices."""
        ck = (*key, j)
        if ck not in boot_cache:
            d = units[key][j]
            vb = np.full((2, n_boot), np.nan)
            if d["cbs"] is not None:
                for bi in range(n_boot):
                    idx = boot_idx[bi][d["mask"][boot_idx[bi]]]
                    if idx.size:
                        vb[0, bi] = certified_brier_score(d["lower"][idx], d["upper"][idx], d["correct"][idx])
                        vb[1, bi] = certified_calibration_error(d["lower"][idx], d["upper"][idx],
                                                                d["correct"][idx], n_bins).value
            boot_cache[ck] = (vb[0], vb[1])
        return boot_cache[ck]

    def interval(values: list[float | None], boots: list[np.ndarray]) -> tuple[float | None, ...]:
        """Mean over the seeds that had a selected model; bootstrap resamples those seeds and the inputs."""
        present = [v for v in values if v is not None]
        if not present:
            return None, None, None
        arr = np.stack(boots)  # (seeds present, n_boot)
        with warnings.catch_warnings():  # an all-NaN resample (nothing certified in it) is dropped below
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(arr[boot_seed[len(present)], np.arange(n_boot)[:, None]], axis=1)
        means = means[np.isfinite(means)]
        lo_, hi_ = np.percentile(means, [2.5, 97.5]) if means.size else (np.nan, np.nan)
        return float(np.mean(present)), float(lo_), float(hi_)

    rows, model_rows = [], []
    chosen: dict[tuple[str, int, int], tuple[int | None, int | None, int]] = {}  # (cce gi, cbs gi, ca gi)
    for seed in seeds:
        for j, r in enumerate(radii_arr):
            best_ca = max(units[(m, gi, seed)][j]["k"] for m in methods for gi in range(len(points[m])))
            thr = -np.inf if selection_margin is None else best_ca / n_test - float(selection_margin) - 1e-12
            for m in methods:
                elig = [gi for gi in range(len(points[m])) if units[(m, gi, seed)][j]["k"] / n_test >= thr]
                for gi in range(len(points[m])):
                    d = units[(m, gi, seed)][j]
                    model_rows.append(ACTModel(m, dict(points[m][gi]), seed, float(r), d["k"] / n_test,
                                               d["cbs"], d["cce"], gi in elig))
                with_cal = [gi for gi in elig if units[(m, gi, seed)][j]["cce"] is not None]
                gi_cce = min(with_cal, key=lambda g: units[(m, g, seed)][j]["cce"]) if with_cal else None
                gi_cbs = min(with_cal, key=lambda g: units[(m, g, seed)][j]["cbs"]) if with_cal else None
                gi_ca = gi_cce if gi_cce is not None else max(range(len(points[m])),
                                                              key=lambda g: units[(m, g, seed)][j]["k"])
                chosen[(m, seed, j)] = (gi_cce, gi_cbs, gi_ca)
    total = n_test * len(seeds)
    for m in methods:
        for j, r in enumerate(radii_arr):
            sel = [chosen[(m, s, j)] for s in seeds]
            k = sum(units[(m, c[2], s)][j]["k"] for c, s in zip(sel, seeds, strict=True))
            n_cert = float(np.mean([units[(m, c[2], s)][j]["mask"].sum() for c, s in zip(sel, seeds, strict=True)]))
            cce_v = [None if c[0] is None else units[(m, c[0], s)][j]["cce"] for c, s in zip(sel, seeds, strict=True)]
            cbs_v = [None if c[1] is None else units[(m, c[1], s)][j]["cbs"] for c, s in zip(sel, seeds, strict=True)]
            cce_b = [boot((m, c[0], s), j)[1] for c, s in zip(sel, seeds, strict=True) if c[0] is not None]
            cbs_b = [boot((m, c[1], s), j)[0] for c, s in zip(sel, seeds, strict=True) if c[1] is not None]
            lo_ca, hi_ca = _cp(int(k), total)
            rows.append(ACTRow(
                m, float(r), k / total, lo_ca, hi_ca, *interval(cbs_v, cbs_b), *interval(cce_v, cce_b), n_cert,
                n_selected=sum(c[0] is not None for c in sel),
                cce_per_seed=tuple(None if v is None else float(v) for v in cce_v),
                selected=tuple(None if c[0] is None else dict(points[m][c[0]]) for c in sel)))
    cfg = {"epochs": epochs, "batch_size": batch_size, "num_noise": num_noise, "attack_steps": attack_steps,
           "attack_step_factor": attack_step_factor, "lr": lr, "grid": {k: list(v) for k, v in grid.items()},
           "selection_margin": selection_margin, "warmup_epochs": warmup_epochs, "n0": n0, "n": n,
           "alpha": alpha, "n_bins": n_bins, "bound": bound, "n_boot": n_boot,
           "radii": [float(r) for r in radii_arr], "n_test": n_test, "n_train": int(yt.shape[0])}
    return ACTComparison(sigma=float(sigma), epsilon=float(epsilon), seeds=seeds, methods=methods,
                         rows=tuple(rows), config=cfg, models=tuple(model_rows))
