"""The paper's protocol (paper 004, §5) and :func:`run`: certify per σ, certified calibration across radii, β-ACE
attacks on the base model, and the ACT comparison, every expensive finished piece checkpointed in the caller's
store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from robustsuite_common.config import config_hash, to_dict
from robustsuite_common.experiment import Store

from .._store import CERTIFICATE, NUMPY, cached, fine_tuned, fingerprint
from ..act import ACTComparison, ACTComparisonConfig, act_comparison
from ..attacks import ACEBenchmark, ACEResult, BetaACE
from ..cce import ADMMConfig
from ..evaluation import certificate_widths, certified_calibration_curve, common_set_curve
from ..metrics import calibration_error
from ..smoothing import CertifyResult, certify
from ..training import adversarial_calibration_training, gaussian_noise_training
from .config import Config
from .inputs import Data, Models, as_inputs, check_classes, check_split

if TYPE_CHECKING:
    from .result import Result

__all__ = ["Computed", "compute", "run", "run_shard", "shard_count"]


def tag(v: float) -> str:
    """A number as a key part: 0.25 -> '0p25'."""
    return f"{v:g}".replace(".", "p").replace("-", "m")


@dataclass
class Prepared:
    """The checked inputs: the first ``test_samples`` test images (``x``, ``y``), the train split when needed."""

    cfg: Config
    models: Models
    data: Data
    x: torch.Tensor
    y: np.ndarray
    xtr: torch.Tensor | None
    ytr: np.ndarray | None
    n_classes: int
    store: Store | None
    progress: bool

    @property
    def seed(self) -> int:
        return int(self.cfg.seed)


def _needs_train(models: Models, cfg: Config) -> bool:
    missing = any(models.smoothing(s) is None for s in cfg.smoothing.sigmas)
    act = cfg.act
    return missing or (act.enabled and (models.smoothing(act.sigma) is None or act.start == "smoothadv"
                                        or any(m != "none" for m in act.methods)))


def prepare(models: Any, data: Any, config: Any, store: Store | None, progress: bool) -> Prepared:
    """Every check before any work: config type, models, images in [0, 1], labels within the models' classes."""
    if not isinstance(config, Config):
        raise TypeError(f"config must be a certcal.experiment.Config (e.g. experiment.preset('demo')), got "
                        f"{type(config).__name__}")
    if store is not None and not (callable(getattr(store, "get", None)) and callable(getattr(store, "put", None))):
        raise TypeError(f"store must have get(key) and put(key, bytes) (a robustsuite_common Store), got "
                        f"{type(store).__name__}")
    models, data = as_inputs(models, data)
    x, y = check_split("data.test", data.test, config.test_samples)
    xtr = ytr = None
    if _needs_train(models, config):
        if data.train is None:
            raise ValueError("data.train must hold training images: a σ without a noise model or ACT fine-tunes")
        xtr, ytr = check_split("data.train", data.train)
    k = _classes("models.base", models.base, x, y)
    for s in config.smoothing.sigmas:
        m = models.smoothing(s)
        if m is not None and _classes(f"models.noise[{s:g}]", m, x, y) != k:
            raise ValueError(f"models.noise[{s:g}] returns a different number of classes than models.base ({k})")
    if ytr is not None and ytr.size and int(ytr.max()) >= k:
        raise ValueError(f"data.train.y must be class indices < the model's {k} classes, got {int(ytr.max())}")
    return Prepared(config, models, data, x, y, xtr, ytr, k, store, bool(progress))


def _classes(name: str, model: torch.nn.Module, x: torch.Tensor, y: np.ndarray) -> int:
    try:
        return check_classes("data.test", model, x, y)
    except RuntimeError as err:  # shape mismatch inside the model: say which model and which data
        raise ValueError(f"{name} cannot take data.test.x of shape {tuple(x.shape[1:])} per image: "
                         f"{type(err).__name__}: {str(err).splitlines()[0]}") from None


