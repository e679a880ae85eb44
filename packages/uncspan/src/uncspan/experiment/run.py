"""The paper's protocol: :func:`run` (Table IV with robust accuracy by standard AutoAttack, the entropy widening,
adversarial training's effect on MUS, Tables II–III's s-ECE, the ε-sweep and Table V), checkpointing every
model's attack outcomes in a :class:`~robustsuite_common.experiment.Store`.

The run goes through named stages, each adding its tables, metrics, records, notes and warnings to one
:class:`~.checkpointed.RunState`: the inputs checked against every model (:func:`_test_points`), Table IV
(:func:`_table4`, :func:`_model_metrics`), adversarial training's effect (:func:`_training_effect`), s-ECE
(:func:`_signed_ece`), the ε-sweep (:func:`_sweep`), Table V (:func:`.table5.table5`), the paper's values beside
ours (:func:`_paper_reference`) and the summary (:func:`_summary`)."""

from __future__ import annotations

from typing import Any

from robustsuite_common.checks import check_bool, check_labels
from robustsuite_common.config import to_dict
from robustsuite_common.experiment import Metric, Split, Store, Table, chance_rate, ci_of, headline
from robustsuite_common.intervals import Interval, proportion

from .._model import n_classes, using
from ..analysis import adversarial_training_effect, entropy_widening, span_signed_ece
from ..leaderboard import Leaderboard, leaderboard_row
from ..sweep import EpsSweepRow, sweep_from_spans
from . import records
from .checkpointed import RunState, fingerprint, interval
from .config import Config
from .effects import paper_effects
from .inputs import Data, Models, labels
from .reference import paper_row
from .result import Result, slug
from .table5 import table5, table5_models, table5_splits

__all__ = ["run"]

MUS_UNIT = "nats"


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
    r = RunState(models, data, config, store, progress)
    t5 = table5_splits(r)
    test, sweep_split = _test_points(r)
    table5_models(r, t5)
    board = _table4(r, test)
    _model_metrics(r, board, test)
    effect_sentences = _training_effect(r, board)
    _signed_ece(r, board, labels(test))
    _sweep(r, sweep_split)
    t5_summary = table5(r, t5)
    _paper_reference(r, board)
    summary = _summary(r, board, len(test), effect_sentences, t5_summary)
    r.tables["paper_effects"] = paper_effects(r.metrics)
    checks: tuple = ()
    if config.audit.enabled:
        from .audit import audit_checks, audit_table

        checks = audit_checks(models, data, config)
        r.tables["audit_checks"] = audit_table(checks)
    return Result(experiment="uncspan", config=to_dict(config), tables=r.tables, metrics=r.metrics, summary=summary,
                  records=r.records, notes=tuple(r.notes), warnings=tuple(r.warnings), checks=checks)


def _test_points(r: RunState) -> tuple[Split, Split | None]:
    """Table IV's test points and the sweep's (``None``: no sweep), their labels checked against every ranked
    model's classes (one forward pass each) before any attack."""
    cfg = r.cfg
    test = r.data.test.head(cfg.leaderboard.n)
    sweep_split = r.data.test.head(cfg.sweep.n) if cfg.sweep.eps else None
    x, y = test.x, labels(test)
    for m in r.models.ranked.values():
        with using(m) as net:
            k = n_classes(net, x)
        check_labels("data.test.y", labels(sweep_split) if sweep_split is not None and len(sweep_split) > len(test)
                     else y, n_classes=k)
    return test, sweep_split


