"""What the overview measures, and :func:`run`: the model's confidences on the split, their calibration, and (for
an adversarially trained vision model) standard AutoAttack in checkpointed batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from robustsuite_common.checks import check_images, check_labels
from robustsuite_common.config import config_hash
from robustsuite_common.contract import renamed
from robustsuite_common.experiment import JSON, Store, cached

from ..metrics import CalibrationError, adaptive_calibration_error, calibration_error
from .config import Config
from .inputs import Data, Models

if TYPE_CHECKING:
    from .result import Result

__all__ = ["Attacked", "Measured", "measure", "robust_accuracy", "run"]


@dataclass(frozen=True)
class Attacked:
    """AutoAttack's outcome on the first ``n`` images: per-image ``robust`` and ``clean`` (correct before the
    attack) flags, the budget ``eps`` and what ran (``attack``, e.g. ``"pyautoattack 0.2.0 standard, Linf eps=0.1,
    seed 0"``)."""

    eps: float
    n: int
    robust: list[bool]
    clean: list[bool]
    attack: str
    outcome: Any = None  # robustsuite_common.indicators.AutoAttackOutcome
    probes: Any = None  # robustsuite_common.indicators.Probes (None: config.indicators off)


@dataclass(frozen=True)
class Measured:
    """The overview's numbers before they become a result: top-class ``confidence``, ``prediction`` and ``labels``
    per input, the model's number of classes, the calibration of the confidences, AutoAttack's outcome (``None``
    where it did not run) with the ``reason`` it did not (empty: not asked for) and ``warnings``."""

    config: Config
    models: Models
    data: Data
    confidence: np.ndarray
    prediction: np.ndarray
    labels: np.ndarray
    n_classes: int
    calibration: CalibrationError
    adaptive_ece: float
    attacked: Attacked | None
    reason: str
    warnings: tuple[str, ...]

    @property
    def correct(self) -> np.ndarray:
        return self.prediction == self.labels


def _budget(models: Models, config: Config) -> float | None:
    """The ε AutoAttack runs at (``None``: not asked for); ``ValueError`` for ``always`` without one."""
    if config.robust_accuracy == "never":
        return None
    eps = float(config.eps) or models.adversarial_eps
    if eps is not None and config.norm == "Linf" and eps > 1:
        raise ValueError(f"config.eps must be <= 1 for the L∞ norm on inputs in [0, 1], got {eps}")
    if eps is None and config.robust_accuracy == "always":
        raise ValueError(f"robust_accuracy = 'always' needs config.eps > 0 for {models.name} (models.adversarial_eps "
                         "is None: not an adversarially trained model)")
    return eps


def check(models: Any, data: Any, config: Any, store: Any) -> np.ndarray:
    """Every argument, before any work; returns the labels as int64."""
    if not isinstance(config, Config):
        raise TypeError("config must be a certcal.overview.Config (e.g. overview.preset('demo')), got "
                        f"{type(config).__name__}")
    if not isinstance(models, Models):
        raise TypeError(f"models must be a certcal.overview.Models, got {type(models).__name__}")
    if not isinstance(data, Data):
        raise TypeError(f"data must be a certcal.overview.Data, got {type(data).__name__}")
    if store is not None and not (callable(getattr(store, "get", None)) and callable(getattr(store, "put", None))):
        raise TypeError(f"store must have get(key) and put(key, bytes) (a robustsuite_common Store), got "
                        f"{type(store).__name__}")
    split = data.split
    if len(split) == 0:
        raise ValueError(f"data.split.x is empty (the {config.split} split of {data.name}); choose another split")
    if models.vision:
        check_images("data.split.x", split.x)  # a float (N, C, H, W) tensor in [0, 1]
    _budget(models, config)
    return check_labels("data.split.y", split.y, length=len(split))


def _probabilities(models: Models, x: Any) -> np.ndarray:
    """Softmax probabilities (N, K) in float64, through log-softmax (no overflow for any logit scale)."""
    from robustsuite_common.models import forward_logits

    if models.vision:
        logits = forward_logits(models.model, x, batch_size=256, dtype=torch.float64).cpu()
    else:
        logits = torch.as_tensor(np.asarray(models.model(list(x)), dtype=np.float64))
    return torch.log_softmax(logits, dim=-1).exp().numpy()


def untargeted_attacks(n_classes: int) -> list[str]:
    """AutoAttack's attacks for a model with fewer than 4 classes (its targeted attacks need 4): APGD-CE, APGD-DLR
    where defined (3 classes or more) and Square."""
    return ["apgd-ce", *(["apgd-dlr"] if n_classes >= 3 else []), "square"]


@renamed(batch="batch_size")
def robust_accuracy(model: torch.nn.Module, x: torch.Tensor, y: Any, *, eps: float, n: int, batch_size: int,
                    version: str, seed: int, norm: str = "Linf", attacks: list[str] | None = None,
                    store: Store | None = None, progress: bool = False) -> dict:
    """AutoAttack on the first ``n`` images in batches of ``batch_size`` (each a checkpoint in ``store``): ``{"robust":
    [...], "clean": [...], "reported": [...], "robust_after": {attack: count}, "flags": [...], "attack": str}``;
    batch ``i`` is ``autoattack(model, x[i:j], y[i:j], eps=eps, norm=norm, version=version, seed=seed)``
    (``version="custom"`` with ``attacks``)."""
    from tqdm.auto import tqdm

    from robustsuite_common.autoattack import autoattack

    out: dict = {"robust": [], "clean": [], "reported": [], "robust_after": {}, "flags": [], "attack": ""}
    for start in tqdm(range(0, n, batch_size), desc="AutoAttack", unit="batch", disable=not progress, leave=False):
        stop = min(start + batch_size, n)

        def compute(start=start, stop=stop) -> dict:
            r = autoattack(model, x[start:stop], y[start:stop], eps=eps, norm=norm, version=version, seed=seed,
                           attacks=attacks, batch_size=stop - start)
            reported = None if r.reported_robust is None else r.reported_robust.tolist()
            return {"robust": r.robust.tolist(), "clean": r.clean_correct.tolist(), "attack": r.attack,
                    "reported": reported, "robust_after": r.robust_after, "flags": list(r.flags)}

        key = config_hash(eps, version, seed, start, stop, norm, attacks)
        part = cached(store, f"autoattack-v2-{key}", compute, JSON)
        for k in ("robust", "clean"):
            out[k] += part[k]
        out["reported"] = None if out["reported"] is None or part["reported"] is None else \
            out["reported"] + part["reported"]
        last = 0
        for attack, count in part["robust_after"].items():  # AutoAttack stops early when no point is left
            out["robust_after"][attack] = out["robust_after"].get(attack, 0) + count
            last = count
        for attack in set(out["robust_after"]) - set(part["robust_after"]):
            out["robust_after"][attack] += last
        out["flags"] += [f for f in part["flags"] if f not in out["flags"]]
        out["attack"] = part["attack"]
    return out


def _probes(models: Models, data: Data, config: Config, eps: float, m: int, store: Store | None, progress: bool):
    """The indicators' probes on the attacked points (one checkpoint in ``store``)."""
    from robustsuite_common.indicators import Probes, probe

    def compute() -> dict:
        return probe(models.model, data.split.x[:m], data.split.y[:m], eps=eps, norm=config.norm,
                     n_iter=config.indicator_iterations, seed=int(config.resample_seed),
                     batch_size=config.autoattack_batch).to_dict()

    key = config_hash(eps, config.norm, config.indicator_iterations, config.resample_seed, m)
    return Probes.from_dict(cached(store, f"indicators-{key}", compute, JSON))


def _attackable(models: Models, config: Config, n_classes: int) -> str:
    """Why AutoAttack cannot run on this model (empty: it can)."""
    if not models.vision:
        return f"robust accuracy not computed: AutoAttack attacks images, {models.name} is not a vision model"
    if n_classes < 2:
        return f"robust accuracy not computed: the model has {n_classes} output (a classifier needs 2 or more)"
    return ""


def measure(models: Any, data: Any, config: Any, *, store: Store | None, progress: bool) -> Measured:
    """The arguments checked, then the model's confidences on ``data.split``, their calibration and, where asked
    for and possible, AutoAttack (each batch a checkpoint in ``store``)."""
    y = check(models, data, config, store)
    probs = _probabilities(models, data.split.x)
    n_classes = int(probs.shape[1])
    if y.max() >= n_classes:
        raise ValueError(f"data.split.y must be class indices < the model's {n_classes} classes, got {int(y.max())}")
    conf, pred = probs.max(1), probs.argmax(1)
    correct = pred == y
    seed = int(config.resample_seed)
    cal = calibration_error(conf, correct, n_bins=config.n_bins, seed=seed, n_boot=config.n_boot)
    ada = adaptive_calibration_error(conf, correct, n_bins=config.n_bins)

    eps, reason, warnings, attacked = _budget(models, config), "", [], None
    if config.robust_accuracy == "never":
        reason = "robust accuracy not asked for (robust_accuracy = 'never')"
    elif eps is not None:
        reason = _attackable(models, config, n_classes)
    if eps is not None and not reason:
        try:
            from robustsuite_common.autoattack import autoattack_version

            autoattack_version()
        except ImportError as err:  # the result says what is missing instead of failing
            warnings.append(f"robust accuracy of this adversarially trained model not computed: {err}")
        else:
            from robustsuite_common.indicators import AutoAttackOutcome

            n = len(y)
            m = min(config.autoattack_n or n, n)
            version, attacks = config.autoattack_version, None
            if n_classes < 4 and version in ("standard", "plus"):  # its targeted attacks need 4 classes
                version, attacks = "custom", untargeted_attacks(n_classes)
                warnings.append(f"{n_classes} classes: AutoAttack's targeted attacks need 4, so its untargeted "
                                f"attacks ran ({', '.join(attacks)}), not the {config.autoattack_version} version")
            res = robust_accuracy(models.model, data.split.x, data.split.y, eps=eps, n=m,
                                  batch_size=config.autoattack_batch, version=version, seed=seed, norm=config.norm,
                                  attacks=attacks, store=store, progress=progress)
            outcome = AutoAttackOutcome([bool(v) for v in res["robust"]], [bool(v) for v in res["clean"]],
                                        res["attack"], version, res["robust_after"], tuple(res["flags"]),
                                        None if res["reported"] is None else [bool(v) for v in res["reported"]])
            probes = _probes(models, data, config, eps, m, store, progress) if config.indicators else None
            attacked = Attacked(eps, m, list(outcome.robust), list(outcome.clean), res["attack"], outcome, probes)
    return Measured(config, models, data, conf, pred, y, n_classes, cal, ada, attacked, reason, tuple(warnings))


def run(models: Models, data: Data, config: Config, *, store: Store | None = None, progress: bool = True) -> Result:
    """The overview of ``models.model`` on ``data.split`` with ``config`` (see :mod:`certcal.overview`); every
    argument is checked before any work (``TypeError`` / ``ValueError`` naming it). ``store``: a checkpoint store
    (``robustsuite_common.experiment.DirStore(path)``, ``MemoryStore()``) for AutoAttack's batches; ``progress``:
    a tqdm bar over them. The model comes back unchanged."""
    from .result import build

    return build(measure(models, data, config, store=store, progress=progress))
