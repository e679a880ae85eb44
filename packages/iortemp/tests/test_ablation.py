"""Table 5 through the package: ddi_normalization_ablation over seeds equals fine-tuning each setting by hand."""

import copy
import dataclasses

import numpy as np
import pytest

import iortemp


def test_ablation_rows_match_direct_training_and_hold_intervals(tiny_text, corpus, corpus_maker):
    (xtr, ytr), _, _ = corpus
    xte, yte = corpus_maker(80, 21)
    cfg = iortemp.TrainingConfig(lr=1e-3, batch_size=16, epochs=1, max_length=32, ddi_m=2, ddi_k=1,
                                 adv_scale="embedding")
    before = {k: v.clone() for k, v in tiny_text.model.state_dict().items()}
    tab = iortemp.ddi_normalization_ablation(tiny_text.model, tiny_text.tokenizer, xtr[:48], ytr[:48], xte, yte,
                                             settings=("normalise", "none"), seeds=[0, 1], config=cfg)
    assert all(v.equal(tiny_text.model.state_dict()[k]) for k, v in before.items())  # base left unchanged
    assert [r["setting"] for r in tab.rows] == ["base", "normalise", "none"] and tab.n == 80
    z = iortemp.logits64(tiny_text, xte)
    assert tab.row("base")["accuracy"] == pytest.approx(np.mean(z.argmax(1) == yte))
    # seed 1 of "none" recomputed by hand: the same fine-tuning and the same float64 confidence
    m = copy.deepcopy(tiny_text.model)
    iortemp.train_classifier(m, tiny_text.tokenizer, xtr[:48], ytr[:48], method="ddi-at",
                             config=dataclasses.replace(cfg, ddi_normalization="none"), seed=1)
    zz = iortemp.logits64(iortemp.HFTextClassifier(m, tiny_text.tokenizer, max_length=32), xte)
    p = np.exp(zz - zz.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    rec = tab.row("none")["per_seed"][1]
    assert rec["seed"] == 1 and rec["confidence"] == pytest.approx(p.max(1).mean(), rel=1e-9)
    assert rec["accuracy"] == pytest.approx(np.mean(zz.argmax(1) == yte))
    for r in tab.rows[1:]:
        for k in ("accuracy", "confidence"):
            vals = [s[k] for s in r["per_seed"]]
            assert r[k] == pytest.approx(np.mean(vals))
            assert r[f"{k}_ci_low"] <= min(vals) <= max(vals) <= r[f"{k}_ci_high"]
            assert r[f"{k}_seed_ci_low"] is None  # two seeds say nothing about the spread: no interval
    assert tab.row("base")["accuracy_seed_ci_low"] is None  # one measurement: no spread over seeds
    with pytest.raises(ValueError, match="settings"):
        iortemp.ddi_normalization_ablation(tiny_text.model, tiny_text.tokenizer, xtr[:4], ytr[:4], xte, yte,
                                           settings=("scale",))
