"""The certcal runner produces a well-formed section with sane numbers on tiny budgets."""

from __future__ import annotations

import json

import pytest
import torch

from robustsuite.runners import RunContext
from robustsuite.runners import certcal as runner

TINY = {
    "sigmas": [0.25],
    "noise_epochs": 1,
    "n0": 20,
    "n": 100,
    "max_samples": 40,
    "radii": [0.0, 0.25],
    "admm_steps": 50,
    "ace_steps": 5,
    "act": True,
    "act_methods": ["smoothadv", "acce_act_exact"],
    "act_epochs": 1,
    "act_train_samples": 128,
}


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    ctx = RunContext(run_dir=run_dir, method=runner.NAME, seed=0, device=torch.device("cpu"))
    params = {**runner.DEFAULTS, **TINY}
    return runner.run(ctx, params), ctx, params


def test_module_contract():
    assert runner.NAME == "certcal" and runner.PAPER == "004"
    assert runner.DEFAULTS["model"] == "builtin:digits-cnn" and runner.DEFAULTS["dataset"] == "builtin:digits"


def test_section_well_formed_and_sane(section):
    sec, ctx, params = section
    d = sec.to_dict() if hasattr(sec, "to_dict") else sec.__dict__
    json.dumps(d, default=str)
    names = {t.name for t in sec.tables}
    assert {"certified", "bounds", "ace", "act"} <= names
    cert = next(t for t in sec.tables if t.name == "certified")
    assert len(cert.rows) == len(params["radii"])
    for row in cert.rows:
        sigma, radius, ca, n_cert, cbs, cce_exact, cce_admm, cce_brier, _ = row
        assert 0 <= ca <= 100
        if n_cert:
            assert 0 <= cbs <= 100
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


def test_cdf_bounds_tighter_than_standard(section):
    sec, _, _ = section
    bounds = next(t for t in sec.tables if t.name == "bounds")
    assert bounds.rows and all(row[4] <= 1.0 for row in bounds.rows)
