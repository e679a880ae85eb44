"""The certcal runner: mechanics on the 8x8 digits with tiny budgets (noise fine-tuning, ACT, resume), and
the paper's effects on the demo defaults (Fashion-MNIST, shipped noise models), asserted with intervals."""

from __future__ import annotations

import json

import pytest
import torch

from robustsuite.runners import RunContext
from robustsuite.runners import certcal as runner

TINY = {
    "model": "builtin:digits-cnn",
    "dataset": "builtin:digits",
    "noise_models": [],           # fine-tune the digits model with Gaussian noise (the non-shipped path)
    "n_boot": 20,
    "sigmas": [0.25],
    "noise_epochs": 1,
    "n0": 20,
    "n": 100,
    "max_samples": 40,
    "radii": [0.0, 0.25],
    "admm_steps": 50,
    "ace_steps": 5,
    "act": True,
    "act_methods": ["none", "smoothadv", "acce_act_exact"],
    "act_epochs": 1,
    "act_train_samples": 128,
}


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    ctx = RunContext(run_dir=run_dir, method=runner.NAME, seed=0, device=torch.device("cpu"), log_format="jsonl")
    params = {**runner.DEFAULTS, **TINY}
    return runner.run(ctx, params), ctx, params


def test_module_contract():
    assert runner.NAME == "certcal" and runner.PAPER == "004"
    d = runner.DEFAULTS
    assert d["model"] == "builtin:fashion-cnn" and d["dataset"] == "builtin:fashion-mnist"
    assert d["noise_models"] == ["builtin:fashion-cnn-noise-0.25", "builtin:fashion-cnn-noise-0.5"]
    assert d["sigmas"] == [0.25, 0.5] and d["act"] is True and d["act_methods"][0] == "none"
    assert runner.LOGS_SAMPLES is True


def test_section_well_formed_and_sane(section):
    sec, ctx, params = section
    d = sec.to_dict() if hasattr(sec, "to_dict") else sec.__dict__
    json.dumps(d, default=str)
    names = {t.name for t in sec.tables}
    assert {"certified", "fixed_set", "bounds", "ace", "act"} <= names
    cert = next(t for t in sec.tables if t.name == "certified")
    assert len(cert.rows) == len(params["radii"])
    for row in cert.rows:
        sigma, radius, ca, ca_lo, ca_hi, n_cert, cbs, cbs_lo, cbs_hi, cce_exact, cce_lo, cce_hi, cce_admm, cce_brier, _ = row
        assert 0 <= ca_lo <= ca <= ca_hi <= 100
        if n_cert:
            assert 0 <= cbs <= 100 and cbs_lo <= cbs_hi and cce_lo <= cce_hi
            # exact is the optimum: never below the ADMM or Brier estimates
            assert cce_exact + 1e-9 >= cce_admm and cce_exact + 1e-9 >= cce_brier
    ace = next(t for t in sec.tables if t.name == "ace")
    assert len(ace.rows) == 8 and all(r[-1] is True for r in ace.rows)
    assert sec.metrics["ace_predictions_unchanged"] is True
    assert len(sec.figures) == 2
    for fig in sec.figures:
        assert (ctx.run_dir / fig.path).is_file()


def test_resume_reuses_checkpoints(section):
    sec, ctx, params = section
    work = ctx.work_dir()
    assert any(p.suffix == ".pt" for p in work.iterdir())
    again = runner.run(ctx, params)
    assert again.metrics["sigma_0p25_r_0_cce_exact"] == sec.metrics["sigma_0p25_r_0_cce_exact"]


