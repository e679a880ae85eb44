"""Report schema 2.0: structured metrics, warnings first, the whole-report check, migration of 1.x reports,
readable metric names, the headline chart and the sanity flag (issue 24 items 1, 5, 8, 13; issue 27 item 3)."""

import base64
import io
import json
from pathlib import Path

import jsonschema
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from robustsuite.report import (  # noqa: E402
    SCHEMA_VERSION,
    ReportCheckError,
    ReportVersionError,
    Section,
    Table,
    check_report,
    headline_path,
    migrate,
    read_report,
    render_markdown,
    rerender,
    top_warnings,
    write_report,
)
from robustsuite.report.render import headline_series, sanity_flags  # noqa: E402
from robustsuite.runners import RunContext  # noqa: E402
from robustsuite_common.experiment import Metric  # noqa: E402
from robustsuite_common.intervals import proportion  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
RUN = {"id": "r1", "created": "2026-01-01T00:00:00+00:00", "finished": None, "seed": 0, "device": "cpu",
       "config": {}, "versions": {"robustsuite": "0.1.0"}, "git": None, "command": "test"}


def _report(sections):
    secs = {k: (s.to_dict() if isinstance(s, Section) else s) | {"deterministic": False} for k, s in sections.items()}
    return {"schema_version": SCHEMA_VERSION, "warnings": top_warnings(secs), "verdicts": [], "run": RUN,
            "units": [], "sections": secs}


def _v11(ece=(0.0033818228432230682, 0.003931594907490912, 0.010459805173197417), notes=()):
    """A schema-1.1 report as robustsuite wrote it before 2.0 (the ECE triple of the committed demo report)."""
    e, lo, hi = ece
    return {"schema_version": "1.1", "run": RUN, "units": [], "sections": {"overview:m": {
        "title": "m on d", "summary": "s", "method": "overview", "model": "m", "dataset": "d", "seeds": [0],
        "metrics": {"accuracy": 0.9114, "accuracy_ci_low": 0.9057, "accuracy_ci_high": 0.9169, "ece": e,
                    "ece_ci_low": lo, "ece_ci_high": hi, "num_samples": 10000},
        "tables": [{"name": "dataset", "title": "T", "columns": ["split", "samples"], "rows": [["test", 10000]]}],
        "figures": [], "notes": list(notes)}}}


def test_section_to_dict_is_structured_and_json_safe():
    import numpy as np
    import torch

    acc = proportion(45, 50)
    sec = Section("t", "s", metrics={"acc": Metric.of(acc, "clean accuracy", "fraction"), "a": np.float32(0.5),
                                     "b": torch.tensor(3), "c": float("nan"), "x": 0.4, "x_ci_low": 0.3,
                                     "x_ci_high": 0.5},
                  tables=[Table("tab", "T", ["x", "y"], [[1, np.float64(2.5)], ["z", None]], units={"y": "s"})])
    d = sec.to_dict()
    assert d["metrics"]["acc"] == {"value": 0.9, "label": "clean accuracy", "unit": "fraction",
                                   "interval": acc.to_dict()}
    assert d["metrics"]["a"] == {"value": 0.5, "label": "", "unit": ""} and d["metrics"]["c"]["value"] is None
    assert d["metrics"]["b"]["value"] == 3 and "x_ci_low" not in d["metrics"]  # legacy companions folded
    assert (d["metrics"]["x"]["interval"]["low"], d["metrics"]["x"]["interval"]["high"]) == (0.3, 0.5)
    assert d["tables"][0]["units"] == {"y": "s"} and d["tables"][0]["bounds"] == {}
    assert list(d)[0] == "warnings"  # a reader of the JSON sees the warnings first
    json.dumps(d, allow_nan=False)
    with pytest.raises(ValueError, match="row 0"):
        Table("bad", "B", ["x"], [[1, 2]])
    with pytest.raises(TypeError, match="scalars"):
        Section("t", "s", metrics={"a": [1, 2]}).to_dict()


