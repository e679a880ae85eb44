"""Uncertainty span section (paper 001, uncspan): span leaderboard with intervals (Table IV, strongest
under-confidence attack), the adversarial-training effect (Table I direction), s-ECE under/clean/over, ε-sweeps,
entropy and reliability figures, OOD / open-set detection under the over-confidence attack (Table V) on any
in-distribution dataset, open-set class split and OOD dataset.

The runner only maps parameters to ``uncspan``'s public API and the results to a report section: every number
here can be reproduced by calling the package with the same values.

With ``--log-samples`` every attacked test point of every ranked model gets a row in
``samples/<unit>--span-<model>.*``: ``id``, ``label``, ``prediction`` / ``confidence`` / ``entropy`` (clean),
``correct``, ``over_*`` and ``under_*`` (after the over- and under-confidence attacks), ``span``
(``under_entropy − over_entropy``, Eq. 9) and ``adv_prediction`` / ``adv_confidence`` / ``adv_correct`` (after the
misclassification attack behind robust accuracy). The span table (clean/robust accuracy, MUS, MSUS, mean
entropies), the widening metrics and the s-ECE table are functions of these columns."""

from __future__ import annotations

import json
import re

NAME = "uncspan"
TITLE = "Uncertainty span under over- and under-confidence attacks"
PAPER = "001"
DEFAULTS: dict = {
    "model": "builtin:fashion-cnn",
    "model_adversarially_trained": False,  # explicit field of the "model" entry (never guessed from its name)
    "dataset": "builtin:fashion-mnist",
    # ranked together with "model" (Table IV); entries are {"spec", "adversarially_trained"} tables
    "compare": [{"spec": "builtin:fashion-cnn-at", "adversarially_trained": True}],
    "n": 100,  # test points attacked (paper: 8000)
    "eps": 0.1,  # L∞ budget in [0, 1] pixel units (paper: 8/255 CIFAR-10, 4/255 ImageNet)
    "norm": "Linf",
    "steps": 20,  # paper: 150
    "optimizer": "pgd",  # or "apgd"
    "restarts": 1,  # random restarts per objective; per-sample best kept (issue 14)
    "under_objective": ["cross_entropy", "entropy"],  # strongest setting; ["cross_entropy"] = the paper's Eq. 11
    "n_bins": 15,
    "sweep_eps": [0.0, 0.05, 0.1, 0.2],  # ε-sweep budgets (paper's figures over ε)
    "sweep_n": 50,
    "sweep_steps": 10,
    # Table V: in-distribution = the test split of osr_dataset; open set = its extras["open_set"], or, when
    # open_set_classes is non-empty, those classes of its test split (the rest are the known classes);
    # OOD = "extras:ood" of osr_dataset or the test split of any dataset spec (resized to the ID shape)
    "osr_models": ["builtin:fashion-osr-cnn"],
    "osr_dataset": "builtin:fashion-mnist-osr",
    "open_set_classes": [],
    "ood_dataset": "extras:ood",
    "osr_eps": [0.0, 0.05, 0.1],
    "n_outliers": 100,
    "n_boot": 2000,  # bootstrap replicates of the MUS intervals
}
LOGS_SAMPLES = True
# range checks before any work (pydantic Field constraints, see robustsuite.config); eps / sweep_eps / osr_eps are
# budgets in the norm's units (L2 budgets may exceed 1), so only eps's sign is bounded here (the list budgets
# are checked by uncspan's check_eps when used)
BOUNDS = {
    "n": {"ge": 1}, "eps": {"ge": 0}, "norm": {"pattern": "^(Linf|L2)$"}, "steps": {"ge": 0},
    "optimizer": {"pattern": "^(pgd|apgd)$"}, "restarts": {"ge": 0}, "n_bins": {"ge": 1}, "sweep_n": {"ge": 1},
    "sweep_steps": {"ge": 0}, "n_outliers": {"ge": 1}, "n_boot": {"ge": 100},
}


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", spec.split(":", 1)[-1]).strip("_").lower()


def _cached(ctx, key: str, compute):
    """Resume support: a finished sub-unit is stored as JSON in the method's work dir."""
    from .._io import write_json

    path = ctx.work_dir() / f"{key}.json"
    if path.exists():
        return json.loads(path.read_text())
    value = compute()
    write_json(path, value)
    return value