def test_samples_file_reproduces_section_aggregates(section):
    """The per-sample rows (one file per sigma) recompute the section's certified accuracy, certified count,
    CBS and exact CCE at every radius."""
    import numpy as np

    import certcal
    from robustsuite import read_samples

    sec, ctx, params = section
    assert len(ctx.samples) == len(params["sigmas"])
    for sigma in params["sigmas"]:
        path = next(ctx.run_dir / s for s in ctx.samples if s.endswith(f"sigma{runner._tag(sigma)}.jsonl"))
        rows = read_samples(path)
        assert len(rows) == params["max_samples"]
        assert [r["id"] for r in rows] == list(range(len(rows)))
        assert {"id", "label", "prediction", "confidence", "certified_radius"} <= set(rows[0])
        pred = np.array([r["prediction"] for r in rows])
        lab = np.array([r["label"] for r in rows])
        rad = np.array([r["certified_radius"] for r in rows])
        assert all(0.0 <= r["confidence"] <= 1.0 for r in rows)
        for radius in params["radii"]:
            t = f"sigma_{runner._tag(sigma)}_r_{runner._tag(radius)}"
            certified = (pred >= 0) & (rad >= radius)
            assert np.mean(certified & (pred == lab)) == pytest.approx(sec.metrics[f"{t}_certified_accuracy"])
            lo = [r[f"lower_r{runner._tag(radius)}"] for r in rows]
            hi = [r[f"upper_r{runner._tag(radius)}"] for r in rows]
            assert [v is not None for v in lo] == list(certified)
            if not certified.any():
                assert sec.metrics[f"{t}_cbs"] is None
                continue
            lo_c = np.array([v for v in lo if v is not None])
            hi_c = np.array([v for v in hi if v is not None])
            c = (pred == lab)[certified].astype(float)
            assert np.all(lo_c <= hi_c)
            cbs = np.mean(c * (1 - lo_c) ** 2 + (1 - c) * hi_c ** 2)  # Theorem 3.3 written out
            assert cbs == pytest.approx(sec.metrics[f"{t}_cbs"], abs=1e-12)
            cce = certcal.certified_calibration_error(lo_c, hi_c, c.astype(bool), params["n_bins"]).value
            assert cce == pytest.approx(sec.metrics[f"{t}_cce_exact"], abs=1e-12)


def test_act_table_has_the_baseline_and_selection_columns(section):
    sec, _, params = section
    act = next(t for t in sec.tables if t.name == "act")
    assert len(act.rows) == len(params["act_methods"]) * len(params["radii"])
    assert act.columns[-1] == "seeds selected"
    for row in act.rows:
        assert 0 <= row[3] <= row[2] <= row[4] <= 100
        assert row[-1] in (0, 1)
    assert "ACT at r=" in sec.summary or "ACT: no radius" in sec.summary


@pytest.mark.parametrize(("key", "value"), [("alpha", 1.5), ("alpha", 0.0), ("n", 0), ("n0", 0),
                                            ("max_samples", 0), ("bound", "hoeffding"), ("act_sigma", 0.0),
                                            ("act_epsilon", -0.1), ("act_selection_margin", 2.0),
                                            ("ace_eps_linf", 0.0), ("n_boot", 0)])
def test_bounds_reject_bad_scalars_before_work(key, value):
    from robustsuite import ConfigError
    from robustsuite.config import validate_method_params

    validate_method_params(runner.NAME, {key: runner.DEFAULTS[key]})
    with pytest.raises(ConfigError, match=key):
        validate_method_params(runner.NAME, {key: value})


@pytest.mark.parametrize(("key", "value"), [("sigmas", [0.25, 0.0]), ("sigmas", []), ("radii", [-0.1]),
                                            ("radii", [float("nan")]), ("act_lr_grid", [0.0]),
                                            ("act_seeds", [0.5])])
def test_bad_lists_rejected_before_loading(tmp_path, key, value):
    class NoLoad(RunContext):
        def model(self, spec):  # pragma: no cover - must not be reached
            raise AssertionError("loaded a model before checking the parameters")

        dataset = model

    ctx = NoLoad(run_dir=tmp_path, method=runner.NAME, seed=0)
    with pytest.raises(ValueError, match=key):
        runner.run(ctx, {**runner.DEFAULTS, key: value})


def test_cdf_bounds_tighter_than_standard(section):
    sec, _, _ = section
    bounds = next(t for t in sec.tables if t.name == "bounds")
    assert bounds.rows and all(row[4] <= 1.0 for row in bounds.rows)


# ---------------------------------------------------------------------------------------------------------
# The paper's effects on the demo defaults (shipped Fashion-MNIST subset and shipped models: identical data
# and weights everywhere). Margins come from the data: bootstrap intervals, exact monotonicity.


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("demo")
    ctx = RunContext(run_dir=run_dir, method=runner.NAME, seed=0, device=torch.device("cpu"))
    return runner.run(ctx, dict(runner.DEFAULTS))


@pytest.mark.slow
def test_demo_ace_raises_ece_with_accuracy_unchanged(demo):
    ace = next(t for t in demo.tables if t.name == "ace")
    col = {c: i for i, c in enumerate(ace.columns)}
    # no attack changes a prediction, so every row has the clean accuracy
    assert demo.metrics["ace_predictions_unchanged"] is True
    assert all(r[col["predictions unchanged"]] is True for r in ace.rows)
    assert len({r[col["accuracy"]] for r in ace.rows}) == 1
    # lowering the confidence of a confident, calibrated model raises its ECE (paper Table 1): the clean and
    # attacked ECE bootstrap intervals are disjoint and the paired increase's interval excludes 0
    lowering = [r for r in ace.rows if r[col["configuration"]].startswith("lower_")]
    assert len(lowering) == 4
    for r in lowering:
        assert r[col["attacked ECE_ci_low"]] > r[col["clean ECE_ci_high"]], r
        assert r[col["ECE increase_ci_low"]] > 0, r


