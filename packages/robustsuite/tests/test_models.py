import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
import torch

from robustsuite import ModelSpecError, TextClassifier, load_dataset, load_model, models
from robustsuite.loaders import load_torch


@pytest.fixture
def tiny_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBUSTSUITE_CACHE", str(tmp_path))
    monkeypatch.setitem(models.VISION_RECIPES, "digits-cnn", replace(models.VISION_RECIPES["digits-cnn"], epochs=2))
    return tmp_path


def test_builtin_vision_cache_is_reused_and_corruption_rebuilds(tiny_cache):
    calls = []
    m1 = models.builtin_vision("digits-cnn", progress=lambda e, n: calls.append(e))
    assert calls == [1, 2]
    m2 = models.builtin_vision("digits-cnn", progress=lambda e, n: calls.append(e))
    assert calls == [1, 2]  # loaded from cache, not retrained
    for a, b in zip(m1.state_dict().values(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    entry = next((tiny_cache / "models").glob("digits-cnn-*/model.pt")).parent
    (entry / "model.pt").write_bytes(b"truncated")  # a partial write or a corrupt file
    m3 = models.builtin_vision("digits-cnn", progress=lambda e, n: calls.append(e))
    assert calls == [1, 2, 1, 2]  # detected by the manifest hash and rebuilt
    for a, b in zip(m1.state_dict().values(), m3.state_dict().values(), strict=True):
        assert torch.equal(a, b)  # same recipe, same seed, same weights
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["recipe"]["epochs"] == 2 and 0 < manifest["test_accuracy"] <= 1


def test_first_use_training_works_inside_no_grad(tiny_cache):
    with torch.no_grad():  # a caller evaluating under no_grad triggers training on a cold cache
        model = models.builtin_vision("digits-cnn")
    ds = load_dataset("builtin:digits")
    with torch.no_grad():
        assert (model(ds.test.x).argmax(1) == ds.test.y).float().mean() > 0.5


def test_recipe_change_changes_cache_key(tiny_cache, monkeypatch):
    a = models._entry_dir(models.VISION_RECIPES["digits-cnn"])
    b = models._entry_dir(replace(models.VISION_RECIPES["digits-cnn"], lr=1e-3))
    assert a != b


def test_builtin_models_meet_stated_accuracy():
    ds = load_dataset("builtin:digits")
    for spec, floor in (("builtin:digits-cnn", 0.95), ("builtin:digits-cnn-at", 0.93)):
        model = load_model(spec)
        with torch.no_grad():
            acc = (model(ds.test.x).argmax(1) == ds.test.y).float().mean().item()
        assert acc >= floor, spec
    osr = load_dataset("builtin:digits-osr")
    with torch.no_grad():
        logits = load_model("builtin:digits-osr-cnn")(osr.test.x)
    assert logits.shape[1] == 8 and (logits.argmax(1) == osr.test.y).float().mean() >= 0.95
    text = load_model("builtin:text-tiny")
    tds = load_dataset("builtin:sentiment-mini")
    acc = float((text(list(tds.test.x)).argmax(1) == tds.test.y.numpy()).mean())
    assert 0.8 <= acc < 1.0  # learnable, but label noise keeps it below 100 %


def test_adversarial_training_buys_robustness():
    ds = load_dataset("builtin:digits")
    accs = {}
    for spec in ("builtin:digits-cnn", "builtin:digits-cnn-at"):
        model = load_model(spec)
        x_adv = models.pgd_linf(model, ds.test.x, ds.test.y, eps=0.1, steps=20, step_size=0.01,
                                generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            accs[spec] = (model(x_adv).argmax(1) == ds.test.y).float().mean().item()
    assert accs["builtin:digits-cnn-at"] > accs["builtin:digits-cnn"] + 0.15


def test_text_classifier_contract():
    clf = load_model("builtin:text-tiny")
    assert isinstance(clf, TextClassifier)
    out = clf(["good", "bad film", "the plot was dull, but the acting was superb."])
    assert isinstance(out, np.ndarray) and out.shape == (3, 2) and np.isfinite(out).all()
    assert clf([]).shape == (0, 2)
    with pytest.raises(TypeError, match="list of strings"):
        clf("a single string")
    grad = clf.get_grad("the movie was great.")
    assert grad["gradient"].shape == (len(grad["ids"]), clf.model.config.hidden_size)


def test_torch_loader_state_dict_torchscript_and_pickle_opt_in(tmp_path):
    model = models.DigitsCNN()
    x = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    torch.save(model.state_dict(), tmp_path / "sd.pt")
    loaded = load_model(f"torch:{tmp_path / 'sd.pt'}#digits-cnn")
    assert torch.allclose(loaded(x), model.eval()(x))
    torch.jit.save(torch.jit.trace(model.eval(), x), tmp_path / "ts.pt")
    assert torch.allclose(load_model(f"torch:{tmp_path / 'ts.pt'}")(x), model(x), atol=1e-6)
    torch.export.save(torch.export.export(model.eval(), (x,)), tmp_path / "prog.pt2")
    assert torch.allclose(load_model(f"torch:{tmp_path / 'prog.pt2'}")(x), model(x), atol=1e-6)
    torch.save(model, tmp_path / "full.pt")
    with pytest.raises(ModelSpecError, match="trust_checkpoint"):
        load_torch(str(tmp_path / "full.pt"))
    assert torch.allclose(load_torch(str(tmp_path / "full.pt"), trust_checkpoint=True)(x), model(x))
    with pytest.raises(ModelSpecError, match="does not fit"):
        load_model(f"torch:{tmp_path / 'sd.pt'}#torchvision.resnet18")


@pytest.mark.parametrize("spec, match", [
    ("builtin:nope", "unknown builtin model"), ("nope", "scheme"), ("weird:x", "unknown model scheme"),
    ("torch:/does/not/exist.pt", "not found"), ("robustbench:cifar10/Linf", "<dataset>/<threat_model>"),
    ("hf:/does/not/exist", "neither a local directory"),
])
def test_model_spec_errors(spec, match):
    with pytest.raises(ModelSpecError, match=match):
        load_model(spec)


def test_text_tokenizer_is_identical_across_processes():
    """Same corpus, same vocabulary in every process (tokenizers' trainer is not: hash-map order)."""
    import subprocess
    import sys

    code = ("import hashlib; from robustsuite import data, models; ds = data.sentiment_mini(); "
            "tok = models.train_tokenizer(list(ds.train.x), 2000); "
            "print(hashlib.sha256(repr(sorted(tok.get_vocab().items(), key=lambda kv: kv[1])).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
               for _ in range(2)}
    assert len(digests) == 1


def test_wordpiece_vocab_falls_back_to_characters():
    vocab = models.wordpiece_vocab(["the movie was great.", "the plot was dull!"], 100)
    assert list(vocab)[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert {"the", "was", "t", "##t", "!"} <= set(vocab)
    assert list(vocab).index("the") < list(vocab).index("movie")  # by frequency, then alphabetically
    tok = models.train_tokenizer(["the movie was great."], 100)
    pieces = tok.tokenize("the mvoie")  # a typo is spelt out in known pieces, never [UNK]
    assert pieces[0] == "the" and "[UNK]" not in pieces and "".join(p.lstrip("#") for p in pieces[1:]) == "mvoie"


def test_builtin_training_is_bit_identical_whatever_the_thread_count(tiny_cache):
    before = torch.get_num_threads()
    weights = []
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for entry in (tiny_cache / "models").glob("digits-cnn-*"):
                if entry.is_dir():
                    shutil.rmtree(entry)
            weights.append(models.builtin_vision("digits-cnn").state_dict())
            assert torch.get_num_threads() == threads  # the caller's setting is restored
    finally:
        torch.set_num_threads(before)
    for a, b in zip(weights[0].values(), weights[1].values(), strict=True):
        assert torch.equal(a, b)
