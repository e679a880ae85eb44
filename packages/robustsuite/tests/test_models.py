import numpy as np
import pytest
import torch

from robustsuite import ModelSpecError, TextClassifier, load_model
from robustsuite.zoo.external import load_torch
from robustsuite.zoo.nets import DigitsCNN


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
    model = DigitsCNN()
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


def test_probability_outputs_are_declared_on_the_spec_and_seen_as_log_probabilities(tmp_path):
    """Issue 24 item 11: ``?outputs=probabilities`` on any model spec: the model is read through ``log`` (same
    softmax as its probabilities), for vision modules and text classifiers alike; an unknown value is refused."""
    net = torch.nn.Sequential(DigitsCNN(), torch.nn.Softmax(dim=1)).eval()
    torch.jit.save(torch.jit.script(net), tmp_path / "p.pt")
    x = torch.rand(4, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    plain = load_model(f"torch:{tmp_path / 'p.pt'}")
    declared = load_model(f"torch:{tmp_path / 'p.pt'}?outputs=probabilities")
    with torch.no_grad():
        p, z = plain(x), declared(x)
    assert torch.allclose(p.sum(1), torch.ones(4)) and not torch.allclose(z.exp().sum(1), z.sum(1))
    assert torch.allclose(torch.softmax(z, 1), p, atol=1e-6)
    texts = ["a good film", "the plot was dull"]
    clf, declared_text = load_model("builtin:text-tiny"), load_model("builtin:text-tiny?outputs=probabilities")
    np.testing.assert_allclose(declared_text(texts), np.log(np.clip(clf(texts), np.finfo(np.float32).tiny, None)),
                               rtol=1e-6)  # float32 log: torch's and numpy's may differ in the last bit
    assert declared_text.num_classes == 2  # the wrapped classifier's attributes stay reachable
    with pytest.raises(ModelSpecError, match="outputs must be one of"):
        load_model("builtin:digits-cnn?outputs=scores")


def test_robustbench_specs_go_through_the_one_robustbench_loader(monkeypatch, tmp_path):
    """Issue 23 item 5: ``robustbench:`` specs are loaded by robustsuite_common's loader (timm-routed entries load
    offline there); its refusals become spec errors naming the spec."""
    import robustsuite_common.robustbench as rb

    seen = {}

    def fake(name, **kw):
        seen.update(name=name, **kw)
        return torch.nn.Linear(2, 2)

    monkeypatch.setattr(rb, "load_robustbench_model", fake)
    monkeypatch.setenv("ROBUSTBENCH_MODEL_DIR", str(tmp_path))
    assert isinstance(load_model("robustbench:cifar100/L2/SomeModel"), torch.nn.Linear)
    assert (seen["name"], seen["model_dir"], seen["dataset"], seen["threat_model"]) == (
        "SomeModel", tmp_path, "cifar100", "L2")
    monkeypatch.undo()
    with pytest.raises(ModelSpecError, match="robustbench:svhn/Linf/X: dataset must be one of"):
        load_model("robustbench:svhn/Linf/X")
