"""Dataset specs for user data (issue 12, item 5): each validates shape, range and labels before work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import _userfix as uf  # noqa: E402

from robustsuite import DatasetSpecError, load_dataset  # noqa: E402
from robustsuite.data.labels import align_labels  # noqa: E402


def test_npz_images_are_validated_and_scaled(tmp_path):
    x, y = uf.digits_uint8(200)
    np.savez(tmp_path / "d.npz", x=x, y=y)
    ds = load_dataset(f"npz:{tmp_path / 'd.npz'}")
    assert ds.modality == "vision" and ds.test.x.shape[1:] == (1, 8, 8) and ds.test.x.dtype == torch.float32
    assert 0 <= float(ds.train.x.min()) and float(ds.train.x.max()) <= 1
    assert len(ds.train) + len(ds.val) + len(ds.test) == 200
    # every image keeps its own label: pixels/255 of the original array
    i = int(np.argmin(np.abs(x.reshape(200, -1) / 255.0 - ds.test.x[0].numpy().reshape(-1)).max(1)))
    assert y[i] == int(ds.test.y[0])
    bad = {"range": dict(x=x.astype(np.float32), y=y), "nhwc": dict(x=np.repeat(x[..., None], 3, -1), y=y),
           "length": dict(x=x, y=y[:-1]), "negative": dict(x=x, y=y - 1), "keys": dict(images=x, labels=y)}
    for name, arrays in bad.items():
        np.savez(tmp_path / f"{name}.npz", **arrays)
        with pytest.raises(DatasetSpecError) as e:
            load_dataset(f"npz:{tmp_path / name}.npz")
        assert str(tmp_path / name) in str(e.value)
    np.savez(tmp_path / "s.npz", x_train=x[:100], y_train=y[:100], x_test=x[100:], y_test=y[100:])
    ds = load_dataset(f"npz:{tmp_path / 's.npz'}")
    assert (len(ds.train), len(ds.val), len(ds.test)) == (100, 0, 100)
    assert torch.equal(ds.test.y, torch.as_tensor(y[100:]))


def test_imagefolder_follows_torchvision_class_order(tmp_path):
    root = uf.image_folder(tmp_path / "imgs", classes=("cat", "ant", "bee"), per_class=10)
    ds = load_dataset(f"imagefolder:{root}")
    assert ds.classes == ("ant", "bee", "cat") and ds.label_kind == "ordered"
    assert ds.test.x.shape[1:] == (1, 8, 8)
    rgb = load_dataset(f"imagefolder:{uf.image_folder(tmp_path / 'rgb', per_class=5, rgb=True)}")
    assert rgb.test.x.shape[1:] == (3, 8, 8)
    from PIL import Image

    Image.new("L", (16, 16)).save(root / "cat" / "big.png")
    with pytest.raises(DatasetSpecError, match="size"):
        load_dataset(f"imagefolder:{root}")
    assert load_dataset(f"imagefolder:{root}?size=4x4").test.x.shape[1:] == (1, 4, 4)
    with pytest.raises(DatasetSpecError, match="unknown option"):
        load_dataset(f"imagefolder:{root}?sise=4x4")


def test_idx_directory_and_corrupt_files(tmp_path):
    root = uf.idx_dir(tmp_path / "idx", n_train=100, n_test=50)
    ds = load_dataset(f"idx:{root}")
    x, y = uf.digits_uint8()
    assert len(ds.test) == 50 and torch.equal(ds.test.y, torch.as_tensor(y[100:150]))
    assert torch.allclose(ds.test.x[:, 0], torch.as_tensor(x[100:150] / 255.0, dtype=torch.float32))
    assert len(ds.train) + len(ds.val) == 100
    (root / "t10k-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01" + (49).to_bytes(4, "big") + bytes(49))
    with pytest.raises(DatasetSpecError, match="one label per image"):
        load_dataset(f"idx:{root}")


@pytest.mark.skipif(not Path("/usr/share/datasets/fashion-mnist").is_dir(), reason="Debian dataset-fashion-mnist not installed")
def test_idx_reads_debians_fashion_mnist():
    ds = load_dataset("idx:/usr/share/datasets/fashion-mnist")
    assert ds.test.x.shape == (10000, 1, 28, 28) and ds.num_classes == 10
    assert len(ds.train) + len(ds.val) == 60000


def test_csv_and_jsonl_with_chosen_columns(tmp_path):
    (tmp_path / "d.csv").write_text("review,stars,fold\n" + "".join(
        f"text {i},{'good' if i % 2 else 'bad'},{'test' if i < 6 else 'train'}\n" for i in range(20)))
    ds = load_dataset(f"csv:{tmp_path / 'd.csv'}?text=review&label=stars&split=fold")
    assert ds.label_kind == "name" and len(ds.test) == 6 and set(ds.classes) == {"bad", "good"}
    with pytest.raises(DatasetSpecError, match="review"):  # names the columns found
        load_dataset(f"csv:{tmp_path / 'd.csv'}")
    lines = [json.dumps({"t": f"x{i}", "y": i % 3}) for i in range(30)]
    (tmp_path / "d.jsonl").write_text("\n".join(lines))
    ds = load_dataset(f"jsonl:{tmp_path / 'd.jsonl'}?text=t&label=y")
    assert ds.label_kind == "index" and ds.num_classes == 3


def test_hf_disk_split_and_column_selection(tmp_path):
    import datasets

    feats = datasets.Features({"sentence": datasets.Value("string"),
                               "label": datasets.ClassLabel(names=["neg", "pos"])})
    part = lambda n, off: datasets.Dataset.from_dict(  # noqa: E731
        {"sentence": [f"s{off + i}" for i in range(n)], "label": [(off + i) % 2 for i in range(n)]}, features=feats)
    datasets.DatasetDict({"train": part(20, 0), "validation": part(8, 100), "test": part(10, 200)}).save_to_disk(
        tmp_path / "hf")
    ds = load_dataset(f"hf-disk:{tmp_path / 'hf'}?split=validation&text=sentence")
    assert list(ds.test.x) == [f"s{100 + i}" for i in range(8)] and ds.classes == ("neg", "pos")
    assert len(ds.train) == 20
    with pytest.raises(DatasetSpecError, match="no split 'dev'"):
        load_dataset(f"hf-disk:{tmp_path / 'hf'}?split=dev")


def test_hf_disk_string_labels_share_one_class_order_across_splits(tmp_path):
    """Labels written as names (no ClassLabel): one sorted order over every split, also for a name that only the
    test split has; without a test split, everything is split 60/20/20."""
    import datasets

    train = datasets.Dataset.from_dict({"text": ["a", "b", "c", "d"], "label": ["pos", "neg", "pos", "neg"]})
    test = datasets.Dataset.from_dict({"text": ["e", "f", "g"], "label": ["zzz", "neg", "pos"]})
    datasets.DatasetDict({"train": train, "test": test}).save_to_disk(tmp_path / "two")
    ds = load_dataset(f"hf-disk:{tmp_path / 'two'}")
    assert ds.classes == ("neg", "pos", "zzz") and ds.label_kind == "name"
    assert ds.train.y.tolist() == [1, 0, 1, 0] and ds.test.y.tolist() == [2, 0, 1]
    assert list(ds.test.x) == ["e", "f", "g"] and ds.test.ids == (0, 1, 2)
    only = datasets.Dataset.from_dict({"text": [f"t{i}" for i in range(20)], "label": [i % 2 for i in range(20)]})
    datasets.DatasetDict({"train": only}).save_to_disk(tmp_path / "one")
    ds = load_dataset(f"hf-disk:{tmp_path / 'one'}")
    assert (len(ds.train), len(ds.val), len(ds.test)) == (12, 4, 4) and ds.label_kind == "index"
    assert sorted(ds.train.ids + ds.val.ids + ds.test.ids) == list(range(20))


def test_align_labels_maps_by_name_and_lists_both_sets(tmp_path):
    (tmp_path / "d.csv").write_text("text,label\n" + "".join(f"t{i},{'zebra' if i % 2 else 'apple'}\n"
                                                             for i in range(20)))
    ds = load_dataset(f"csv:{tmp_path / 'd.csv'}")
    aligned = align_labels(ds, ["zebra", "apple"])
    for s_old, s_new in ((ds.train, aligned.train), (ds.test, aligned.test)):
        names_old = [ds.classes[i] for i in s_old.y.tolist()]
        assert names_old == [aligned.classes[i] for i in s_new.y.tolist()]
    assert aligned.classes == ("zebra", "apple")
    with pytest.raises(DatasetSpecError) as e:
        align_labels(ds, ["zebra", "mango"])
    assert "apple" in str(e.value) and "mango" in str(e.value)
    with pytest.raises(DatasetSpecError, match="labels ="):
        align_labels(ds, None)
