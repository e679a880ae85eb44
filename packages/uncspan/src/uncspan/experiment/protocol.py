"""The paper's protocol: :func:`run` (Table IV with robust accuracy by standard AutoAttack, the entropy widening,
adversarial training's effect on MUS, Tables II–III's s-ECE, the ε-sweep and Table V), checkpointing every
model's attack outcomes in a :class:`~robustsuite_common.experiment.Store`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_bool, check_labels
from robustsuite_common.config import config_hash, to_dict
from robustsuite_common.experiment import (
    JSON,
    Metric,
    Split,
    Store,
    Table,
    cached,
    chance_rate,
    ci_of,
    headline,
)
from robustsuite_common.intervals import Interval, proportion

from .._model import n_classes, using
from ..analysis import adversarial_training_effect, entropy_widening, span_signed_ece
from ..leaderboard import Leaderboard, leaderboard_row
from ..ood import KnownClassesModel, OODUnderAttack, match_images, ood_under_attack
from ..robust import AutoAttack, RobustOutcome, robust_accuracy
from ..span import UncertaintySpan, uncertainty_span
from ..sweep import EpsSweepRow, sweep_from_spans
from . import records
from .config import Config
from .effects import paper_effects
from .inputs import Data, Models, labels
from .reference import paper_row
from .result import Result, slug

__all__ = ["run"]

MUS_UNIT = "nats"


def _fingerprint(*tensors: Any) -> str:
    """A content hash of tensors (data or a model's state): part of every checkpoint key, so a store never hands
    back work done on other inputs."""
    h = hashlib.sha256()
    for t in tensors:
        t = torch.as_tensor(t).detach().cpu().contiguous()
        h.update(f"{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.float().numpy().tobytes())
    return h.hexdigest()[:16]


def _model_fingerprint(model: nn.Module) -> str:
    state = model.state_dict()
    return _fingerprint(*(state[k] for k in sorted(state)), torch.tensor([len(state)]))


def _iv(est: float, lo: float, hi: float, method: str, bounds: tuple) -> Interval:
    return Interval(est, lo, hi, method=method, bounds=bounds)


class _Run:
    """One call of :func:`run`: the checked inputs, the store, and the checkpointed pieces."""

    def __init__(self, models: Models, data: Data, cfg: Config, store: Store | None, progress: bool) -> None:
        self.models, self.data, self.cfg, self.store, self.progress = models, data, cfg, store, progress
        attack = to_dict(cfg.attack)
        attack.pop("batch_size")
        self.attack_key = attack
        self.fp = {name: _model_fingerprint(m) for name, m in {**models.ranked, **models.osr}.items()}
        self.notes: list[str] = []
        self.warnings: list[str] = []

    def cached(self, kind: str, model: str, parts: dict, compute: Callable[[], dict]) -> dict:
        key = f"{kind}-{slug(model)}-{config_hash(parts | {'model': self.fp[model], 'seed': self.cfg.seed})}"
        return cached(self.store, key, compute, JSON)

    def span(self, name: str, x: torch.Tensor, eps: float, steps: int, restarts: int, what: dict) -> UncertaintySpan:
        a = self.cfg.attack
        d = self.cached("span", name, what | {"eps": eps, "steps": steps, "restarts": restarts}, lambda: uncertainty_span(
            self.models.ranked[name], x, eps=eps, norm=a.norm, steps=steps, seed=self.cfg.seed, optimizer=a.optimizer, restarts=restarts,
            under_objective=list(a.under_objective), batch_size=a.batch_size, progress=self.progress).to_dict())
        return UncertaintySpan.from_dict(d)

    def robust(self, name: str, x: torch.Tensor, y: torch.Tensor, kind: str, what: dict) -> RobustOutcome:
        a, lb = self.cfg.attack, self.cfg.leaderboard
        if kind == "autoattack":
            attack: Any = AutoAttack(lb.autoattack_version, batch_size=lb.autoattack_batch_size)
            parts = what | {"version": lb.autoattack_version, "aa_batch": lb.autoattack_batch_size}
        else:
            attack, parts = "pgd", what | {"pgd_steps": lb.pgd_steps}
        d = self.cached(kind, name, parts | {"eps": a.eps, "norm": a.norm, "optimizer": a.optimizer},
                        lambda: robust_accuracy(self.models.ranked[name], x, y, eps=a.eps, norm=a.norm, attack=attack,
                                                seed=self.cfg.seed, steps=lb.pgd_steps, optimizer=a.optimizer,
                                                batch_size=a.batch_size, progress=self.progress).to_dict())
        return RobustOutcome.from_dict(d)


def _check(models: Any, data: Any, config: Any, store: Any, progress: Any) -> None:
    if not isinstance(config, Config):
        raise TypeError(f"config must be an uncspan.experiment.Config (e.g. preset('demo')), got {type(config).__name__}")
    if not isinstance(models, Models):
        raise TypeError(f"models must be an uncspan.experiment.Models, got {type(models).__name__}")
    if not isinstance(data, Data):
        raise TypeError(f"data must be an uncspan.experiment.Data, got {type(data).__name__}")
    models.check()
    data.check()
    if store is not None and not isinstance(store, Store):
        raise TypeError(f"store must provide get(key) and put(key, bytes) (a robustsuite_common Store), got "
                        f"{type(store).__name__}")
    check_bool("progress", progress)


def _table5_inputs(run: _Run) -> tuple[Split | None, dict[str, Split], list[str] | None, tuple[int, ...]]:
    """Table V's in-distribution split, its outlier sets, the known class names and the known class indices (in the
    OSR models' output space), from ``data`` and ``ood.open_set_classes``."""
    data, o = run.data, run.cfg.ood
    if data.osr is None or not run.models.osr:
        if run.models.osr:
            run.notes.append("Table V skipped: models.osr were given without data.osr.")
        return None, {}, None, ()
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
    return inl, outliers, names, known


def run(models: Models, data: Data, config: Config, *, store: Store | None = None, progress: bool = True) -> Result:
    """The uncertainty-span experiment (paper 001) on ``models`` and ``data`` with ``config``.

    Table IV: every ranked model on the first ``leaderboard.n`` test points: the uncertainty span (over- and
    under-confidence attacks), clean accuracy, robust accuracy by standard AutoAttack (seeded; this package's PGD
    beside it with the paired difference), MUS / MSUS, sorted by MUS; the entropy widening of each attack and the
    paired MUS difference of every declared adversarially trained model against every declared standard one;
    s-ECE under / clean / over (Tables II–III); the ε-sweep; Table V for the OSR models. Every model's attack
    outcomes are checkpointed in ``store`` under keys that hash the settings they depend on, the model's weights and
    the data, so an interrupted run resumes; with ``store=None`` nothing is written. Models come back untouched.
    Inputs are checked (types, shapes, value range, labels against each model's classes) before any attack."""
    _check(models, data, config, store, progress)
    if config.audit.only:
        from .audit import audit_result

        return audit_result(models, data, config)
    cfg, a, lb, mt = config, config.attack, config.leaderboard, config.metrics
    r = _Run(models, data, cfg, store, progress)
    test = data.test.head(lb.n)
    x, y = test.x, labels(test)
    sweep_split = data.test.head(cfg.sweep.n) if cfg.sweep.eps else None
    osr_in, outliers, known_names, known = _table5_inputs(r)
    # labels against every model's classes (one forward pass each), before any attack
    osr_models: dict[str, nn.Module] = {}
    for m in models.ranked.values():
        with using(m) as net:
            k = n_classes(net, x)
        check_labels("data.test.y", labels(sweep_split) if sweep_split is not None and len(sweep_split) > len(test)
                     else y, n_classes=k)
    for name, m in models.osr.items():
        if osr_in is None:
            break
        with using(m) as net:
            k = n_classes(net, osr_in.x)
        if k == len(known) and known == tuple(range(k)):
            osr_models[name] = m
        elif k > max(known):
            osr_models[name] = KnownClassesModel(m, list(known))
            r.notes.append(f"Open-set/OOD rows of {name} use it restricted to the known classes {list(known)} (softmax "
                           "over them): the model saw the open-set classes in training, so this is weaker than the "
                           "paper's setting, where the open-set classes are never trained on.")
        else:
            raise ValueError(f"models.osr[{name!r}] has {k} outputs but data.osr has the known classes {list(known)}")
        check_labels("data.osr.y", labels(osr_in), n_classes=len(known))
    dfp = _fingerprint(x, y)
    what = {"attack": r.attack_key, "n": lb.n, "data": dfp}

    # --- Table IV -------------------------------------------------------------------------------------------
    spans, robust, beside, rows = {}, {}, {}, []
    aa_first = lb.robust_attack == "autoattack"
    for name in models.ranked:
        spans[name] = r.span(name, x, a.eps, a.steps, a.restarts, what)
        robust[name] = r.robust(name, x, y, lb.robust_attack, what)
        if aa_first and lb.pgd_beside:
            beside[name] = r.robust(name, x, y, "pgd", what)
        rows.append(leaderboard_row(name, spans[name], y, robust[name], pgd=beside.get(name),
                                    adversarially_trained=models.adversarially_trained.get(name), seed=cfg.seed,
                                    n_boot=mt.n_boot))
    rows.sort(key=lambda row: row.mus_mean)
    board = Leaderboard(a.eps, a.norm, a.steps, tuple(rows), spans, {}, robust, beside)
    tables, metrics, recs = {}, {}, {}
    attack_name = rows[0].robust_attack.split(",")[0]
    tables["span"] = Table(
        "span", f"Uncertainty span leaderboard (Table IV; {a.norm}, eps={a.eps:g}, {a.steps} steps, objectives "
                f"{'+'.join(a.under_objective)}, {a.restarts} restart(s), {len(y)} test points), sorted by MUS; robust "
                f"accuracy: {attack_name}" + (f", PGD ({lb.pgd_steps} steps) beside it" if beside else ""),
        tuple(board.columns), tuple(tuple(t) for t in board.table()),
        units={"clean_acc": "fraction", "robust_acc": "fraction", "pgd_robust_acc": "fraction",
               "pgd_minus_robust": "fraction", "mus_mean": MUS_UNIT, "mus_std": MUS_UNIT, "msus_mean": "nats²",
               "msus_std": "nats²", "entropy_clean": MUS_UNIT, "entropy_over": MUS_UNIT, "entropy_under": MUS_UNIT},
        bounds={"clean_acc": (0.0, 1.0), "robust_acc": (0.0, 1.0), "pgd_robust_acc": (0.0, 1.0),
                "pgd_minus_robust": (-1.0, 1.0), "mus_mean": (0.0, None)})
    tables["headline"] = headline(
        f"Clean vs robust accuracy ({attack_name}, {a.norm} eps={a.eps:g}, {len(y)} test points)",
        [(r["model"], ci_of(r, "clean_acc"), ci_of(r, "robust_acc"), r["robust_attack"])
         for r in tables["span"].records()])
    chance = chance_rate(y)
    metrics["n_points"] = Metric(len(y), "test points attacked (Table IV)", "points")
    metrics["eps"] = Metric(a.eps, "perturbation budget ε", f"{a.norm}, inputs in [0, 1]")
    metrics["steps"] = Metric(a.steps, "attack steps", "iterations")
    metrics["majority_share"] = Metric(chance, "majority-class share of the test labels (chance accuracy)", "fraction")
    metrics["lowest_mus_model"] = Metric(rows[0].model, "model with the smallest MUS", "")
    widening = {}
    for row in rows:
        s, name = slug(row.model), row.model
        clean = proportion(int(round(row.clean_acc * len(y))), len(y))
        metrics[f"{s}_clean_accuracy"] = Metric.of(clean, f"clean accuracy of {name}", "fraction")
        metrics[f"{s}_robust_accuracy"] = Metric.of(robust[name].interval(), f"robust accuracy of {name} "
                                                    f"({robust[name].attack})", "fraction")
        if name in beside:
            metrics[f"{s}_pgd_robust_accuracy"] = Metric.of(
                beside[name].interval(), f"robust accuracy of {name} under this package's PGD ({lb.pgd_steps} steps)",
                "fraction")
            gap = _iv(row.pgd_minus_robust, row.pgd_minus_robust_ci_low, row.pgd_minus_robust_ci_high,
                      "paired bootstrap BCa", (-1.0, 1.0))
            metrics[f"{s}_pgd_minus_autoattack"] = Metric.of(
                gap, f"PGD minus AutoAttack robust accuracy of {name} (paired, same points)", "fraction")
            if row.pgd_overstates:
                r.warnings.append(f"PGD leaves clearly more points robust than AutoAttack for {name}: robust accuracy "
                                  f"{row.pgd_robust_acc:.3f} under PGD ({lb.pgd_steps} steps) against "
                                  f"{row.robust_acc:.3f} under AutoAttack (paired difference {gap.estimate:+.3f} "
                                  f"[{gap.low:+.3f}, {gap.high:+.3f}]); the table's robust accuracy is AutoAttack's, a "
                                  "PGD number alone would overstate this model's robustness.")
        metrics[f"{s}_mus_mean"] = Metric.of(_iv(row.mus_mean, row.mus_mean_ci_low, row.mus_mean_ci_high,
                                                 f"bootstrap BCa, {mt.n_boot} resamples", (0.0, None)),
                                             f"MUS of {name} (Eq. 12)", MUS_UNIT)
        metrics[f"{s}_msus_mean"] = Metric(row.msus_mean, f"MSUS of {name} (Eq. 13)", "nats²")
        widening[name] = w = entropy_widening(spans[name], seed=cfg.seed, n_boot=mt.n_boot)
        metrics[f"{s}_under_widening"] = Metric.of(w.under.interval, f"mean entropy added by the under-confidence "
                                                   f"attack on {name} (paired)", MUS_UNIT)
        metrics[f"{s}_over_widening"] = Metric.of(w.over.interval, f"mean entropy removed by the over-confidence "
                                                  f"attack on {name} (paired)", MUS_UNIT)
        metrics[f"{s}_at_chance"] = Metric(row.at_chance, f"{name}'s clean accuracy interval reaches the majority "
                                           "share", "")
        if row.at_chance:
            r.warnings.append(f"{name} is at chance: clean accuracy {clean.estimate:.3f} [{clean.low:.3f}, "
                              f"{clean.high:.3f}] on {len(y)} points reaches the majority-class share {chance:.3f}, so "
                              "its span, robust accuracy and s-ECE carry no information about the paper's claims.")
        if not w.both_move:
            r.notes.append(f"For {name} an attack did not move the mean entropy beyond its interval.")
        recs[f"span-{s}"] = records.span_records(test, y.numpy(), board, name)

    # --- adversarial training's effect (Table I's direction): paired MUS difference AT − standard -------------
    effect = adversarial_training_effect(board, seed=cfg.seed, n_boot=mt.n_boot)
    effect_sentences = []
    for c in effect.comparisons:
        d = c.difference
        key = f"mus_diff_{slug(c.adversarially_trained)}_minus_{slug(c.standard)}"
        metrics[key] = Metric.of(d.interval, f"MUS({c.adversarially_trained}) − MUS({c.standard}), paired", MUS_UNIT)
        verdict = {-1: "adversarial training shrinks the span, as the paper reports.",
                   0: "the interval includes 0, so no difference is shown here.",
                   1: "adversarial training widened the span here, unlike the paper."}[d.sign]
        effect_sentences.append(f"MUS({c.adversarially_trained}) − MUS({c.standard}) = {_fmt(d.interval)} nats: "
                                + verdict)
        if c.intervals_overlap:
            r.notes.append(f"The MUS intervals of {c.adversarially_trained} and {c.standard} overlap (the paired "
                           "difference above is the sharper comparison, on the same samples).")
    if effect.shrinks_span is not None:
        metrics["adv_trained_smaller_mus"] = Metric(effect.shrinks_span, "adversarial training shrinks MUS for every "
                                                    "declared pair (paired intervals below 0)", "")

    # --- s-ECE (Tables II–III) -------------------------------------------------------------------------------
    sece = {name: span_signed_ece(sp, y, n_bins=mt.n_bins) for name, sp in spans.items()}
    for name, v in sece.items():
        metrics[f"{slug(name)}_sece_clean"] = Metric(v.clean, f"s-ECE of {name}, clean (Eq. 19, ob − ex)", "")
    tables["signed_ece"] = Table(
        "signed_ece", "Signed ECE (Eq. 19; negative = over-confident): bin-centre and bin-mean variants",
        ("model", "under", "clean", "over", "under_meanconf", "clean_meanconf", "over_meanconf"),
        tuple((name, *v.to_dict().values()) for name, v in sece.items()))

    # --- ε-sweep -------------------------------------------------------------------------------------------
    sweep_rows: list[tuple] = []
    if sweep_split is not None:
        sx, sy = sweep_split.x, labels(sweep_split)
        sw_what = {"attack": r.attack_key, "n": cfg.sweep.n, "data": _fingerprint(sx, sy)}
        for name in models.ranked:
            sw_spans = {e: r.span(name, sx, e, cfg.sweep.steps if e > 0 else 0, a.restarts if e > 0 else 0,
                                  sw_what | {"sweep": True})
                        for e in sorted(set(cfg.sweep.eps))}
            sw = sweep_from_spans(sw_spans, sy, norm=a.norm, steps=cfg.sweep.steps, n_bins=mt.n_bins,
                                  n_boot=mt.n_boot, seed=cfg.seed)
            sweep_rows += [(name, *row.to_dict().values()) for row in sw.rows]
            recs[f"sweep-{slug(name)}"] = records.sweep_records(sweep_split, sy.numpy(), sw_spans)
    tables["eps_sweep"] = Table(
        "eps_sweep", f"MUS, mean entropies and s-ECE as functions of eps ({cfg.sweep.n if sweep_split else 0} test "
                     f"points, {cfg.sweep.steps} steps)",
        ("model", *EpsSweepRow.__dataclass_fields__), tuple(sweep_rows),
        bounds={"mus_mean": (0.0, None)}, units={"mus_mean": MUS_UNIT})

    # --- Table V: open set and OOD under the over-confidence attack ------------------------------------------
    ood_rows: list[tuple] = []
    t5_summary = []
    if osr_in is not None:
        xin = osr_in.x
        t5_what = {"attack": r.attack_key, "ood": to_dict(cfg.ood), "auroc_n_boot": mt.auroc_n_boot,
                   "data": _fingerprint(xin, labels(osr_in))}
        for name, m in osr_models.items():
            for kind, out in outliers.items():
                d = r.cached(f"ood-{kind}", name, t5_what | {"outliers": _fingerprint(out.x)}, lambda m=m, out=out:
                             ood_under_attack(m, xin, out.x, eps=list(cfg.ood.eps), norm=a.norm, steps=a.steps,
                                              seed=cfg.seed, optimizer=a.optimizer, n_boot=mt.auroc_n_boot,
                                              batch_size=a.batch_size, progress=progress).to_dict(per_sample=True))
                res = OODUnderAttack.from_dict(d)
                ood_rows += [(name, kind, *row) for row in res.table()]
                _table5_metrics(r, metrics, name, kind, res, t5_summary)
                recs[f"ood-{slug(name)}-{kind}"] = records.ood_records(osr_in, out, kind, res, known_names)
    tables["ood_osr"] = Table(
        "ood_osr", "Open-set and OOD detection by entropy, outliers under the over-confidence attack (Table V)",
        ("model", "outliers", *OODUnderAttack.COLUMNS), tuple(ood_rows), bounds={"auroc": (0.0, 1.0)})

    # --- the paper's values beside ours, for models the paper evaluated ----------------------------------------
    ref_rows = [(row.model, p["id"], p["mus_mean"], row.mus_mean, p["msus_mean"], row.msus_mean, p["clean_acc"],
                 row.clean_acc, p["robust_acc"], row.robust_acc, p["robustbench_rank"])
                for row in rows if (p := paper_row(row.model)) is not None]
    if ref_rows:
        tables["paper_reference"] = Table(
            "paper_reference", "The paper's Table IV beside ours for the models it evaluated (its robust accuracy is "
                               "RobustBench's; its attack: 150 PGD steps, Eq. 11 alone, 8,000 points)",
            ("model", "paper_id", "paper_mus_mean", "mus_mean", "paper_msus_mean", "msus_mean", "paper_clean_acc",
             "clean_acc", "paper_robust_acc", "robust_acc", "robustbench_rank"), tuple(ref_rows))

    at_chance = any(row.at_chance for row in rows) or any(
        m.value is True for k, m in metrics.items() if k.endswith("_auroc_at_chance"))
    metrics["model_at_chance"] = Metric(at_chance, "a model's clean score is compatible with chance (its attack "
                                        "numbers carry no information)", "")
    r.notes.append("s-ECE sign: Eq. 19 as printed is ex − ob; we report ob − ex so negative means over-confident, "
                   "the reading the paper states and its Tables II–III show.")
    r.notes.append(f"Robust accuracy: {attack_name} (the paper copies RobustBench's numbers, which are standard "
                   "AutoAttack)"
                   + (f"; this package's PGD ({lb.pgd_steps} steps) beside it, with the paired difference PGD − "
                      "AutoAttack on the same points." if beside else ".")
                   + " Intervals: Clopper-Pearson for accuracies, BCa bootstrap for MUS, entropy differences and the "
                     "paired differences, stratified bootstrap for AUROC and its change under attack.")
    summary = (f"Over {len(y)} test points ({a.norm}, eps={a.eps:g}, {a.steps} steps, under-confidence attack: "
               f"{'+'.join(a.under_objective)} with {a.restarts} restart(s)), the smallest mean uncertainty span is "
               f"{rows[0].mus_mean:.3f} nats ({rows[0].model}); "
               + ", ".join(f"{row.model}: MUS {_fmt(metrics[f'{slug(row.model)}_mus_mean'].interval)}, robust "
                           f"accuracy {row.robust_acc:.3f} [{row.robust_acc_ci_low:.3f}, {row.robust_acc_ci_high:.3f}]"
                           for row in rows)
               + f" ({attack_name}). " + " ".join(effect_sentences) + "".join(t5_summary))
    if at_chance:
        summary = "A model is at chance (see the warnings): its attack numbers carry no information. " + summary
    tables["paper_effects"] = paper_effects(metrics)
    checks: tuple = ()
    if cfg.audit.enabled:
        from .audit import audit_checks, audit_table

        checks = audit_checks(models, data, cfg)
        tables["audit_checks"] = audit_table(checks)
    return Result(experiment="uncspan", config=to_dict(cfg), tables=tables, metrics=metrics, summary=summary,
                  records=recs, notes=tuple(r.notes), warnings=tuple(r.warnings), checks=checks)


def _fmt(iv: Interval) -> str:
    return f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def _table5_metrics(r: _Run, metrics: dict, name: str, kind: str, res: OODUnderAttack, summary: list[str]) -> None:
    base = f"{slug(name)}_{kind}"
    first, last = res.rows[0], res.rows[-1]
    for tag, row in (("clean", first), ("max_eps", last)):
        iv = _iv(row.metrics.auroc, row.auroc_ci_low, row.auroc_ci_high, "stratified bootstrap", (0.0, 1.0))
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
