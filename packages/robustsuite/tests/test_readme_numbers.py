"""tools/readme_numbers.py: README tables of measured numbers are generated, and agree with their sources."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "tools" / "readme_numbers.py")
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
            f"{path}: run `uv run python tools/readme_numbers.py`"
    assert "<!-- numbers:builtin-models -->" in (ROOT / "README.md").read_text(encoding="utf-8")


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
    assert rn.make_sources(report=path)["report"]()["schema_version"] == "2.0"
    out = rn.render_block("m", rn.make_sources(report=path), TABLES)
    assert "| accuracy | 0.5 [0.25, 0.75] |" in out and "| samples | 8 |" in out
