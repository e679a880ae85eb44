"""The documentation site builds offline with warnings as errors (``mkdocs build --strict``, mkdocs.yml), and the
build fails on a broken link; the prose of the READMEs and docs states only intervals a recorded report has."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "tools" / "dev" / "readme_numbers.py")
rn = sys.modules.setdefault("readme_numbers", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(rn)


def build(config: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(out)],
                          capture_output=True, text=True, timeout=600)


def test_the_site_builds_strict_with_every_page_and_the_api_reference(tmp_path):
    proc = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("index.html", "getting-started/index.html", "audit/index.html", "report-format/index.html",
                 "benchmarks/index.html", "benchmarks/paper-cpu/index.html", "ARCHITECTURE/index.html"):
        assert (site / page).is_file(), page
    for pkg, name in (("certcal", "certified_calibration_error"), ("uncspan", "uncertainty_span"),
                      ("iortemp", "calibrate_temperature"), ("transduct-attack", "play_game"),
                      ("zeroe-perturb", "perturb"), ("robustsuite", "load_model"),
                      ("robustsuite-common", "proportion")):
        html = (site / "packages" / pkg / "index.html").read_text(encoding="utf-8")
        assert "Quick start" in html and "API reference" in html, pkg
        assert re.search(rf'id="[\w.]*{name}"', html), f"{pkg}: no API entry for {name}"
    fmt = (site / "report-format" / "index.html").read_text(encoding="utf-8")
    assert "schema_version" in fmt and "sections.*.metrics" in fmt


def _config_for(docs: Path, tmp: Path) -> Path:
    """mkdocs.yml with its docs folder moved to ``docs`` (hooks and sources still the repository's)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("docs_dir: docs", f"docs_dir: {docs}")
    text = text.replace("- tools/dev/mkdocs_hooks.py", f"- {ROOT / 'tools/dev/mkdocs_hooks.py'}")
    text = re.sub(r"^(\s+- )packages/", rf"\g<1>{ROOT}/packages/", text, flags=re.M)
    config = tmp / "mkdocs.yml"
    config.write_text(text, encoding="utf-8")
    return config


def test_a_broken_link_fails_the_build(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("units"))
    page = docs / "getting-started.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [the missing page](no-such-page.md).\n",
                    encoding="utf-8")
    proc = build(_config_for(docs, tmp_path), tmp_path / "site")
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stderr


def test_prose_states_only_recorded_intervals():
    """Every "x [lo, hi]" in README and docs prose (outside generated blocks) matches an interval of
    docs/demo/report.json or docs/benchmarks/*/report.json, read now (regenerate the records, and this rechecks)."""
    assert rn.check_prose() == []


def test_the_prose_check_fails_on_a_planted_interval(tmp_path):
    readme = tmp_path / "README.md"
    text = (ROOT / "packages/transduct-attack/README.md").read_text(encoding="utf-8")
    readme.write_text(text + "\nDENT-AA leaves 0.31 [0.02, 0.97], +0.13 [0.08, 0.20] above FPA.\n", encoding="utf-8")
    bad = rn.check_prose([readme])
    assert [b.split(": ", 1)[1] for b in bad] == ["0.31 [0.02, 0.97]", "+0.13 [0.08, 0.20]"]


# the public functions that implement a piece of a paper: their docstrings (the API reference) say which
PAPER_API = {
    "certcal": ("certify", "predict", "confidence_bounds", "certified_brier_score", "certified_calibration_error",
                "certified_calibration_curve", "common_set_curve", "BetaACE", "adversarial_calibration_training"),
    "iortemp": ("calibrate_temperature", "fit_temperature", "optimize_temperature", "search_temperature",
                "paired_verdict", "TemperatureScaledModule", "TemperatureScaledText", "confidence_stats"),
    "uncspan": ("entropy", "OverConfidenceAttack", "UnderConfidenceAttack", "uncertainty_span", "UncertaintySpan",
                "mus", "msus", "signed_ece", "MCDropoutModel", "detection_metrics", "auroc_ci", "ood_under_attack"),
    "transduct_attack": ("play_game", "repeat_game", "RMC", "DENT", "DANN", "TADV", "URejectron", "FPA", "GMSA",
                         "PGD", "PGDEnsemble", "cw_untargeted", "cw_targeted"),
    "zeroe_perturb": ("perturb", "perturb_batch", "get_attacker", "evaluate", "evaluate_seeds", "evaluate_pairs",
                      "evaluate_tagging", "attack_sentences", "kendall_tau_vs_paper"),
}
CITATION = re.compile(r"Eqs?\.\s*\(?\d|§\s*[\dIVX]|Table \d|Tables \d|Table [IVX]+|Algorithms? \d|App\. [A-Z]|\bA\.\d|"
                      r"Fig(?:ure|\.) \d|Def\. \d|Theorem \d")


def test_paper_functions_cite_the_paper():
    import inspect

    missing = []
    for pkg, names in PAPER_API.items():
        module = importlib.import_module(pkg)
        for name in names:
            if not CITATION.search(inspect.getdoc(getattr(module, name)) or ""):
                missing.append(f"{pkg}.{name}")
    assert not missing, f"docstrings that cite no equation, section, table or figure: {missing}"
