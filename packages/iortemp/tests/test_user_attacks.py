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
