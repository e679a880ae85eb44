"""Regenerate the tables of measured numbers in README files from committed JSON results.

A README marks each generated table with a pair of HTML comments::

    <!-- numbers:builtin-models -->
    (generated: do not edit by hand)
    <!-- /numbers:builtin-models -->

and :data:`TABLES` (the one place that maps a name to its numbers) says where the numbers come from: the
shipped models' build record (``resources/manifest.json``, written by ``tools/build/build_builtin.py``) or a
section of a committed demo report (``report.json``, schema 2.0; a 1.x report is read through
``robustsuite.report.migrate``): a report table (``X_ci_low`` / ``X_ci_high`` columns folded into ``X [lo,
hi]``), or a list of metrics (each shown with its interval as ``x [lo, hi]``). A table, column, section or metric
the report no longer has (renamed, removed) is an error naming the README block and what the report has.

    uv run python tools/dev/readme_numbers.py                  # rewrite every marked block
    uv run python tools/dev/readme_numbers.py --check          # exit 1 if a block disagrees with its source
    uv run python tools/dev/readme_numbers.py --report runs/demo/report.json README.md
    uv run python tools/dev/readme_numbers.py --prose          # exit 1 if prose states an interval no record has

Besides tables, a block can be a sentence (:class:`Sentence`): a template whose fields are a report metric or a
table cell, each rendered ``x [lo, hi]``, and whose verdict fields say in words what the interval shows
(``above zero`` / ``below zero`` / ``not separated from zero``).

The prose check (:func:`unmatched_intervals`): every ``x [lo, hi]`` written in a README or a docs page outside
the generated blocks must match, at the precision it is written, an interval recorded in ``docs/demo/report.json``
or ``docs/benchmarks/*/report.json`` (a metric's interval, a table's ``_ci_low``/``_ci_high`` pair, or an
interval written in a section's summary or notes), read when the check runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robustsuite.report import format_value as fmt  # the report's own cell format
from robustsuite.report import migrate

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "packages/robustsuite/src/robustsuite/resources/manifest.json"
DEFAULT_REPORT = ROOT / "docs/demo/report.json"  # where the integrator commits the demo report
PAPER_CPU_REPORT = ROOT / "docs/benchmarks/paper-cpu/report.json"  # the recorded paper-cpu benchmark (issue 26)
BENCH = ROOT / "docs/benchmarks/demo"  # the first run's timings (tools/bench/bench_demo.py, bench_uncspan.py)
MARKER = re.compile(r"<!-- numbers:(?P<name>[A-Za-z0-9_.-]+) -->\n(?P<body>.*?)<!-- /numbers:(?P=name) -->",
                    re.S)
OPEN = re.compile(r"<!-- numbers:([A-Za-z0-9_.-]+) -->")
CLOSE = re.compile(r"<!-- /numbers:([A-Za-z0-9_.-]+) -->")


class NumbersError(ValueError):
    """A README block that cannot be generated (unknown name, missing source, unbalanced markers)."""


def pct(v: float, lo: float | None = None, hi: float | None = None) -> str:
    """``91.3 % [90.7, 91.8]`` (percent, one decimal) for a rate with an optional interval."""
    s = f"{100 * v:.1f} %"
    return s if lo is None or hi is None else f"{s} [{100 * lo:.1f}, {100 * hi:.1f}]"


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --- sources --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ManifestTable:
    """One row per shipped model from the build record."""

    models: Sequence[str]

    source = "manifest"

    def render(self, manifest: dict) -> str:
        rows = []
        for name in self.models:
            if name not in manifest["models"]:
                raise NumbersError(f"manifest.json has no model {name!r}: run tools/build/build_builtin.py")
            m = manifest["models"][name]
            full, ship = m["test_full"], m["test_shipped"]
            files = [info["bytes"] for rel, info in manifest["files"].items()
                     if rel == f"models/{name}.safetensors" or rel.startswith(f"models/{name}/")]
            other = []
            if "test_full_noisy" in m:
                r = m["test_full_noisy"]
                other.append(f"under its training noise σ = {m['recipe']['noise_sigma']}: "
                             f"{pct(r['accuracy'], r['ci_low'], r['ci_high'])}")
            if "pgd_shipped" in m:
                r = m["pgd_shipped"]
                other.append(f"PGD-{r['steps']} L∞ ε = {r['eps']} (first {r['n']:,} shipped test images): "
                             f"{pct(r['accuracy'], r['ci_low'], r['ci_high'])}")
            rows.append([f"`builtin:{name}`", f"{m['train_size']:,}", f"{m['params']:,}",
                         f"{sum(files) / 1e6:.2f} MB",
                         f"{pct(full['accuracy'], full['ci_low'], full['ci_high'])} (n = {full['n']:,})",
                         f"{pct(ship['accuracy'], ship['ci_low'], ship['ci_high'])} (n = {ship['n']:,})",
                         "; ".join(other) or "–"])
        return markdown_table(["model", "trained on", "parameters", "weights", "clean test accuracy [95 % CI]",
                               "on the shipped test subset", "also measured"], rows)


@dataclass(frozen=True)
class ReportTable:
    """A table of a report section (optionally a subset of its columns; ``<col>_ci_low/_ci_high`` columns
    are folded into ``<col>`` as ``x [lo, hi]``)."""

    section: str
    table: str
    columns: Sequence[str] | None = None
    digits: int = 4
    source: str = "report"  # or "paper-cpu": docs/benchmarks/paper-cpu/report.json

    def render(self, report: dict) -> str:
        sec = _section(report, self.section)
        t = next((t for t in sec["tables"] if t["name"] == self.table), None)
        if t is None:
            raise NumbersError(f"report section {self.section!r} has no table {self.table!r}; "
                               f"has {[t['name'] for t in sec['tables']]}")
        cols = list(t["columns"])
        wanted = list(self.columns) if self.columns else [c for c in cols if not c.endswith(("_ci_low", "_ci_high"))]
        missing = [c for c in wanted if c not in cols]
        if missing:
            raise NumbersError(f"report table {self.section}/{self.table} has no column(s) {missing}; has {cols}")
        rows = []
        for row in t["rows"]:
            rec = dict(zip(cols, row, strict=True))
            rows.append([_with_ci(rec, c, self.digits) for c in wanted])
        return markdown_table(wanted, rows)


@dataclass(frozen=True)
class Verdicts:
    """The banner a report opens with: one line per model (status in words with its icon, robust accuracy with its
    interval, the rule that gave the status), rendered as the report renders it."""

    source: str = "report"

    def render(self, report: dict) -> str:
        from robustsuite.report.render import verdict_view

        if not report.get("verdicts"):
            raise NumbersError("the report has no verdicts (written before schema 2.1: regenerate it)")
        views = [verdict_view(v) for v in report["verdicts"]]
        return "\n".join(f"> {v['icon']} **{v['model']}: {v['words']}** — {v['robust']}. {v['rule']}.\n>"
                         for v in views).rstrip(">\n")


@dataclass(frozen=True)
class ReportMetrics:
    """Chosen metrics of a report section as ``| label | value |`` rows."""

    section: str
    metrics: Sequence[tuple[str, str]] = field(default_factory=tuple)  # (label, metric key)
    digits: int = 4

    source = "report"

    def render(self, report: dict) -> str:
        sec = _section(report, self.section)
        missing = [k for _, k in self.metrics if k not in sec["metrics"]]
        if missing:
            raise NumbersError(f"report section {self.section!r} has no metric(s) {missing}; has "
                               f"{sorted(sec['metrics'])}")
        return markdown_table(["metric", "value"], [[label, _metric(sec["metrics"][key], self.digits)]
                                                    for label, key in self.metrics])


def _section(report: dict, name: str) -> dict:
    if name not in report.get("sections", {}):
        raise NumbersError(f"report has no section {name!r}; has {sorted(report.get('sections', {}))}")
    return report["sections"][name]


def _metric(m: dict, digits: int) -> str:
    """A 2.0 metric as ``x [lo, hi]``."""
    iv = m.get("interval")
    s = fmt(m["value"], digits)
    return s if not iv else f"{s} [{fmt(iv['low'], digits)}, {fmt(iv['high'], digits)}]"


def _with_ci(rec: dict, key: str, digits: int) -> str:
    s = fmt(rec[key], digits)
    lo, hi = rec.get(f"{key}_ci_low"), rec.get(f"{key}_ci_high")
    return s if lo is None or hi is None else f"{s} [{fmt(lo, digits)}, {fmt(hi, digits)}]"


@dataclass(frozen=True)
class Metric:
    """A report metric (its value and, when recorded, its interval)."""

    section: str
    key: str
    signed: bool = False  # a difference: written with its sign (+0.07)

    def get(self, report: dict) -> tuple[float, float | None, float | None]:
        sec = _section(report, self.section)
        if self.key not in sec["metrics"]:
            raise NumbersError(f"report section {self.section!r} has no metric {self.key!r}; has "
                               f"{sorted(sec['metrics'])}")
        m = sec["metrics"][self.key]
        iv = m.get("interval") or {}
        return m["value"], iv.get("low"), iv.get("high")


@dataclass(frozen=True)
class Cell:
    """One cell of a report table: the row whose columns equal ``where``, column ``column`` (with its
    ``_ci_low`` / ``_ci_high`` interval when the table has one)."""

    section: str
    table: str
    where: tuple[tuple[str, object], ...]
    column: str
    signed: bool = False

    def get(self, report: dict) -> tuple[float, float | None, float | None]:
        sec = _section(report, self.section)
        t = next((t for t in sec["tables"] if t["name"] == self.table), None)
        if t is None:
            raise NumbersError(f"report section {self.section!r} has no table {self.table!r}")
        cols = list(t["columns"])
        missing = [c for c in (self.column, *(k for k, _ in self.where)) if c not in cols]
        if missing:
            raise NumbersError(f"report table {self.section}/{self.table} has no column(s) {missing}; has {cols}")
        rows = [dict(zip(cols, r, strict=True)) for r in t["rows"]]
        hits = [r for r in rows if all(r[k] == v for k, v in self.where)]
        if len(hits) != 1:
            raise NumbersError(f"report table {self.section}/{self.table}: {len(hits)} rows match {dict(self.where)} "
                               "(need exactly one)")
        r = hits[0]
        return r[self.column], r.get(f"{self.column}_ci_low"), r.get(f"{self.column}_ci_high")


def clauses(text: str) -> list[str]:
    """``text`` split at ``; `` and at a sentence end (``. `` before a capital), outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        nxt = text[i + 1:i + 3]
        if depth == 0 and ((ch == ";" and nxt[:1] == " ") or (ch == "." and nxt[:1] == " " and nxt[1:].isupper())):
            out.append(text[start:i])
            start = i + 2
    return [*out, text[start:]]


