"""Intervals in the assembled report (issue 24 items 2 and 3, report side): across seeds, Student-t clipped to each
metric's range and none with fewer than three seeds; deterministic units are not seeds; comparisons between
sections on the same items are paired or worded as indicative."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from robustsuite import assemble as asm
from robustsuite import runners
from robustsuite.report import Section, check_report
from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import Interval, mcnemar, proportion, seed_interval

PROV = {"id": "r", "versions": {}, "uv_lock_sha256": None, "user_git": None, "command": "x", "platform": "p"}


@pytest.fixture()
def methods(monkeypatch):
    """Two toy methods: ``seeded`` (a method whose numbers move with the seed) and ``fixed`` (``SEEDED = False``)."""
    mods = {name: types.SimpleNamespace(NAME=name, TITLE=name.title(), PAPER=None, SEEDED=name != "fixed")
            for name in ("seeded", "fixed")}
    monkeypatch.setattr(runners, "available", lambda: mods)


def _record(method, model, seed, metrics, dataset="builtin:digits", data=None, samples=()):
    identity = {"limit": None} | ({"data": data} if data is not None else {})
    return {"unit": {"id": f"{method}-{model}-{seed}", "method": method, "model": model, "dataset": dataset,
                     "seed": seed, "group": f"g-{method}-{model}", "identity": identity},
            "status": "done", "seconds": 1.0, "error": None, "samples": list(samples),
            "section": Section("t", f"seed {seed}", metrics=metrics).to_dict()}


def _assemble(records, run_dir=None):
    return asm.assemble(records, config={}, seed=0, device="cpu", created="now", provenance=PROV, run_dir=run_dir)


def _fraction(v, label="accuracy", lo=None, hi=None):
    iv = Interval(v, v - 0.05 if lo is None else lo, min(1.0, v + 0.05) if hi is None else hi, bounds=(0.0, 1.0))
    return Metric.of(iv, label, "fraction")


def test_three_seeds_give_a_student_t_interval_clipped_to_the_metric_range(methods):
    taus = (-0.9, 0.2, 0.95)
    accs = (0.99, 1.0, 0.93)
    recs = [_record("seeded", "m", s, {"tau": Metric.of(Interval(t, max(-1, t - .3), min(1, t + .05),
                                                                 bounds=(-1.0, 1.0)), "Kendall τ"),
                                       "acc": _fraction(a), "same": _fraction(0.8, lo=0.7, hi=0.9)})
            for s, (t, a) in enumerate(zip(taus, accs, strict=True))]
    rep = _assemble(recs)
    m = rep["sections"]["seeded"]["metrics"]
    ref = seed_interval(taus, bounds=(-1.0, 1.0))
    assert m["tau"]["interval"] == ref.to_dict() and ref.low == -1.0  # unclipped it would be below -1
    assert m["acc"]["interval"]["high"] == 1.0 == seed_interval(accs, bounds=(0, 1)).high  # bounds of its interval
    assert m["tau"]["value"] == pytest.approx(np.mean(taus)) and "3 seeds" in m["tau"]["note"]
    assert m["same"]["interval"]["low"] == 0.7  # identical across seeds: its per-sample interval is kept
    assert check_report(rep) == []
    seeds = next(t for t in rep["sections"]["seeded"]["tables"] if t["name"] == "seeds")
    assert seeds["rows"][0][:4] == ["Kendall τ", *taus]


def test_fewer_than_three_seeds_say_so_instead_of_an_interval(methods):
    """Was: kendall_tau_paper -0.33 [-1.75, 1.08] from two seeds (Student-t with one degree of freedom)."""
    recs = [_record("seeded", "m", s, {"tau": Metric(v, "Kendall τ"), "acc": _fraction(0.8, lo=0.7, hi=0.9)})
            for s, v in ((0, -0.9), (1, 0.24))]
    sec = _assemble(recs)["sections"]["seeded"]
    assert "interval" not in sec["metrics"]["tau"] and "fewer than 3 seeds" in sec["metrics"]["tau"]["note"]
    assert sec["metrics"]["tau"]["value"] == pytest.approx(-0.33)
    assert "fewer than 3 seeds: no interval" in sec["summary"] and "[" not in sec["summary"].split(". Seed")[0]
    assert sec["metrics"]["acc"]["interval"]["low"] == 0.7 and sec["seeds"] == [0, 1]


def test_deterministic_units_are_not_aggregated_as_seeds(methods):
    recs = [_record("fixed", "m", s, {"acc": _fraction(0.8)}) for s in (0, 1, 2)]
    rep = _assemble(recs)
    sec = rep["sections"]["fixed"]
    assert sec["deterministic"] is True and sec["seeds"] == [0] and not any(t["name"] == "seeds" for t in sec["tables"])
    assert all(u["deterministic"] for u in rep["units"])
    recorded = _record("seeded", "m", 0, {"acc": _fraction(0.8)})
    recorded["unit"]["deterministic"] = True  # the run marks a unit computed once
    assert _assemble([recorded])["sections"]["seeded"]["deterministic"] is True


def test_legacy_flat_unit_records_are_read_as_2_0(methods):
    rec = _record("seeded", "m", 0, {})
    rec["section"] = {"title": "t", "summary": "s", "metrics": {"acc": 0.8, "acc_ci_low": 0.7, "acc_ci_high": 0.9},
                      "tables": [], "figures": [], "notes": ["WARNING: at chance"]}
    sec = _assemble([rec])["sections"]["seeded"]
    assert sec["metrics"]["acc"]["interval"]["low"] == 0.7 and sec["warnings"] == ["at chance"]


def _notes(rep, key):
    return [n for n in rep["sections"][key]["notes"] if " vs " in n]


def test_comparisons_on_the_same_items_are_indicative_without_a_paired_test(methods):
    a, b = _fraction(0.90, lo=0.85, hi=0.94), _fraction(0.50, lo=0.40, hi=0.60)
    (same,) = _notes(_assemble([_record("seeded", "a", 0, {"accuracy": a}),
                                _record("seeded", "b", 0, {"accuracy": b})]), "seeded:a")
    assert "same data" in same and "indicative only" in same and "separated by" not in same
    (other,) = _notes(_assemble([_record("seeded", "a", 0, {"accuracy": a}, data="subset-2000"),
                                 _record("seeded", "b", 0, {"accuracy": b}, data="full-10000")]), "seeded:a")
    assert "different data" in other and "separated by their 95 % intervals" in other
    c = _fraction(0.88, lo=0.83, hi=0.92)
    (overlap,) = _notes(_assemble([_record("seeded", "a", 0, {"accuracy": a}, data="x"),
                                   _record("seeded", "c", 0, {"accuracy": c}, data="y")]), "seeded:a")
    assert "NOT separated" in overlap


def test_paired_comparison_from_per_sample_records(methods, tmp_path):
    rng = np.random.default_rng(0)
    ids = list(range(200))
    ca = rng.uniform(size=200) < 0.9
    cb = ca & (rng.uniform(size=200) < 0.8)  # b fails on a subset of a's successes: a paired difference
    for name, c in (("a", ca), ("b", cb)):
        (tmp_path / "samples").mkdir(exist_ok=True)
        (tmp_path / "samples" / f"{name}.jsonl").write_text(
            "\n".join(json.dumps({"id": f"row{i}", "correct": bool(v)}) for i, v in zip(ids, c, strict=True)))
    recs = [_record("seeded", n, 0, {"accuracy": Metric.of(proportion(int(c.sum()), 200), "accuracy", "fraction")},
                    samples=[f"samples/{n}.jsonl"]) for n, c in (("a", ca), ("b", cb))]
    (note,) = _notes(_assemble(recs, run_dir=tmp_path), "seeded:a")
    ref = mcnemar(ca, cb, seed=0)
    assert f"the same 200 items, paired: exact McNemar p = {ref.p_value:.3g}" in note
    assert f"{ref.only_a} items right only for a" in note and "established by the paired test" in note
    assert "indicative" in _notes(_assemble(recs), "seeded:a")[0]  # without the run directory: no records to pair


def test_a_run_with_per_sample_records_compares_same_data_sections_by_the_paired_test(tmp_path):
    """End to end: two overview sections on the same data with ``--log-samples`` get the paired McNemar note (the
    run hands its directory to the assembly, where the per-sample records are)."""
    from robustsuite import run as run_mod

    cfg = {"log_samples": "jsonl", "methods": {"overview": {
        "targets": [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", "builtin:digits"]],
        "config": {"n_boot": 100, "robust_accuracy": "never"}}}}
    report = run_mod.execute(cfg, tmp_path, progress=False)
    notes = [n for s in report["sections"].values() for n in s["notes"] if n.startswith("clean accuracy")]
    assert notes and all("paired: exact McNemar p = " in n for n in notes), notes
