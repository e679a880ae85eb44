import numpy as np
import pytest

from robustsuite import load_dataset, load_model, predict_logits
from robustsuite.runners import RunContext, overview


def test_overview_numbers_match_an_independent_computation(tmp_path):
    ctx = RunContext(run_dir=tmp_path, method="overview")
    sec = overview.run(ctx, {**overview.DEFAULTS, "model": "builtin:digits-cnn", "dataset": "builtin:digits"})
    ds = load_dataset("builtin:digits")
    logits = predict_logits(load_model("builtin:digits-cnn"), ds.test.x)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    conf, correct = p.max(1), p.argmax(1) == ds.test.y.numpy()
    assert sec.metrics["accuracy"] == pytest.approx(correct.mean())
    assert sec.metrics["brier"] == pytest.approx(np.mean((conf - correct) ** 2))
    # ECE by hand: 15 equal-width bins on (0, 1], |accuracy - confidence| weighted by bin mass
    idx = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)
    ece = sum(abs(correct[idx == b].mean() - conf[idx == b].mean()) * (idx == b).mean() for b in range(15) if (idx == b).any())
    assert sec.metrics["ece"] == pytest.approx(ece, abs=1e-9)
    assert (tmp_path / sec.figures[0].path).is_file()


def test_overview_rejects_unknown_split(tmp_path):
    with pytest.raises(ValueError, match="split"):
        overview.run(RunContext(run_dir=tmp_path, method="overview"),
                     {"model": "builtin:digits-cnn", "dataset": "builtin:digits", "split": "dev"})


def test_overview_demo_defaults_name_the_shipped_benchmarks_and_their_data_source(tmp_path):
    """The demo's overview runs on the shipped Fashion-MNIST / WordNet models and says which data it used."""
    assert ["builtin:fashion-cnn", "builtin:fashion-mnist"] in overview.DEFAULTS["targets"]
    assert ["builtin:wordnet-roberta", "builtin:wordnet-topics"] in overview.DEFAULTS["targets"]
    ctx = RunContext(run_dir=tmp_path, method="overview")
    sec = overview.run(ctx, {**overview.DEFAULTS, "model": "builtin:fashion-cnn", "dataset": "builtin:fashion-mnist"})
    assert "Fashion-MNIST" in sec.metrics["data_source"]
    assert any(note.startswith("Data: ") for note in sec.notes)