def _entries(p: dict) -> list[tuple[str, bool | None]]:
    """(spec, adversarially_trained) for "model" and every "compare" entry."""
    out = [(p["model"], p.get("model_adversarially_trained"))]
    compare = p["compare"] if isinstance(p["compare"], list) else [p["compare"]]
    for c in compare:
        if isinstance(c, str):
            out.append((c, None))
        elif isinstance(c, dict) and isinstance(c.get("spec"), str) and set(c) <= {"spec", "adversarially_trained"}:
            out.append((c["spec"], c.get("adversarially_trained")))
        else:
            raise ValueError(f"compare entries must be specs or {{spec, adversarially_trained}} tables; got {c!r}")
    for spec, flag in out:
        if flag is not None and not isinstance(flag, bool):
            raise ValueError(f"adversarially_trained of {spec} must be true, false or absent; got {flag!r}")
    return list(dict((s, (s, f)) for s, f in out).values())


def log_span_samples(ctx, spec: str, sp, y, adv_prediction, adv_confidence):
    """One row per attacked test point of ``spec`` (``--log-samples``): the columns the span table, the widening
    metrics and the s-ECE table are computed from."""
    import numpy as np

    yn = y.numpy() if hasattr(y, "numpy") else np.asarray(y)
    adv_prediction = np.asarray(adv_prediction, dtype=np.int64)
    return ctx.log_samples({
        "id": np.arange(len(yn)), "label": yn, "prediction": sp.pred_clean, "confidence": sp.conf_clean,
        "entropy": sp.entropy_clean, "correct": sp.pred_clean == yn,
        "over_prediction": sp.pred_over, "over_confidence": sp.conf_over, "over_entropy": sp.entropy_over,
        "under_prediction": sp.pred_under, "under_confidence": sp.conf_under, "under_entropy": sp.entropy_under,
        "span": sp.span, "adv_prediction": adv_prediction, "adv_confidence": np.asarray(adv_confidence),
        "adv_correct": adv_prediction == yn}, name=f"span-{_slug(spec)}")