def shard_count(config: Config) -> int:
    """How many tasks each σ's certification is split into (``certify.shards``)."""
    return int(config.certify.shards)


def _shard_bounds(n_inputs: int, index: int, count: int) -> tuple[int, int]:
    """Inputs ``[start, stop)`` of shard ``index`` of ``count`` (contiguous, sizes differing by at most one)."""
    return n_inputs * index // count, n_inputs * (index + 1) // count


def smoothing_model(p: Prepared, sigma: float) -> torch.nn.Module:
    """The smoothing base model of ``sigma``: the given one, or ``models.base`` fine-tuned with Gaussian noise of
    that σ (Cohen et al.'s recipe; checkpointed in the store)."""
    given = p.models.smoothing(sigma)
    if given is not None:
        return given
    nt = p.cfg.noise_training
    xtr, ytr = p.xtr, p.ytr
    assert xtr is not None and ytr is not None
    key = (f"noise-model-sigma{tag(sigma)}-{config_hash(nt, sigma, p.seed)}-"
           f"{fingerprint(p.models.base, xtr, torch.as_tensor(ytr))}.pt")
    return fine_tuned(p.store, key, lambda: gaussian_noise_training(
        p.models.base, xtr, ytr, sigma=sigma, epochs=nt.epochs, batch_size=nt.batch_size, lr=nt.lr, seed=p.seed,
        progress=p.progress).model, p.models.base)


def certificate(p: Prepared, model: torch.nn.Module, sigma: float,
                shard: tuple[int, int] | None = None) -> CertifyResult:
    """The certificate of the test inputs at ``sigma`` (or of shard ``(index, count)`` of them), checkpointed.

    With ``certify.shards`` > 1 it is the concatenation of the shards' certificates, each computed here or
    earlier by :func:`run_shard`; ``noise_stream = "per_input"`` makes that equal one call over all inputs."""
    c = p.cfg.certify
    count = int(c.shards)
    if shard is None and count > 1:
        return CertifyResult.concatenate([certificate(p, model, sigma, (k, count)) for k in range(count)])
    start, stop = (0, p.x.shape[0]) if shard is None else _shard_bounds(p.x.shape[0], *shard)
    what = {k: v for k, v in to_dict(c).items() if k != "shards"}
    name = f"cert-sigma{tag(sigma)}-{config_hash(what, sigma, p.seed)}-{fingerprint(model, p.x)}"
    key = name + ("" if shard is None else f".shard-{shard[0]}-of-{count}") + ".npz"
    return cached(p.store, key, lambda: certify(
        model, p.x[start:stop], sigma=sigma, n0=c.n0, n=c.n, alpha=c.alpha, batch_size=c.batch_size, seed=p.seed,
        return_scores=True, progress=p.progress, stream=c.noise_stream,
        first_index=start if c.noise_stream == "per_input" else 0), CERTIFICATE)


def run_shard(models: Models, data: Data, config: Config, index: int, count: int, *, store: Store | None = None,
              progress: bool = True) -> None:
    """Certify shard ``index`` of ``count`` of the test inputs at every σ into ``store`` (a task of its own on
    another worker); :func:`certcal.experiment.run` with the same store then merges the shards."""
    p = prepare(models, data, config, store, progress)
    if count != shard_count(config) or not 0 <= index < count:
        raise ValueError(f"shard {index} of {count} does not fit certify.shards = {config.certify.shards}")
    for sigma in config.smoothing.sigmas:
        certificate(p, smoothing_model(p, sigma), float(sigma), (index, count))


