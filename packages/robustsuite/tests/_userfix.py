"""Locally made user-style inputs for the trust tests: tiny HF models, torch checkpoints, image sets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

WORDS = ["good", "bad", "great", "awful", "fine", "poor", "movie", "film", "plot", "actor", "very", "not"]


def texts(n: int = 40, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 7)))) for _ in range(n)]


def bert_dir(path: Path, id2label: dict[int, str], *, model_max_length: int = 300, seed: int = 0,
             sample_texts: list[str] | None = None) -> Path:
    """A ``save_pretrained`` tiny BERT classifier whose decision threshold splits ``sample_texts`` in half."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab_file=str(path / "vocab.txt"), model_max_length=model_max_length)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=512, num_labels=len(id2label),
                     id2label=id2label, label2id={v: k for k, v in id2label.items()})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForSequenceClassification(cfg).eval()
    if sample_texts and len(id2label) == 2:  # balance the two predicted classes on the sample texts
        with torch.no_grad():
            enc = tok(sample_texts, padding=True, return_tensors="pt")
            logits = model(**enc).logits
            diff = (logits[:, 1] - logits[:, 0]).numpy()
            model.classifier.bias[1] -= float(np.median(diff))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def digits_cnn_checkpoint(path: Path, num_classes: int = 10, seed: int = 0) -> Path:
    """A state dict of the digits CNN (random weights, fixed seed)."""
    from robustsuite.models import DigitsCNN

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DigitsCNN(num_classes)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    return path