def _fmt(v: float, lo: float, hi: float) -> str:
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def run(ctx, params: dict):
    import torch

    import uncspan

    from .._io import stable_hash
    from ..report import Section, Table

    p = {**DEFAULTS, **params}
    entries = _entries(p)
    ds = ctx.dataset(p["dataset"])
    if ds.modality != "vision":
        raise ValueError(f"uncspan needs a vision dataset; {p['dataset']} is {ds.modality}")
    split = ds.test.head(int(p["n"]))
    x, y = split.x, split.y
    eps, norm, steps = float(p["eps"]), p["norm"], int(p["steps"])
    attack = {"norm": norm, "optimizer": p["optimizer"], "restarts": int(p["restarts"]),
              "under_objective": list(p["under_objective"]), "progress": ctx.progress}
    # every parameter that changes a cached sub-unit enters its key
    # ("record": 2: the checkpoint also holds the per-sample predictions under the misclassification attack)
    cfg = stable_hash({k: p[k] for k in ("dataset", "n", "eps", "norm", "steps", "optimizer", "restarts",
                                         "under_objective", "n_boot")} | {"seed": ctx.seed, "record": 2})
    notes = []

    # --- leaderboard (Table IV), one checkpointed sub-unit per model --------------------------------
    rows, spans = [], {}
    for spec, flag in entries:
        model = ctx.model(spec)

        def board(model=model, spec=spec, flag=flag):
            # uncspan.rank_models for one model, unrolled into its three public calls (same arguments, same
            # order) so the per-sample predictions under the misclassification attack are kept for the log
            kw = {k: v for k, v in attack.items() if k not in ("restarts", "under_objective")}
            sp = uncspan.uncertainty_span(model, x, eps, steps=steps, seed=ctx.seed, restarts=attack["restarts"],
                                          under_objective=attack["under_objective"], **kw)
            adv = uncspan.MisclassificationAttack(steps=steps, optimizer=attack["optimizer"], progress=ctx.progress,
                                                  keep_adv=False)(model, x, eps, norm=norm, seed=ctx.seed, y=y)
            row = uncspan.leaderboard_row(spec, sp, y, adv.pred_adv, adversarially_trained=flag, seed=ctx.seed)
            return {"span": sp.to_dict(), "row": row.to_dict(), "adv_prediction": adv.pred_adv.tolist(),
                    "adv_confidence": adv.conf_adv.tolist()}

        done = _cached(ctx, f"span_{_slug(spec)}_{cfg}", board)
        spans[spec] = sp = uncspan.UncertaintySpan.from_dict(done["span"])
        rows.append(uncspan.LeaderboardRow(**done["row"]))
        log_span_samples(ctx, spec, sp, y, done["adv_prediction"], done["adv_confidence"])
    rows.sort(key=lambda r: r.mus_mean)
    cols = ["rank", "model", "adversarially_trained", "clean_acc", "clean_acc_ci_low", "clean_acc_ci_high",
            "robust_acc", "robust_acc_ci_low", "robust_acc_ci_high", "mus_mean", "mus_mean_ci_low", "mus_mean_ci_high",
            "mus_std", "msus_mean", "msus_std", "entropy_clean", "entropy_over", "entropy_under"]
    span_table = Table(
        "span", f"Uncertainty span leaderboard ({norm}, eps={eps:g}, {steps} steps, objectives "
                f"{'+'.join(p['under_objective'])}, {p['restarts']} restart(s), {len(y)} test points), sorted by MUS",
        cols,
        [[i + 1, *[r.to_dict()[c] for c in cols[1:15]], float(spans[r.model].entropy_clean.mean()),
          float(spans[r.model].entropy_over.mean()), float(spans[r.model].entropy_under.mean())]
         for i, r in enumerate(rows)])

    metrics: dict = {"eps": eps, "steps": steps, "num_samples": int(len(y)), "lowest_mus_model": rows[0].model}
    for r in rows:
        s = _slug(r.model)
        metrics[f"{s}_mus_mean"] = r.mus_mean
        metrics[f"{s}_mus_mean_ci_low"] = r.mus_mean_ci_low
        metrics[f"{s}_mus_mean_ci_high"] = r.mus_mean_ci_high
        sp = spans[r.model]
        # the over / under attacks move the entropy (paired per sample, bootstrap intervals)
        for kind, a, b in (("under_widening", sp.entropy_under, sp.entropy_clean),
                           ("over_widening", sp.entropy_clean, sp.entropy_over)):
            m, lo, hi = uncspan.paired_difference_ci(a, b, seed=ctx.seed, n_boot=int(p["n_boot"]))
            metrics[f"{s}_{kind}"], metrics[f"{s}_{kind}_ci_low"], metrics[f"{s}_{kind}_ci_high"] = m, lo, hi

    # --- adversarial training effect (Table I direction): paired MUS difference AT − standard ---------
    at = [s for s, f in entries if f is True]
    std = [s for s, f in entries if f is False]
    effect_sentences = []
    if at and std:
        smaller = True
        for a in at:
            for s in std:
                m, lo, hi = uncspan.paired_difference_ci(spans[a].span, spans[s].span, seed=ctx.seed,
                                                         n_boot=int(p["n_boot"]))
                key = f"mus_diff_{_slug(a)}_minus_{_slug(s)}"
                metrics[key], metrics[f"{key}_ci_low"], metrics[f"{key}_ci_high"] = m, lo, hi
                smaller &= hi < 0
                effect_sentences.append(
                    f"MUS({a}) − MUS({s}) = {_fmt(m, lo, hi)} nats: "
                    + ("adversarial training shrinks the span, as the paper reports." if hi < 0 else
                       "the interval includes 0, so no difference is shown here." if lo <= 0 else
                       "adversarial training widened the span here, unlike the paper."))
        metrics["adv_trained_smaller_mus"] = bool(smaller)
    ra = {r.model: r for r in rows}
    for a in at:
        for s in std:
            if ra[a].mus_mean_ci_low <= ra[s].mus_mean_ci_high and ra[s].mus_mean_ci_low <= ra[a].mus_mean_ci_high:
                notes.append(f"The MUS intervals of {a} and {s} overlap (the paired difference above is the sharper "
                             f"comparison, on the same samples).")

    # --- s-ECE (Tables II-III) ----------------------------------------------------------------------
    yn = y.numpy()
    sece_rows = []
    for spec, sp in spans.items():
        vals = {}
        for kind in ("under", "clean", "over"):
            conf, correct = getattr(sp, f"conf_{kind}"), getattr(sp, f"pred_{kind}") == yn
            vals[kind] = uncspan.signed_ece(conf, correct, int(p["n_bins"]))
            vals[kind + "_mean"] = uncspan.signed_ece(conf, correct, int(p["n_bins"]), expected="mean")
        sece_rows.append([spec, vals["under"], vals["clean"], vals["over"], vals["under_mean"], vals["clean_mean"],
                          vals["over_mean"]])
        metrics[f"{_slug(spec)}_sece_clean"] = vals["clean"]
    sece_table = Table("signed_ece", "Signed ECE (Eq. 19; negative = over-confident): bin-centre and bin-mean variants",
                       ["model", "under", "clean", "over", "under_meanconf", "clean_meanconf", "over_meanconf"],
                       sece_rows)

    # --- ε-sweeps -----------------------------------------------------------------------------------------
    sweep_eps = [float(e) for e in p["sweep_eps"]]
    sweeps, sweep_rows = {}, []
    if sweep_eps:
        sw_split = ds.test.head(int(p["sweep_n"]))
        sw_cfg = stable_hash({k: p[k] for k in ("dataset", "sweep_n", "sweep_eps", "sweep_steps", "norm", "optimizer",
                                                "restarts", "under_objective", "n_bins")} | {"seed": ctx.seed})
        for spec, _ in entries:
            def sweep(spec=spec):
                return uncspan.eps_sweep(ctx.model(spec), sw_split.x, sw_split.y, sweep_eps,
                                         steps=int(p["sweep_steps"]), seed=ctx.seed, n_bins=int(p["n_bins"]),
                                         **attack).to_dict()

            d = _cached(ctx, f"sweep_{_slug(spec)}_{sw_cfg}", sweep)
            rws = tuple(uncspan.EpsSweepRow(**r) for r in d["rows"])
            sweeps[spec] = uncspan.EpsSweep(d["norm"], d["steps"], d["n"], rws, {})
            sweep_rows += [[spec, *r.to_dict().values()] for r in rws]
    sweep_table = Table("eps_sweep", f"MUS, mean entropies and s-ECE as functions of eps ({len(sw_split.y) if sweep_eps else 0} "
                                     f"test points, {p['sweep_steps']} steps)",
                        ["model", *uncspan.EpsSweepRow.__dataclass_fields__], sweep_rows)

    # --- OOD / open set under the over-confidence attack (Table V) ------------------------------------
    osr_ds = ctx.dataset(p["osr_dataset"])
    if osr_ds.modality != "vision":
        raise ValueError(f"osr_dataset must be a vision dataset; {p['osr_dataset']} is {osr_ds.modality}")
    n_out = int(p["n_outliers"])
    open_classes = [int(c) for c in p["open_set_classes"]]
    if open_classes:
        x_in_all, _, x_open, known = uncspan.open_set_split(osr_ds.test.x, osr_ds.test.y, open_classes)
    else:
        x_in_all, known = osr_ds.test.x, tuple(range(osr_ds.num_classes))
        x_open = osr_ds.extras["open_set"].x if "open_set" in osr_ds.extras else None
    x_in = x_in_all[: int(p["n"])]
    if p["ood_dataset"] == "extras:ood":
        x_ood = osr_ds.extras["ood"].x if "ood" in osr_ds.extras else None
    else:
        ood_ds = ctx.dataset(p["ood_dataset"])
        if ood_ds.modality != "vision":
            raise ValueError(f"ood_dataset must be a vision dataset; {p['ood_dataset']} is {ood_ds.modality}")
        x_ood = uncspan.match_images(ood_ds.test.x[:n_out], x_in)
        if tuple(ood_ds.test.x.shape[1:]) != tuple(x_in.shape[1:]):
            notes.append(f"OOD images of {p['ood_dataset']} {tuple(ood_ds.test.x.shape[1:])} were resized to the "
                         f"in-distribution shape {tuple(x_in.shape[1:])}.")
    outliers = {k: v[:n_out] for k, v in (("open_set", x_open), ("ood", x_ood)) if v is not None}
    osr_specs = p["osr_models"] if isinstance(p["osr_models"], list) else [p["osr_models"]]
    t5_cfg = stable_hash({k: p[k] for k in ("osr_dataset", "open_set_classes", "ood_dataset", "osr_eps", "n",
                                            "n_outliers", "norm", "steps", "optimizer")} | {"seed": ctx.seed})
    ood_rows = []
    for spec in osr_specs:
        osr_model = ctx.model(spec)
        with torch.no_grad():
            k_out = int(osr_model(x_in[:1].to(ctx.device)).shape[-1])
        if k_out != len(known):
            osr_model = uncspan.KnownClassesModel(osr_model, list(known)).to(ctx.device)
            notes.append(f"Open-set/OOD rows of {spec} use it restricted to the known classes {list(known)} "
                         f"(softmax over them): the model saw the open-set classes in training, so this is weaker "
                         f"than the paper's setting, where the open-set classes are never trained on.")
        for kind, x_out in outliers.items():
            def table5(x_out=x_out, osr_model=osr_model):
                return uncspan.ood_under_attack(osr_model, x_in, x_out, [float(e) for e in p["osr_eps"]], norm=norm,
                                                steps=steps, seed=ctx.seed, optimizer=p["optimizer"],
                                                progress=ctx.progress).to_dict()

            res = _cached(ctx, f"{kind}_{_slug(spec)}_{t5_cfg}", table5)
            for r in res["rows"]:
                ood_rows.append([spec, kind, r["eps"], r["auroc"], r["auroc_ci_low"], r["auroc_ci_high"], r["aupr_in"],
                                 r["aupr_out"], r["fpr_at_95_tpr"], r["mean_entropy_in"], r["mean_entropy_out"]])
            first, last = res["rows"][0], res["rows"][-1]
            base = f"{_slug(spec)}_{kind}"
            for tag, r in (("clean", first), ("max_eps", last)):
                metrics[f"{base}_auroc_{tag}"] = r["auroc"]
                metrics[f"{base}_auroc_{tag}_ci_low"] = r["auroc_ci_low"]
                metrics[f"{base}_auroc_{tag}_ci_high"] = r["auroc_ci_high"]
            metrics[f"{base}_auroc_falls"] = bool(last["auroc_ci_high"] < first["auroc_ci_low"])
            if not metrics[f"{base}_auroc_falls"]:
                notes.append(f"{spec} {kind}: the AUROC intervals clean and at eps={last['eps']:g} overlap.")
    ood_table = Table("ood_osr", f"Open-set and OOD detection by entropy on {p['osr_dataset']}, outliers under the "
                                 f"over-confidence attack (Table V)",
                      ["model", "outliers", "eps", "auroc", "auroc_ci_low", "auroc_ci_high", "aupr_in", "aupr_out",
                       "fpr_at_95_tpr", "mean_entropy_in", "mean_entropy_out"], ood_rows)

    # --- figures (Figs. 2-5 and the ε-sweeps) ---------------------------------------------------------------
    figures = [
        ctx.figure(uncspan.plot_entropy_distributions(spans), "entropy-distributions",
                   f"Entropy before (left) and after the over-/under-confidence attacks (right), eps={eps:g} (Figs. 2–3)"),
        ctx.figure(uncspan.plot_reliability_diagrams(spans, y, n_bins=int(p["n_bins"])), "reliability",
                   "Reliability curves and confidence histograms, clean / over / under (Figs. 4–5)"),
    ]
    if sweeps:
        figures.append(ctx.figure(uncspan.plot_eps_sweep(sweeps), "eps-sweep",
                                  "MUS with its 95 % bootstrap band, mean entropy over / clean / under, and s-ECE "
                                  "as functions of eps"))

    summary = (f"Over {len(y)} test points ({norm}, eps={eps:g}, {steps} steps, strongest under-confidence attack: "
               f"{'+'.join(p['under_objective'])} with {p['restarts']} restart(s)), the smallest mean uncertainty span is "
               f"{rows[0].mus_mean:.3f} nats ({rows[0].model}); "
               + ", ".join(f"{r.model}: MUS {_fmt(r.mus_mean, r.mus_mean_ci_low, r.mus_mean_ci_high)}" for r in rows)
               + ". " + " ".join(effect_sentences))
    for spec, _ in entries:
        s = _slug(spec)
        if metrics[f"{s}_under_widening_ci_low"] <= 0 or metrics[f"{s}_over_widening_ci_low"] <= 0:
            notes.append(f"For {spec} an attack did not move the mean entropy beyond its interval.")
    for k in [k for k in metrics if k.endswith("_auroc_falls")]:
        base = k[: -len("_auroc_falls")]
        summary += (f" {base}: AUROC {metrics[base + '_auroc_clean']:.3f} clean → {metrics[base + '_auroc_max_eps']:.3f} "
                    f"under attack" + (" (intervals disjoint)." if metrics[k] else " (intervals overlap)."))
    notes.append("s-ECE sign: Eq. 19 as printed is ex − ob; we report ob − ex so negative means over-confident, "
                 "the reading the paper states and its Tables II–III show.")
    notes.append("Robust accuracy comes from our own PGD misclassification attack at the same budget "
                 "(the paper copies RobustBench's AutoAttack numbers). Intervals: Clopper-Pearson for accuracies, "
                 "percentile bootstrap for MUS, entropy differences and AUROC.")
    return Section(title=TITLE, summary=summary, metrics=metrics,
                   tables=[span_table, sece_table, sweep_table, ood_table], figures=figures, notes=notes)
