"""A failed unit is listed in the report's top-level Warnings (issue 36), not only in the Units table."""

from __future__ import annotations

import jsonschema

from robustsuite import assemble as asm
from robustsuite.report import REPORT_SCHEMA, check_report, render_markdown

PROV = {"id": "r", "versions": {}, "uv_lock_sha256": None, "user_git": None, "command": "x", "platform": "p"}


def test_a_failed_unit_is_a_top_level_warning_and_in_the_markdown():
    failed = {"unit": {"id": "uncspan-mymodel-0", "method": "uncspan", "model": "torch:m.pt", "dataset": "csv:d.csv",
                       "seed": 0, "group": "g", "identity": {"limit": None}},
              "status": "failed", "seconds": 3.0, "error": "AutoAttack needs at least 4 classes", "samples": []}
    rep = asm.assemble([failed], config={}, seed=0, device="cpu", created="now", provenance=PROV)
    jsonschema.validate(rep, REPORT_SCHEMA)
    assert check_report(rep) == []
    (w,) = rep["warnings"]
    assert w["section"] == "uncspan-mymodel-0"
    assert "unit failed" in w["message"] and "AutoAttack needs at least 4 classes" in w["message"]
    md = render_markdown(rep)
    assert "## Warnings" in md and "AutoAttack needs at least 4 classes" in md.split("## Warnings")[1]
