"""The experiment's tables (values in %) and per-sample records, built from the text and vision outcomes; the
metrics, notes and summary are written in :mod:`.result`."""

from __future__ import annotations

from typing import Any

import numpy as np

from robustsuite_common.experiment import Table, chance_rate
from robustsuite_common.intervals import Interval, at_chance, mean_interval, proportion_of

from ..illusion import IllusionTable
from .config import paper_values
from .text import TextOutcome
from .vision import VisionOutcome

LABELS = {"base": "base", "down_conf": "↓conf", "up_conf": "↑conf", "ddi_at": "ddi-at"}
PCT = (0.0, 100.0)


def lab(system: str) -> str:
    return LABELS.get(system, system)


def pct(v: Any) -> float | None:
    return None if v is None else round(100.0 * float(v), 5)


def _iv(iv: Interval | dict) -> tuple[float | None, float | None, float | None]:
    d = iv.to_dict() if isinstance(iv, Interval) else iv
    return pct(d["estimate"]), pct(d["low"]), pct(d["high"])


def _row(rows: list[dict], system: str, mode: str) -> dict:
    return next(r for r in rows if r["system"] == system and r["mode"] == mode)


def _seed_cells(r: dict, a: str) -> list[float | None]:
    lo, hi = r["adversarial_accuracy_seed_ci_low"][a], r["adversarial_accuracy_seed_ci_high"][a]
    m = pct(r["adversarial_accuracy"][a])
    return [m if lo is not None else None, pct(lo), pct(hi)]


def _clean_interval(r: dict) -> Interval:
    return proportion_of(r["clean_correct"])


# ------------------------------------------------------------------------------------------------ text tables


def ior_table(t: TextOutcome) -> Table:
    cols = ["system", "adversary", "T_a", "clean", "clean_ci_low", "clean_ci_high"]
    for a in t.attacks:
        cols += [a, f"{a}_ci_low", f"{a}_ci_high", f"{a} over seeds", f"{a} over seeds_ci_low",
                 f"{a} over seeds_ci_high"]
    cols += ["P(c|x_clean)", "P(c|x_adv)"]
    out = []
    for r in t.rows:
        row = [lab(r["system"]), "-" if r["mode"] == "plain" else r["mode"], r["temperature"],
               *_iv(_clean_interval(r))]
        for a in t.attacks:
            row += [pct(r["adversarial_accuracy"][a]), pct(r["adversarial_accuracy_ci_low"][a]),
                    pct(r["adversarial_accuracy_ci_high"][a]), *_seed_cells(r, a)]
        out.append(row + [pct(r["clean_confidence"]), pct(r["adversarial_confidence"])])
    units = {c: "%" for c in cols if c not in ("system", "adversary", "T_a")} | {"T_a": "temperature"}
    bounds = {c: PCT for c in cols if c + "_ci_low" in cols}
    return Table("ior_table", f"Adversarial accuracy (%) of the served systems on n = {t.n_test} texts × seeds "
                 f"{t.seeds}: mean over seeds, per-run 95 % Clopper-Pearson interval (hull over seeds) and 95 % "
                 "Student-t interval over seeds (three or more seeds); plain attack, adversary calibration (cal, "
                 "Eq. 9) and Brent-optimised temperature (opt, Eq. 11) — Tables 2/3", tuple(cols), tuple(out),
                 units, bounds)


def verdicts(t: TextOutcome, threshold: float) -> dict[tuple[str, str], dict]:
    tab = IllusionTable(tuple(t.attacks), tuple(t.rows))
    return {(k, a): tab.verdict(k, a, threshold) for k in t.systems for a in t.attacks}


