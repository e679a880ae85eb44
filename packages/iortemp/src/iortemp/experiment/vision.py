"""The vision part: L∞ PGD under the adversary's temperatures on the served vision systems (a T_d = 0.005
wrapper saturates the float32 softmax and zeroes PGD's gradient: the image analogue of the IOR), and standard
AutoAttack on the same points, whose targeted DLR loss no temperature masks (issue 27)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robustsuite_common.experiment import JSON, cached
from robustsuite_common.intervals import paired_difference

from ..attacks import AutoAttackLinf, PGDLinf
from ..illusion import illusion_table
from ..temperature import logits64, served_systems
from ._store import Evaluations, fingerprint, key
from .config import Config

__all__ = ["VisionOutcome", "run_vision"]


@dataclass
class VisionOutcome:
    systems: dict[str, float | None]
    pgd_name: str
    rows: list[dict]
    seeds: list[int]
    n: int
    autoattack_name: str | None = None
    autoattack: dict[str, dict] = field(default_factory=dict)  # system -> evaluation (correct_adversarial = robust)
    gap: dict[str, dict] = field(default_factory=dict)  # system -> paired interval of PGD-robust minus AA-robust
    notes: list[str] = field(default_factory=list)


def _labels(y) -> np.ndarray:
    return np.asarray(y.detach().cpu() if hasattr(y, "detach") else y, dtype=np.int64)


def run_vision(net, data, cfg: Config, store, progress: bool) -> VisionOutcome:
    v = cfg.vision
    n = min(v.n, len(data.vision_test))
    nv = min(v.n, len(data.vision_val))
    x, y = data.vision_test.x[:n], _labels(data.vision_test.y)[:n]
    xv, yv = data.vision_val.x[:nv], _labels(data.vision_val.y)[:nv]
    seeds = [cfg.seed + s for s in v.seeds]
    pgd = PGDLinf(eps=v.eps, steps=v.steps, random_start=v.random_start)
    dt = cfg.systems.design_temperatures
    systems = served_systems(net, design_temperatures={"down_conf": dt.down_conf, "up_conf": dt.up_conf})
    temps = {"base": None, "down_conf": dt.down_conf, "up_conf": dt.up_conf}
    fp = fingerprint(np.concatenate([logits64(net, xv), logits64(net, x)]), xv, yv, x, y)
    aa = AutoAttackLinf(eps=v.eps, version=v.autoattack.version) if v.autoattack.enabled else None
    ids = {id(pgd): f"pgd:{v.eps}:{v.steps}:{v.random_start}"}
    if aa is not None:
        ids[id(aa)] = f"autoattack:{v.eps}:{v.autoattack.version}"
    evals = Evaluations(store, [fp, cfg.systems.calibration], ids)
    s = cfg.systems.search
    search = {"xatol": s.xatol, "flat_patience": s.flat_patience, "stall_patience": s.stall_patience,
              "log10_bounds": tuple(s.log10_bounds)}
    rows: list[dict] = []
    for name, model in systems.items():
        def table(name=name, model=model) -> list[dict]:
            return illusion_table({name: model}, {"pgd": pgd}, x, y, val_inputs=xv, val_labels=yv, opt_attack="pgd",
                                  calibration=cfg.systems.calibration, modes=("plain", "cal", "opt"),
                                  max_evaluations=s.max_evaluations, search=search, seeds=seeds, keep_samples=True,
                                  progress=progress, evaluate=evals.evaluator(name)).to_dict()["rows"]

        rows += cached(store, key("vision_table", fp, name, temps[name], ids[id(pgd)], cfg.systems, seeds), table,
                       JSON)
    out = VisionOutcome(temps, pgd.name, rows, seeds, n)
    if aa is None:
        return out
    k = logits64(net, x[:1]).shape[1]
    if k < 4 and v.autoattack.version == "standard":
        out.notes.append(f"AutoAttack not run: the vision model has {k} classes, standard AutoAttack's targeted "
                         "attacks need at least 4")
        return out
    try:
        from robustsuite_common.autoattack import autoattack_version

        version = autoattack_version()
    except ImportError as err:
        out.notes.append(f"AutoAttack not run: {err}")
        return out
    out.autoattack_name = f"{aa.name}, {version}, seed {seeds[0]}"
    for name, model in systems.items():
        ev = evals.evaluator(name)(model, x, y, aa, seed=seeds[0], progress=progress)
        out.autoattack[name] = ev.to_dict()
        plain = next(r for r in rows if r["system"] == name and r["mode"] == "plain")
        pgd_robust = np.mean(np.asarray(plain["adversarial_correct"]["pgd"], dtype=float), axis=0)
        diff = paired_difference(pgd_robust, np.asarray(ev.correct_adversarial, dtype=float), seed=cfg.seed,
                                 bounds=(-1.0, 1.0))
        out.gap[name] = diff.to_dict()
    return out
