"""tools/dev/readme_numbers.py: README tables of measured numbers are generated, and agree with their sources."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "tools" / "dev" / "readme_numbers.py")
rn = sys.modules.setdefault("readme_numbers", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(rn)

IV = {"estimate": 0.5, "low": 0.25, "high": 0.75, "level": 0.95, "method": "Clopper-Pearson", "bounds": [0, 1]}
REPORT = {"schema_version": "2.0", "sections": {"demo": {
    "metrics": {"acc": {"value": 0.5, "label": "accuracy", "unit": "fraction", "interval": IV},
                "n": {"value": 8, "label": "samples", "unit": "count"}},
    "tables": [{"name": "sweep", "title": "t", "columns": ["T", "acc", "acc_ci_low", "acc_ci_high", "flag"],
                "rows": [[0.001, 0.9, 0.8, 0.95, True], [1.0, 0.3, None, None, False]]}]}}}
TABLES = {"m": rn.ReportMetrics("demo", (("accuracy", "acc"), ("samples", "n"))), "t": rn.ReportTable("demo", "sweep")}
SOURCES = {"report": lambda: REPORT, "manifest": lambda: {}}


def test_committed_readmes_agree_with_their_sources():
    """Fails when a marked README table was edited by hand or its source (manifest/report) changed."""
    for path in rn.default_files():
        text = path.read_text(encoding="utf-8")
        assert rn.regenerate(text, rn.make_sources(), where=str(path)) == text, \
            f"{path}: run `uv run python tools/dev/readme_numbers.py`"
    assert "<!-- numbers:builtin-models -->" in (ROOT / "packages/robustsuite/README.md").read_text(encoding="utf-8")


def test_blocks_are_generated_with_intervals_and_everything_else_is_kept():
    text = "intro\n<!-- numbers:m -->\nold\n<!-- /numbers:m -->\nmiddle\n<!-- numbers:t -->\n<!-- /numbers:t -->\nend\n"
    out = rn.regenerate(text, SOURCES, TABLES)
    assert out.startswith("intro\n<!-- numbers:m -->\n| metric | value |") and "\nmiddle\n" in out and out.endswith("end\n")
    assert "| accuracy | 0.5 [0.25, 0.75] |" in out and "| samples | 8 |" in out and "old" not in out
    assert "| T | acc | flag |" in out and "| 0.001 | 0.9 [0.8, 0.95] | yes |" in out and "| 1 | 0.3 | no |" in out
    assert rn.regenerate(out, SOURCES, TABLES) == out  # idempotent


def test_check_mode_flags_a_hand_edited_block(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    good = rn.regenerate("<!-- numbers:m -->\n<!-- /numbers:m -->\n", SOURCES, TABLES)
    readme.write_text(good.replace("0.5 [", "0.6 ["), encoding="utf-8")
    monkeypatch.setattr(rn, "TABLES", TABLES)
    monkeypatch.setattr(rn, "make_sources", lambda *a: SOURCES)
    assert rn.main(["--check", str(readme)]) == 1
    assert "0.6 [" in readme.read_text(encoding="utf-8")  # --check writes nothing
    assert rn.main([str(readme)]) == 0 and readme.read_text(encoding="utf-8") == good
    assert rn.main(["--check", str(readme)]) == 0


@pytest.mark.parametrize("text, match", [
    ("<!-- numbers:nope -->\n<!-- /numbers:nope -->", "unknown numbers block"),
    ("<!-- numbers:m -->\nno close", "unbalanced"),
])
def test_bad_markers_are_errors(text, match):
    with pytest.raises(rn.NumbersError, match=match):
        rn.regenerate(text, SOURCES, TABLES)


def test_missing_report_items_are_named():
    bad = {"x": rn.ReportTable("demo", "absent"), "y": rn.ReportMetrics("other", (("a", "a"),)),
           "z": rn.ReportTable("demo", "sweep", columns=("nope",)), "w": rn.ReportMetrics("demo", (("e", "ece"),))}
    for name, match in (("x", r"README block 'x': report section 'demo' has no table 'absent'; has \['sweep'\] "
                              r"\(renamed\?"), ("y", "no section 'other'"), ("z", "no column"),
                        ("w", r"no metric\(s\) \['ece'\]; has \['acc', 'n'\]")):
        with pytest.raises(rn.NumbersError, match=match):
            rn.render_block(name, SOURCES, bad)
    with pytest.raises(rn.NumbersError, match="not found"):
        rn.make_sources(report=Path("/nonexistent/report.json"))["report"]()


def test_a_1x_report_is_read_through_the_migration(tmp_path):
    old = {"schema_version": "1.1", "run": {}, "units": [], "sections": {"demo": {
        "title": "t", "summary": "s", "figures": [], "notes": [], "tables": [],
        "metrics": {"acc": 0.5, "acc_ci_low": 0.25, "acc_ci_high": 0.75, "n": 8}}}}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(old))
    assert rn.make_sources(report=path)["report"]()["schema_version"] == "2.1"
    out = rn.render_block("m", rn.make_sources(report=path), TABLES)
    assert "| accuracy | 0.5 [0.25, 0.75] |" in out and "| samples | 8 |" in out


# --- sentences stating verdicts ----------------------------------------------------------------------

DIFF = {"schema_version": "2.0", "sections": {"demo": {
    "metrics": {"gain": {"value": 0.07, "label": "gain", "interval": {"low": 0.01, "high": 0.14}},
                "tie": {"value": 0.02, "label": "tie", "interval": {"low": -0.03, "high": 0.08}}},
    "tables": [{"name": "t", "columns": ["defense", "attack", "acc", "acc_ci_low", "acc_ci_high"],
                "rows": [["RMC", "FPA", 0.42, 0.2, 0.62], ["RMC", "GMSA", 0.39, 0.15, 0.63]]}]}}}


def test_a_sentence_quotes_the_summary_clause_it_names():
    rep = {"sections": {"demo": {"summary": "DANN: GMSA-MIN 0.47 is below PGD 0.75 (paired +0.28); TADV: tie.",
                                 "metrics": {}, "tables": []}}}
    assert rn.Sentence("Here {c}.", (("c", rn.Clause("demo", "DANN:")),)).render(rep) == \
        "Here DANN: GMSA-MIN 0.47 is below PGD 0.75 (paired +0.28)."
    assert rn.clauses("At p = 0.8 visual (s* = 0.17; not separated: +0.03 [-0.03, 0.09]). RMC (adv. trained) "
                      "wins; e.g. x") == ["At p = 0.8 visual (s* = 0.17; not separated: +0.03 [-0.03, 0.09])",
                                          "RMC (adv. trained) wins", "e.g. x"]
    with pytest.raises(rn.NumbersError, match="0 summary clauses start with 'FPA'"):
        rn.Sentence("{c}", (("c", rn.Clause("demo", "FPA")),)).render(rep)


def test_a_sentence_states_the_verdict_its_interval_supports():
    s = rn.Sentence("RMC gains {g} ({g.verdict}); the tie {t.value} is {t.verdict}; FPA leaves {a}.",
                    (("g", rn.Metric("demo", "gain", signed=True)), ("t", rn.Metric("demo", "tie", signed=True)),
                     ("a", rn.Cell("demo", "t", (("defense", "RMC"), ("attack", "FPA")), "acc"))))
    assert s.render(DIFF) == ("RMC gains +0.07 [+0.01, +0.14] (above zero); the tie +0.02 is not separated from "
                              "zero; FPA leaves 0.42 [0.20, 0.62].")
    for bad, match in ((rn.Sentence("{x}", (("x", rn.Metric("demo", "nope")),)), "no metric 'nope'"),
                       (rn.Sentence("{x}", (("x", rn.Cell("demo", "t", (("defense", "RMC"),), "acc")),)),
                        "2 rows match"),
                       (rn.Sentence("{y}", (("x", rn.Metric("demo", "gain")),)), "field 'y' is not defined")):
        with pytest.raises(rn.NumbersError, match=match):
            bad.render(DIFF)


def test_a_records_cpu_block_gives_every_part_meta_json_holds():
    """The whole CPU time first, then the logged, sampled and unsampled parts when the record has them (a run
    that spanned sessions), and the record's own note on how they were measured."""
    meta = {"name": "paper-cpu", "dir": "docs/benchmarks/paper-cpu", "code_commit": "abcdef0123", "machine": {"cpus": 2},
            "cpu_hours": 14.25, "cpu_hours_logged": 9.5, "cpu_hours_sampled": 11.5, "cpu_hours_unsampled": 2.75,
            "cpu_note": "sampled from /proc."}
    out = rn.RecordCPU().render(meta)
    assert [line.split(" | ")[-1].rstrip(" |") for line in out.splitlines()[2:6]] == ["14.25", "9.50", "11.50", "2.75"]
    assert out.endswith("at commit `abcdef0`, 2 CPUs: sampled from /proc.*")
    short = rn.RecordCPU().render({k: v for k, v in meta.items() if k not in ("cpu_hours_sampled", "cpu_hours_unsampled")})
    assert "sampled" not in short.split("*Record")[0] and "| in all, every process of the run | 14.25 |" in short


