"""The experiment's result: :class:`Result` (its title, the tables, metrics, records, summary and notes) and
:func:`assemble`, which writes it from the text and vision outcomes."""

from __future__ import annotations

from dataclasses import dataclass

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import ExperimentResult, Metric, Table, ci_of, headline
from robustsuite_common.intervals import Interval, proportion_of
from robustsuite_common.verdict import Check

from ..ior import paired_verdict
from . import tables as tb
from .config import Config
from .effects import effect_metrics, paper_effects
from .inputs import Data, Models
from .text import TextOutcome
from .vision import VisionOutcome

__all__ = ["TITLE", "Result", "assemble"]

TITLE = "Illusion of robustness: extreme confidence, adversary temperature scaling, DDi-AT"


@dataclass(frozen=True)
class Result(ExperimentResult):
    """The experiment's result: tables ``ior_table``, ``ior_verdict``, ``confidence``, ``paper_comparison``,
    ``sweep`` (and ``transfer``, ``ddi_normalization``, ``vision_ior`` when run), metrics (``ior_<system>[_<attack>]``
    verdicts, ``ior_drop_*`` with paired intervals, ``T_cal_*``, ``clean_accuracy``, ``model_at_chance``, ...),
    per-sample ``records["text"]`` / ``records["vision"]``, summary, notes and warnings."""

    title = TITLE

    @property
    def model_at_chance(self) -> bool:
        """Whether the text model is at chance (its clean accuracy's interval contains the majority-class share);
        ``False`` when no text part ran (the audit preset)."""
        return bool(self.value("model_at_chance")) if "model_at_chance" in self.metrics else False

    def illusion(self, system: str, attack: str | None = None) -> bool:
        """Whether the IOR is flagged for ``system`` (``"up_conf"``, ...) under ``attack`` (default: the attack
        of the Brent search)."""
        opt = self.value("opt_attack")
        return bool(self.value(f"ior_{system}" + ("" if attack in (None, opt) else f"_{attack}")))

    def resolved(self, system: str, attack: str | None = None) -> bool:
        """Whether that illusion is resolved by the paired test (McNemar and the paired interval)."""
        opt = self.value("opt_attack")
        return bool(self.value(f"ior_resolved_{system}" + ("" if attack in (None, opt) else f"_{attack}")))


def assemble(t: TextOutcome, v: VisionOutcome | None, models: Models, data: Data, cfg: Config) -> Result:
    """The result of a run from its text outcome ``t`` and vision outcome ``v`` (``None``: no vision model): the
    tables, metrics, per-sample records, notes, summary and (``cfg.audit.enabled``) the audit's checks."""
    tables: list[Table] = [tb.ior_table(t)]
    vt = tb.verdicts(t, cfg.threshold)
    verdict = tb.verdict_table(
        "ior_verdict", f"IOR verdict per system and attack (n = {t.n_test} texts, seeds {t.seeds}): plain against the "
        f"adversary's best temperature on the same texts; drop = its paired difference (points, 95 % bootstrap "
        f"over texts, seeds averaged per text); illusion when the drop exceeds {100 * cfg.threshold:.1f} points; "
        "resolved when McNemar's exact test rejects on every seed (largest p < 0.05) and the paired interval lies "
        "above 0", vt, "system")
    tables.append(verdict)
    tables.append(tb.confidence_table(t, cfg.seed))
    if t.transfer is not None:
        tables.append(tb.transfer_table(t))
    if t.ablation is not None:
        tables.append(tb.ablation_table(t))
    if t.sweep:
        tables.append(tb.sweep_table(t, cfg.seed))
    paper = tb.paper_table(t)
    if paper is not None:
        tables.append(paper)
    vv = None
    if v is not None:
        vv = tb.vision_verdicts(v, cfg.threshold)
        tables.append(tb.vision_table(v, vv, cfg.vision.eps, cfg.threshold))

    metrics, warnings = _metrics(t, v, vt, vv, data)
    metrics.update(effect_metrics(t, vt, cfg.threshold))
    tables.append(paper_effects(metrics))
    tables.insert(0, _headline(metrics["clean_accuracy"].interval, verdict, t.n_test))
    records = {"text": tb.text_records(t, data)}
    if v is not None:
        records["vision"] = tb.vision_records(v, data)
    notes = _notes(t, v, cfg)
    summary = _summary(t, v, vt, vv, metrics, cfg)
    checks: tuple[Check, ...] = ()
    if cfg.audit.enabled and models.vision is not None:
        from .audit import audit_checks, audit_table

        checks = audit_checks(models, data, cfg)
        tables.append(audit_table(checks))
    return Result("iortemp", to_dict(cfg), {table.name: table for table in tables}, metrics, summary, records, tuple(notes),
                  tuple(warnings), checks)



