"""Shipped builtin models: artefact hashes, accuracies against the build's record, architecture, tokenizer.
(How they are built — recipes, tokenizers, the training loops — is tested in tests/test_build.py.)"""

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from robustsuite import TextClassifier, load_dataset, load_model
from robustsuite.data.builtin import fashion_mnist, fashion_mnist_osr
from robustsuite.loaders import DATASET_SPECS, MODEL_SPECS
from robustsuite.zoo import shipped
from robustsuite.zoo.nets import FashionCNN

PLAIN = [n for n, (kind, _, _) in shipped.SHIPPED.items() if kind in ("vision", "text")]


@pytest.fixture(scope="module")
def MANIFEST():  # noqa: N802 - reads like the constant it is
    return shipped.manifest()


def test_every_shipped_file_matches_the_manifest_hash(MANIFEST):
    from robustsuite._io import sha256_file

    listed = MANIFEST["files"]
    present = {p.relative_to(shipped.RESOURCES).as_posix() for p in shipped.RESOURCES.rglob("*")
               if p.is_file() and p.name != "manifest.json" and "__pycache__" not in p.parts}
    assert present == set(listed), "resources/ and manifest.json list different files: re-run tools/build/build_builtin.py"
    for rel, info in listed.items():
        assert sha256_file(shipped.RESOURCES / rel) == info["sha256"], rel
    assert MANIFEST["total_bytes"] == sum(info["bytes"] for info in listed.values()) < 13_000_000
    assert set(MANIFEST["models"]) == set(PLAIN)


def correct_count(model, x, y: torch.Tensor) -> int:
    with torch.no_grad():
        out = model(x if isinstance(x, torch.Tensor) else list(x))
    return int((torch.as_tensor(np.asarray(out) if not isinstance(out, torch.Tensor) else out).argmax(1) == y).sum())


@pytest.fixture(scope="module")
def eval_data():
    data = {"fashion-mnist": fashion_mnist(full=False).test, "fashion-mnist-osr": fashion_mnist_osr(full=False).test}
    for name in ("wordnet-topics", "digits", "digits-osr", "sentiment-mini"):
        data[name] = load_dataset(f"builtin:{name}").test
    return data


@pytest.mark.parametrize("name", PLAIN)
def test_shipped_model_accuracy_agrees_with_the_build_record(name, eval_data, MANIFEST):
    """Same weights, same shipped test split: another CPU may flip a few borderline predictions, so the
    recorded accuracy must lie in the 95 % Clopper-Pearson interval of the count measured here; a wrong
    loader or preprocessing (unnormalised pixels, another tokenizer) falls far outside."""
    record = MANIFEST["models"][name]["test_shipped"]
    split = eval_data[shipped.SHIPPED[name][1]]
    correct = correct_count(load_model(f"builtin:{name}"), split.x, split.y)
    assert record["n"] == len(split.y)
    ci = binomtest(correct, len(split.y)).proportion_ci(0.95, method="exact")
    assert ci.low <= record["accuracy"] <= ci.high, (name, correct, record)
    assert shipped.record(name) == MANIFEST["models"][name]


def test_accuracy_check_catches_wrong_preprocessing(eval_data, MANIFEST):
    """The interval test above is not vacuous: pixels in [0, 255] instead of [0, 1] fail it."""
    split = eval_data["fashion-mnist"]
    record = MANIFEST["models"]["fashion-cnn"]["test_shipped"]
    wrong = correct_count(load_model("builtin:fashion-cnn"), split.x * 255, split.y)
    ci = binomtest(wrong, len(split.y)).proportion_ci(0.95, method="exact")
    assert not ci.low <= record["accuracy"] <= ci.high


