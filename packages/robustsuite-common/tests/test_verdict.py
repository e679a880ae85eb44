"""The verdict's combination rule, its false-discovery-rate control and the Check contract."""

from __future__ import annotations

import numpy as np
import pytest

from robustsuite_common.verdict import Check, CheckError, apply_fdr, combine, verdict


def c(id_: str, group: str = "attack-strength", status: str = "pass", **kw) -> Check:
    return Check(id_, group, id_.replace("-", " "), status, "rule", **kw)


def test_combination_rule_takes_the_worst_status_in_the_fields_order():
    base = [c("above-chance", "validity"), c("pgd-vs-autoattack")]
    assert combine(base)[0] == "supported"
    assert combine([*base, c("zeroe-noise", "lenses", "warn")])[0] == "supported-with-caveats"
    assert combine([*base, c("zero-gradients", status="fail"), c("x-warn", status="warn")])[0] == "not-supported"
    # a failed validity check wins over every other failure: the evaluation itself cannot be trusted
    assert combine([c("above-chance", "validity", "fail"), c("zero-gradients", status="fail")])[0] == "inconclusive"
    # only validity checks: nothing measured the robustness
    assert combine([c("above-chance", "validity")])[0] == "inconclusive"
    # not-applicable checks do not count as measured
    assert combine([c("above-chance", "validity"), c("square-beats-white-box", status="not-applicable"),
                    c("transductive-gain", "lenses", "not-applicable")])[0] == "inconclusive"
    # a text model: validity and a lens (Zéroe noise), no AutoAttack
    assert combine([c("above-chance", "validity"), c("zeroe-noise", "lenses")])[0] == "supported"


def test_benjamini_hochberg_matches_a_hand_computation_and_sets_status_from_the_adjusted_p():
    ps = [0.001, 0.011, 0.025, 0.045, 0.5]
    checks = [c(f"p{i}", p_value=p, status_if_significant="warn") for i, p in enumerate(ps)]
    out = apply_fdr(checks)
    m = len(ps)
    order = np.argsort(ps)
    ranked = np.array(ps)[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1]
    expected = np.empty(m)
    expected[order] = np.minimum(adjusted, 1)
    assert [x.p_adjusted for x in out] == pytest.approx(expected)
    assert [x.status for x in out] == ["warn" if p < 0.05 else "pass" for p in expected]
    # boundary: one p-value of 0.03 alone is significant; among three, adjusted to 0.09 it is not
    assert apply_fdr([c("a", p_value=0.03, status_if_significant="fail")])[0].status == "fail"
    three = apply_fdr([c("a", p_value=0.03, status_if_significant="fail"), c("b", p_value=0.9),
                       c("d", p_value=0.95)])
    assert three[0].p_adjusted == pytest.approx(0.09) and three[0].status == "pass"


def test_checks_without_p_values_are_untouched_and_the_verdict_sorts_groups():
    checks = [c("zeroe-noise", "lenses", "warn"), c("pgd-vs-autoattack"), c("above-chance", "validity")]
    v = verdict("m", checks, robust_accuracy=0.4, robust_interval=(0.3, 0.5))
    assert [x.group for x in v.checks] == ["validity", "attack-strength", "lenses"]
    assert v.status == "supported-with-caveats" and all(x.p_adjusted is None for x in v.checks)
    d = v.to_dict()
    assert d["checks"][0]["id"] == "above-chance" and d["robust_interval"] == [0.3, 0.5]


def test_a_check_that_cannot_be_right_is_refused():
    with pytest.raises(CheckError, match="excludes its statistic"):
        c("x", statistic=0.5, interval=(0.6, 0.7))
    with pytest.raises(CheckError, match="status"):
        c("x", status="ok")
    with pytest.raises(CheckError, match="group"):
        c("x", group="speed")
    with pytest.raises(CheckError, match="id"):
        Check("Zero Gradients", "validity", "t", "pass", "r")
    with pytest.raises(CheckError, match="p_value"):
        c("x", status_if_significant="warn")
    with pytest.raises(CheckError, match="p_value"):
        c("x", p_value=1.5)


def test_check_round_trips_through_its_dict():
    x = c("more-iterations", statistic=0.01, interval=(0.0, 0.05), n=20, p_value=0.2, status_if_significant="warn",
          detail="d")
    assert Check.from_dict(x.to_dict()) == x