def test_write_validates_and_embeds_figures(tmp_path):
    ctx = RunContext(run_dir=tmp_path, method="demo")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    figure = ctx.figure(fig, "line", "a line")
    sec = Section("Demo", "summary", metrics={"acc": Metric(0.9, "clean accuracy", "fraction")},
                  tables=[Table("t", "T", ["k", "v"], [["a", 1]])], figures=[figure], notes=["note"])
    paths = write_report(tmp_path, _report({"demo": sec}))
    html = paths["html"].read_text()
    png = (tmp_path / figure.path).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert base64.b64encode(png).decode() in html  # self-contained
    assert "src='figures/" not in html
    md = paths["md"].read_text()
    assert "| clean accuracy (fraction) | 0.9 |" in md and figure.path in md
    assert paths["json"].stat().st_mode & 0o044  # readable by others, not mkstemp's 0600
    # re-rendering from JSON reproduces the same files
    before = paths["md"].read_text()
    paths["md"].unlink()
    rerender(tmp_path)
    assert (tmp_path / "report.md").read_text() == before == render_markdown(json.loads(paths["json"].read_text()))


def test_invalid_report_is_rejected_and_nothing_written(tmp_path):
    bad = _report({"demo": {"title": "x"}})  # missing required keys
    with pytest.raises(jsonschema.ValidationError):
        write_report(tmp_path, bad)
    assert not (tmp_path / "report.json").exists()
    for wrong in (_report({}) | {"schema_version": "1.1"}, {k: v for k, v in _report({}).items() if k != "warnings"}):
        with pytest.raises(jsonschema.ValidationError):
            write_report(tmp_path, wrong)
    flat = _report({"demo": Section("x", "s")})
    flat["sections"]["demo"]["metrics"] = {"acc": 0.9}  # a 1.x metric inside a 2.0 report
    with pytest.raises(jsonschema.ValidationError):
        write_report(tmp_path, flat)


@pytest.mark.parametrize("metric, problem", [
    ({"value": 0.0034, "label": "ECE", "unit": "fraction",
      "interval": {"estimate": 0.0034, "low": 0.0039, "high": 0.0105, "level": 0.95, "method": "percentile",
                   "bounds": [0, 1]}}, "excludes its estimate 0.0034"),
    ({"value": 0.32, "label": "r", "unit": "",
      "interval": {"estimate": 0.32, "low": -2.86, "high": 3.49, "level": 0.95, "method": "t", "bounds": [-1, 1]}},
     "leaves the metric's range"),
    ({"value": 0.5, "label": "a", "unit": "",
      "interval": {"estimate": 0.4, "low": 0.3, "high": 0.6, "level": 0.95, "method": "", "bounds": [None, None]}},
     "differs from its interval's estimate"),
])
def test_whole_report_check_refuses_impossible_intervals_and_writes_nothing(tmp_path, metric, problem):
    report = _report({"s": Section("x", "y")})
    report["sections"]["s"]["metrics"]["m"] = metric
    assert any(problem in p and "'m'" in p for p in check_report(report)), check_report(report)
    with pytest.raises(ReportCheckError, match=problem):
        write_report(tmp_path, report)
    assert not (tmp_path / "report.json").exists()


