"""The uncspan runner: mechanics on tiny parameters (digits), the explicit adversarial-training field, Table V on
a dataset split by classes with another dataset as OOD, resume, and the paper's effects on the Fashion-MNIST demo
defaults."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import uncspan
from robustsuite import ConfigError, read_samples
from robustsuite.cli import app
from robustsuite.config import validate_method_params
from robustsuite.runners import RunContext
from robustsuite.runners import uncspan as runner

DIGITS = {"model": "builtin:digits-cnn", "dataset": "builtin:digits",
          "compare": [{"spec": "builtin:digits-cnn-at", "adversarially_trained": True}],
          "osr_models": ["builtin:digits-osr-cnn"], "osr_dataset": "builtin:digits-osr"}
TINY = {"n": 80, "steps": 8, "n_outliers": 60, "osr_eps": [0.0, 0.1], "sweep_eps": [0.0, 0.1], "sweep_n": 30,
        "sweep_steps": 4, "restarts": 0, "n_boot": 300}


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    ctx = RunContext(run_dir=tmp_path_factory.mktemp("run"), method=runner.NAME, seed=0, log_format="jsonl",
                     unit_id="uncspan-digits")
    params = {**runner.DEFAULTS, **DIGITS, **TINY}
    return ctx, params, runner.run(ctx, params)


def test_section_well_formed(section):
    ctx, _, sec = section
    d = sec.to_dict()
    json.dumps(d)
    names = [t.name for t in sec.tables]
    assert names == ["span", "signed_ece", "eps_sweep", "ood_osr"]
    span = sec.tables[0]
    assert len(span.rows) == 2 and [r[0] for r in span.rows] == [1, 2]
    for r in span.rows:
        row = dict(zip(span.columns, r, strict=True))
        assert 0 <= row["robust_acc"] <= row["clean_acc"] <= 1
        for c in ("clean_acc", "robust_acc", "mus_mean"):
            assert row[f"{c}_ci_low"] <= row[c] <= row[f"{c}_ci_high"]
        assert row["mus_mean"] >= 0 and row["msus_mean"] >= 0
        assert row["entropy_over"] <= row["entropy_clean"] <= row["entropy_under"]
        assert isinstance(row["adversarially_trained"], bool)
    for r in sec.tables[1].rows:
        assert all(-1 <= v <= 1 for v in r[1:])
    sweep = sec.tables[2]
    assert {r[0] for r in sweep.rows} == {DIGITS["model"], DIGITS["compare"][0]["spec"]}
    ood = sec.tables[3]
    assert {r[1] for r in ood.rows} == {"open_set", "ood"}
    assert {r[0] for r in ood.rows} == set(DIGITS["osr_models"])
    for r in ood.rows:
        assert all(0 <= v <= 1 for v in r[3:9]) and r[4] <= r[3] <= r[5]
    assert len(sec.figures) == 3
    for f in sec.figures:
        assert (ctx.run_dir / f.path).stat().st_size > 1000


def test_paper_effects_with_intervals_digits(section):
    """On the digits models: both attacks move the entropy (paired bootstrap intervals above 0); the adversarially
    trained model's span is smaller (paired difference interval below 0); open-set AUROC falls under attack
    (disjoint bootstrap intervals)."""
    _, _, sec = section
    m = sec.metrics
    for s in ("digits_cnn", "digits_cnn_at"):
        assert m[f"{s}_under_widening_ci_low"] > 0 and m[f"{s}_over_widening_ci_low"] > 0
    assert m["mus_diff_digits_cnn_at_minus_digits_cnn_ci_high"] < 0
    assert m["adv_trained_smaller_mus"] is True
    assert m["digits_osr_cnn_open_set_auroc_falls"] is True


def test_per_sample_files_recompute_the_section(section):
    """Issue 12 item 6: one per-sample file per ranked model (``name="span-<model>"``); the span table (clean and
    robust accuracy, MUS/MSUS mean and std, mean entropies), the widening metrics and the s-ECE table are
    recomputed from the logged columns alone."""
    ctx, params, sec = section
    models = [runner._slug(r[1]) for r in sec.tables[0].rows]
    osr = [f"{runner._slug(m)}-{kind}" for m, kind in dict.fromkeys((r[0], r[1]) for r in sec.tables[3].rows)]
    assert sorted(ctx.samples) == sorted([f"samples/uncspan-digits--span-{m}.jsonl" for m in models]
                                         + [f"samples/uncspan-digits--sweep-{m}.jsonl" for m in models]
                                         + [f"samples/uncspan-digits--ood-{o}.jsonl" for o in osr])
    span = sec.tables[0]
    sece = {r[0]: dict(zip(sec.tables[1].columns, r, strict=True)) for r in sec.tables[1].rows}
    for r in span.rows:
        row = dict(zip(span.columns, r, strict=True))
        rows = read_samples(ctx.run_dir / f"samples/uncspan-digits--span-{runner._slug(row['model'])}.jsonl")
        assert len(rows) == params["n"] and [d["id"] for d in rows] == list(range(params["n"]))
        col = {k: np.array([d[k] for d in rows]) for k in rows[0]}
        assert (col["correct"] == (col["prediction"] == col["label"])).all()
        assert (col["adv_correct"] == (col["adv_prediction"] == col["label"])).all()
        np.testing.assert_allclose(col["span"], col["under_entropy"] - col["over_entropy"], rtol=0, atol=1e-12)
        expect = {"clean_acc": col["correct"].mean(), "robust_acc": col["adv_correct"].mean(),
                  "mus_mean": col["span"].mean(), "mus_std": col["span"].std(), "msus_mean": (col["span"] ** 2).mean(),
                  "msus_std": (col["span"] ** 2).std(), "entropy_clean": col["entropy"].mean(),
                  "entropy_over": col["over_entropy"].mean(), "entropy_under": col["under_entropy"].mean()}
        for k, v in expect.items():
            assert row[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
        s = runner._slug(row["model"])
        assert sec.metrics[f"{s}_under_widening"] == pytest.approx((col["under_entropy"] - col["entropy"]).mean())
        assert sec.metrics[f"{s}_over_widening"] == pytest.approx((col["entropy"] - col["over_entropy"]).mean())
        for kind, prefix in (("clean", ""), ("over", "over_"), ("under", "under_")):
            conf = col[f"{prefix}confidence"]
            correct = col[f"{prefix}prediction"] == col["label"]
            assert sece[row["model"]][kind] == pytest.approx(uncspan.signed_ece(conf, correct, params["n_bins"]))
        # the attacks do what the columns say: over never raises, under never lowers the entropy
        assert (col["over_entropy"] <= col["entropy"] + 1e-9).all() and (col["under_entropy"] >= col["entropy"] - 1e-9).all()


def test_per_sample_files_recompute_the_sweep_and_table5(section):
    """Issue 12 item 6 for the ε-sweep and Table V: ``sweep-<model>`` holds one row per (eps, test point) and the
    sweep table (MUS with its bootstrap interval, mean entropies, s-ECE) is recomputed from it; ``ood-<model>-<set>``
    holds, per eps, the in-distribution inputs (clean) and the attacked outliers, and Table V's AUROC / AUPR
    (scikit-learn), AUROC interval and mean entropies are recomputed from the logged scores."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    ctx, params, sec = section
    sweep = [dict(zip(sec.tables[2].columns, r, strict=True)) for r in sec.tables[2].rows]
    assert {r["model"] for r in sweep} == {r[1] for r in sec.tables[0].rows}
    for r in sweep:
        rows = read_samples(ctx.run_dir / f"samples/uncspan-digits--sweep-{runner._slug(r['model'])}.jsonl")
        rows = [d for d in rows if d["eps"] == r["eps"]]
        assert [d["id"] for d in rows] == list(range(params["sweep_n"]))
        col = {k: np.array([d[k] for d in rows]) for k in rows[0]}
        np.testing.assert_allclose(col["span"], col["under_entropy"] - col["over_entropy"], rtol=0, atol=1e-12)
        assert r["mus_mean"] == pytest.approx(col["span"].mean(), rel=1e-12, abs=1e-15)
        assert (r["mus_mean_ci_low"], r["mus_mean_ci_high"]) == pytest.approx(
            uncspan.bootstrap_mean_ci(col["span"], seed=0, n_boot=params["n_boot"]), rel=1e-12, abs=1e-15)
        for kind, prefix in (("clean", ""), ("over", "over_"), ("under", "under_")):
            assert r[f"entropy_{kind}"] == pytest.approx(col[f"{prefix}entropy"].mean(), rel=1e-12, abs=1e-15)
            assert r[f"sece_{kind}"] == pytest.approx(uncspan.signed_ece(
                col[f"{prefix}confidence"], col[f"{prefix}prediction"] == col["label"], params["n_bins"]), abs=1e-12)
        if r["eps"] == 0:  # the clean row attacks nothing
            assert (col["span"] == 0).all()
    ood = [dict(zip(sec.tables[3].columns, r, strict=True)) for r in sec.tables[3].rows]
    for r in ood:
        rows = read_samples(ctx.run_dir / f"samples/uncspan-digits--ood-{runner._slug(r['model'])}-{r['outliers']}.jsonl")
        rows = [d for d in rows if d["eps"] == r["eps"]]
        col = {k: np.array([d[k] for d in rows]) for k in rows[0]}
        out, h = col["outlier"].astype(bool), col["entropy"]
        assert (~out).sum() == params["n"] and out.sum() == params["n_outliers"]
        assert r["auroc"] == pytest.approx(roc_auc_score(out, h), abs=1e-12)
        assert r["aupr_out"] == pytest.approx(average_precision_score(out, h), abs=1e-12)
        assert r["aupr_in"] == pytest.approx(average_precision_score(~out, -h), abs=1e-12)
        assert (r["auroc_ci_low"], r["auroc_ci_high"]) == pytest.approx(
            uncspan.auroc_ci(h[~out], h[out], seed=0, n_boot=params["auroc_n_boot"]), abs=1e-12)
        assert r["mean_entropy_in"] == pytest.approx(h[~out].mean(), rel=1e-12)
        assert r["mean_entropy_out"] == pytest.approx(h[out].mean(), rel=1e-12)
        assert (col["confidence"] > 0).all() and (col["confidence"] <= 1).all()