@dataclass(frozen=True)
class Clause:
    """The clause of a section's summary that starts with ``start`` (the summary's ``;``- or ``.``-separated verdicts,
    written by the method from its own numbers), quoted as it is."""

    section: str
    start: str
    signed: bool = False

    def get(self, report: dict) -> str:
        summary = _section(report, self.section).get("summary") or ""
        hits = [c.strip().rstrip(".") for c in clauses(summary) if c.strip().startswith(self.start)]
        if len(hits) != 1:
            raise NumbersError(f"report section {self.section!r}: {len(hits)} summary clauses start with "
                               f"{self.start!r} (need exactly one)")
        return hits[0]


FIELD = re.compile(r"\{(?P<name>\w+)(?:\.(?P<part>verdict|value))?\}")


@dataclass(frozen=True)
class Sentence:
    """A sentence stating a verdict, generated from a record: ``{name}`` is the field as ``x [lo, hi]``,
    ``{name.value}`` the number alone, ``{name.verdict}`` what its interval says about zero (``above zero``,
    ``below zero``, ``not separated from zero``). Fields are :class:`Metric`, :class:`Cell` or :class:`Clause` (a
    verdict the method wrote in its summary, quoted)."""

    template: str
    fields: tuple[tuple[str, Metric | Cell | Clause], ...]
    decimals: int = 2
    source: str = "report"  # or "paper-cpu"

    def render(self, report: dict) -> str:
        fields = dict(self.fields)
        got = {name: f.get(report) for name, f in fields.items()}

        def num(v: float, signed: bool) -> str:
            return f"{v:+.{self.decimals}f}" if signed else f"{v:.{self.decimals}f}"

        def sub(m: re.Match) -> str:
            name, part = m.group("name"), m.group("part")
            if name not in fields:
                raise NumbersError(f"sentence field {name!r} is not defined; defined: {sorted(fields)}")
            if isinstance(got[name], str):
                return got[name]
            (v, lo, hi), signed = got[name], fields[name].signed
            if not isinstance(v, int | float) or isinstance(v, bool):
                return fmt(v)  # a text cell (a reason, a verdict word) or yes/no
            if part == "value":
                return num(v, signed)
            if part == "verdict":
                if lo is None or hi is None:
                    raise NumbersError(f"sentence field {name!r} has no interval, so no verdict")
                return "above zero" if lo > 0 else "below zero" if hi < 0 else "not separated from zero"
            return num(v, signed) if lo is None or hi is None else \
                f"{num(v, signed)} [{num(lo, signed)}, {num(hi, signed)}]"

        return FIELD.sub(sub, self.template)