def _headline(clean, verdict: Table, n: int) -> Table:
    """Clean accuracy against the accuracy under the adversary's best temperature, per system and attack (%)."""
    pct = (100 * clean.estimate, 100 * clean.low, 100 * clean.high)
    return headline(f"Clean vs adversarial accuracy (%) under the adversary's best temperature (n = {n} texts)",
                    [(f"{r['system']} · {r['attack']}", pct, ci_of(r, "best of cal/opt"),
                      f"{r['attack']}, {r['best adversary']} temperature") for r in verdict.records()],
                    unit="%", bounds=(0.0, 100.0))


def _metrics(t, v, vt, vv, data) -> tuple[dict[str, Metric], list[str]]:
    m: dict[str, Metric] = {}
    warnings: list[str] = []
    base = tb._row(t.rows, "base", "plain")
    acc, share, chance = tb.chance_check(base["clean_correct"], data.test.y[: t.n_test])
    m["clean_accuracy"] = Metric.of(acc, "clean accuracy of the text model (base)", "fraction")
    m["majority_share"] = Metric(share, "majority-class share of the test texts (chance)", "fraction")
    m["model_at_chance"] = Metric(chance, "text model at chance (clean accuracy's interval contains the majority "
                                          "share)", "")
    if chance:
        warnings.append(f"The text model is at chance: its clean accuracy {100 * acc.estimate:.1f} % [{100 * acc.low:.1f}, "
                        f"{100 * acc.high:.1f}] contains the majority-class share {100 * share:.1f} %; its attack "
                        "numbers and IOR verdicts carry no information.")
    for (k, a), x in vt.items():
        sfx = "" if a == t.opt_attack else f"_{a}"
        who = f"{tb.lab(k)} under {a}"
        m[f"ior_{k}{sfx}"] = Metric(x["illusion"], f"IOR flagged: {who}", "")
        m[f"ior_resolved_{k}{sfx}"] = Metric(x["resolved"], f"IOR resolved by the paired test: {who}", "")
        m[f"ior_drop_{k}{sfx}"] = Metric.of(Interval.from_dict(x["difference"]),
                                            f"adversarial-accuracy drop, plain − best temperature: {who}", "fraction")
        m[f"ior_p_{k}{sfx}"] = Metric(x["mcnemar"]["p_value"], f"McNemar p (largest over seeds), plain vs best: {who}",
                                      "p-value")
    for k in t.systems:
        cal, opt = tb._row(t.rows, k, "cal"), tb._row(t.rows, k, "opt")
        m[f"T_cal_{k}"] = Metric(cal["temperature"], f"calibrated adversary temperature T_a, {tb.lab(k)}",
                                 "temperature")
        m[f"T_opt_{k}"] = Metric(opt["temperature"], f"optimised adversary temperature T_a (first seed), {tb.lab(k)}",
                                 "temperature")
        m[f"separable_val_{k}"] = Metric(bool(cal.get("separable", False)),
                                         f"validation texts perfectly classified (T_cal bounded), {tb.lab(k)}", "")
    m["n_test"] = Metric(t.n_test, "test texts attacked", "texts")
    m["n_val"] = Metric(t.n_val, "validation texts", "texts")
    m["seeds"] = Metric(len(t.seeds), "attack seeds", "count")
    m["opt_attack"] = Metric(t.opt_attack, "attack of the Brent search", "")
    m["attacks_run"] = Metric(",".join(t.attacks), "text attacks run", "")
    if v is not None:
        plain = tb._row(v.rows, "base", "plain")
        vacc, vshare, vchance = tb.chance_check(plain["clean_correct"], data.vision_test.y[: v.n])
        m["vision_clean_accuracy"] = Metric.of(vacc, "clean accuracy of the vision model (base)", "fraction")
        m["vision_model_at_chance"] = Metric(vchance, "vision model at chance", "")
        if vchance:
            warnings.append(f"The vision model is at chance: clean accuracy {100 * vacc.estimate:.1f} % contains the "
                            f"majority-class share {100 * vshare:.1f} %; its attack numbers carry no information.")
        for k, x in vv.items():
            m[f"vision_ior_{k}"] = Metric(x["illusion"], f"vision IOR flagged (PGD): {tb.lab(k)}", "")
            m[f"vision_ior_resolved_{k}"] = Metric(x["resolved"], f"vision IOR resolved by the paired test: "
                                                                  f"{tb.lab(k)}", "")
            r = tb._row(v.rows, k, "plain")
            m[f"vision_robust_accuracy_pgd_{k}"] = Metric(
                r["adversarial_accuracy"]["pgd"], f"robust accuracy under {v.pgd_name} (mean over seeds), {tb.lab(k)}",
                "fraction")
            if k in v.autoattack:
                aa = proportion_of(v.autoattack[k]["correct_adversarial"])
                m[f"vision_robust_accuracy_{k}"] = Metric.of(aa, f"robust accuracy (standard AutoAttack), {tb.lab(k)}",
                                                             "fraction")
                m[f"vision_pgd_minus_autoattack_{k}"] = Metric.of(
                    Interval.from_dict(v.gap[k]), f"PGD − AutoAttack robust accuracy (paired), {tb.lab(k)}", "fraction")
                m[f"vision_pgd_fooled_{k}"] = Metric(bool(v.gap[k]["low"] > 0), f"PGD leaves clearly more points "
                                                     f"robust than AutoAttack (sanity flag), {tb.lab(k)}", "")
    return m, warnings


