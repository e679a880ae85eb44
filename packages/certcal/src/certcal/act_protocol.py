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

Intervals (robustsuite_common): certified accuracy pools the selected models' test predictions over seeds
(Clopper-Pearson on k of seeds x N); CBS and CCE (exact optimum) are means over the seeds that had a selected
model, with a BCa bootstrap over the test inputs (the same resampled inputs for every seed: paired), so the
interval covers which inputs were drawn; the seed-to-seed spread is shown beside it (``cce_per_seed``), and the
selection itself is not redone inside the bootstrap.

What the budget can decide (issue 26): no input is certified beyond ``max_certifiable_radius(sigma, n,
alpha)``, so a row at a larger radius is labelled inconclusive; a method whose CCE interval overlaps the
baseline's is inconclusive too (:meth:`ACTComparison.comparisons`). ``weights`` records how far each fine-tune
moved the weights from the start (max and mean |w - w_start|): a fine-tune that barely moves them cannot
differ from its start whatever the method.

Departures from the paper, and why: the grid is the caller's (the paper's 16-point grids lost their values
in our copy, and 16 x methods x seeds fine-tunes do not fit a CPU); CCE is the exact optimum (an upper bound
on the paper's ACCE, the max over 16 ADMM runs); the base model is whatever the caller passes (the paper
fine-tunes SmoothAdv-trained models).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import check_choice, check_float, check_int
from robustsuite_common.models import evaluating

from ._intervals import boot, ci, proportion
from ._store import CERTIFICATE, Store, cached, fine_tuned, fingerprint
from ._validation import check_label_range, check_labelled_images, num_classes
from .cce import ADMMConfig, certified_brier_score, certified_calibration_error
from .confidence import BOUND_METHODS, confidence_bounds
from .smoothing import CertifyResult, certify, max_certifiable_radius
from .training import TRAINING_METHODS, adversarial_calibration_training

__all__ = ["ACT_GRID_KEYS", "ACT_METHODS", "ACTComparison", "ACTModel", "ACTRow", "ACTVerdict", "ACTWeights",
           "act_comparison"]

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
    """One (method, radius) cell of the comparison; metrics are fractions in [0, 1] (None: nothing certified,
    or no interval). ``certifiable``: the radius is within what the draw budget can certify."""

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
    certifiable: bool = True

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
class ACTWeights:
    """How far one fine-tune (method, grid point, seed) moved the weights from the start model: the largest and
    the mean absolute change over all parameters (0 for ``"none"``, the start itself)."""

    method: str
    params: dict[str, Any]
    seed: int
    max_abs_change: float
    mean_abs_change: float
    n_parameters: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTVerdict:
    """One ACT method against the baseline at the largest radius where both have a selected model with a CCE.

    ``radius`` is None when there is no such radius (then every metric is None). ``overlap``: the two closed CCE
    95 % intervals share a point (no difference shown); ``lowers``: the method's CCE is the lower point estimate
    (a difference is shown only where ``overlap`` is False). ``conclusive`` is False with ``reason`` saying why
    when the budget cannot decide (no common radius, an interval missing, overlapping intervals)."""

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
    conclusive: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: the method a verdict compares by default: the paper's proposal first (§4), the AT baseline last
VERDICT_PREFERENCE = ("acce_act", "brier_act", "acce_act_exact", "smoothadv")