@pytest.mark.parametrize("bad, key", [({"eps": -0.1}, "eps"), ({"n": 0}, "n"), ({"steps": -1}, "steps"),
                                      ({"norm": "L1"}, "norm"), ({"optimizer": "sgd"}, "optimizer"),
                                      ({"restarts": -1}, "restarts"), ({"n_boot": 10}, "n_boot"),
                                      ({"n_bins": 0}, "n_bins"), ({"sweep_n": 0}, "sweep_n"),
                                      ({"n_outliers": 0}, "n_outliers"), ({"sweep_steps": -2}, "sweep_steps"),
                                      ({"auroc_n_boot": 10}, "auroc_n_boot")])
def test_out_of_range_parameters_are_rejected_before_work(bad, key, tmp_path):
    """BOUNDS: a value out of range is refused by the typed config, naming the parameter, before any unit runs
    (no run directory is written)."""
    with pytest.raises(ConfigError, match=rf"\b{key}\b"):
        validate_method_params("uncspan", bad)
    (value,) = bad.values()
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[methods.uncspan]\n{key} = {json.dumps(value)}\n")
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--no-progress"])
    assert res.exit_code == 2 and key in res.output, res.output
    assert not (tmp_path / "out").exists()


def test_adversarial_training_is_an_explicit_field(tmp_path):
    """A model whose name ends in "-at" but is declared not adversarially trained is not compared as such (and
    today's "-at" suffix guess would have)."""
    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    params = {**runner.DEFAULTS, **DIGITS, **TINY, "n": 30, "sweep_eps": [], "osr_eps": [0.0],
              "compare": [{"spec": "builtin:digits-cnn-at", "adversarially_trained": False}]}
    sec = runner.run(ctx, params)
    assert "adv_trained_smaller_mus" not in sec.metrics
    assert not any(k.startswith("mus_diff_") for k in sec.metrics)
    assert [r[2] for r in sec.tables[0].rows] == [False, False]
    with pytest.raises(ValueError, match="adversarially_trained"):
        runner.run(ctx, {**params, "compare": [{"spec": "builtin:digits-cnn-at", "adversarially_trained": "yes"}]})