@pytest.mark.slow
def test_demo_cbs_cce_grow_with_radius(demo):
    rows = next(t for t in demo.tables if t.name == "fixed_set").rows
    for sigma in runner.DEFAULTS["sigmas"]:
        mine = sorted((r for r in rows if r[0] == sigma), key=lambda r: r[1])
        assert [r[1] for r in mine] == sorted(runner.DEFAULTS["radii"])
        cbs = [demo.metrics[f"fixed_sigma_{runner._tag(sigma)}_r_{runner._tag(r[1])}_cbs"] for r in mine]
        cce = [demo.metrics[f"fixed_sigma_{runner._tag(sigma)}_r_{runner._tag(r[1])}_cce_exact"] for r in mine]
        # exact property: on a fixed input set the certified confidence boxes nest as r grows
        assert all(b >= a - 1e-12 for a, b in zip(cbs, cbs[1:], strict=False)), cbs
        assert all(b >= a - 1e-12 for a, b in zip(cce, cce[1:], strict=False)), cce
        # strict increase from the smallest to the largest radius, separated from 0 by its bootstrap interval
        t = f"fixed_sigma_{runner._tag(sigma)}"
        assert demo.metrics[f"{t}_cbs_increase_ci_low"] > 0
        assert demo.metrics[f"{t}_cce_increase_ci_low"] > 0


# ---------------------------------------------------------------------------------------------------------
# The package README's "demo's numbers with the package alone" block, run at small sizes, must give the
# runner's tables and metrics exactly (same calls in the same order on the same machine).

README_SIZES = {"N_TEST": 24, "N_DRAWS": 100, "N_BOOT": 10, "ADMM_STEPS": 20, "ACE_STEPS": 2, "ACT_TRAIN": 32,
                "ACT_TEST": 16, "RADII": [0.0, 0.25], "SEED": 3}


def _readme_block(sizes: dict) -> str:
    """The fenced block of the README section, with its top-level size assignments replaced by ``sizes``."""
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parents[2] / "certcal" / "README.md"
    text = readme.read_text(encoding="utf-8")
    m = re.search(r"^## The demo's numbers with the package alone\n(.*?)^```python\n(.*?)^```", text, re.S | re.M)
    assert m, "README section 'The demo's numbers with the package alone' with a python block not found"
    code = m.group(2)
    done = set()
    lines = []
    for line in code.splitlines():
        lhs = re.match(r"^([A-Z_]+(?:, [A-Z_]+)*) = ", line)
        if lhs:
            names = lhs.group(1).split(", ")
            assert set(names) <= set(sizes), f"unexpected top-level size names {names}"
            line = f"{', '.join(names)} = {', '.join(repr(sizes[n]) for n in names)}"
            done |= set(names)
        lines.append(line)
    assert done == set(sizes), f"size names not found in the README block: {set(sizes) - done}"
    return "\n".join(lines) + "\n"


def test_readme_package_block_reproduces_the_runner(tmp_path):
    s = README_SIZES
    ns: dict = {}
    exec(compile(_readme_block(s), "certcal/README.md", "exec"), ns)
    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=s["SEED"], device=torch.device("cpu"))
    params = {**runner.DEFAULTS, "max_samples": s["N_TEST"], "n": s["N_DRAWS"], "n_boot": s["N_BOOT"],
              "admm_steps": s["ADMM_STEPS"], "ace_steps": s["ACE_STEPS"], "act_train_samples": s["ACT_TRAIN"],
              "act_max_samples": s["ACT_TEST"], "radii": s["RADII"]}
    sec = runner.run(ctx, params)
    tables = {t.name: t.rows for t in sec.tables}
    assert ns["fixed"], "the small sizes must still certify an input at the largest radius"
    assert tables["certified"] == [r for sg, c in ns["curves"].items() for r in runner.certified_rows(sg, c)]
    assert tables["fixed_set"] == [r for sg, c in ns["fixed"].items() for r in runner.fixed_rows(sg, c)]
    assert tables["bounds"] == [r for w in ns["widths"].values() for r in runner.bound_rows(w)]
    assert tables["ace"] == runner.ace_rows(ns["ace"])
    assert tables["act"] == runner.act_rows(ns["act"])
    curves = {sg: (None, c) for sg, c in ns["curves"].items()}
    assert sec.metrics == runner._metrics(curves, ns["fixed"], ns["widths"], ns["ace"], ns["act"])