def _fmt(iv: dict) -> str:
    return f"{100 * iv['estimate']:.1f} [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}]"


def _summary(t, v, vt, vv, metrics, cfg: Config) -> str:
    acc = metrics["clean_accuracy"]
    parts = []
    if metrics["model_at_chance"].value:
        parts.append("The text model is at chance (its clean accuracy's interval contains the majority-class share): "
                     "the attack numbers below carry no information.")
    parts.append(f"{len(t.attacks)} attack(s) on {t.n_test} test texts × {len(t.seeds)} seed(s); clean accuracy "
                 f"{100 * acc.value:.1f} % [{100 * acc.interval.low:.1f}, {100 * acc.interval.high:.1f}].")
    for a in t.attacks:
        b = tb._row(t.rows, "base", "plain")
        txt = f" {a}: base {100 * b['adversarial_accuracy'][a]:.1f} %"
        up = tb._row(t.rows, "up_conf", "plain")
        gap = paired_verdict(up["adversarial_correct"][a], b["adversarial_correct"][a], threshold=0.0,
                             seed=cfg.seed)
        txt += (f", ↑conf {100 * up['adversarial_accuracy'][a]:.1f} % plain (paired difference to base "
                f"{_fmt(gap['difference'])} points, McNemar p = {gap['mcnemar']['p_value']:.2g}), "
                f"{100 * tb._row(t.rows, 'up_conf', 'cal')['adversarial_accuracy'][a]:.1f} % calibrated, "
                f"{100 * tb._row(t.rows, 'up_conf', 'opt')['adversarial_accuracy'][a]:.1f} % optimised")
        flagged = [k for k in t.systems if vt[(k, a)]["illusion"]]
        resolved = [tb.lab(k) for k in flagged if vt[(k, a)]["resolved"]]
        open_ = [tb.lab(k) for k in flagged if not vt[(k, a)]["resolved"]]
        txt += "; IOR flagged for " + (", ".join(tb.lab(k) for k in flagged) if flagged else "no system")
        if resolved:
            txt += f", resolved by the paired test for {', '.join(resolved)}"
        if open_:
            txt += f" (not resolved for {', '.join(open_)})"
        parts.append(txt + ".")
    if v is not None:
        vb = tb._row(v.rows, "base", "plain")["adversarial_accuracy"]["pgd"]
        vu = {r["mode"]: r["adversarial_accuracy"]["pgd"] for r in v.rows if r["system"] == "up_conf"}
        txt = (f" Vision ({v.pgd_name}, {v.n} images): base {100 * vb:.1f} %, ↑conf {100 * vu['plain']:.1f} % plain, "
               f"{100 * vu['cal']:.1f} % calibrated, {100 * vu['opt']:.1f} % optimised; IOR flagged for "
               + (", ".join(tb.lab(k) for k, x in vv.items() if x["illusion"]) or "no system") + ".")
        fooled = [k for k in v.gap if v.gap[k]["low"] > 0]
        for k in fooled:
            aa = metrics[f"vision_robust_accuracy_{k}"]
            txt += (f" PGD is fooled on {tb.lab(k)}: it leaves {100 * metrics[f'vision_robust_accuracy_pgd_{k}'].value:.1f}"
                    f" % robust where standard AutoAttack leaves {100 * aa.value:.1f} % (paired difference "
                    f"{_fmt(v.gap[k])} points).")
        if v.autoattack and not fooled:
            txt += " PGD and AutoAttack agree on every served system (no paired difference above 0)."
        if metrics["vision_model_at_chance"].value:
            txt = " The vision model is at chance: its attack numbers carry no information." + txt
        parts.append(txt)
    return "".join(parts)