@dataclass(frozen=True)
class RecordCPU:
    """A recorded benchmark's CPU time as its ``meta.json`` gives it: in all (every process of the run), the part its
    ``cpu.log`` holds, and, for a run that spanned sessions, the sampled and unsampled parts, with how they were
    measured."""

    source: str = "paper-cpu-meta"

    def render(self, meta: dict) -> str:
        rows = [["in all, every process of the run", f"{meta['cpu_hours']:.2f}"]]
        if meta.get("cpu_hours_logged") is not None:
            rows.append(["in `cpu.log` (tasks that finished)", f"{meta['cpu_hours_logged']:.2f}"])
        if meta.get("cpu_hours_sampled") is not None:
            rows += [["sampled from `/proc` once a minute (`tools/dev/cpu_sampler.sh`)",
                      f"{meta['cpu_hours_sampled']:.2f}"],
                     ["not sampled (`cpu.log` lines and estimates)", f"{meta['cpu_hours_unsampled']:.2f}"]]
        return (markdown_table(["CPU time", "CPU-hours"], rows) +
                f"\n\n*Record `{meta['name']}` (`{meta['dir']}/meta.json`) at commit `{meta['code_commit'][:7]}`, "
                f"{meta['machine']['cpus']} CPUs: {meta['cpu_note'].rstrip('.')}.*")


