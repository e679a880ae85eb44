"""The third-party stack works offline: TextAttack, AutoAttack, RobustBench loading, cvxpy with HiGHS."""

import numpy as np
import pytest
import torch

from robustsuite import load_dataset, load_model
from robustsuite._io import cache_dir
from robustsuite.zoo.external import load_robustbench
from robustsuite_common import import_robustbench, import_textattack


def test_cvxpy_highs_solves_a_milp():
    import cvxpy as cp

    # knapsack: weights 3,4,5,6 values 4,5,6,7, capacity 10 -> best 4+7=11 (items 0 and 3) or 5+6=11
    x = cp.Variable(4, boolean=True)
    w, v = np.array([3, 4, 5, 6]), np.array([4, 5, 6, 7])
    prob = cp.Problem(cp.Maximize(v @ x), [w @ x <= 10])
    prob.solve(solver=cp.HIGHS)
    brute = max(v @ np.array(b) for b in np.ndindex(2, 2, 2, 2) if w @ np.array(b) <= 10)
    assert prob.value == pytest.approx(brute)


def test_textattack_deepwordbug_attacks_local_text_model(tmp_path):
    ta = import_textattack(cache_dir=cache_dir())
    from textattack.attack_recipes import DeepWordBugGao2018
    from textattack.datasets import Dataset as TADataset

    clf = load_model("builtin:text-tiny")
    # save_pretrained round trip: the hf:<local path> loader on the same model
    clf.model.save_pretrained(tmp_path)
    clf.tokenizer.save_pretrained(tmp_path)
    clf2 = load_model(f"hf:{tmp_path}")
    texts = ["the movie was great.", "i hated the food.", "the acting was superb and truly moving."]
    np.testing.assert_allclose(clf(texts), clf2(texts), atol=1e-5)

    ds = load_dataset("builtin:sentiment-mini")
    preds = clf(list(ds.test.x[:40])).argmax(1)
    correct = [(t, int(y)) for t, y, p in zip(ds.test.x[:40], ds.test.y[:40].tolist(), preds, strict=True) if p == y][:4]
    attack = DeepWordBugGao2018.build(clf2)
    args = ta.AttackArgs(num_examples=len(correct), silent=True, disable_stdout=True, random_seed=0)
    results = ta.Attacker(attack, TADataset(correct), args).attack_dataset()
    assert len(results) == len(correct)
    kinds = {type(r).__name__ for r in results}
    assert kinds <= {"SuccessfulAttackResult", "FailedAttackResult", "SkippedAttackResult"}
    assert "SuccessfulAttackResult" in kinds  # a 4-letter-edit budget breaks a tiny model somewhere
    for r in results:
        if type(r).__name__ == "SuccessfulAttackResult":
            adv = r.perturbed_result.attacked_text.text
            assert clf([adv]).argmax(1)[0] != r.original_result.ground_truth_output


def test_autoattack_standard_on_tiny_vision_model():
    import_robustbench()  # installs the autoattack alias robustbench needs
    from autoattack import AutoAttack  # resolves to pyautoattack

    model = load_model("builtin:digits-cnn")
    ds = load_dataset("builtin:digits")
    x, y = ds.test.x[:6], ds.test.y[:6]
    adversary = AutoAttack(model, norm="Linf", eps=0.1, version="standard", seed=0)
    adversary.verbose = False
    # pyautoattack's API: keyword-only batch_size, returns (x_adv, y_adv)
    x_adv, y_adv = adversary.run_standard_evaluation(x, y, batch_size=6)
    assert x_adv.shape == x.shape
    assert (x_adv - x).abs().max() <= 0.1 + 1e-5
    assert x_adv.min() >= 0 and x_adv.max() <= 1
    with torch.no_grad():
        robust = (model(x_adv).argmax(1) == y).float().mean().item()
        clean = (model(x).argmax(1) == y).float().mean().item()
        assert torch.equal(model(x_adv).argmax(1), y_adv)
    assert robust <= clean


def test_robustbench_load_model_from_local_model_dir(tmp_path):
    import_robustbench()
    from robustbench.model_zoo import model_dicts
    from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel

    name = "Ding2020MMA"  # the smallest CIFAR-10 L∞ architecture in the zoo (5.8M parameters)
    arch = model_dicts[BenchmarkDataset.cifar_10][ThreatModel.Linf][name]["model"]()
    with torch.no_grad():
        for p in arch.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.01)
    target = tmp_path / "cifar10" / "Linf" / f"{name}.pt"
    target.parent.mkdir(parents=True)
    torch.save(arch.state_dict(), target)

    model = load_robustbench(f"cifar10/Linf/{name}", model_dir=tmp_path)
    x = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.allclose(model(x), arch.eval()(x), atol=1e-5)


def test_robustbench_missing_checkpoint_names_the_path(tmp_path):
    from robustsuite.errors import ModelSpecError

    with pytest.raises(ModelSpecError, match=r"Standard\.pt"):
        load_robustbench("cifar10/Linf/Standard", model_dir=tmp_path)