def ace_results(p: Prepared) -> ACEBenchmark:
    """Every β-ACE configuration under every norm on the base model (Table 1's layout), each attack's
    per-input outcome checkpointed."""
    a, cal = p.cfg.ace, p.cfg.calibration
    yt = torch.as_tensor(p.y)
    fp = fingerprint(p.models.base, p.x, yt)
    results = []
    for norm, eps in a.budgets().items():
        for name in a.configurations:
            key = f"ace-{name}-{norm}-{config_hash(eps, a.steps)}-{fp}.npz"
            arrays = cached(p.store, key, lambda name=name, norm=norm, eps=eps: BetaACE.from_configuration(
                name, norm=norm, steps=a.steps)(p.models.base, p.x, yt, float(eps)).to_arrays(), NUMPY)
            results.append((name, float(eps), ACEResult.from_arrays(arrays)))
    return ACEBenchmark.from_results(results, steps=a.steps, n_bins=cal.n_bins, n_boot=cal.n_boot, seed=p.seed)


def act_start(p: Prepared, smoothing: dict[float, torch.nn.Module]) -> torch.nn.Module:
    """The model ACT fine-tunes: the σ noise model, or that model fine-tuned with SmoothAdv first."""
    act = p.cfg.act
    start = smoothing.get(float(act.sigma))
    if start is None:
        start = smoothing_model(p, act.sigma)
    if act.start == "noise":
        return start
    xa, ya = act_train(p)
    # the key hashes exactly the settings the start's training takes (not the comparison's methods or grid)
    settings = {"sigma": act.sigma, "eps": act.eps, "epochs": act.start_epochs, "batch_size": act.batch_size,
                "num_noise": act.num_noise, "attack_steps": act.attack_steps,
                "attack_step_factor": act.attack_step_factor, "lr": act.lr, "warmup_epochs": act.warmup_epochs,
                "optimizer": act.optimizer, "momentum": act.momentum}
    key = (f"act-start-smoothadv-{config_hash(settings, p.seed)}-"
           f"{fingerprint(start, xa, torch.as_tensor(ya))}.pt")
    return fine_tuned(p.store, key, lambda: adversarial_calibration_training(
        start, xa, ya, method="smoothadv", seed=p.seed, progress=p.progress, **settings).model, start)


def act_train(p: Prepared) -> tuple[torch.Tensor, np.ndarray]:
    assert p.xtr is not None and p.ytr is not None
    k = p.cfg.act.train_samples
    return (p.xtr, p.ytr) if not k else (p.xtr[:k], p.ytr[:k])


def act(p: Prepared, smoothing: dict[float, torch.nn.Module]) -> ACTComparison:
    """The ACT comparison (Table 2 / 7 layout) with the paper's selection rule, checkpointed in the store."""
    a, cal, c = p.cfg.act, p.cfg.calibration, p.cfg.certify
    start = act_start(p, smoothing)
    xa, ya = act_train(p)
    ka = a.test_samples or int(p.x.shape[0])
    # ACT may certify more test images than the σ sweep (paper App. J.1: 500): the first ka of the test split
    x_te, y_te = (p.x[:ka], p.y[:ka]) if ka <= p.x.shape[0] else check_split("data.test", p.data.test, ka)
    grid: dict[str, list[float]] = {"lr": list(a.lr_grid or (a.lr,))}
    if a.step_factor_grid:
        grid["attack_step_factor"] = list(a.step_factor_grid)
    n_points = len(grid["lr"]) * len(grid.get("attack_step_factor", [1]))
    bar = _Progress(p.progress, sum(1 if m == "none" else n_points for m in a.methods) * max(1, len(a.seeds)))
    try:
        settings = ACTComparisonConfig(
            methods=a.methods, seeds=a.seeds or (p.seed,), sigma=a.sigma, eps=a.eps, radii=cal.radii,
            epochs=a.epochs, batch_size=a.batch_size, num_noise=a.num_noise, attack_steps=a.attack_steps,
            attack_step_factor=a.attack_step_factor, lr=a.lr, grid=grid, optimizer=a.optimizer, momentum=a.momentum,
            paired_baseline="smoothadv" if a.paired else None,
            selection_margin=a.selection_margin, n0=c.n0, n=c.n, alpha=c.alpha, certify_batch_size=c.batch_size,
            n_bins=cal.n_bins, bound=cal.bound, n_boot=cal.n_boot, warmup_epochs=a.warmup_epochs,
            admm=ADMMConfig(lr_a=a.admm_lr_a))
        return act_comparison(start, xa, ya, x_te, y_te, config=settings, store=p.store, progress=bar)
    finally:
        bar.close()