@dataclass(frozen=True)
class DemoTimes:
    """The cold demo's wall and CPU seconds, quiet and busy, with their ratio and targets (bench_demo.py's record)."""

    source = "bench-demo"

    def render(self, rec: dict) -> str:
        t, goal = rec["timings"], rec["targets"]
        rows = [[m + (f" (commit `{t[m]['commit'][:7]}`)" if "commit" in t[m] else ""), f"{t[m]['wall_s']:.0f} s",
                 f"{t[m]['cpu_s']:.0f} CPU-s", f"{t[m]['load_average_before'][0]:.1f}"] for m in t]
        ratio = (f"busy/quiet {rec['busy_over_quiet']:.2f} (target ≤ {goal['busy_over_quiet_max']:g}); "
                 if "busy_over_quiet" in rec else "")
        return (markdown_table(["machine", "wall", "CPU", "load average before"], rows) +
                f"\n\n*{ratio}quiet target ≤ {goal['quiet_wall_s_max']:.0f} s. Record "
                f"`docs/benchmarks/demo/bench_demo.json` (`tools/bench/bench_demo.py`) at commit "
                f"`{rec['commit'][:7]}`, {rec['date']}, {rec['machine']['cpus']} CPUs; {rec['machine']['note']}.*")


@dataclass(frozen=True)
class AttackFloor:
    """uncspan's attacks against the same number of bare forward+backward passes (bench_uncspan.py's record)."""

    source = "bench-uncspan"

    def render(self, rec: dict) -> str:
        f = rec["floor"]
        rows = [[k, f"{v['cpu_seconds']:.3f}", f"{v['cpu_over_floor']:.2f}", f"{v['wall_over_floor']:.2f}"]
                for k, v in rec["figures"].items()]
        return (markdown_table(["attack", "CPU-s", "CPU / floor", "wall / floor"], rows) +
                f"\n\n*Floor: {f['passes']} forward+backward passes, {f['cpu_seconds']:.3f} CPU-s; target: "
                f"{rec['target']}. Record `docs/benchmarks/demo/bench_uncspan.json` (`tools/bench/bench_uncspan.py`) "
                f"at commit `{rec['commit'][:7]}`, {rec['date']}; {rec['machine']['note']}.*")


# --- the one mapping: README block name -> numbers ------------------------------------------------

SHIPPED = ("fashion-cnn", "fashion-cnn-at", "fashion-cnn-noise-0.25", "fashion-cnn-noise-0.5", "fashion-osr-cnn",
           "fashion-osr-cnn-at", "wordnet-roberta")
