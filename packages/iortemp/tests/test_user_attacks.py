"""Defect 3: user attacks as plain callables; HFTextClassifier with models that take no token_type_ids."""

import numpy as np
import pytest
import torch

import iortemp


class Indexed:
    """Text classifier: text "k" -> row k of a fixed logit table."""

    def __init__(self, logits):
        self.logits = np.asarray(logits, dtype=np.float32)

    def __call__(self, texts):
        return self.logits[[int(t) for t in texts]]


N = 10
MODEL = Indexed([[2.0, 0.0]] * N + [[0.0, 2.0]] * N)  # texts 0..9 correct for label 0; N+i misclassified
TEXTS, LABELS = [str(i) for i in range(N)], np.zeros(N, dtype=np.int64)


def _flip_first(k):
    def out(texts):
        return [str(int(t) + N) if i < k else t for i, t in enumerate(texts)]

    return out


def test_plain_callable_attacks_without_progress_or_seed():
    def with_seed(victim, texts, labels, seed=0):
        adv = _flip_first(4)(texts)
        return iortemp.AttackOutput(adv, np.arange(len(texts)) < 4, np.zeros(len(texts), bool),
                                    np.zeros(len(texts), np.int64))

    def bare(victim, texts, labels):
        return with_seed(victim, texts, labels)

    for atk in (with_seed, bare):
        ev = iortemp.evaluate_attack(MODEL, TEXTS, LABELS, atk, temperature=0.01)
        assert ev.adversarial_accuracy == pytest.approx(0.6)
        sw = iortemp.temperature_sweep(MODEL, TEXTS, LABELS, atk, [1e-3, 1.0, 1e7])
        assert [p.adversarial_accuracy for p in sw] == pytest.approx([0.6] * 3)
        res = iortemp.optimize_temperature(MODEL, TEXTS, LABELS, atk, max_evaluations=3)
        assert res.adversarial_accuracy == pytest.approx(0.6)
        rep = iortemp.detect_ior(MODEL, TEXTS, LABELS, atk, val_inputs=TEXTS + ["15"],
                                 val_labels=np.r_[LABELS, 0], max_evaluations=3)
        assert rep.plain.adversarial_accuracy == pytest.approx(0.6)
        xa, ya = iortemp.adversarial_augmentation(MODEL, TEXTS, LABELS, atk)
        assert len(xa) == N + 4


def test_attack_with_progress_receives_it():
    seen = []

    def atk(victim, texts, labels, *, seed=0, progress=False):
        seen.append(progress)
        return iortemp.AttackOutput(list(texts), np.zeros(len(texts), bool), np.zeros(len(texts), bool),
                                    np.zeros(len(texts), np.int64))

    iortemp.evaluate_attack(MODEL, TEXTS, LABELS, atk, progress=True)
    assert seen == [True]


def test_non_attack_callable_rejected_with_clear_error():
    with pytest.raises(TypeError, match="attack"):
        iortemp.evaluate_attack(MODEL, TEXTS, LABELS, lambda: None)


def _tiny_distilbert(tmp_path, texts):
    """A tiny DistilBERT saved and reloaded with save_pretrained / from_pretrained (no network), paired with a
    BERT-style fast tokenizer that returns token_type_ids, which DistilBERT's forward does not accept."""
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DistilBertConfig,
        DistilBertForSequenceClassification,
    )

    from iortemp._toy import build_tiny_bert

    _, tok = build_tiny_bert(texts)
    cfg = DistilBertConfig(vocab_size=len(tok), dim=32, n_layers=1, n_heads=2, hidden_dim=64,
                           max_position_embeddings=64, num_labels=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        DistilBertForSequenceClassification(cfg).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    model = AutoModelForSequenceClassification.from_pretrained(tmp_path)
    tok = AutoTokenizer.from_pretrained(tmp_path)
    assert "token_type_ids" in tok(["a"])  # the tokenizer does emit them
    return model, tok


def test_hf_classifier_and_training_with_distilbert(tmp_path, corpus_maker):
    x, y = corpus_maker(32, 9)
    model, tok = _tiny_distilbert(tmp_path, x)
    clf = iortemp.HFTextClassifier(model, tok, max_length=32)
    out = clf(x[:5])
    assert out.shape == (5, 2) and np.isfinite(out).all()
    for method in ("base", "pgd", "freelb", "ddi-at"):
        cfg = iortemp.TrainingConfig(lr=1e-3, batch_size=16, epochs=1, max_length=32, adv_steps=1, ddi_k=1,
                                     ddi_m=2)
        res = iortemp.train_classifier(model, tok, x, y, method=method, config=cfg, seed=0)
        assert res.steps == 2 and np.isfinite(res.epoch_losses).all()


def _seeded_flip(model, texts, labels, *, seed=0):
    """Flips the texts the seed picks and records the model it was handed (the first argument)."""
    picked = np.random.default_rng(seed).random(len(texts)) < 0.5
    adv = [str(int(t) + N) if p else t for t, p in zip(texts, picked, strict=True)]
    return iortemp.AttackOutput(adv, picked, np.zeros(len(texts), bool), np.zeros(len(texts), np.int64),
                                extra={"model": model})


def test_call_attack_takes_the_data_first_and_the_attack_last():
    out = iortemp.call_attack(MODEL, TEXTS, LABELS, _seeded_flip, seed=3)
    assert out.extra["model"] is MODEL
    want = np.random.default_rng(3).random(N) < 0.5  # the seed reached the attack
    assert out.success.tolist() == want.tolist() and 0 < want.sum() < N
    assert out.adversarial == [str(int(t) + N) if w else t for t, w in zip(TEXTS, want, strict=True)]


def test_call_attack_former_order_and_victim_warn_and_give_the_same_result():
    new = iortemp.call_attack(MODEL, TEXTS, LABELS, _seeded_flip, seed=3)
    with pytest.warns(DeprecationWarning, match=r"call_attack\(attack, model, inputs, labels\)") as rec:
        old = iortemp.call_attack(_seeded_flip, MODEL, TEXTS, LABELS, seed=3)
    assert rec[0].filename == __file__  # the warning points at the caller's line
    with pytest.warns(DeprecationWarning, match="victim"):
        named = iortemp.call_attack(victim=MODEL, inputs=TEXTS, labels=LABELS, attack=_seeded_flip, seed=3)
    for got in (old, named):
        assert got.extra["model"] is MODEL
        assert (got.adversarial, got.success.tolist()) == (new.adversarial, new.success.tolist())