def test_check_covers_table_intervals_and_the_at_chance_warning():
    t = {"name": "t", "title": "T", "columns": ["acc", "acc_ci_low", "acc_ci_high"], "units": {},
         "rows": [[0.5, 0.6, 0.7], [0.9, 0.8, 1.2]], "bounds": {"acc": [0.0, 1.0]}}  # as a 1.x report could hold
    from robustsuite_common.experiment import Table as ResultTable

    with pytest.raises(ValueError, match="excludes"):  # an experiment cannot even build such a table
        ResultTable(t["name"], t["title"], t["columns"], t["rows"], bounds={"acc": (0.0, 1.0)})
    report = _report({"s": Section("x", "y")})
    report["sections"]["s"]["tables"] = [t]
    problems = check_report(report)
    assert any("row 0" in p and "excludes" in p for p in problems) and any("row 1" in p and "range" in p
                                                                           for p in problems)
    silent = _report({"s": Section("x", "y", model_at_chance=True)})
    assert any("model_at_chance is true but" in p for p in check_report(silent))
    warned = _report({"s": Section("x", "y", model_at_chance=True, warnings=["at chance"])})
    assert check_report(warned) == []
    warned["warnings"] = []  # the section's warning must also be listed at the top of the report
    assert any("top-level warnings" in p for p in check_report(warned))


def test_warnings_and_the_at_chance_flag_come_first_in_json_markdown_and_html(tmp_path):
    sec = Section("Zeroe", "The model is at chance: the attack numbers carry no information.",
                  metrics={"model_at_chance": Metric(True, "clean score's interval contains chance"),
                           "acc": Metric(0.475, "clean accuracy", "fraction")},
                  warnings=["clean accuracy 47.5 % [31.5, 63.9] contains the chance rate 50 %"])
    other = Section("Fine", "ok", metrics={"acc": Metric(0.9, "clean accuracy", "fraction")})
    paths = write_report(tmp_path, _report({"fine": other, "zeroe": sec}))
    rep = json.loads(paths["json"].read_text())
    assert list(rep)[:2] == ["schema_version", "warnings"] and rep["warnings"][0]["section"] == "zeroe"
    assert rep["sections"]["zeroe"]["model_at_chance"] is True and list(rep["sections"]["zeroe"])[0] == "warnings"
    md = paths["md"].read_text()
    z = md.index("## Zeroe")
    assert md.index("**WARNING**: clean accuracy 47.5 %", z) < md.index("The model is at chance", z) \
        < md.index("| metric |", z)
    assert md.index("## Warnings") < md.index("## Units") and "contains the chance rate" in md[:md.index("## Units")]
    html = paths["html"].read_text()
    zh = html.index("<section id='zeroe'>")
    assert html.index("class='warning'>WARNING: clean accuracy", zh) < html.index("The model is at chance", zh)


def test_metric_tables_show_labels_with_units_never_raw_keys(tmp_path):
    sec = Section("S", "s", metrics={"n_above_chance_p0.2": Metric(7, "attackers above chance at p = 0.2", "count"),
                                     "acc": Metric.of(proportion(8, 10), "clean accuracy", "fraction")})
    paths = write_report(tmp_path, _report({"s": sec}))
    for text in (paths["md"].read_text(), paths["html"].read_text()):
        assert "attackers above chance at p = 0.2 (count)" in text and "n_above_chance_p0.2" not in text
        assert "clean accuracy (fraction)" in text and "Clopper-Pearson" in text  # the interval's method shown


HEAD = Table("headline", "Clean vs attacked accuracy", ["condition", "clean", "clean_ci_low", "clean_ci_high",
                                                         "attacked", "attacked_ci_low", "attacked_ci_high", "n"],
             [["DeepWordBug", 0.9, 0.8, 0.95, 0.4, 0.3, 0.5, 100], ["PWWS", 0.9, 0.8, 0.95, 0.2, None, None, 100]],
             units={"clean": "fraction", "attacked": "fraction"})