def _interval_pair(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    return None if lo is None or hi is None else (lo, hi)


@dataclass(frozen=True)
class ACTComparison:
    sigma: float
    epsilon: float
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    rows: tuple[ACTRow, ...] = field(default_factory=tuple)
    config: dict[str, Any] = field(default_factory=dict)
    models: tuple[ACTModel, ...] = field(default_factory=tuple)
    max_radius: float = float("inf")  # the largest radius the draw budget can certify (max_certifiable_radius)
    weights: tuple[ACTWeights, ...] = field(default_factory=tuple)
    # per (method, grid index, seed): the certificate of the test inputs (not part of to_dict)
    certificates: Mapping[tuple[str, int, int], CertifyResult] = field(default_factory=dict, repr=False,
                                                                     compare=False)
    # per method: its grid points in the order of the grid index above
    grid_points: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict, repr=False, compare=False)

    def row(self, method: str, radius: float) -> ACTRow:
        for r in self.rows:
            if r.method == method and abs(r.radius - radius) < 1e-12:
                return r
        raise KeyError((method, radius))

    @property
    def baseline(self) -> str:
        """The row every method is compared with: the un-fine-tuned ``"none"``, else the first method."""
        return "none" if "none" in self.methods else self.methods[0]

    def compare(self, method: str, radius: float, baseline: str | None = None) -> tuple[str, bool, str]:
        """``(verdict, conclusive, reason)`` of ``method`` against ``baseline`` at ``radius`` on the CCE:
        "lower" / "higher" when the 95 % intervals are disjoint, else "inconclusive" with the reason (the radius
        is beyond what the draw budget certifies, a method has no selected model or no interval there, the
        intervals overlap)."""
        base = self.baseline if baseline is None else baseline
        a, b = self.row(method, radius), self.row(base, radius)
        if radius > self.max_radius:
            return ("inconclusive", False, f"r = {radius:g} is beyond the largest radius the draw budget certifies "
                    f"({self.max_radius:.3g} at n = {self.config.get('n')}, alpha = {self.config.get('alpha')})")
        if a.cce is None or b.cce is None:
            who = method if a.cce is None else base
            return "inconclusive", False, f"{who} has no selected model with a CCE at r = {radius:g}"
        ia, ib = _interval_pair(a.cce_ci_low, a.cce_ci_high), _interval_pair(b.cce_ci_low, b.cce_ci_high)
        if ia is None or ib is None:
            return "inconclusive", False, "a CCE interval is missing (the bootstrap could not place it)"
        if not (ia[1] < ib[0] or ib[1] < ia[0]):
            return "inconclusive", False, "the CCE intervals overlap"
        return ("lower" if a.cce < b.cce else "higher"), True, "the CCE intervals are disjoint"

    def comparisons(self, baseline: str | None = None) -> list[tuple[str, float, str, bool, str]]:
        """``(method, radius, verdict, conclusive, reason)`` for every method but the baseline at every radius."""
        base = self.baseline if baseline is None else baseline
        radii = sorted({r.radius for r in self.rows})
        return [(m, r, *self.compare(m, r, base)) for m in self.methods if m != base for r in radii]

    def verdict(self, method: str | None = None, baseline: str | None = None) -> ACTVerdict | None:
        """Does ACT change the certified calibration error? (paper §5.3, Table 2 / 7)

        Compares ``method`` (default: the first of ACCE-ACT, Brier-ACT, exact ACCE-ACT, SmoothAdv that was run)
        with ``baseline`` (default: the un-fine-tuned model ``"none"``, else the first method) at the largest radius
        where both have a CCE (a selected model within the margin), and says whether their CCE intervals
        overlap. None when there is no method to compare (only the baseline was run)."""
        base = baseline if baseline is not None else self.baseline
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
            ia, ib = _interval_pair(a.cce_ci_low, a.cce_ci_high), _interval_pair(b.cce_ci_low, b.cce_ci_high)
            overlap = None if ia is None or ib is None else not (ia[1] < ib[0] or ib[1] < ia[0])
            _, conclusive, reason = self.compare(act, r, base)
            return ACTVerdict(act, base, r, a.cce, ia, b.cce, ib, a.certified_accuracy, b.certified_accuracy, overlap,
                              bool(a.cce < b.cce), conclusive, reason)
        return ACTVerdict(act, base, None, conclusive=False,
                          reason=f"no radius where both {act} and {base} have a selected model with a CCE")

    def to_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "epsilon": self.epsilon, "seeds": list(self.seeds),
                "methods": list(self.methods), "rows": [r.to_dict() for r in self.rows], "config": dict(self.config),
                "models": [m.to_dict() for m in self.models], "max_radius": self.max_radius,
                "weights": [w.to_dict() for w in self.weights]}


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
    keys = [k for k in ACT_GRID_KEYS if k in grid and k in _USES[method]]
    points = []
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
        points.append({**{k: base[k] for k in _USES[method]}, **dict(zip(keys, combo, strict=True))})
    return points or [{}]