def verdict_table(name: str, title: str, v: dict[tuple[str, str], dict], first: str) -> Table:
    cols = [first, "attack", "plain", "plain_ci_low", "plain_ci_high", "best of cal/opt", "best of cal/opt_ci_low",
            "best of cal/opt_ci_high", "best adversary", "drop", "drop_ci_low", "drop_ci_high", "McNemar p",
            "illusion", "resolved"]
    rows = [[lab(k), a, *_iv(x["plain"]), *_iv(x["best"]), x["best_mode"], *_iv(x["difference"]),
             x["mcnemar"]["p_value"], x["illusion"], x["resolved"]] for (k, a), x in v.items()]
    units = {"plain": "%", "best of cal/opt": "%", "drop": "points", "McNemar p": "p-value"}
    return Table(name, title, tuple(cols), tuple(tuple(r) for r in rows), units,
                 {"plain": PCT, "best of cal/opt": PCT, "drop": (-100.0, 100.0)})


def confidence_table(t: TextOutcome, seed: int) -> Table:
    rows = []
    for k, c in t.confidence.items():
        acc = proportion_of(c["correct"])
        conf = mean_interval(c["confidence"], seed=seed, bounds=(0.0, 1.0))
        rows.append([lab(k), *_iv(acc), *_iv(conf), pct(c["ece"]), pct(c["mce"])])
    cols = ("system", "clean", "clean_ci_low", "clean_ci_high", "P(c|x_clean)", "P(c|x_clean)_ci_low",
            "P(c|x_clean)_ci_high", "ECE", "MCE")
    return Table("confidence", f"Clean accuracy (95 % Clopper-Pearson), mean predicted-class confidence (95 % BCa "
                 f"bootstrap), ECE and MCE (15 bins, plug-in) on the n = {t.n_test} test texts, float64 (%) — Tables "
                 "1 and 11", cols, tuple(rows), {c: "%" for c in cols[1:]}, {"clean": PCT, "P(c|x_clean)": PCT})


def transfer_table(t: TextOutcome) -> Table:
    cols = ["target", "source"]
    for a in t.attacks:
        cols += [a, f"{a}_ci_low", f"{a}_ci_high"]
    rows = []
    for target in ("base", "ddi_at"):
        r = _row(t.rows, target, "plain")
        rows.append([lab(target), lab(target)] + [v for a in t.attacks for v in (
            pct(r["adversarial_accuracy"][a]), pct(r["adversarial_accuracy_ci_low"][a]),
            pct(r["adversarial_accuracy_ci_high"][a]))])
    transfer = t.transfer
    assert transfer is not None  # called when DDi-AT ran
    rows.append(["ddi-at", "base"] + [v for a in t.attacks for v in _iv(proportion_of(
        transfer[a]["correct_adversarial"]))])
    return Table("transfer", "Transfer attacks (Table 4): adversarial examples found on the source, adversarial "
                 "accuracy (%) of the target (own-source rows: mean over seeds, per-run interval; transfer: seed "
                 f"{t.seeds[0]}, Clopper-Pearson)", tuple(cols), tuple(tuple(r) for r in rows), {c: "%" for c in cols[2:]},
                 {a: PCT for a in t.attacks})


def ablation_table(t: TextOutcome) -> Table:
    res = t.ablation
    assert res is not None  # called when the ablation ran
    cols, rows = ["setting"], [[r["setting"]] for r in res["rows"]]
    for c in ("accuracy", "confidence"):
        cols += [c, f"{c}_ci_low", f"{c}_ci_high", f"{c} over seeds", f"{c} over seeds_ci_low",
                 f"{c} over seeds_ci_high"]
        for row, r in zip(rows, res["rows"], strict=True):
            lo = r[f"{c}_seed_ci_low"]
            row += [pct(r[c]), pct(r[f"{c}_ci_low"]), pct(r[f"{c}_ci_high"]), pct(r[c]) if lo is not None else None,
                    pct(lo), pct(r[f"{c}_seed_ci_high"])]
    return Table("ddi_normalization", f"DDi-AT gradient normalisation (Table 5): clean accuracy and mean confidence "
                 f"(%) on {res['n']} test texts after fine-tuning base with DDi-AT, seeds {res['seeds']}; per-run "
                 "intervals (Clopper-Pearson / BCa bootstrap, hull over seeds) and Student-t intervals over seeds",
                 tuple(cols), tuple(tuple(r) for r in rows), {c: "%" for c in cols[1:]},
                 {c: PCT for c in ("accuracy", "confidence")})


