import numpy as np
import pytest
import torch

from certcal import ACE_CONFIGURATIONS, BetaACE, expected_calibration_error


@pytest.fixture(scope="module")
def clean(plain_model, digits):
    _, _, xte, yte = digits
    return xte[:150], yte[:150]


@pytest.mark.parametrize("name", sorted(ACE_CONFIGURATIONS))
def test_all_four_configurations_keep_predictions(plain_model, clean, name):
    x, y = clean
    x0 = x.clone()
    res = BetaACE.from_configuration(name, norm="linf", steps=20)(plain_model, x, y, 0.1)
    assert res.prediction_unchanged
    assert torch.equal(x, x0)
    delta = (res.x_adv - x).abs().flatten(1).max(1).values
    assert torch.all(delta <= 0.1 + 1e-6)
    assert torch.all((res.x_adv >= 0) & (res.x_adv <= 1))
    d = res.to_dict()
    assert d["prediction_unchanged"] and set(d) >= {"clean_ece", "adv_ece", "accuracy"}


def test_table1_effect_ece_rises_accuracy_fixed(plain_model, clean):
    """Paper Table 1: ACE attacks move the ECE far from its clean value while accuracy is unchanged."""
    x, y = clean
    results = {n: BetaACE.from_configuration(n, steps=20)(plain_model, x, y, 0.1) for n in ACE_CONFIGURATIONS}
    clean_correct = results["lower_label"].clean_prediction == y.numpy()
    clean_ece = expected_calibration_error(results["lower_label"].clean_confidence, clean_correct)
    for res in results.values():
        assert np.array_equal(res.adv_prediction, res.clean_prediction)  # accuracy unchanged
    # lowering confidence in the (mostly correct) label makes the model badly under-confident
    assert results["lower_label"].to_dict()["adv_ece"] > clean_ece + 0.2
    assert results["lower_prediction"].to_dict()["adv_ece"] > clean_ece + 0.2
    # raising confidence in the prediction raises mean confidence
    rp = results["raise_prediction"]
    assert rp.adv_confidence.mean() > rp.clean_confidence.mean()


def test_l2_attack_respects_budget(plain_model, clean):
    x, y = clean
    res = BetaACE(eta=1, target="label", norm="l2", steps=15)(plain_model, x, y, 0.5)
    assert res.prediction_unchanged
    assert torch.all((res.x_adv - x).flatten(1).norm(dim=1) <= 0.5 + 1e-5)
    assert res.to_dict()["adv_ece"] > res.to_dict()["clean_ece"]


def test_scalar_budget_equals_vector_budget_and_zero_budget(plain_model, clean):
    x, y = clean
    atk = BetaACE(eta=1, target="prediction", steps=5)
    a = atk(plain_model, x[:20], y[:20], 0.05)
    b = atk(plain_model, x[:20], y[:20], torch.full((20,), 0.05))
    assert torch.equal(a.x_adv, b.x_adv)
    z = atk(plain_model, x[:20], y[:20], 0.0)
    assert torch.equal(z.x_adv, x[:20])


def test_bad_arguments(plain_model, clean):
    x, y = clean
    with pytest.raises(ValueError):
        BetaACE(eta=0)
    with pytest.raises(ValueError):
        BetaACE(norm="l1")
    with pytest.raises(ValueError):
        BetaACE.from_configuration("lower_everything")
    with pytest.raises(ValueError):
        BetaACE()(plain_model, x, y[:3], 0.1)
    with pytest.raises(ValueError):
        BetaACE()(plain_model, x, y, -0.1)


def test_batch_equals_one_by_one(plain_model, clean):
    x, y = clean
    batched = BetaACE(eta=1, target="label", steps=10, batch_size=64)(plain_model, x[:30], y[:30], 0.1)
    single = BetaACE(eta=1, target="label", steps=10, batch_size=1)(plain_model, x[:30], y[:30], 0.1)
    assert torch.allclose(batched.x_adv, single.x_adv, atol=1e-5)
    assert np.array_equal(batched.adv_prediction, single.adv_prediction)
