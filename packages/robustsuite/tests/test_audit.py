"""``robustsuite audit``: its run config, users' normalised models, and the indicators on the shipped adversarially
trained CNN against copies of it broken on purpose (logits ×1000, quantised inputs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from robustsuite.audit import audit_config, parse_eps
from robustsuite.cli import app
from robustsuite.data import load_dataset
from robustsuite.errors import ConfigError, ModelSpecError
from robustsuite.zoo import load_model
from robustsuite_common.testing import transformed


def test_audit_config_puts_the_overview_and_the_lenses_that_apply_on_the_model():
    cfg = audit_config("builtin:fashion-cnn-at", "builtin:fashion-mnist", eps=0.1, claim=0.7, limit=50)
    ov = cfg["methods"]["overview"]
    assert ov["targets"] == [["builtin:fashion-cnn-at", "builtin:fashion-mnist"]] and cfg["limit"] == 50
    assert ov["config"]["eps"] == 0.1 and ov["config"]["claim"] == 0.7
    assert ov["config"]["robust_accuracy"] == "always" and ov["config"]["norm"] == "Linf"
    assert "transduct_attack" not in cfg["methods"] and "zeroe_perturb" not in cfg["methods"]
    text = audit_config("builtin:wordnet-roberta", "builtin:wordnet-topics", eps=None)
    assert text["methods"]["overview"]["config"]["robust_accuracy"] == "never"
    assert not {"uncspan", "certcal"} & set(text["methods"])
    with pytest.raises(ConfigError, match="--eps is required"):
        audit_config("builtin:fashion-cnn-at", "builtin:fashion-mnist", eps=None)
    with pytest.raises(ConfigError, match="--norm"):
        audit_config("builtin:fashion-cnn-at", "builtin:fashion-mnist", eps=0.1, norm="L1")
    with pytest.raises(ConfigError, match="<= 1"):
        audit_config("builtin:fashion-cnn-at", "builtin:fashion-mnist", eps=2.0)
    assert parse_eps("8/255") == pytest.approx(8 / 255) and parse_eps("0.1") == 0.1
    for bad in ("x", "0", "-1/2", "1/0"):
        with pytest.raises(ConfigError, match="--eps"):
            parse_eps(bad)


def test_audit_cli_explains_every_option_and_refuses_bad_input_before_work(tmp_path):
    r = CliRunner().invoke(app, ["audit", "--help"])
    assert r.exit_code == 0
    for opt in ("--eps", "--norm", "--limit", "--claim", "--out", "--adaptive", "?mean="):
        assert opt in r.output
    r = CliRunner().invoke(app, ["audit", "builtin:fashion-cnn-at", "builtin:fashion-mnist", "--eps", "8/0",
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--eps" in r.output and not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def points():
    ds = load_dataset("builtin:fashion-mnist")
    return ds.test.x[:24], np.asarray(ds.test.y[:24])


def test_a_normalised_copy_declared_with_mean_and_std_gives_the_same_numbers(tmp_path, points):
    """The shipped CNN without its internal normalisation, saved as a user would, declared with ?mean=&std=: same
    logits, same clean and AutoAttack robust accuracy on the same points."""
    from robustsuite_common.autoattack import autoattack

    model = load_model("builtin:fashion-cnn-at")
    raw = load_model("builtin:fashion-cnn-at")
    mean, std = float(raw.mean), float(raw.std)
    raw.mean.fill_(0.0)
    raw.std.fill_(1.0)
    path = tmp_path / "raw.pt"
    torch.jit.save(torch.jit.script(raw.eval()), path)
    user = load_model(f"torch:{path}?mean={mean}&std={std}")
    x, y = points
    x, y = x[:8], y[:8]
    with torch.no_grad():
        assert torch.allclose(user(x), model(x), atol=1e-5)
    a = autoattack(model, x, y, eps=0.1, seed=0, batch_size=8)
    b = autoattack(user, x, y, eps=0.1, seed=0, batch_size=8)
    assert torch.equal(a.clean_correct, b.clean_correct) and torch.equal(a.robust, b.robust)
    with pytest.raises(ModelSpecError, match="both"):
        load_model(f"torch:{path}?mean={mean}")
    with pytest.raises(ValueError, match="channels"):
        load_model(f"torch:{path}?mean=0.1,0.2,0.3&std=1,1,1")(x)


def _checks(model, x, y):
    """The attack-strength checks with AutoAttack's white-box part (APGD-CE, APGD-T: what catches a rescaled
    model) on the same points as the probes."""
    from robustsuite_common.autoattack import autoattack
    from robustsuite_common.indicators import AutoAttackOutcome, attack_checks, probe

    r = autoattack(model, x, y, eps=0.1, seed=0, version="custom", attacks=["apgd-ce", "apgd-t"], batch_size=24)
    aa = AutoAttackOutcome(r.robust.tolist(), r.clean_correct.tolist(), r.attack, "custom", r.robust_after, r.flags,
                           r.reported_robust.tolist())
    return {c.id: c for c in attack_checks(aa, probe(model, x, y, eps=0.1, n_iter=10))}


@pytest.mark.slow
def test_the_honest_shipped_cnn_fails_no_indicator_and_broken_copies_are_caught(points):
    x, y = points
    base = load_model("builtin:fashion-cnn-at")
    honest = _checks(base, x, y)
    assert not [c.id for c in honest.values() if c.status == "fail"]
    assert honest["zero-gradients"].status == "pass" and honest["unbounded-attack"].status == "pass"
    scaled = _checks(transformed(base, outputs=lambda z: z * 1000.0), x, y)
    assert scaled["pgd-vs-autoattack"].status in ("warn", "fail")  # PGD on CE sees no gradient; APGD-T's DLR does
    assert scaled["pgd-vs-autoattack"].interval[0] > 0
    assert scaled["zero-gradients"].status == "fail"
    quant = _checks(transformed(base, inputs=lambda v: torch.round(v * 8) / 8), x, y)
    assert quant["zero-gradients"].status == "fail" and quant["unbounded-attack"].status == "fail"


def test_normalised_data_is_refused_before_work_with_the_way_out(tmp_path):
    """Images already normalised for the model (values outside [0, 1]) would put ε in the wrong units: exit 2 before
    any unit runs, pointing at ?mean=&std=."""
    x = np.random.default_rng(0).uniform(-1, 1, (12, 1, 28, 28)).astype("float32")
    np.savez(tmp_path / "norm.npz", x=x, y=np.arange(12) % 10)
    r = CliRunner().invoke(app, ["audit", "builtin:fashion-cnn-at", f"npz:{tmp_path / 'norm.npz'}", "--eps", "0.1",
                                 "--out", str(tmp_path / "o"), "--no-progress"])
    assert r.exit_code == 2 and "[0, 1]" in r.output and "?mean=" in r.output
    assert not (tmp_path / "o" / "units").exists()