def test_table5_on_a_class_split_with_another_dataset_as_ood(tmp_path):
    """Table V on any data: builtin:digits with classes 8-9 as the open set (the all-class model restricted to
    0-7) and the 8x8 photo patches of builtin:digits-osr... replaced here by a dataset spec (builtin:digits-osr's
    test split) as OOD, resized by match_images when shapes differ."""
    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    params = {**runner.DEFAULTS, **DIGITS, **TINY, "n": 40, "sweep_eps": [], "compare": [],
              "osr_models": ["builtin:digits-cnn"],
              "osr_dataset": "builtin:digits", "open_set_classes": [8, 9], "ood_dataset": "builtin:digits-osr"}
    sec = runner.run(ctx, params)
    ood = sec.tables[-1]
    assert {r[1] for r in ood.rows} == {"open_set", "ood"}
    assert any("restricted to the known classes [0, 1, 2, 3, 4, 5, 6, 7]" in n for n in sec.notes)


def test_resume_uses_checkpoints(section):
    ctx, params, sec = section
    assert any(ctx.work_dir().glob("span_*.json")) and any(ctx.work_dir().glob("sweep_*.json"))
    again = runner.run(ctx, params)
    assert again.tables[0].rows == sec.tables[0].rows
    assert again.tables[2].rows == sec.tables[2].rows


@pytest.mark.slow  # the demo section on its Fashion-MNIST defaults
def test_paper_effects_on_fashion_defaults(tmp_path):
    """The demo's defaults (builtin:fashion-cnn / -at, builtin:fashion-mnist-osr + builtin:fashion-osr-cnn): the
    over and under attacks widen the span (paired bootstrap intervals above 0), adversarial training lowers MUS
    (Table I direction: paired-difference interval below 0) and open-set / OOD AUROC falls under attack
    (disjoint bootstrap intervals)."""
    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    sec = runner.run(ctx, dict(runner.DEFAULTS))
    m = sec.metrics
    for s in ("fashion_cnn", "fashion_cnn_at"):
        assert m[f"{s}_under_widening_ci_low"] > 0 and m[f"{s}_over_widening_ci_low"] > 0
    assert m["mus_diff_fashion_cnn_at_minus_fashion_cnn_ci_high"] < 0
    assert m["adv_trained_smaller_mus"] is True
    assert m["fashion_osr_cnn_open_set_auroc_falls"] is True
    assert m["fashion_osr_cnn_ood_auroc_falls"] is True
