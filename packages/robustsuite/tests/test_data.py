import json

import numpy as np
import pytest
import torch

from robustsuite import DatasetSpecError, load_dataset
from robustsuite.data.dataset import stratified_split


def test_digits_shapes_range_and_fixed_disjoint_split():
    ds = load_dataset("builtin:digits")
    assert ds.modality == "vision" and ds.num_classes == 10
    for split in (ds.train, ds.val, ds.test):
        assert split.x.dtype == torch.float32 and split.x.shape[1:] == (1, 8, 8)
        assert split.x.min() >= 0 and split.x.max() <= 1 and split.y.dtype == torch.int64
    assert len(ds.train) + len(ds.val) + len(ds.test) == 1797
    again = load_dataset("builtin:digits")
    assert torch.equal(ds.test.x, again.test.x) and torch.equal(ds.train.y, again.train.y)
    # stratified: every class in every split with close proportions
    for split in (ds.train, ds.val, ds.test):
        counts = np.bincount(split.y.numpy(), minlength=10) / len(split)
        assert counts.min() > 0.08 and counts.max() < 0.12
    # disjoint: no image appears in two splits (digits has no exact duplicates across these rows)
    flat = lambda s: {tuple(r) for r in s.x.reshape(len(s), -1).tolist()}  # noqa: E731
    assert not flat(ds.train) & flat(ds.test)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_stratified_split_partitions_indices(seed):
    y = np.repeat(np.arange(5), [10, 20, 30, 7, 3])
    parts = stratified_split(y, seed=seed)
    joined = np.sort(np.concatenate(parts))
    assert np.array_equal(joined, np.arange(len(y)))


def test_digits_osr_holds_out_8_and_9_and_has_ood():
    ds = load_dataset("builtin:digits-osr")
    assert ds.num_classes == 8
    for split in (ds.train, ds.val, ds.test):
        assert split.y.max() <= 7
    assert set(ds.extras["open_set"].y.tolist()) == {8, 9}
    ood = ds.extras["ood"]
    assert ood.x.shape[1:] == (1, 8, 8) and (ood.y == -1).all()
    assert ood.x.min() >= 0 and ood.x.max() <= 1
    assert ood.x.std() > 0.1  # real photo texture, not constant patches


def test_sentiment_mini_is_large_varied_deterministic():
    ds = load_dataset("builtin:sentiment-mini")
    total = len(ds.train) + len(ds.val) + len(ds.test)
    assert total >= 3000 and ds.classes == ("negative", "positive")
    texts = list(ds.train.x) + list(ds.val.x) + list(ds.test.x)
    assert len(set(texts)) == total
    assert 0.4 < ds.train.y.float().mean() < 0.6
    assert list(load_dataset("builtin:sentiment-mini").test.x) == list(ds.test.x)
    multi = load_dataset("builtin:sentiment-mini-multi")
    assert multi.num_classes >= 4 and set(multi.train.y.tolist()) == set(range(multi.num_classes))


def test_csv_and_jsonl_loaders(tmp_path):
    rows = [{"text": f"sample {i}", "label": ["neg", "pos"][i % 2]} for i in range(50)]
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    ds = load_dataset(f"jsonl:{p}")
    assert ds.classes == ("neg", "pos") and len(ds.train) + len(ds.val) + len(ds.test) == 50
    c = tmp_path / "d.csv"
    c.write_text("text,label,split\n" + "\n".join(f"t{i},{i % 3},{['train', 'validation', 'test'][i % 3]}"
                                                  for i in range(30)))
    ds = load_dataset(f"csv:{c}")
    assert len(ds.train) == len(ds.val) == len(ds.test) == 10 and ds.num_classes == 3


def test_dataset_spec_errors(tmp_path):
    with pytest.raises(DatasetSpecError, match="known"):
        load_dataset("builtin:nope")
    with pytest.raises(DatasetSpecError, match="scheme"):
        load_dataset("ftp:x")
    with pytest.raises(DatasetSpecError, match="not found"):
        load_dataset(f"csv:{tmp_path / 'missing.csv'}")
    bad = tmp_path / "bad.csv"
    bad.write_text("sentence,y\na,1\n")
    with pytest.raises(DatasetSpecError, match="'text' and 'label'"):
        load_dataset(f"csv:{bad}")
    with pytest.raises(DatasetSpecError, match="cifar-10-batches-py"):
        load_dataset(f"cifar10:{tmp_path}")


def test_cifar10_and_mnist_from_local_files(tmp_path, monkeypatch):
    import pickle

    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    rng = np.random.default_rng(0)

    def batch(n):
        return {"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), "labels": rng.integers(0, 10, n).tolist()}

    for i in range(1, 6):
        with open(root / f"data_batch_{i}", "wb") as f:
            pickle.dump(batch(20), f)
    with open(root / "test_batch", "wb") as f:
        pickle.dump(batch(10), f)
    with open(root / "batches.meta", "wb") as f:
        pickle.dump({"label_names": [f"c{i}" for i in range(10)]}, f)
    import torchvision

    monkeypatch.setattr(torchvision.datasets.cifar, "check_integrity", lambda *a, **k: True)  # fake checksums
    ds = load_dataset(f"cifar10:{tmp_path}")
    assert ds.train.x.shape[1:] == (3, 32, 32) and len(ds.test) == 10 and len(ds.train) + len(ds.val) == 100
    assert ds.train.x.max() <= 1

    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)

    def idx(path, arr):
        dims = arr.shape
        header = bytes([0, 0, 8, len(dims)]) + b"".join(d.to_bytes(4, "big") for d in dims)
        path.write_bytes(header + arr.astype(np.uint8).tobytes())

    for prefix, n in (("train", 30), ("t10k", 10)):
        idx(raw / f"{prefix}-images-idx3-ubyte", rng.integers(0, 256, (n, 28, 28)))
        idx(raw / f"{prefix}-labels-idx1-ubyte", np.arange(n) % 10)
    ds = load_dataset(f"mnist:{tmp_path}")
    assert ds.train.x.shape[1:] == (1, 28, 28) and len(ds.test) == 10