def test_headline_chart_leads_the_section_drawn_from_its_table(tmp_path):
    sec = Section("Attack", "s", metrics={"acc": Metric(0.9, "clean accuracy", "fraction")},
                  tables=[Table("details", "Details", ["k"], [["v"]]), HEAD])
    d = sec.to_dict()
    labels, series = headline_series(d)
    assert labels == ["DeepWordBug", "PWWS"]
    assert series["clean"][0] == [0.9, 0.9] and series["attacked"][0] == [0.4, 0.2]
    assert series["attacked"][1] == [[pytest.approx(0.1), 0.0], [pytest.approx(0.1), 0.0]]  # missing CI: no bar
    paths = write_report(tmp_path, _report({"attack:x": sec}))
    png = tmp_path / headline_path("attack:x")
    from PIL import Image

    assert Image.open(io.BytesIO(png.read_bytes())).size[0] > 300
    md = paths["md"].read_text()
    assert md.index(headline_path("attack:x")) < md.index("**Clean vs attacked accuracy**") < md.index("| metric |") \
        < md.index("**Details**")
    assert base64.b64encode(png.read_bytes()).decode() in paths["html"].read_text()
    bad = Section("x", "s", tables=[Table("headline", "H", ["condition", "clean"], [["a", 0.5]])]).to_dict()
    with pytest.raises(ValueError, match="missing"):
        headline_series(bad)


def test_sanity_flag_renders_when_pgd_leaves_clearly_more_points_robust(tmp_path):
    from robustsuite_common.intervals import Interval

    def section(low):
        return Section("U", "s", metrics={
            "robust_accuracy_pgd": Metric(0.52, "robust accuracy, PGD-20", "fraction"),
            "robust_accuracy_autoattack": Metric(0.455, "robust accuracy, standard AutoAttack", "fraction"),
            "pgd_minus_autoattack": Metric.of(Interval(0.065, low, 0.1, bounds=(-1.0, 1.0)), "PGD minus AutoAttack",
                                              "fraction")})

    flagged, quiet = section(0.035).to_dict(), section(-0.01).to_dict()
    (flag,) = sanity_flags(flagged)
    assert "PGD 0.52" in flag and "standard AutoAttack 0.455" in flag and "0.035" in flag
    assert sanity_flags(quiet) == []
    paths = write_report(tmp_path, _report({"u": section(0.035), "v": section(-0.01)}))
    md, html = paths["md"].read_text(), paths["html"].read_text()
    assert md.count("**Sanity check**") == 1 and html.count("class='sanity'") == 1


def test_migrate_reads_1x_reports_into_2_0():
    old = _v11(ece=(0.01, 0.005, 0.02), notes=["WARNING: the model is at chance", "a note"])
    new = migrate(old)
    assert new["schema_version"] == SCHEMA_VERSION and new["run"]["migrated_from"] == "1.1"
    sec = new["sections"]["overview:m"]
    assert sec["metrics"]["ece"]["interval"]["low"] == 0.005 and "ece_ci_low" not in sec["metrics"]
    assert sec["warnings"] == ["the model is at chance"] and sec["notes"] == ["a note"]
    assert new["warnings"] == [{"section": "overview:m", "message": "the model is at chance"}]
    assert sec["tables"][0]["units"] == {} and old["schema_version"] == "1.1"  # the input is not modified
    assert check_report(new) == [] and migrate(new) is new
    for bad, match in (({"schema_version": "9.0", "run": {"versions": {"robustsuite": "9.1"}}}, "robustsuite 9.1"),
                       ([], "not a robustsuite report")):
        with pytest.raises(ReportVersionError, match=match):
            migrate(bad)


def test_the_check_finds_the_overview_ece_that_excluded_its_estimate():
    """Today's committed report printed "ECE 0.34 % [0.39, 1.05]": read as 2.0, the check names it."""
    problems = check_report(migrate(_v11()))
    assert len(problems) == 1 and "'overview:m' metric 'ece'" in problems[0] and "excludes its estimate" in problems[0]


@pytest.mark.parametrize("committed", ["docs/demo/report.json", "docs/benchmarks/paper-cpu/report.json"])
def test_committed_reports_pass_the_whole_report_check_and_the_schema(committed):
    """The two reports in the repository: the demo and the recorded paper-cpu benchmark (issue 26)."""
    import jsonschema

    from robustsuite.report import REPORT_SCHEMA

    raw = json.loads((ROOT / committed).read_text(encoding="utf-8"))
    jsonschema.validate(raw, REPORT_SCHEMA)
    assert check_report(migrate(raw)) == []
    assert [u["id"] for u in raw["units"] if u["status"] != "done"] == []  # nothing pending or failed
    assert sorted(raw["sections"]) == sorted(  # every method of the benchmark has its section
        {u["method"] if u["method"] != "overview" else f"overview:{u['model']}" for u in raw["units"]})


