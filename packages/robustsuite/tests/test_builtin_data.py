"""The shipped real-data defaults: builtin:fashion-mnist(-osr) and builtin:wordnet-topics.

Full-data tests need Debian's dataset-fashion-mnist / wordnet-base files and skip with a reason without them.
"""

import gzip

import numpy as np
import pytest
import torch

from robustsuite import DatasetSpecError, load_dataset
from robustsuite.data import fashion as fm
from robustsuite.data.builtin import fashion_mnist, fashion_mnist_osr, wordnet_topics

HAS_FASHION = fm._has_idx(fm.DEBIAN_DIR)
needs_fashion = pytest.mark.skipif(not HAS_FASHION, reason=f"Fashion-MNIST IDX files not installed at {fm.DEBIAN_DIR} "
                                                           "(Debian package dataset-fashion-mnist)")
TOPICS = ("artifact", "person", "plant", "animal", "act", "communication", "location", "food")


@pytest.fixture(scope="module")
def shipped():
    return fashion_mnist(full=False)


@pytest.fixture(scope="module")
def full():
    if not HAS_FASHION:
        pytest.skip(f"Fashion-MNIST IDX files not installed at {fm.DEBIAN_DIR}")
    return fashion_mnist(full=True)


def _per_class(split, k=10):
    return np.bincount(split.y.numpy(), minlength=k)


def test_shipped_fashion_mnist_shapes_balance_and_source(shipped):
    assert shipped.num_classes == 10 and shipped.modality == "vision"
    sizes = {"train": 9000, "val": 1000, "test": 2000}
    for name, split in (("train", shipped.train), ("val", shipped.val), ("test", shipped.test)):
        assert split.x.shape == (sizes[name], 1, 28, 28) and split.x.dtype == torch.float32
        assert split.y.dtype == torch.int64
        assert float(split.x.min()) == 0.0 and float(split.x.max()) == 1.0
        assert (_per_class(split) == sizes[name] // 10).all()  # exactly stratified
    assert "shipped" in shipped.source and shipped.summary()["source"] == shipped.source
    # the first 100 test images are shuffled across classes, not sorted by class
    assert len(set(shipped.test.y[:100].tolist())) == 10


def test_shipped_index_order_is_a_partition_of_the_official_files():
    arrays = fm.load_shipped()
    train, val, test = (arrays[f"{s}_index"].astype(np.int64) for s in fm.SPLITS)
    assert np.array_equal(np.sort(np.concatenate([train, val])), np.arange(60000))
    assert np.array_equal(np.sort(test), np.arange(10000))
    assert len(val) == 5000 and len(train) == 55000


def test_shipped_fashion_is_deterministic(shipped):
    again = load_dataset("builtin:fashion-mnist") if not HAS_FASHION else fashion_mnist(full=False)
    assert torch.equal(again.test.x[:2000], shipped.test.x) and torch.equal(again.train.y[:9000], shipped.train.y)


def test_fashion_osr_known_open_set_and_ood(shipped):
    ds = fashion_mnist_osr(full=False)
    assert ds.num_classes == 6 and ds.classes == shipped.classes[:6]
    for split in (ds.train, ds.val, ds.test):
        assert split.y.max() <= 5 and split.x.shape[1:] == (1, 28, 28)
        assert split.label_names == tuple(shipped.classes[:6])  # the known classes name the known splits' labels
    assert ds.extras["open_set"].label_names == tuple(shipped.classes)
    assert len(ds.test) == 1200 and set(ds.extras["open_set"].y.tolist()) == {6, 7, 8, 9}
    # order kept: the known test images are the shipped test images with label < 6, in order
    keep = shipped.test.y < 6
    assert torch.equal(ds.test.x, shipped.test.x[keep])
    ood = ds.extras["ood"]
    assert ood.x.shape == (1797, 1, 28, 28) and (ood.y == -1).all()
    assert ood.x.min() >= 0 and ood.x.max() <= 1 and ood.x.std() > 0.1
    with pytest.raises(ValueError, match="known"):
        fashion_mnist_osr(full=False, known=10)


def test_full_true_without_files_names_the_options(monkeypatch, tmp_path):
    monkeypatch.setattr(fm, "DEBIAN_DIR", tmp_path / "absent")
    monkeypatch.delenv("ROBUSTSUITE_DATA", raising=False)
    with pytest.raises(DatasetSpecError, match="ROBUSTSUITE_DATA"):
        fashion_mnist(full=True)
    assert "shipped" in fashion_mnist().source  # auto falls back to the shipped subset
    with pytest.raises(DatasetSpecError, match="root="):
        fashion_mnist(root=tmp_path)
    with pytest.raises(TypeError, match="full"):
        fashion_mnist(full="yes")


def _write_idx(path, arr):
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header + arr.astype(np.uint8).tobytes())


