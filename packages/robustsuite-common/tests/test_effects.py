"""The verdict rule of the ``paper_effects`` tables, at its boundaries, and the table it builds."""

from __future__ import annotations

import json

import pytest

from robustsuite_common.effects import (
    EFFECT_COLUMNS,
    REL_TOL,
    VERDICTS,
    Effect,
    effect_verdict,
    load_effects,
    paper_effects_table,
)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_rule_at_its_boundaries(sign):
    paper = 0.4 * sign

    def v(lo, hi, m=None):
        lo, hi = sorted((lo * sign, hi * sign))
        return effect_verdict((lo + hi) / 2 if m is None else m, lo, hi, paper_value=paper)

    # the interval touches 0 on the paper's side: not excluded
    assert v(0.0, 0.5) == "not reproduced"
    assert v(-0.1, 0.1) == "not reproduced"
    assert v(-0.5, -0.1) == "not reproduced"  # the opposite direction, clearly
    # excludes 0 and reaches the paper's magnitude within REL_TOL
    assert v(1e-9, 0.4) == "reproduced"
    assert v(0.1, (1 - REL_TOL) * 0.4) == "reproduced"
    assert v(0.1, (1 - REL_TOL) * 0.4 - 1e-9) == "direction only"
    assert v((1 + REL_TOL) * 0.4, 0.9) == "reproduced"
    assert v((1 + REL_TOL) * 0.4 + 1e-9, 0.9) == "direction only"
    assert v(0.01, 0.02) == "direction only"


def test_missing_measurement_is_not_tested_and_bad_input_is_refused():
    assert effect_verdict(None, None, None, paper_value=1.0) == "not tested"
    assert effect_verdict(0.3, None, 0.4, paper_value=1.0) == "not tested"
    assert effect_verdict(float("nan"), 0.1, 0.4, paper_value=1.0) == "not tested"
    with pytest.raises(ValueError, match="paper_value"):
        effect_verdict(0.3, 0.2, 0.4, paper_value=0.0)
    with pytest.raises(ValueError, match="low must not exceed high"):
        effect_verdict(0.3, 0.4, 0.2, paper_value=1.0)


def test_table_has_the_columns_and_recomputes(tmp_path):
    p = tmp_path / "paper_effects.json"
    p.write_text(json.dumps({"effects": [
        {"key": "a", "effect": "A shrinks", "paper": "-3 (Table 1)", "paper_value": -3.0,
         "why": {"not reproduced": "smaller model", "not tested": "not run"}},
        {"key": "b", "effect": "B grows", "paper": "+1 (Fig. 2)", "paper_value": 1.0, "why": "tiny data"},
        {"key": "c", "effect": "C", "paper": "+1", "paper_value": 1.0},
    ]}))
    effects = load_effects(p)
    t = paper_effects_table(effects, {"a": (0.5, -0.5, 1.5), "b": (0.1, 0.05, 0.2), "c": None})
    assert t.name == "paper_effects" and t.columns == EFFECT_COLUMNS
    rec = t.records()
    assert [r["verdict"] for r in rec] == ["not reproduced", "direction only", "not tested"]
    assert [r["why"] for r in rec] == ["smaller model", "tiny data", ""]
    for r, e in zip(rec, effects, strict=True):
        assert r["verdict"] in VERDICTS
        assert r["verdict"] == effect_verdict(r["measured"], r["low"], r["high"], paper_value=e.paper_value)
    with pytest.raises(ValueError, match="excludes its estimate"):
        paper_effects_table(effects, {"a": (2.0, -0.5, 1.5)})
    p.write_text(json.dumps({"effects": [{"key": "a", "effect": "", "paper": "", "paper_value": 1.0},
                                         {"key": "a", "effect": "", "paper": "", "paper_value": 1.0}]}))
    with pytest.raises(ValueError, match="duplicate"):
        load_effects(p)


def test_why_for_a_verdict():
    e = Effect("k", "e", "p", 1.0, {"default": "d", "not tested": "nt"})
    assert e.why_for("not tested") == "nt" and e.why_for("direction only") == "d" and e.why_for("reproduced") == ""


def test_recheck_finds_a_wrong_verdict_and_numbers_that_are_not_the_results():
    from robustsuite_common.effects import recheck_paper_effects
    from robustsuite_common.experiment import Table

    effects = (Effect("a", "A", "p", 1.0, "w"), Effect("b", "B", "p", -1.0))
    measured = {"a": (0.9, 0.6, 1.2), "b": None}
    t = paper_effects_table(effects, measured)
    assert recheck_paper_effects(t, effects, measured) == []
    assert [r["verdict"] for r in t.records()] == ["reproduced", "not tested"]
    assert recheck_paper_effects(t, effects, {"a": (0.8, 0.6, 1.2), "b": None})[0].startswith("a: row")
    rows = list(t.rows)
    rows[0] = (*rows[0][:5], "direction only", "w")
    bad = Table("paper_effects", t.title, t.columns, tuple(rows))
    assert "the rule gives 'reproduced'" in recheck_paper_effects(bad, effects)[0]
    assert recheck_paper_effects(Table("x", "", ("effect",), ()), effects)