def _table4(r: RunState, test: Split) -> Leaderboard:
    """Table IV: every ranked model's span and robust accuracy (PGD beside AutoAttack), sorted by MUS; the tables
    ``span`` and ``headline``."""
    a, lb, cfg = r.cfg.attack, r.cfg.leaderboard, r.cfg
    x, y = test.x, labels(test)
    what = {"attack": r.attack_key, "n": lb.n, "data": fingerprint(x, y)}
    spans, robust, beside, rows = {}, {}, {}, []
    aa_first = lb.robust_attack == "autoattack"
    for name in r.models.ranked:
        spans[name] = r.span(name, x, a.eps, a.steps, a.restarts, what)
        robust[name] = r.robust(name, x, y, lb.robust_attack, what)
        if aa_first and lb.pgd_beside:
            beside[name] = r.robust(name, x, y, "pgd", what)
        rows.append(leaderboard_row(name, spans[name], y, robust[name], pgd=beside.get(name),
                                    adversarially_trained=r.models.adversarially_trained.get(name), seed=cfg.seed,
                                    n_boot=cfg.metrics.n_boot))
    rows.sort(key=lambda row: row.mus_mean)
    board = Leaderboard(a.eps, a.norm, a.steps, tuple(rows), spans, {}, robust, beside)
    attack_name = _attack_name(board)
    r.tables["span"] = Table(
        "span", f"Uncertainty span leaderboard (Table IV; {a.norm}, eps={a.eps:g}, {a.steps} steps, objectives "
                f"{'+'.join(a.under_objective)}, {a.restarts} restart(s), {len(y)} test points), sorted by MUS; robust "
                f"accuracy: {attack_name}" + (f", PGD ({lb.pgd_steps} steps) beside it" if beside else ""),
        tuple(board.columns), tuple(tuple(t) for t in board.table()),
        units={"clean_acc": "fraction", "robust_acc": "fraction", "pgd_robust_acc": "fraction",
               "pgd_minus_robust": "fraction", "mus_mean": MUS_UNIT, "mus_std": MUS_UNIT, "msus_mean": "nats²",
               "msus_std": "nats²", "entropy_clean": MUS_UNIT, "entropy_over": MUS_UNIT, "entropy_under": MUS_UNIT},
        bounds={"clean_acc": (0.0, 1.0), "robust_acc": (0.0, 1.0), "pgd_robust_acc": (0.0, 1.0),
                "pgd_minus_robust": (-1.0, 1.0), "mus_mean": (0.0, None)})
    r.tables["headline"] = headline(
        f"Clean vs robust accuracy ({attack_name}, {a.norm} eps={a.eps:g}, {len(y)} test points)",
        [(row["model"], ci_of(row, "clean_acc"), ci_of(row, "robust_acc"), row["robust_attack"])
         for row in r.tables["span"].records()])
    return board


def _attack_name(board: Leaderboard) -> str:
    return board.rows[0].robust_attack.split(",")[0]


def _model_metrics(r: RunState, board: Leaderboard, test: Split) -> None:
    """Table IV's metrics per model (accuracies, the PGD − AutoAttack gap, MUS, MSUS, the entropy widening, the
    at-chance flag), its warnings and the per-sample records ``span-<model>``."""
    a, lb, mt, metrics = r.cfg.attack, r.cfg.leaderboard, r.cfg.metrics, r.metrics
    y = labels(test)
    rows = board.rows
    chance = chance_rate(y)
    metrics["n_points"] = Metric(len(y), "test points attacked (Table IV)", "points")
    metrics["eps"] = Metric(a.eps, "perturbation budget ε", f"{a.norm}, inputs in [0, 1]")
    metrics["steps"] = Metric(a.steps, "attack steps", "iterations")
    metrics["majority_share"] = Metric(chance, "majority-class share of the test labels (chance accuracy)", "fraction")
    metrics["lowest_mus_model"] = Metric(rows[0].model, "model with the smallest MUS", "")
    for row in rows:
        s, name = slug(row.model), row.model
        clean = proportion(int(round(row.clean_acc * len(y))), len(y))
        metrics[f"{s}_clean_accuracy"] = Metric.of(clean, f"clean accuracy of {name}", "fraction")
        metrics[f"{s}_robust_accuracy"] = Metric.of(board.robust[name].interval(), f"robust accuracy of {name} "
                                                    f"({board.robust[name].attack})", "fraction")
        if name in board.pgd:
            metrics[f"{s}_pgd_robust_accuracy"] = Metric.of(
                board.pgd[name].interval(), f"robust accuracy of {name} under this package's PGD ({lb.pgd_steps} "
                "steps)", "fraction")
            assert row.pgd_minus_robust is not None and row.pgd_minus_robust_ci_low is not None \
                and row.pgd_minus_robust_ci_high is not None
            gap = interval(row.pgd_minus_robust, row.pgd_minus_robust_ci_low, row.pgd_minus_robust_ci_high,
                           "paired bootstrap BCa", (-1.0, 1.0))
            metrics[f"{s}_pgd_minus_autoattack"] = Metric.of(
                gap, f"PGD minus AutoAttack robust accuracy of {name} (paired, same points)", "fraction")
            if row.pgd_overstates:
                r.warnings.append(f"PGD leaves clearly more points robust than AutoAttack for {name}: robust accuracy "
                                  f"{row.pgd_robust_acc:.3f} under PGD ({lb.pgd_steps} steps) against "
                                  f"{row.robust_acc:.3f} under AutoAttack (paired difference {gap.estimate:+.3f} "
                                  f"[{gap.low:+.3f}, {gap.high:+.3f}]); the table's robust accuracy is AutoAttack's, a "
                                  "PGD number alone would overstate this model's robustness.")
        metrics[f"{s}_mus_mean"] = Metric.of(interval(row.mus_mean, row.mus_mean_ci_low, row.mus_mean_ci_high,
                                                      f"bootstrap BCa, {mt.n_boot} resamples", (0.0, None)),
                                             f"MUS of {name} (Eq. 12)", MUS_UNIT)
        metrics[f"{s}_msus_mean"] = Metric(row.msus_mean, f"MSUS of {name} (Eq. 13)", "nats²")
        w = entropy_widening(board.spans[name], seed=r.cfg.seed, n_boot=mt.n_boot)
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
        r.records[f"span-{s}"] = records.span_records(test, y.numpy(), board, name)