# --- the prose check ---------------------------------------------------------------------------------

RECORDED = rn.record_intervals(DIFF) + rn.record_intervals(REPORT)


def test_record_intervals_come_from_metrics_tables_and_text():
    rep = {"sections": {"s": {"summary": "FPA 0.08 vs PGD (paired difference +0.17, 95% bootstrap [+0.00, +0.49])",
                              "metrics": {}, "tables": []}}}
    assert (0.17, 0.0, 0.49) in rn.record_intervals(rep)
    assert (0.07, 0.01, 0.14) in RECORDED and (0.42, 0.2, 0.62) in RECORDED and (0.9, 0.8, 0.95) in RECORDED


@pytest.mark.parametrize("prose", ["gain +0.07 [0.01, 0.14]", "FPA 0.42 [0.20, 0.62]", "acc 42 % [20, 62]",
                                   "acc 0.4 [0.2, 0.6]", "accuracy 0.5 [0.25, 0.75]", "a 90.0 % [80.0, 95.0]"])
def test_recorded_intervals_in_prose_pass(prose):
    assert rn.unmatched_intervals(f"text {prose} more\n", RECORDED) == []


@pytest.mark.parametrize("prose", ["DENT-AA +0.13 [0.08, 0.20]", "FPA 0.42 [0.21, 0.62]", "acc 0.43 [0.2, 0.62]",
                                   "acc 42.0 % [20.0, 62.5]", "gain 0.07\n[0.01, 0.15]"])
def test_a_planted_unmatched_interval_is_found(prose):
    text = f"line one\n{prose}\n<!-- numbers:m -->\n9.9 [1.1, 2.2]\n<!-- /numbers:m -->\n"
    bad = rn.unmatched_intervals(text, RECORDED)
    assert [line for line, _ in bad] == [2]  # the generated block's interval is not prose


def test_check_prose_names_file_and_line(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps(DIFF), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text("ok 0.07 [0.01, 0.14]\n\nwrong 0.30 [0.22, 0.38]\n", encoding="utf-8")
    assert rn.check_prose([readme], [report]) == [f"{readme}:3: 0.30 [0.22, 0.38]"]