TABLES: dict[str, ManifestTable | ReportTable | ReportMetrics | Sentence | DemoTimes | AttackFloor] = {
    "bench-demo": DemoTimes(),
    "bench-uncspan": AttackFloor(),
    "builtin-models": ManifestTable(SHIPPED),
    "builtin-small-models": ManifestTable(("digits-cnn", "digits-cnn-at", "digits-osr-cnn", "text-tiny")),
    # the committed demo report (docs/demo/report.json), one block per headline table of the root README
    "demo-overview-fashion": ReportMetrics("overview:builtin:fashion-cnn", (
        ("clean accuracy", "accuracy"), ("ECE, debiased", "ece_debiased"), ("ECE, plug-in", "ece"),
        ("calibration test p", "calibration_p_value"), ("Brier", "brier"), ("data", "data_source"))),
    "demo-verdicts": Verdicts(),
    "demo-overview-fashion-at": ReportTable("overview:builtin:fashion-cnn-at", "headline"),
    "demo-iortemp-text": ReportTable("iortemp", "ior_verdict"),
    "demo-iortemp-vision": ReportTable("iortemp", "vision_ior",
                                       ("model", "clean", "plain PGD", "cal", "opt", "robust accuracy (AutoAttack)",
                                        "PGD fooled", "illusion")),
    "demo-uncspan-span": ReportTable("uncspan", "span",
                                     ("model", "adversarially_trained", "clean_acc", "robust_acc", "robust_attack",
                                      "pgd_robust_acc", "pgd_overstates", "mus_mean")),
    "demo-uncspan-ood": ReportTable("uncspan", "ood_osr", ("model", "outliers", "eps", "auroc", "fpr_at_95_tpr")),
    "demo-zeroe-ranking": ReportTable("zeroe_perturb", "ranking"),
    "demo-zeroe-tau": ReportMetrics("zeroe_perturb", (
        ("clean accuracy", "clean_score"), ("Kendall τ with the paper's ranking", "kendall_tau_paper"),
        ("attackers above chance at p = 0.5", "attackers_above_chance_at_p_0.5"))),
    "demo-transduct-dann": ReportTable("transduct_attack", "dann"),
    "demo-transduct-rmc": ReportTable("transduct_attack", "rmc"),
    "demo-transduct-tadv": ReportTable("transduct_attack", "tadv"),
    "demo-transduct-dent": ReportTable("transduct_attack", "dent"),
    "demo-transduct-dent-adaptation": ReportTable("transduct_attack", "dent_adaptation"),
    "demo-zeroe-tasks": ReportTable("zeroe_perturb", "task_summary",
                                    ("task", "metric", "n", "s(0)", "chance", "margin over chance", "in headline",
                                     "mean s*(0.8)", "most harmful", "attackers above chance")),
    "demo-certcal-act": ReportTable("certcal", "act"),
    "demo-certcal-fixed": ReportTable("certcal", "fixed_set"),
    "demo-certcal-ace": ReportTable("certcal", "ace", ("configuration", "norm", "accuracy", "clean ECE",
                                                       "attacked ECE")),
    # the recorded paper-cpu benchmark (docs/benchmarks/paper-cpu/report.json), in the package READMEs
    "paper-cpu-uncspan-span": ReportTable("uncspan", "span",
                                          ("model", "adversarially_trained", "clean_acc", "robust_acc", "robust_attack",
                                           "pgd_robust_acc", "pgd_overstates", "mus_mean"), source="paper-cpu"),
    "paper-cpu-uncspan-ood": ReportTable("uncspan", "ood_osr", ("model", "outliers", "eps", "auroc", "fpr_at_95_tpr"),
                                         source="paper-cpu"),
    "paper-cpu-zeroe-ranking": ReportTable("zeroe_perturb", "ranking", source="paper-cpu"),
    "paper-cpu-zeroe-tasks": ReportTable("zeroe_perturb", "task_summary",
                                         ("task", "metric", "n", "s(0)", "chance", "margin over chance",
                                          "in headline", "mean s*(0.8)", "most harmful", "attackers above chance",
                                          "left out because"), source="paper-cpu"),
    "paper-cpu-certcal-certified": ReportTable("certcal", "certified", ("sigma", "radius", "CA", "certified", "CBS",
                                                                       "CCE exact", "CCE ADMM", "certifiable"),
                                               source="paper-cpu"),
    "paper-cpu-certcal-act": ReportTable("certcal", "act", ("method", "radius", "CA", "CBS", "CCE exact",
                                                           "CCE vs start", "why"), source="paper-cpu"),
    "paper-cpu-certcal-act-paper": ReportTable("certcal", "act_paper", source="paper-cpu"),
    "paper-cpu-certcal-act-weights": ReportTable("certcal", "act_weights", ("method", "grid point", "max |Δw|",
                                                                           "mean |Δw|"), source="paper-cpu"),
    # each paper's headline effects at its own protocol (issue 35), one table per package and all five in the
    # benchmark's README; the verdict is robustsuite_common.effects.effect_verdict's, from the interval
    **{f"paper-cpu-effects-{sec}": ReportTable(sec, "paper_effects", source="paper-cpu")
       for sec in ("iortemp", "uncspan", "zeroe_perturb", "transduct_attack", "certcal")},
    "paper-cpu-cpu": RecordCPU(),
    "paper-cpu-zeroe-ranking-tc": ReportTable("zeroe_perturb", "ranking_tc", source="paper-cpu"),
    "paper-cpu-zeroe-defense": ReportTable("zeroe_perturb", "defense_ranking", source="paper-cpu"),
    "paper-cpu-certcal-act-paired": ReportTable("certcal", "act_paired", source="paper-cpu"),
    "paper-cpu-certcal-ace": ReportTable("certcal", "ace", ("configuration", "norm", "eps", "clean ECE",
                                                           "attacked ECE", "ECE increase", "predictions unchanged"),
                                         source="paper-cpu"),
    "paper-cpu-transduct-rmc": ReportTable("transduct_attack", "rmc", source="paper-cpu"),
    "paper-cpu-transduct-rmc-seeds": ReportTable("transduct_attack", "rmc_seeds", source="paper-cpu"),
    "paper-cpu-transduct-dent": ReportTable("transduct_attack", "dent", source="paper-cpu"),
    "paper-cpu-transduct-dent-adaptation": ReportTable("transduct_attack", "dent_adaptation", source="paper-cpu"),
    "paper-cpu-transduct-dann": ReportTable("transduct_attack", "dann", source="paper-cpu"),
    "paper-cpu-transduct-tadv": ReportTable("transduct_attack", "tadv", source="paper-cpu"),
    "paper-cpu-iortemp-verdict": ReportTable("iortemp", "ior_verdict", source="paper-cpu"),
    "paper-cpu-iortemp-paper": ReportTable("iortemp", "paper_comparison", source="paper-cpu"),
    "paper-cpu-iortemp-vision": ReportTable("iortemp", "vision_ior", ("model", "clean", "plain PGD", "cal", "opt",
                                                                      "robust accuracy (AutoAttack)", "PGD fooled",
                                                                      "illusion"), source="paper-cpu"),
    # verdict sentences: the section's own summary clauses, quoted (transduct-attack README)
    **{f"paper-cpu-transduct-say-{key}": Sentence("{c}.", (("c", Clause("transduct_attack", start)),),
                                                   source="paper-cpu")
       for key, start in (("rmc-std", "RMC (standard): GMSA-MIN"), ("rmc-at", "RMC (adv. trained) under GMSA-MIN"),
                          ("dann", "DANN (standard base)"), ("dent", "DENT-AA"), ("tadv", "TADV (AT MLP)"))},
    "paper-cpu-iortemp-say-conf": Sentence(
        "DeepWordBug's adversarial accuracy (%) against ↓conf: {dp} plain, {dc} calibrated, {do} optimised (the base "
        "model {b}; paper {pdp}, {pdc}, {pdo}, base {pb}); against ↑conf: {up} plain, {uc} calibrated, {uo} optimised "
        "(paper {pup}, {puc}, {puo}). The paper's §5: calibration removes ↑conf's illusion, ↓conf's needs *opt*.",
        tuple((name, Cell("iortemp", "paper_comparison", (("system", system), ("adversary", adv),
                                                          ("attack", "deepwordbug")), col))
              for name, system, adv, col in (
                  ("dp", "↓conf", "-", "this run"), ("dc", "↓conf", "cal", "this run"),
                  ("do", "↓conf", "opt", "this run"), ("b", "base", "-", "this run"),
                  ("up", "↑conf", "-", "this run"), ("uc", "↑conf", "cal", "this run"),
                  ("uo", "↑conf", "opt", "this run"),
                  ("pdp", "↓conf", "-", "paper"), ("pdc", "↓conf", "cal", "paper"), ("pdo", "↓conf", "opt", "paper"),
                  ("pb", "base", "-", "paper"), ("pup", "↑conf", "-", "paper"), ("puc", "↑conf", "cal", "paper"),
                  ("puo", "↑conf", "opt", "paper"))), source="paper-cpu"),
    "paper-cpu-uncspan-say-span": Sentence(
        "Adversarial training changes the mean span by {d} nats ({d.verdict}; the paper: “adversarial training reduces "
        "the uncertainty span”, §IV and Fig. 1). The adversarially trained model's robust accuracy under PGD minus "
        "that under standard AutoAttack: {g} ({g.verdict}).",
        (("d", Metric("uncspan", "mus_diff_fashion_cnn_at_minus_fashion_cnn", signed=True)),
         ("g", Metric("uncspan", "fashion_cnn_at_pgd_minus_autoattack", signed=True))), decimals=3, source="paper-cpu"),
    "paper-cpu-uncspan-say-ood": Sentence(
        "Under the over-confidence attack the undefended open-set model's AUROC changes by {o} ({o.verdict}) and its "
        "OOD AUROC by {d} ({d.verdict}); the adversarially trained one's by {oa} ({oa.verdict}) and {da} "
        "({da.verdict}). Table V reports a deterioration under attack, complete for undefended models.",
        (("o", Metric("uncspan", "fashion_osr_cnn_open_set_auroc_change", signed=True)),
         ("d", Metric("uncspan", "fashion_osr_cnn_ood_auroc_change", signed=True)),
         ("oa", Metric("uncspan", "fashion_osr_cnn_at_open_set_auroc_change", signed=True)),
         ("da", Metric("uncspan", "fashion_osr_cnn_at_ood_auroc_change", signed=True))), decimals=3,
        source="paper-cpu"),
    "paper-cpu-certcal-say-act": Sentence(
        "At r = 0 the CCE of ACCE-ACT's selected model is {c0}, the SmoothAdv start's {s0}; at the largest radius "
        "the record compares: {c}.",
        (("c0", Cell("certcal", "act", (("method", "ACCE-ACT"), ("radius", 0.0)), "CCE exact")),
         ("s0", Cell("certcal", "act", (("method", "SmoothAdv start (not fine-tuned further)"), ("radius", 0.0)),
                     "CCE exact")),
         ("c", Clause("certcal", "ACT at r="))), source="paper-cpu"),
    "paper-cpu-zeroe-say-ends": Sentence(
        "The ends of the ranking, each with its paired interval: {ends}. The paper's Table 5 (TC) ranks visual "
        "first and intrude second (the `paper rank` column).",
        (("ends", Clause("zeroe_perturb", "At p = 0.8 the most harmful")),),
        source="paper-cpu"),
    "paper-cpu-zeroe-say-pairs": Sentence(
        "Sentence pairs: attacking both sentences leaves s*(0.8) = {both}, the hypothesis alone {hyp} (the paper makes "
        "no claim comparing the two targets; the tasks table above says whether the pair model is far enough above "
        "chance for the headline).",
        (("both", Cell("zeroe_perturb", "task_summary", (("task", "pairs (both)"),), "mean s*(0.8)")),
         ("hyp", Cell("zeroe_perturb", "task_summary", (("task", "pairs (hypothesis)"),), "mean s*(0.8)"))),
        decimals=3, source="paper-cpu"),
    "demo-transduct-say-dann": Sentence("{c}.", (("c", Clause("transduct_attack", "DANN (standard base)")),)),
}