def test_recorded_accuracies_meet_the_stated_floors(MANIFEST):
    acc = {n: MANIFEST["models"][n]["test_full"]["accuracy"] for n in PLAIN}
    assert acc["fashion-cnn"] >= 0.90  # issue 11: standard CNN ≥ 90 % on the 10,000 test images
    assert acc["digits-cnn"] >= 0.95 and acc["digits-cnn-at"] >= 0.93 and acc["digits-osr-cnn"] >= 0.95
    assert 0.8 <= acc["text-tiny"] < 1.0  # learnable, but the corpus's 4 % label noise keeps it below 100 %
    assert min(acc.values()) > 0.5  # every model far above chance (1/10, 1/6, 1/8, 1/2)


def _pgd(model, x, y, eps=0.1, steps=20, step=0.01):
    x_adv = x.clone()
    for _ in range(steps):
        x_adv.requires_grad_(True)
        (grad,) = torch.autograd.grad(torch.nn.functional.cross_entropy(model(x_adv), y), x_adv)
        x_adv = torch.min(torch.max(x_adv.detach() + step * grad.sign(), x - eps), x + eps).clamp(0, 1)
    return x_adv


def test_the_registry_knows_which_models_are_adversarially_trained():
    eps = {n: shipped.adversarial_eps(n) for n in PLAIN}
    assert eps["fashion-cnn-at"] == eps["digits-cnn-at"] == 0.1
    assert {n for n, e in eps.items() if e is not None} == {"fashion-cnn-at", "fashion-osr-cnn-at", "digits-cnn-at"}


def test_adversarial_training_buys_robustness(eval_data):
    split = eval_data["digits"]
    acc = {}
    for spec in ("builtin:digits-cnn", "builtin:digits-cnn-at"):
        model = load_model(spec)
        acc[spec] = correct_count(model, _pgd(model, split.x, split.y), split.y) / len(split.y)
    assert acc["builtin:digits-cnn-at"] > acc["builtin:digits-cnn"] + 0.15


@pytest.mark.parametrize("shape", [(2, 1, 28, 28), (2, 3, 32, 32), (3, 1, 8, 8), (1, 2, 45, 17)])
def test_fashion_cnn_accepts_any_size_and_channel_count(shape):
    net = FashionCNN(num_classes=7, in_channels=shape[1]).eval()
    assert net(torch.rand(shape)).shape == (shape[0], 7)


def test_loading_every_shipped_model_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("ROBUSTSUITE_CACHE", str(tmp_path))
    for name, (kind, _, _) in shipped.SHIPPED.items():
        m = load_model(f"builtin:{name}")
        if kind == "vision":
            assert isinstance(m, torch.nn.Module) and not m.training
        elif kind == "text":
            assert isinstance(m, TextClassifier) and not m.model.training
    assert list(tmp_path.iterdir()) == []


def test_specs_list_every_builtin():
    assert {f"builtin:{n}" for n in shipped.SHIPPED} <= {s.spec for s in MODEL_SPECS}
    ds = {s.spec: s.kind for s in DATASET_SPECS}
    assert ds["builtin:fashion-mnist"] == ds["builtin:fashion-mnist-osr"] == "vision"
    assert ds["builtin:wordnet-topics"] == "text"


def test_wordnet_roberta_is_cased_byte_level_and_keeps_accents_and_lookalikes():
    clf = load_model("builtin:wordnet-roberta")
    tok = clf.tokenizer

    def ids(s):
        return tok(s, add_special_tokens=False)["input_ids"]

    unk = tok.unk_token_id
    for text in ("café naïve Zürich", "cаt", "Dog dog", "ｆｕｌｌｗｉｄｔｈ"):  # 'cаt' has a Cyrillic а
        assert unk not in ids(text) and tok.decode(ids(text)) == text
    assert ids("café") != ids("cafe") and ids("cаt") != ids("cat") and ids("Dog") != ids("dog")
    logits = clf(["a kind of dog", "a small town in France"])
    assert logits.shape == (2, 8) and clf.model.config.model_type == "roberta"


def test_text_tiny_tokenizer_spells_out_typos_in_known_pieces():
    tok = load_model("builtin:text-tiny").tokenizer
    pieces = tok.tokenize("the mvoie")
    assert pieces[0] == "the" and "[UNK]" not in pieces and "".join(p.lstrip("#") for p in pieces[1:]) == "mvoie"