def _mean_over_seeds(n_bins: int, metric: str, k: int):
    """The statistic of a paired bootstrap: the mean over ``k`` seeds of CBS or CCE on the resampled inputs that
    the seed's selected model certifies (arrays: lower, upper, correct, mask per seed)."""
    def stat(*arrays: np.ndarray) -> float:
        vals = []
        for s in range(k):
            lo, up, c, m = arrays[4 * s: 4 * s + 4]
            sel = m > 0.5
            if not sel.any():
                return float("nan")
            if metric == "cbs":
                vals.append(certified_brier_score(lo[sel], up[sel], c[sel]))
            else:
                vals.append(certified_calibration_error(lo[sel], up[sel], c[sel], n_bins).value)
        return float(np.mean(vals))

    return stat


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
    store: Store | None = None,
    progress: Callable[[str], None] | None = None,
) -> ACTComparison:
    """Fine-tune ``model`` (a smoothing base at ``sigma``) with each of ``methods`` at each ``grid`` point and
    seed, certify the test inputs, select per radius with the paper's rule and return CA, CBS and CCE (exact)
    across ``radii`` with 95 % intervals (see module doc). "none" is the base model itself (the paper's
    pre-trained row), "gaussian" noise-only fine-tuning, "smoothadv" the AT baseline (paper Table 2).

    ``grid``: lists of values for some of ``ACT_GRID_KEYS`` ("lr", "attack_step_factor", "attack_steps",
    "rho_growth"); unset keys keep the scalar arguments (``rho_growth`` that of ``admm``). ``selection_margin``:
    the paper's 3 % CA band (App. J.1); ``None`` picks each method's lowest-CCE model without the CA band.
    ``store`` (a checkpoint store: ``get``/``put`` bytes by key) or ``checkpoint_dir`` (a directory store):
    each (method, grid point, seed)'s fine-tuned weights and certificate are saved there under keys that carry
    a hash of every setting, of the data and of the start model's weights, so an interrupted run resumes where
    it stopped and a finished one is recomputed from the saved certificates without retraining. The caller's
    ``model`` is not changed (each method fine-tunes a copy)."""
    yt = check_labelled_images(model, x_train, y_train, x_name="x_train", y_name="y_train")
    yte = check_labelled_images(model, x_test, y_test, x_name="x_test", y_name="y_test")
    methods = tuple(methods)
    if not methods:
        raise ValueError("methods must not be empty")
    for m in methods:
        check_choice("methods", m, ACT_METHODS)
    if len(set(methods)) != len(methods):
        raise ValueError(f"methods must not repeat a method, got {list(methods)}")
    seeds = tuple(check_int("seeds", s, ge=0) for s in seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    check_float("sigma", sigma, gt=0)
    check_float("epsilon", epsilon, ge=0)
    check_float("lr", lr, gt=0)
    check_float("attack_step_factor", attack_step_factor, gt=0)
    check_int("attack_steps", attack_steps, ge=1)
    check_choice("bound", bound, BOUND_METHODS)
    check_int("n_boot", n_boot, ge=1)
    check_int("n", n, ge=1)
    check_int("n0", n0, ge=1)
    if selection_margin is not None:
        check_float("selection_margin", selection_margin, ge=0, le=1)
    if store is not None and checkpoint_dir is not None:
        raise ValueError("pass store or checkpoint_dir, not both")
    if checkpoint_dir is not None:
        from robustsuite_common.experiment import DirStore

        store = DirStore(Path(checkpoint_dir))
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
                check_int("grid['attack_steps']", v, ge=1)
            elif k == "rho_growth":
                check_float("grid['rho_growth']", v, ge=1.0)
            else:
                check_float(f"grid[{k!r}]", v, gt=0)
    radii_arr = np.asarray(list(radii), dtype=np.float64)
    if radii_arr.ndim != 1 or radii_arr.size == 0 or not np.all(np.isfinite(radii_arr)) or np.any(radii_arr < 0):
        raise ValueError("radii must be a non-empty sequence of finite non-negative radii")
    with evaluating(model):  # the number of classes, from one forward pass on two inputs
        k_classes = num_classes(model, x_test)
    check_label_range("y_train", yt, k_classes)
    check_label_range("y_test", yte, k_classes)
    base_params = {"lr": lr, "attack_step_factor": attack_step_factor, "attack_steps": attack_steps,
                   "rho_growth": admm_base.rho_growth}
    points = {m: _grid_points(m, grid, base_params) for m in methods}
    y_np = yte.numpy()
    n_test = y_np.shape[0]
    tag = ""
    if store is not None:
        tag = fingerprint({"sigma": sigma, "epsilon": epsilon, "epochs": epochs, "batch_size": batch_size,
                           "num_noise": num_noise, "n0": n0, "n": n, "alpha": alpha, "n_bins": n_bins,
                           "warmup_epochs": warmup_epochs, "admm": asdict(admm_base)},
                          x_train, yt, x_test, yte, model)

    def unit_name(method: str, params: dict[str, Any], seed: int) -> str:
        ph = fingerprint(params, length=8)
        return f"act-{method}-{ph}-seed{seed}-{tag}"

    weights: list[ACTWeights] = []

    def tuned(method: str, params: dict[str, Any], seed: int) -> torch.nn.Module:
        if method == "none":
            return model

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

        return fine_tuned(store, f"{unit_name(method, params, seed)}.pt", train, model)

    def certificate(method: str, params: dict[str, Any], seed: int) -> CertifyResult:
        ft: list[torch.nn.Module] = []

        def compute() -> CertifyResult:
            ft.append(tuned(method, params, seed))
            return certify(ft[0], x_test, sigma, n0=n0, n=n, alpha=alpha, batch_size=certify_batch_size, seed=seed,
                           return_scores=True)

        cert = cached(store, f"{unit_name(method, params, seed)}.npz", compute, CERTIFICATE)
        if method != "none":  # the weights' movement from the start (from the saved weights when resuming)
            net = ft[0] if ft else tuned(method, params, seed)
            mx, mean, count = weight_change(model, net)
            weights.append(ACTWeights(method, dict(params), seed, mx, mean, count))
        else:
            weights.append(ACTWeights(method, {}, seed, 0.0, 0.0, sum(p.numel() for p in model.parameters())))
        return cert

    # every unit: per radius the certified set, bounds, correctness, CA count, CBS, CCE
    units: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    certs: dict[tuple[str, int, int], CertifyResult] = {}
    for method in methods:
        for gi, params in enumerate(points[method]):
            for seed in seeds:
                if progress is not None:
                    progress(f"{method} {params} seed {seed}")
                cert = certificate(method, params, seed)
                certs[(method, gi, seed)] = cert
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

    def interval(values: list[float | None], keys: list[tuple[str, int, int]], j: int,
                 metric: str) -> tuple[float | None, float | None, float | None]:
        """Mean over the seeds that had a selected model; BCa bootstrap over the test inputs, paired across
        those seeds (robustsuite_common)."""
        present = [v for v in values if v is not None]
        if not present:
            return None, None, None
        arrays = []
        for key in keys:
            d = units[key][j]
            arrays += [d["lower"], d["upper"], d["correct"].astype(np.float64), d["mask"].astype(np.float64)]
        iv = ci(boot(arrays, _mean_over_seeds(n_bins, metric, len(keys)), seed=12345, n_boot=n_boot))
        mean = float(np.mean(present))
        return (mean, None, None) if iv is None else (mean, iv[0], iv[1])

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
    ceiling = max_certifiable_radius(sigma, n, alpha)
    for m in methods:
        for j, r in enumerate(radii_arr):
            sel = [chosen[(m, s, j)] for s in seeds]
            pairs = list(zip(sel, seeds, strict=True))
            k = sum(units[(m, c[2], s)][j]["k"] for c, s in pairs)
            n_cert = float(np.mean([units[(m, c[2], s)][j]["mask"].sum() for c, s in pairs]))
            cce_v = [None if c[0] is None else units[(m, c[0], s)][j]["cce"] for c, s in pairs]
            cbs_v = [None if c[1] is None else units[(m, c[1], s)][j]["cbs"] for c, s in pairs]
            cce_keys = [(m, c[0], s) for c, s in pairs if c[0] is not None]
            cbs_keys = [(m, c[1], s) for c, s in pairs if c[1] is not None]
            ca = proportion(int(k), total)
            rows.append(ACTRow(
                m, float(r), ca.estimate, ca.low, ca.high, *interval(cbs_v, cbs_keys, j, "cbs"),
                *interval(cce_v, cce_keys, j, "cce"), n_cert,
                n_selected=sum(c[0] is not None for c in sel),
                cce_per_seed=tuple(None if v is None else float(v) for v in cce_v),
                selected=tuple(None if c[0] is None else dict(points[m][c[0]]) for c in sel),
                certifiable=bool(r <= ceiling)))
    cfg = {"epochs": epochs, "batch_size": batch_size, "num_noise": num_noise, "attack_steps": attack_steps,
           "attack_step_factor": attack_step_factor, "lr": lr, "grid": {k: list(v) for k, v in grid.items()},
           "selection_margin": selection_margin, "warmup_epochs": warmup_epochs, "n0": n0, "n": n,
           "alpha": alpha, "n_bins": n_bins, "bound": bound, "n_boot": n_boot,
           "radii": [float(r) for r in radii_arr], "n_test": n_test, "n_train": int(yt.shape[0])}
    return ACTComparison(sigma=float(sigma), epsilon=float(epsilon), seeds=seeds, methods=methods,
                         rows=tuple(rows), config=cfg, models=tuple(model_rows), max_radius=ceiling,
                         weights=tuple(weights), certificates=certs,
                         grid_points={m: tuple(dict(p) for p in points[m]) for m in methods})