# --- rewriting ------------------------------------------------------------------------------------

def _load(path: Path, what: str) -> dict:
    if not path.is_file():
        raise NumbersError(f"{what} not found: {path}")
    data = json.loads(path.read_text(encoding="utf-8"))
    return migrate(data) if what == "demo report" else data


def render_block(name: str, sources: dict[str, Callable[[], dict]], tables: dict | None = None) -> str:
    tables = TABLES if tables is None else tables
    if name not in tables:
        raise NumbersError(f"unknown numbers block {name!r}; known: {sorted(tables)} (tools/dev/readme_numbers.py TABLES)")
    spec = tables[name]
    try:
        body = spec.render(sources[spec.source]())
        meta = sources.get(f"{spec.source}-meta")
        return body if meta is None or isinstance(spec, Sentence) else f"{body}\n\n{cite(meta())}"
    except NumbersError as e:
        raise NumbersError(f"README block {name!r}: {e} (renamed? update TABLES in tools/dev/readme_numbers.py)") from None


def regenerate(text: str, sources: dict[str, Callable[[], dict]], tables: dict | None = None,
               where: str = "README") -> str:
    """``text`` with every marked block replaced by its generated table."""
    opens, closes = OPEN.findall(text), CLOSE.findall(text)
    if opens != closes:
        raise NumbersError(f"{where}: unbalanced numbers markers (opened {opens}, closed {closes})")

    def sub(m: re.Match) -> str:
        name = m.group("name")
        body = render_block(name, sources, tables)
        return f"<!-- numbers:{name} -->\n{body}\n<!-- /numbers:{name} -->"

    return MARKER.sub(sub, text)