def _training_effect(r: RunState, board: Leaderboard) -> list[str]:
    """Adversarial training's effect (Table I's direction): the paired MUS difference AT − standard of every
    declared pair; returns its sentences of the summary."""
    effect = adversarial_training_effect(board, seed=r.cfg.seed, n_boot=r.cfg.metrics.n_boot)
    sentences = []
    for c in effect.comparisons:
        d = c.difference
        key = f"mus_diff_{slug(c.adversarially_trained)}_minus_{slug(c.standard)}"
        r.metrics[key] = Metric.of(d.interval, f"MUS({c.adversarially_trained}) − MUS({c.standard}), paired", MUS_UNIT)
        verdict = {-1: "adversarial training shrinks the span, as the paper reports.",
                   0: "the interval includes 0, so no difference is shown here.",
                   1: "adversarial training widened the span here, unlike the paper."}[d.sign]
        sentences.append(f"MUS({c.adversarially_trained}) − MUS({c.standard}) = {_fmt(d.interval)} nats: " + verdict)
        if c.intervals_overlap:
            r.notes.append(f"The MUS intervals of {c.adversarially_trained} and {c.standard} overlap (the paired "
                           "difference above is the sharper comparison, on the same samples).")
    if effect.shrinks_span is not None:
        r.metrics["adv_trained_smaller_mus"] = Metric(effect.shrinks_span, "adversarial training shrinks MUS for "
                                                      "every declared pair (paired intervals below 0)", "")
    return sentences


def _signed_ece(r: RunState, board: Leaderboard, y: Any) -> None:
    """s-ECE under / clean / over of every ranked model (Tables II–III): table ``signed_ece``."""
    sece = {name: span_signed_ece(sp, y, n_bins=r.cfg.metrics.n_bins) for name, sp in board.spans.items()}
    for name, v in sece.items():
        r.metrics[f"{slug(name)}_sece_clean"] = Metric(v.clean, f"s-ECE of {name}, clean (Eq. 19, ob − ex)", "")
    r.tables["signed_ece"] = Table(
        "signed_ece", "Signed ECE (Eq. 19; negative = over-confident): bin-centre and bin-mean variants",
        ("model", "under", "clean", "over", "under_meanconf", "clean_meanconf", "over_meanconf"),
        tuple((name, *v.to_dict().values()) for name, v in sece.items()))