def sweep_table(t: TextOutcome, seed: int) -> Table:
    rows = []
    for p in t.sweep:
        k = int(round(p["adversarial_accuracy"] * t.n_test))
        rows.append([p["temperature"], pct(p["mean_confidence"]), *_iv(proportion_of([True] * k + [False] * (t.n_test - k)))])
    cols = ("T", "mean confidence", "adversarial accuracy", "adversarial accuracy_ci_low",
            "adversarial accuracy_ci_high")
    return Table("sweep", f"Fig. 1: the base model served at temperature T, attacked with {t.sweep_attack} on the "
                 f"n = {t.n_test} test texts (seed {seed}): mean predicted-class "
                 "confidence and adversarial accuracy (%, 95 % Clopper-Pearson)", cols, tuple(rows),
                 {"T": "temperature", "mean confidence": "%", "adversarial accuracy": "%"},
                 {"adversarial accuracy": PCT})


def paper_table(t: TextOutcome) -> Table | None:
    ref = paper_values()["table3"]
    rows = []
    for r in t.rows:
        paper = ref.get(r["system"], {}).get(r["mode"], {})
        for a in t.attacks:
            if a in paper:
                rows.append([lab(r["system"]), "-" if r["mode"] == "plain" else r["mode"], a,
                             pct(r["adversarial_accuracy"][a]), pct(r["adversarial_accuracy_ci_low"][a]),
                             pct(r["adversarial_accuracy_ci_high"][a]), paper[a][0], paper[a][1]])
    if not rows:
        return None
    cols = ("system", "adversary", "attack", "this run", "this run_ci_low", "this run_ci_high", "paper",
            "paper std over seeds")
    return Table("paper_comparison", "Adversarial accuracy (%) here beside the paper's Tables 3 and 13 (Rotten "
                 "Tomatoes, DeBERTa-base, mean ± std over 3 seeds; a different model and data: compare the pattern "
                 "plain > cal ≈ opt ≈ base, not the values)", cols, tuple(rows),
                 {c: "%" for c in cols[3:]}, {"this run": PCT})


# ---------------------------------------------------------------------------------------------- vision table


def vision_verdicts(v: VisionOutcome, threshold: float) -> dict[str, dict]:
    tab = IllusionTable(("pgd",), tuple(v.rows))
    return {k: tab.verdict(k, "pgd", threshold) for k in v.systems}