def _notes(t, v, cfg: Config) -> list[str]:
    notes = list(t.notes)
    notes += [
        "Served systems return float32 logits/T_d (what TextAttack sees, saturating at T_d = 0.005); confidences, "
        "ECE/MCE and calibration use float64 logits, so ↓conf reports ~50.0000x % (or 100/K %) rather than NaN.",
        "Adversarial examples found on the temperature-modified model are always scored on the served model.",
        "Intervals: accuracies carry the per-run 95 % Clopper-Pearson interval over the n inputs (with several seeds "
        "the hull of the seeds' intervals: the seeds attack the same inputs) and, with three or more seeds, the 95 % "
        "Student-t interval of the mean over seeds. Verdicts compare conditions on the same inputs: McNemar's exact "
        "test per seed and a paired bootstrap interval of the per-input difference (seeds averaged per input). PWWS "
        "is deterministic: its seeds repeat one run at a fixed temperature.",
    ]
    if "textfooler" not in t.attacks or "bae" not in t.attacks:
        notes.append("TextFooler and BAE need counter-fitted embeddings / a masked LM (local paths text.attacks."
                     "embedding / masked_lm) and TensorFlow Hub's Universal Sentence Encoder; they ran only if "
                     "listed in text.attacks.names and available.")
    if t.ddi_info is not None:
        d = cfg.ddi_at
        notes.append(f"ddi-at: fine-tuned from base with DDi-AT (M={d.m}, K={d.k}, {d.normalization}, lr {d.lr}, "
                     f"adversary sizes {d.adv_scale}) for {d.epochs} epoch(s); mean simplex weights "
                     f"{t.ddi_info.get('mean_simplex_weights')}.")
    if v is not None:
        notes += v.notes
        notes.append(f"Vision: {v.pgd_name} is the paper-style attack fooled by a temperature (kept and named); the "
                     "robust-accuracy column is standard AutoAttack on the same points "
                     f"({v.autoattack_name or 'not run'}).")
    return notes