def _sweep(r: RunState, sweep_split: Split | None) -> None:
    """The ε-sweep of every ranked model: table ``eps_sweep`` and records ``sweep-<model>``."""
    cfg, a, mt = r.cfg, r.cfg.attack, r.cfg.metrics
    sweep_rows: list[tuple] = []
    if sweep_split is not None:
        sx, sy = sweep_split.x, labels(sweep_split)
        sw_what = {"attack": r.attack_key, "n": cfg.sweep.n, "data": fingerprint(sx, sy)}
        for name in r.models.ranked:
            sw_spans = {e: r.span(name, sx, e, cfg.sweep.steps if e > 0 else 0, a.restarts if e > 0 else 0,
                                  sw_what | {"sweep": True})
                        for e in sorted(set(cfg.sweep.eps))}
            sw = sweep_from_spans(sw_spans, sy, norm=a.norm, steps=cfg.sweep.steps, n_bins=mt.n_bins,
                                  n_boot=mt.n_boot, seed=cfg.seed)
            sweep_rows += [(name, *row.to_dict().values()) for row in sw.rows]
            r.records[f"sweep-{slug(name)}"] = records.sweep_records(sweep_split, sy.numpy(), sw_spans)
    r.tables["eps_sweep"] = Table(
        "eps_sweep", f"MUS, mean entropies and s-ECE as functions of eps ({cfg.sweep.n if sweep_split else 0} test "
                     f"points, {cfg.sweep.steps} steps)",
        ("model", *EpsSweepRow.__dataclass_fields__), tuple(sweep_rows),
        bounds={"mus_mean": (0.0, None)}, units={"mus_mean": MUS_UNIT})


def _paper_reference(r: RunState, board: Leaderboard) -> None:
    """The paper's Table IV beside ours for the ranked models it evaluated: table ``paper_reference``."""
    ref_rows = [(row.model, p["id"], p["mus_mean"], row.mus_mean, p["msus_mean"], row.msus_mean, p["clean_acc"],
                 row.clean_acc, p["robust_acc"], row.robust_acc, p["robustbench_rank"])
                for row in board.rows if (p := paper_row(row.model)) is not None]
    if ref_rows:
        r.tables["paper_reference"] = Table(
            "paper_reference", "The paper's Table IV beside ours for the models it evaluated (its robust accuracy is "
                               "RobustBench's; its attack: 150 PGD steps, Eq. 11 alone, 8,000 points)",
            ("model", "paper_id", "paper_mus_mean", "mus_mean", "paper_msus_mean", "msus_mean", "paper_clean_acc",
             "clean_acc", "paper_robust_acc", "robust_acc", "robustbench_rank"), tuple(ref_rows))


def _summary(r: RunState, board: Leaderboard, n_points: int, effect_sentences: list[str],
             t5_summary: list[str]) -> str:
    """The ``model_at_chance`` metric, the closing notes and the summary written from the run's own numbers."""
    a, lb, metrics, rows = r.cfg.attack, r.cfg.leaderboard, r.metrics, board.rows
    attack_name = _attack_name(board)
    at_chance = any(row.at_chance for row in rows) or any(
        m.value is True for k, m in metrics.items() if k.endswith("_auroc_at_chance"))
    metrics["model_at_chance"] = Metric(at_chance, "a model's clean score is compatible with chance (its attack "
                                        "numbers carry no information)", "")
    r.notes.append("s-ECE sign: Eq. 19 as printed is ex − ob; we report ob − ex so negative means over-confident, "
                   "the reading the paper states and its Tables II–III show.")
    r.notes.append(f"Robust accuracy: {attack_name} (the paper copies RobustBench's numbers, which are standard "
                   "AutoAttack)"
                   + (f"; this package's PGD ({lb.pgd_steps} steps) beside it, with the paired difference PGD − "
                      "AutoAttack on the same points." if board.pgd else ".")
                   + " Intervals: Clopper-Pearson for accuracies, BCa bootstrap for MUS, entropy differences and the "
                     "paired differences, stratified bootstrap for AUROC and its change under attack.")
    summary = (f"Over {n_points} test points ({a.norm}, eps={a.eps:g}, {a.steps} steps, under-confidence attack: "
               f"{'+'.join(a.under_objective)} with {a.restarts} restart(s)), the smallest mean uncertainty span is "
               f"{rows[0].mus_mean:.3f} nats ({rows[0].model}); "
               + ", ".join(f"{row.model}: MUS {_fmt(metrics[f'{slug(row.model)}_mus_mean'].interval)}, robust "
                           f"accuracy {row.robust_acc:.3f} [{row.robust_acc_ci_low:.3f}, {row.robust_acc_ci_high:.3f}]"
                           for row in rows)
               + f" ({attack_name}). " + " ".join(effect_sentences) + "".join(t5_summary))
    if at_chance:
        summary = "A model is at chance (see the warnings): its attack numbers carry no information. " + summary
    return summary


def _fmt(iv: Interval | None) -> str:
    assert iv is not None
    return f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
