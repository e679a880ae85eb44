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
    from robustsuite.zoo.nets import DigitsCNN

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DigitsCNN(num_classes)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    return path


def write_idx(path: Path, arr: np.ndarray) -> Path:
    """Write ``arr`` (uint8) as an IDX file (magic 0x00 0x00 0x08 ndim, big-endian dims, raw bytes)."""
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + arr.tobytes())
    return path


def digits_uint8(n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8×8 digits as uint8 images (N, 8, 8) in 0..255 and int labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = np.round(d.images / 16.0 * 255).astype(np.uint8)
    return (x[:n], d.target[:n].astype(np.int64)) if n else (x, d.target.astype(np.int64))


def idx_dir(root: Path, n_train: int = 120, n_test: int = 60) -> Path:
    x, y = digits_uint8()
    write_idx(root / "train-images-idx3-ubyte", x[:n_train])
    write_idx(root / "train-labels-idx1-ubyte", y[:n_train])
    write_idx(root / "t10k-images-idx3-ubyte", x[n_train:n_train + n_test])
    write_idx(root / "t10k-labels-idx1-ubyte", y[n_train:n_train + n_test])
    return root


def image_folder(root: Path, classes=("cat", "ant", "bee"), per_class: int = 20, rgb: bool = False) -> Path:
    """ImageFolder layout root/<class>/<i>.png from digits of labels 0, 1, 2 (class folder i <- digit i)."""
    from PIL import Image

    x, y = digits_uint8()
    for c, name in enumerate(classes):
        (root / name).mkdir(parents=True, exist_ok=True)
        for i, img in enumerate(x[y == c][:per_class]):
            im = Image.fromarray(img, mode="L")
            (im.convert("RGB") if rgb else im).save(root / name / f"{i:03d}.png")
    return root


def trained_digits_cnn(path: Path, num_classes: int = 10, epochs: int = 8, seed: int = 0) -> Path:
    """A digits CNN trained briefly (single-threaded, fixed seed) on the first 1,000 digits restricted to
    classes < num_classes; a state dict at ``path``."""
    from robustsuite.zoo.nets import DigitsCNN

    x, y = digits_uint8()
    keep = y < num_classes
    xt = torch.tensor(x[keep][:1000], dtype=torch.float32).unsqueeze(1) / 255.0
    yt = torch.tensor(y[keep][:1000])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DigitsCNN(num_classes)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(epochs):
        perm = torch.randperm(len(yt), generator=gen)
        for i in range(0, len(yt), 64):
            idx = perm[i:i + 64]
            loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.eval().state_dict(), path)
    return path
