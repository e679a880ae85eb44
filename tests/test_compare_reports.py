"""tools/dev/compare_reports.py, the check that a refactoring recomputes a recorded report's numbers unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]



def test_counts_differing_missing_and_new_numbers_and_ignores_times(dev_tool, tmp_path):
    tool = dev_tool("compare_reports")
    old = {"sections": {"a": {"metrics": {"x": {"value": 0.5, "interval": [0.4, 0.6]}}, "seconds": 3.0,
                              "tables": [{"rows": [[1, "t", True]]}]}}}
    new = json.loads(json.dumps(old))
    assert tool.compare(old, new)["a"] == {"numbers": 4, "differ": 0, "missing": 0, "new": 0, "first_differences": []}
    new["sections"]["a"]["seconds"] = 99.0  # a time is not a result
    new["sections"]["a"]["tables"][0]["rows"][0][2] = False  # a boolean is not a number
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    assert tool.main([str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    new["sections"]["a"]["metrics"]["x"]["interval"][1] = 0.61
    del new["sections"]["a"]["tables"][0]["rows"][0][0]
    new["sections"]["a"]["metrics"]["y"] = 1
    got = tool.compare(old, new)["a"]
    assert (got["differ"], got["missing"], got["new"]) == (1, 1, 1)  # the interval's high; the cell; y
    assert got["first_differences"][0] == ["/metrics/x/interval[1]", 0.6, 0.61]
    (tmp_path / "new.json").write_text(json.dumps(new))
    assert tool.main([str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1


@pytest.mark.parametrize("record", ["demo", "paper-cpu"])
def test_the_recorded_reproduction_after_the_moves_found_no_difference(record):
    """docs/benchmarks/{demo,paper-cpu}/reproduce_after_moves.json: every section of the run computed before the
    moves, recomputed from its own checkpoints by the code after them, unchanged."""
    rec = json.loads((ROOT / f"docs/benchmarks/{record}/reproduce_after_moves.json").read_text(encoding="utf-8"))
    assert len(rec["sections"]) == 8
    assert all(s["numbers"] > 0 and s["differ"] == 0 and s["missing"] == 0 for s in rec["sections"].values())