def cite(meta: dict) -> str:
    """The line under a generated table naming its record (a benchmark's ``meta.json``)."""
    cpu = (f"{meta['cpu_hours']:g} CPU-hours" if meta.get("cpu_hours") is not None else "CPU time not logged")
    return (f"*Record `{meta['name']}` (`{meta['dir']}/`): `{meta['command']}` at commit "
            f"`{meta['code_commit'][:7]}`, {meta['machine']['cpus']} CPUs, {cpu}.*")


def load_meta(report: Path) -> dict:
    """The ``meta.json`` beside a recorded report (with ``dir``, its folder relative to the repository)."""
    path = report.parent / "meta.json"
    if not path.is_file():
        raise NumbersError(f"no meta.json beside {report}: a recorded benchmark names its command, machine, "
                           "code commit and CPU time there")
    meta = json.loads(path.read_text(encoding="utf-8"))
    missing = [k for k in ("name", "command", "machine", "code_commit", "cpu_hours") if k not in meta]
    if missing:
        raise NumbersError(f"{path} has no {missing}")
    rel = report.parent.resolve()
    meta["dir"] = str(rel.relative_to(ROOT)) if rel.is_relative_to(ROOT) else str(rel)
    return meta


def default_files() -> list[Path]:
    return prose_files()


def make_sources(report: Path = DEFAULT_REPORT, manifest: Path = MANIFEST) -> dict[str, Callable[[], dict]]:
    cache: dict[str, dict] = {}

    def lazy(key: str, path: Path, what: str) -> Callable[[], dict]:
        def get() -> dict:
            if key not in cache:
                cache[key] = _load(path, what)
            return cache[key]
        return get

    def meta(path: Path) -> Callable[[], dict]:
        return lambda: load_meta(path)

    return {"manifest": lazy("manifest", manifest, "build manifest"), "report": lazy("report", report, "demo report"),
            "paper-cpu": lazy("paper-cpu", PAPER_CPU_REPORT, "paper-cpu benchmark report"),
            "report-meta": meta(DEFAULT_REPORT), "paper-cpu-meta": meta(PAPER_CPU_REPORT),
            "bench-demo": lazy("bench-demo", BENCH / "bench_demo.json", "demo timing record"),
            "bench-uncspan": lazy("bench-uncspan", BENCH / "bench_uncspan.json", "uncspan attack timing record")}


# --- the prose check: every "x [lo, hi]" outside generated blocks is a recorded interval -------------

_NUM = r"[+\-−]?\d+(?:\.\d+)?"
PROSE_INTERVAL = re.compile(rf"(?P<x>{_NUM})\s*(?P<pct>%)?\s*\[\s*(?P<lo>{_NUM})\s*%?\s*,\s*(?P<hi>{_NUM})\s*%?\s*\]")
# in a record's own text (summaries, notes, string cells): "x [lo, hi]" or "x, 95% bootstrap [lo, hi]"
RECORD_INTERVAL = re.compile(rf"(?P<x>{_NUM})(?:,?\s*95\s?%\s*[\w-]*(?: \w+)?)?\s*%?\s*\[\s*(?P<lo>{_NUM})\s*%?\s*,\s*"
                             rf"(?P<hi>{_NUM})\s*%?\s*\]")


