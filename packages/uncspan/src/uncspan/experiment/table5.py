"""Table V of the experiment: open-set and OOD detection by entropy, the outliers under the over-confidence attack.
Its inputs (the in-distribution split, the outlier sets, the known classes and the models restricted to them), its
checkpointed attacks, its table, metrics, records and summary sentences."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_labels
from robustsuite_common.config import to_dict
from robustsuite_common.experiment import Metric, Split, Table

from .._model import n_classes, using
from ..ood import KnownClassesModel, OODUnderAttack, match_images
from . import records
from .checkpointed import RunState, fingerprint, interval
from .inputs import labels
from .result import slug

__all__ = ["Table5Inputs", "table5_splits", "table5_models", "table5"]


@dataclass
class Table5Inputs:
    """Table V's in-distribution split (``None``: Table V is skipped), its outlier sets by kind (``open_set``,
    ``ood``), the known class names and indices (in the OSR models' output space) and the models to evaluate."""

    inliers: Split | None = None
    outliers: dict[str, Split] = field(default_factory=dict)
    known_names: list[str] | None = None
    known: tuple[int, ...] = ()
    models: dict[str, nn.Module] = field(default_factory=dict)


def table5_splits(run: RunState) -> Table5Inputs:
    """Table V's splits from ``data`` and ``ood.open_set_classes`` (its models come from :func:`table5_models`)."""
    data, o = run.data, run.cfg.ood
    if data.osr is None or not run.models.osr:
        if run.models.osr:
            run.notes.append("Table V skipped: models.osr were given without data.osr.")
        return Table5Inputs()
    osr = data.osr
    y = labels(osr)
    present = sorted({int(v) for v in y.tolist()})
    names = list(osr.label_names) if osr.label_names is not None else None
    outliers: dict[str, Split] = {}
    if o.open_set_classes:
        if data.open_set is not None:
            raise ValueError("data.open_set and ood.open_set_classes are both given: pass one way to choose the open set")
        if not set(o.open_set_classes) <= set(present):
            raise ValueError(f"ood.open_set_classes must be labels of data.osr {present}, got {list(o.open_set_classes)}")
        held = np.isin(y.numpy(), o.open_set_classes)
        known = tuple(c for c in range(max(present) + 1) if c not in o.open_set_classes)
        if len(known) < 2:
            raise ValueError("ood.open_set_classes must leave at least two known classes")
        remap = np.full(max(present) + 1, -1)
        remap[list(known)] = np.arange(len(known))
        inl = osr.select(np.flatnonzero(~held))
        inl = Split(inl.x, torch.as_tensor(remap[labels(inl).numpy()]), inl.ids,
                    None if names is None else tuple(names[c] for c in known))
        outliers["open_set"] = osr.select(np.flatnonzero(held)).head(o.n_outliers)
        names = None if names is None else [names[c] for c in known]
    else:
        inl = osr
        known = tuple(range(len(names) if names is not None else max(present) + 1))
        if data.open_set is not None:
            outliers["open_set"] = data.open_set.head(o.n_outliers)
    inl = inl.head(o.n_in)
    if data.ood is not None:
        ood = data.ood.head(o.n_outliers)
        if tuple(ood.x.shape[1:]) != tuple(inl.x.shape[1:]):
            run.notes.append(f"OOD images {tuple(ood.x.shape[1:])} were resized to the in-distribution shape "
                             f"{tuple(inl.x.shape[1:])} (uncspan.match_images).")
            ood = Split(match_images(ood.x, inl.x), ood.y, ood.ids, ood.label_names)
        outliers["ood"] = ood
    return Table5Inputs(inl, outliers, names, known)


def table5_models(run: RunState, t5: Table5Inputs) -> None:
    """Table V's models into ``t5.models``, each checked against the known classes with one forward pass (a model
    with more outputs is restricted to the known classes, with a note), before any attack."""
    if t5.inliers is None:
        return
    known = t5.known
    for name, m in run.models.osr.items():
        with using(m) as net:
            k = n_classes(net, t5.inliers.x)
        if k == len(known) and known == tuple(range(k)):
            t5.models[name] = m
        elif k > max(known):
            t5.models[name] = KnownClassesModel(m, list(known))
            run.notes.append(f"Open-set/OOD rows of {name} use it restricted to the known classes {list(known)} "
                             "(softmax over them): the model saw the open-set classes in training, so this is weaker "
                             "than the paper's setting, where the open-set classes are never trained on.")
        else:
            raise ValueError(f"models.osr[{name!r}] has {k} outputs but data.osr has the known classes {list(known)}")
        check_labels("data.osr.y", labels(t5.inliers), n_classes=len(known))


def table5(run: RunState, t5: Table5Inputs) -> list[str]:
    """Table V's table ``ood_osr``, its metrics and records; returns its sentences of the summary."""
    ood_rows: list[tuple] = []
    summary: list[str] = []
    if t5.inliers is not None:
        cfg, xin = run.cfg, t5.inliers.x
        what = {"attack": run.attack_key, "ood": to_dict(cfg.ood), "auroc_n_boot": cfg.metrics.auroc_n_boot,
                "data": fingerprint(xin, labels(t5.inliers))}
        for name, m in t5.models.items():
            declared = run.models.adversarially_trained.get(name)
            if declared is not None:
                run.metrics[f"{slug(name)}_osr_adversarially_trained"] = Metric(
                    declared, f"{name} (a Table V model) was adversarially trained, as declared", "")
            for kind, out in t5.outliers.items():
                res = run.ood(name, m, xin, out.x, kind, what)
                ood_rows += [(name, kind, *row) for row in res.table()]
                _table5_metrics(run, name, kind, res, summary)
                run.records[f"ood-{slug(name)}-{kind}"] = records.ood_records(t5.inliers, out, kind, res,
                                                                              t5.known_names)
    run.tables["ood_osr"] = Table(
        "ood_osr", "Open-set and OOD detection by entropy, outliers under the over-confidence attack (Table V)",
        ("model", "outliers", *OODUnderAttack.COLUMNS), tuple(ood_rows), bounds={"auroc": (0.0, 1.0)})
    return summary


def _table5_metrics(r: RunState, name: str, kind: str, res: OODUnderAttack, summary: list[str]) -> None:
    metrics = r.metrics
    base = f"{slug(name)}_{kind}"
    first, last = res.rows[0], res.rows[-1]
    for tag, row in (("clean", first), ("max_eps", last)):
        iv = interval(row.metrics.auroc, row.auroc_ci_low, row.auroc_ci_high, "stratified bootstrap", (0.0, 1.0))
        metrics[f"{base}_auroc_{tag}"] = Metric.of(iv, f"AUROC of {name} against {kind} outliers at eps={row.eps:g}",
                                                   "")
    if res.auroc_change is not None:
        metrics[f"{base}_auroc_change"] = Metric.of(res.auroc_change, f"AUROC change of {name} against {kind} "
                                                    f"outliers, eps={last.eps:g} minus eps={first.eps:g} (paired)", "")
    metrics[f"{base}_auroc_falls"] = Metric(res.auroc_falls, f"the attack lowers {name}'s {kind} AUROC (paired "
                                            "interval below 0)", "")
    at_chance = bool(first.auroc_ci_low <= 0.5 <= first.auroc_ci_high) and first.eps == 0
    metrics[f"{base}_auroc_at_chance"] = Metric(at_chance, f"{name}'s clean {kind} AUROC interval contains 0.5", "")
    if at_chance:
        r.warnings.append(f"Entropy does not separate {kind} outliers for {name} on clean inputs: AUROC "
                          f"{first.metrics.auroc:.3f} [{first.auroc_ci_low:.3f}, {first.auroc_ci_high:.3f}] contains "
                          "0.5, so its fall under attack carries no information.")
    if not res.auroc_falls:
        r.notes.append(f"{name} {kind}: the AUROC change at eps={last.eps:g} is not clearly below 0.")
    summary.append(f" {base}: AUROC {first.metrics.auroc:.3f} clean → {last.metrics.auroc:.3f} under attack"
                   + (" (paired change below 0)." if res.auroc_falls else " (change not resolved)."))