def test_report_command_path_on_old_run_directories(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    for d, rep in ((good, _v11(ece=(0.01, 0.005, 0.02))), (bad, _v11())):
        d.mkdir()
        (d / "report.json").write_text(json.dumps(rep))
    rerender(good)  # migrated and rewritten as 2.0
    assert json.loads((good / "report.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert "read from a schema 1.1 report.json" in (good / "report.md").read_text()
    with pytest.raises(ReportVersionError, match=r"schema 1.1 by robustsuite 0.1.0.*excludes its estimate.*robustsuite "
                       r"run CONFIG"):
        rerender(bad)
    assert json.loads((bad / "report.json").read_text())["schema_version"] == "1.1"  # left as it was
    (bad / "report.json").write_text("{truncated")
    with pytest.raises(ReportVersionError, match="not valid JSON"):
        read_report(bad)
    with pytest.raises(ReportVersionError, match="no report.json"):
        read_report(tmp_path / "nothing")


def test_figure_name_is_checked(tmp_path):
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="figure name"):
        RunContext(run_dir=tmp_path, method="m").figure(fig, "../escape", "x")
    plt.close(fig)


def test_section_from_an_experiment_result_keeps_its_structure(tmp_path):
    """report/section.py: metrics straight from the Result, tables with units and bounds, warnings first, the
    at-chance flag from its metric, records through --log-samples."""
    from robustsuite.report.section import section_from_result
    from robustsuite_common.experiment import ExperimentResult
    from robustsuite_common.experiment import Table as ResultTable

    acc = proportion(26, 50)
    result = ExperimentResult(
        "toy", {}, {"headline": ResultTable("headline", "H", HEAD.columns, HEAD.rows, {"clean": "fraction"},
                                       {"clean": (0.0, 1.0)})},
        {"acc": Metric.of(acc, "clean accuracy", "fraction"), "model_at_chance": Metric(True, "at chance")},
        "summary", records={"points": [{"id": "row-7", "input": "a text", "label": "pos", "correct": True}]},
        notes=("n",), warnings=("clean accuracy contains chance",))
    ctx = RunContext(run_dir=tmp_path, method="toy", unit_id="u", log_format="jsonl")
    d = section_from_result(ctx, result).to_dict()
    assert d["metrics"]["acc"] == result.metrics["acc"].to_dict() and d["model_at_chance"] is True
    assert d["warnings"] == ["clean accuracy contains chance"] and d["notes"] == ["n"]
    assert d["tables"][0]["units"] == {"clean": "fraction"} and d["tables"][0]["bounds"] == {"clean": [0.0, 1.0]}
    assert ctx.samples == ["samples/u--points.jsonl"]
    assert json.loads((tmp_path / ctx.samples[0]).read_text())["id"] == "row-7"
    assert check_report(_report({"toy": d})) == []


def test_the_shipped_json_schema_is_valid_and_names_this_schema_version():
    """``report/schema.json`` is a valid JSON Schema (any validator can check a report with it) for this version."""
    import jsonschema

    from robustsuite.report import REPORT_SCHEMA, SCHEMA_VERSION

    jsonschema.Draft202012Validator.check_schema(REPORT_SCHEMA)
    assert REPORT_SCHEMA["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    report = json.loads((Path(__file__).parents[3] / "docs" / "demo" / "report.json").read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    report["sections"][next(iter(report["sections"]))]["metrics"]["x"] = {"value": 1}  # no label, no unit
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, REPORT_SCHEMA)
