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

    uv run python tools/readme_numbers.py                  # rewrite every marked block
    uv run python tools/readme_numbers.py --check          # exit 1 if a block disagrees with its source
    uv run python tools/readme_numbers.py --report runs/demo/report.json README.md
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

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "packages/robustsuite/src/robustsuite/resources/manifest.json"
DEFAULT_REPORT = ROOT / "docs/demo/report.json"  # where the integrator commits the demo report
PAPER_CPU_REPORT = ROOT / "docs/benchmarks/paper-cpu/report.json"  # the recorded paper-cpu benchmark (issue 26)
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


# --- the one mapping: README block name -> numbers ------------------------------------------------

SHIPPED = ("fashion-cnn", "fashion-cnn-at", "fashion-cnn-noise-0.25", "fashion-cnn-noise-0.5", "fashion-osr-cnn",
           "wordnet-roberta")
TABLES: dict[str, ManifestTable | ReportTable | ReportMetrics] = {
    "builtin-models": ManifestTable(SHIPPED),
    # the committed demo report (docs/demo/report.json), one block per headline table of the root README
    "demo-overview-fashion": ReportMetrics("overview:builtin:fashion-cnn", (
        ("clean accuracy", "accuracy"), ("ECE, debiased", "ece_debiased"), ("ECE, plug-in", "ece"),
        ("calibration test p", "calibration_p_value"), ("Brier", "brier"), ("data", "data_source"))),
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
    "demo-transduct-rmc-seeds": ReportTable("transduct_attack", "rmc_seeds"),
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
        raise NumbersError(f"unknown numbers block {name!r}; known: {sorted(tables)} (tools/readme_numbers.py TABLES)")
    spec = tables[name]
    try:
        return spec.render(sources[spec.source]())
    except NumbersError as e:
        raise NumbersError(f"README block {name!r}: {e} (renamed? update TABLES in tools/readme_numbers.py)") from None


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


def default_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]


def make_sources(report: Path = DEFAULT_REPORT, manifest: Path = MANIFEST) -> dict[str, Callable[[], dict]]:
    cache: dict[str, dict] = {}

    def lazy(key: str, path: Path, what: str) -> Callable[[], dict]:
        def get() -> dict:
            if key not in cache:
                cache[key] = _load(path, what)
            return cache[key]
        return get

    return {"manifest": lazy("manifest", manifest, "build manifest"), "report": lazy("report", report, "demo report"),
            "paper-cpu": lazy("paper-cpu", PAPER_CPU_REPORT, "paper-cpu benchmark report")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="README files (default: README.md, packages/*/README.md)")
    ap.add_argument("--report", type=Path, default=DEFAULT_REPORT, help="demo report.json")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help="shipped models' manifest.json")
    ap.add_argument("--check", action="store_true", help="report disagreeing blocks and exit 1; write nothing")
    args = ap.parse_args(argv)
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