def test_foreign_idx_files_are_rejected(monkeypatch, tmp_path):
    rng = np.random.default_rng(0)
    for n in (60000, 20):  # right size but other images; too few images
        for stem, m in (("train", n), ("t10k", n // 6)):
            _write_idx(tmp_path / f"{stem}-images-idx3-ubyte.gz", np.zeros((m, 28, 28)))
            _write_idx(tmp_path / f"{stem}-labels-idx1-ubyte.gz", rng.integers(0, 10, m))
        monkeypatch.setenv("ROBUSTSUITE_DATA", str(tmp_path))
        with pytest.raises(DatasetSpecError, match="not the official"):
            fashion_mnist()


@needs_fashion
def test_full_fashion_mnist_starts_with_the_shipped_subset(shipped, full):
    assert len(full.train) == 55000 and len(full.val) == 5000 and len(full.test) == 10000
    assert "full Fashion-MNIST" in full.source and str(fm.DEBIAN_DIR) in full.source
    for a, b in ((full.train, shipped.train), (full.val, shipped.val), (full.test, shipped.test)):
        for n in (1, 100, len(b)):
            ha, hb = a.head(n), b.head(n)
            assert torch.equal(ha.x, hb.x) and torch.equal(ha.y, hb.y)
    assert (_per_class(full.test) == 1000).all() and (_per_class(full.val) == 500).all()
    osr_full, osr_ship = fashion_mnist_osr(full=True), fashion_mnist_osr(full=False)
    assert torch.equal(osr_full.test.head(1200).x, osr_ship.test.x)
    assert torch.equal(osr_full.extras["open_set"].head(800).x, osr_ship.extras["open_set"].x)


@needs_fashion
def test_full_data_found_through_robustsuite_data(monkeypatch, tmp_path, shipped):
    (tmp_path / "fashion-mnist").mkdir()
    for p in fm.DEBIAN_DIR.iterdir():
        (tmp_path / "fashion-mnist" / p.name).symlink_to(p)
    monkeypatch.setattr(fm, "DEBIAN_DIR", tmp_path / "absent")
    monkeypatch.setenv("ROBUSTSUITE_DATA", str(tmp_path))
    ds = load_dataset("builtin:fashion-mnist")
    assert len(ds.test) == 10000 and str(tmp_path) in ds.source
    assert torch.equal(ds.test.head(50).x, shipped.test.head(50).x)


def test_wordnet_topics_balanced_cased_unique():
    ds = wordnet_topics()
    assert ds.modality == "text" and ds.classes == TOPICS
    for n, split in ((1750, ds.train), (125, ds.val), (250, ds.test)):
        assert (_per_class(split, 8) == n).all()
        assert all(isinstance(t, str) and t for t in split.x)
    texts = list(ds.train.x) + list(ds.val.x) + list(ds.test.x)
    assert len(set(texts)) == len(texts)  # no gloss in two splits
    assert sum(t != t.lower() for t in texts) > 500  # cased text (proper names, "New World", ...)
    assert sum('"' in t for t in texts) > 1000  # example sentences kept with the definitions
    assert list(load_dataset("builtin:wordnet-topics").test.x) == list(ds.test.x)
    assert "WordNet 3.0" in ds.source


def test_ids_are_rows_of_the_original_set_and_survive_limit_and_label_alignment():
    """Issue 24 item 12: a split's ids are the items' indices in the original set (not positions in the shuffled
    split), its label names are the class names; head() (--limit) and label alignment keep both."""
    from sklearn.datasets import load_digits

    from robustsuite.data.labels import align_labels

    ds = load_dataset("builtin:digits")
    raw = load_digits()
    ids = np.asarray(ds.test.ids)
    assert sorted({*ds.train.ids, *ds.val.ids, *ds.test.ids}) == list(range(len(raw.target)))
    assert not np.array_equal(ids, np.arange(len(ids)))  # shuffled split, original ids
    assert torch.allclose(ds.test.x[:, 0], torch.tensor(raw.images[ids] / 16.0, dtype=torch.float32))
    assert ds.test.label_names == tuple(str(i) for i in range(10)) and ds.test.name_of(ds.test.y[0]) == str(
        raw.target[ids[0]])
    head = ds.test.head(5)
    assert head.ids == ds.test.ids[:5] and head.label_names == ds.test.label_names
    aligned = align_labels(load_dataset("builtin:wordnet-topics"), list(reversed(TOPICS)))
    topics = load_dataset("builtin:wordnet-topics")
    assert aligned.test.ids == topics.test.ids and aligned.test.label_names == tuple(reversed(TOPICS))
    assert aligned.test.name_of(aligned.test.y[0]) == topics.test.name_of(topics.test.y[0])


def test_fashion_ids_index_the_official_files_whichever_copy_is_loaded(shipped):
    arrays = fm.load_shipped()
    assert shipped.test.ids == tuple(int(i) for i in arrays["test_index"][:2000])
    osr = fashion_mnist_osr(full=False)
    keep = np.flatnonzero(shipped.test.y.numpy() < 6)
    assert osr.test.ids == tuple(shipped.test.ids[i] for i in keep)
