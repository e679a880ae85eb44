import numpy as np
import pytest
import torch

import iortemp


@pytest.fixture(scope="module")
def small(corpus_maker):
    x, y = corpus_maker(48, 5)
    return x, y


@pytest.mark.parametrize("method", ["base", "pgd", "freelb", "ddi-at"])
def test_each_method_trains_and_is_deterministic(small, method, tiny_bert):
    x, y = small
    cfg = iortemp.TrainingConfig(lr=1e-3, batch_size=16, epochs=1, max_length=32, adv_steps=2, ddi_k=2)
    outs = []
    for _ in range(2):
        model, tok = tiny_bert(x, seed=0)
        before = [p.detach().clone() for p in model.parameters()]
        state = torch.random.get_rng_state()
        res = iortemp.train_classifier(model, tok, x, y, method=method, config=cfg, seed=7)
        assert torch.equal(state, torch.random.get_rng_state())  # caller's global RNG untouched
        assert res.steps == 3 and np.isfinite(res.epoch_losses).all()
        assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
        outs.append(iortemp.HFTextClassifier(model, tok)(x[:5]))
        if method == "ddi-at":
            a = np.array(res.mean_simplex_weights)
            assert a.shape == (3,) and a.min() >= 0 and a.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_ddi_normalisation_switch_changes_update(small, tiny_bert):
    x, y = small
    out = {}
    for norm in ("normalise", "none"):
        model, tok = tiny_bert(x, seed=0)
        cfg = iortemp.TrainingConfig(lr=1e-3, batch_size=48, epochs=1, max_length=32, ddi_k=1, ddi_m=2,
                                     ddi_normalization=norm)
        iortemp.train_classifier(model, tok, x, y, method="ddi-at", config=cfg, seed=0)
        out[norm] = iortemp.HFTextClassifier(model, tok)(x[:4])
    assert not np.allclose(out["normalise"], out["none"])


def test_augmentation_adds_successful_examples(tiny_text, corpus, synonyms):
    (x, y), _, _ = corpus
    x, y = x[:30], y[:30]
    xa, ya = iortemp.adversarial_augmentation(tiny_text, x, y, iortemp.GreedyWordSwap(candidates=synonyms))
    assert xa[: len(x)] == list(x) and len(xa) == len(ya) and len(xa) > len(x)
    # every added example is misclassified by the attacked model and keeps its source label
    added = xa[len(x):]
    assert (tiny_text(added).argmax(1) != ya[len(x):]).all()


def test_bad_training_inputs(small, tiny_bert):
    x, y = small
    model, tok = tiny_bert(x, seed=0)
    with pytest.raises(ValueError, match="method"):
        iortemp.train_classifier(model, tok, x, y, method="ascc")
    with pytest.raises(ValueError, match="ddi_normalization"):
        iortemp.TrainingConfig(ddi_normalization="rescale")
    with pytest.raises(ValueError, match="labels"):
        iortemp.train_classifier(model, tok, x, y[:-1])
    with pytest.raises(TypeError, match="model"):
        iortemp.train_classifier(torch.nn.Linear(2, 2), tok, x, y)