def record_reports(root: Path = ROOT) -> list[Path]:
    """The recorded reports prose may cite: the demo and every benchmark under docs/benchmarks/."""
    return [p for p in [root / "docs/demo/report.json", *sorted(root.glob("docs/benchmarks/*/report.json"))]
            if p.is_file()]


def prose_files(root: Path = ROOT) -> list[Path]:
    """README files and the documentation pages (docs/**/*.md)."""
    docs = [p for p in sorted(root.glob("docs/**/*.md")) if p.name != "report.md"]  # report.md: a rendering
    return [root / "README.md", *sorted(root.glob("packages/*/README.md")), *docs]


def _f(s: str) -> float:
    return float(s.replace("−", "-"))


def record_intervals(report: dict) -> list[tuple[float, float, float]]:
    """Every interval a report records: metric intervals, table ``X`` / ``X_ci_low`` / ``X_ci_high`` triples, and
    intervals written in its text (summaries, notes, warnings, string cells)."""
    out: list[tuple[float, float, float]] = []

    def text(s: str) -> None:
        out.extend((_f(m["x"]), _f(m["lo"]), _f(m["hi"])) for m in RECORD_INTERVAL.finditer(s))

    def walk(o: object) -> None:
        if isinstance(o, dict):
            if isinstance(o.get("interval"), dict) and isinstance(o.get("value"), int | float):
                iv = o["interval"]
                if iv.get("low") is not None and iv.get("high") is not None:
                    out.append((float(o["value"]), float(iv["low"]), float(iv["high"])))
            if isinstance(o.get("columns"), list) and isinstance(o.get("rows"), list):
                cols = o["columns"]
                for row in o["rows"]:
                    rec = dict(zip(cols, row, strict=False))
                    for c in cols:
                        lo, hi, v = rec.get(f"{c}_ci_low"), rec.get(f"{c}_ci_high"), rec.get(c)
                        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in (v, lo, hi)):
                            out.append((float(v), float(lo), float(hi)))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
        elif isinstance(o, str) and "[" in o:
            text(o)

    walk(report)
    return out


def _decimals(s: str) -> int:
    return len(s.split(".")[1]) if "." in s else 0


def _close(shown: str, value: float, scale: float) -> bool:
    return abs(_f(shown) - value * scale) <= 0.5 * 10 ** -_decimals(shown) + 1e-9


def strip_generated(text: str) -> str:
    """``text`` with every generated block's body blanked (its lines kept, so line numbers stay right)."""
    return MARKER.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def unmatched_intervals(text: str, recorded: Sequence[tuple[float, float, float]]) -> list[tuple[int, str]]:
    """``(line, interval)`` for each ``x [lo, hi]`` in ``text`` outside generated blocks that matches no recorded
    interval at the precision it is written (as a fraction, or as a percentage of one)."""
    bad = []
    body = strip_generated(text)
    for m in PROSE_INTERVAL.finditer(body):
        scales = (100.0,) if m["pct"] else (1.0, 100.0)
        if not any(_close(m["x"], v, s) and _close(m["lo"], lo, s) and _close(m["hi"], hi, s)
                   for v, lo, hi in recorded for s in scales):
            bad.append((body.count("\n", 0, m.start()) + 1, " ".join(m.group(0).split())))
    return bad


def check_prose(files: Sequence[Path] | None = None, reports: Sequence[Path] | None = None) -> list[str]:
    """``path:line: interval`` for every unmatched interval in the prose files (empty when all match)."""
    recorded = [iv for p in (record_reports() if reports is None else reports)
                for iv in record_intervals(json.loads(p.read_text(encoding="utf-8")))]
    out = []
    for path in prose_files() if files is None else files:
        for line, iv in unmatched_intervals(path.read_text(encoding="utf-8"), recorded):
            out.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}: {iv}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="README files (default: README.md, packages/*/README.md)")
    ap.add_argument("--report", type=Path, default=DEFAULT_REPORT, help="demo report.json")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help="shipped models' manifest.json")
    ap.add_argument("--check", action="store_true", help="report disagreeing blocks and exit 1; write nothing")
    ap.add_argument("--prose", action="store_true",
                    help="list intervals in README/docs prose that no recorded report has; exit 1 if any")
    args = ap.parse_args(argv)
    if args.prose:
        bad = check_prose(args.files or None)
        print("\n".join(bad) or "every interval in prose is recorded")
        return 1 if bad else 0
    sources = make_sources(args.report, args.manifest)
    stale = []
    for path in args.files or default_files():
        text = path.read_text(encoding="utf-8")
        new = regenerate(text, sources, where=str(path))
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if args.check else 'updated'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
