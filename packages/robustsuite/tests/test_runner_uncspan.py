"""The uncspan runner on tiny parameters: the section is well formed and its numbers are sane."""

import json

import pytest

from robustsuite.runners import RunContext
from robustsuite.runners import uncspan as runner


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    ctx = RunContext(run_dir=tmp_path_factory.mktemp("run"), method=runner.NAME, seed=0)
    params = {**runner.DEFAULTS, "n": 80, "steps": 8, "n_outliers": 60, "osr_eps": [0.0, 0.1]}
    return ctx, params, runner.run(ctx, params)


def test_section_well_formed(section):
    ctx, _, sec = section
    d = sec.to_dict()
    json.dumps(d)
    names = [t.name for t in sec.tables]
    assert names == ["span", "signed_ece", "ood_osr"]
    span = sec.tables[0]
    assert len(span.rows) == 2 and [r[0] for r in span.rows] == [1, 2]
    for r in span.rows:
        row = dict(zip(span.columns, r, strict=True))
        assert 0 <= row["robust_acc"] <= row["clean_acc"] <= 1
        assert row["mus_mean"] >= 0 and row["msus_mean"] >= 0
        assert row["entropy_over"] <= row["entropy_clean"] <= row["entropy_under"]
    for r in sec.tables[1].rows:
        assert all(-1 <= v <= 1 for v in r[1:])
    ood = sec.tables[2]
    assert {r[1] for r in ood.rows} == {"open_set", "ood"}
    assert {r[0] for r in ood.rows} == set(runner.DEFAULTS["osr_models"])
    for r in ood.rows:
        assert all(0 <= v <= 1 for v in r[3:7])
    assert len(sec.figures) == 2
    for f in sec.figures:
        assert (ctx.run_dir / f.path).stat().st_size > 1000


def test_paper_claim_and_attack_effect(section):
    _, _, sec = section
    assert sec.metrics["adv_trained_smaller_mus"] is True
    assert sec.metrics["lowest_mus_model"] == "builtin:digits-cnn-at"
    assert sec.metrics["digits_osr_cnn_open_set_auroc_max_eps"] < sec.metrics["digits_osr_cnn_open_set_auroc_clean"]


def test_resume_uses_checkpoints(section):
    ctx, params, sec = section
    assert any(ctx.work_dir().glob("span_*.json"))
    again = runner.run(ctx, params)
    assert again.tables[0].rows == sec.tables[0].rows