def vision_table(v: VisionOutcome, vv: dict[str, dict], eps: float, threshold: float) -> Table:
    cols = ["model", "clean", "clean_ci_low", "clean_ci_high"]
    for m in ("plain PGD", "cal", "opt"):
        cols += [m, f"{m}_ci_low", f"{m}_ci_high", f"{m} over seeds", f"{m} over seeds_ci_low",
                 f"{m} over seeds_ci_high"]
    cols += ["robust accuracy (AutoAttack)", "robust accuracy (AutoAttack)_ci_low",
             "robust accuracy (AutoAttack)_ci_high", "PGD − AutoAttack", "PGD − AutoAttack_ci_low",
             "PGD − AutoAttack_ci_high", "PGD fooled", "illusion", "drop", "drop_ci_low", "drop_ci_high",
             "McNemar p", "resolved", "separable val"]
    out = []
    for k, t_d in v.systems.items():
        by = {r["mode"]: r for r in v.rows if r["system"] == k}
        row: list = [lab(k) + ("" if t_d is None else f" (T_d={float(t_d):g})"), *_iv(_clean_interval(by["plain"]))]
        for m in ("plain", "cal", "opt"):
            r = by[m]
            row += [pct(r["adversarial_accuracy"]["pgd"]), pct(r["adversarial_accuracy_ci_low"]["pgd"]),
                    pct(r["adversarial_accuracy_ci_high"]["pgd"]), *_seed_cells(r, "pgd")]
        aa = v.autoattack.get(k)
        row += [*(_iv(proportion_of(aa["correct_adversarial"])) if aa else (None, None, None)),
                *(_iv(v.gap[k]) if k in v.gap else (None, None, None)),
                bool(v.gap[k]["low"] > 0) if k in v.gap else None]
        x = vv[k]
        row += [x["illusion"], *_iv(x["difference"]), x["mcnemar"]["p_value"], x["resolved"],
                bool(by["cal"]["separable"])]
        out.append(row)
    units = {c: "%" for c in cols if c + "_ci_low" in cols}
    units.update({"drop": "points", "PGD − AutoAttack": "points", "McNemar p": "p-value"})
    bounds = {c: PCT for c in cols if c + "_ci_low" in cols} | {"drop": (-100.0, 100.0),
                                                                  "PGD − AutoAttack": (-100.0, 100.0)}
    return Table("vision_ior", f"IOR check on the vision model with {v.pgd_name} on n = {v.n} images × seeds "
                 f"{v.seeds}: robust accuracy (%) under PGD at the adversary's temperatures (mean over seeds, per-run "
                 "95 % Clopper-Pearson interval, Student-t over seeds) beside standard AutoAttack on the same points ("
                 f"{v.autoattack_name or 'not run'}); PGD fooled: the paired interval of PGD − AutoAttack lies above "
                 f"0; illusion: the best of cal/opt more than {100 * threshold:.1f} points below plain PGD, resolved "
                 f"by McNemar's test and the paired interval on the same images (L∞ ε = {eps:g})", tuple(cols),
                 tuple(out), units, bounds)


# ------------------------------------------------------------------------------------------------- records


def text_records(t: TextOutcome, data) -> list[dict]:
    n = t.n_test
    tab = IllusionTable(tuple(t.attacks), tuple(t.rows))
    return tab.sample_records(np.asarray(data.test.y[:n]), ids=[data.test.id_of(i) for i in range(n)],
                              inputs=list(data.test.x[:n]), label_names=data.test.label_names)


def vision_records(v: VisionOutcome, data) -> list[dict]:
    n = v.n
    split = data.vision_test
    names = split.label_names
    y = np.asarray(split.y[:n])
    recs = IllusionTable(("pgd",), tuple(v.rows)).sample_records(
        y, ids=[split.id_of(i) for i in range(n)], inputs=[f"vision_test[{i}]" for i in range(n)], label_names=names)
    for r in recs:
        r["attack"] = v.pgd_name
    for k, ev in v.autoattack.items():
        for i in range(n):
            recs.append({"id": split.id_of(i), "input": f"vision_test[{i}]", "label": split.name_of(y[i]),
                         "system": k, "mode": "plain", "attack": v.autoattack_name, "seed": v.seeds[0],
                         "temperature": 1.0, "prediction": split.name_of(ev["predictions"][i]),
                         "confidence": ev["confidences"][i], "adv_input": None,
                         "adv_prediction": split.name_of(ev["adversarial_predictions"][i]),
                         "adv_confidence": ev["adversarial_confidences"][i],
                         "adv_correct": bool(ev["correct_adversarial"][i])})
    return recs


# ------------------------------------------------------------------------------------------------- chance


def chance_check(correct: list[bool], y: Any) -> tuple[Interval, float, bool]:
    """Clean accuracy with its interval, the majority-class share, and whether the model is at chance."""
    acc = proportion_of(correct)
    share = chance_rate(np.asarray(y))
    return acc, share, at_chance(int(np.sum(correct)), len(correct), share)