class _Progress:
    """A tqdm bar over ACT's fine-tunes (disabled unless ``progress``), as act_comparison's callback."""

    def __init__(self, enabled: bool, total: int) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc="certcal ACT", unit="model", disable=not enabled, leave=False)

    def __call__(self, message: str) -> None:
        self.bar.set_postfix_str(message, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


@dataclass
class Computed:
    """Everything :func:`certcal.experiment.run` computed, before it becomes tables, metrics and records."""

    prepared: Prepared
    certificates: dict[float, CertifyResult]
    curves: dict[float, Any]
    fixed: dict[float, Any]
    widths: dict[float, Any]
    ace: ACEBenchmark
    calibration: Any
    act: ACTComparison | None
    given_noise: dict[float, bool]


def compute(models: Any, data: Any, config: Any, *, store: Store | None = None, progress: bool = True,
            step: Callable[[str], None] | None = None) -> Computed:
    p = prepare(models, data, config, store, progress)
    cal = p.cfg.calibration
    certs, curves, fixed, widths, smoothing = {}, {}, {}, {}, {}
    for sigma in (float(s) for s in p.cfg.smoothing.sigmas):
        model = smoothing_model(p, sigma)
        smoothing[sigma] = model
        cert = certificate(p, model, sigma)
        certs[sigma] = cert
        curves[sigma] = certified_calibration_curve(
            cert, p.y, radii=cal.radii, bound=cal.bound, methods=("exact", "admm", "brier"), n_bins=cal.n_bins,
            admm=p.cfg.acce.solver(), n_boot=cal.n_boot, seed=p.seed)
        # CBS/CCE on one fixed input set (certified at the largest radius): non-decreasing in r exactly
        if cert.certified_at(max(cal.radii)).any():
            fixed[sigma] = common_set_curve(cert, p.y, radii=cal.radii, bound=cal.bound, n_bins=cal.n_bins,
                                            n_boot=cal.n_boot, seed=p.seed)
        # Kumar et al.'s two confidence certificates on the same samples (paper App. C: CDF is tighter)
        w = certificate_widths(cert, radii=cal.radii, alpha=p.cfg.certify.alpha)
        if w is not None:
            widths[sigma] = w
    ace = ace_results(p)
    first = ace.results[0]
    calib = calibration_error(first.clean_confidence, first.correct, n_bins=cal.n_bins, seed=p.seed, n_boot=cal.n_boot)
    comp = act(p, smoothing) if p.cfg.act.enabled else None
    return Computed(p, certs, curves, fixed, widths, ace, calib, comp,
                    {float(s): p.models.smoothing(s) is not None for s in p.cfg.smoothing.sigmas})


def run(models: Models, data: Data, config: Config, *, store: Store | None = None, progress: bool = True) -> Result:
    """The paper's protocol on ``models`` and ``data`` with ``config`` (see :mod:`certcal.experiment`); every argument
    is checked before any work (``TypeError`` / ``ValueError`` naming it). ``store``: a checkpoint store
    (``robustsuite_common.experiment.DirStore(path)``, ``MemoryStore()``) to resume from; ``progress``: tqdm
    bars. The models come back unchanged. With ``audit.only`` (the ``audit`` preset) only the audit's check runs
    (:func:`certcal.experiment.audit.audit_result`)."""
    if isinstance(config, Config) and config.audit.only:
        from .audit import audit_result

        return audit_result(models, data, config)
    from .result import build

    return build(compute(models, data, config, store=store, progress=progress))
