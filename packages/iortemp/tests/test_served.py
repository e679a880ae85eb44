"""served_systems / text_attack: the runner-free way to build the paper's systems and attacks by name."""

import numpy as np
import pytest

import iortemp


def test_served_systems_scale_the_same_model(tiny_text, corpus):
    _, _, (xte, _) = corpus
    sys_ = iortemp.served_systems(tiny_text)
    assert list(sys_) == ["base", "down_conf", "up_conf"] and sys_["base"] is tiny_text
    assert sys_["up_conf"].temperature == 0.005 and sys_["down_conf"].temperature == 2e6
    z = tiny_text(xte[:4])
    np.testing.assert_array_equal(sys_["up_conf"](xte[:4]), (z / np.float32(0.005)).astype(np.float32))
    assert list(iortemp.served_systems(tiny_text, design_temperatures={"hot": 10.0})) == ["base", "hot"]
    with pytest.raises(ValueError, match="base"):
        iortemp.served_systems(tiny_text, design_temperatures={"base": 2.0})
    with pytest.raises(ValueError, match="design_temperatures"):
        iortemp.served_systems(tiny_text, design_temperatures={"cold": 0.0})


def test_text_attack_by_name(tiny_text):
    assert isinstance(iortemp.text_attack("wordswap", model=tiny_text, neighbours=3), iortemp.GreedyWordSwap)
    dwb = iortemp.text_attack("deepwordbug")
    assert isinstance(dwb, iortemp.TextAttackRecipe) and dwb.stochastic
    assert not iortemp.GreedyWordSwap(candidates={}).stochastic
    assert iortemp.PGDLinf(random_start=True).stochastic and not iortemp.PGDLinf(random_start=False).stochastic
    with pytest.raises(ValueError, match="name"):
        iortemp.text_attack("hotflip")
    with pytest.raises(TypeError, match="wordswap"):
        iortemp.text_attack("wordswap", model=lambda t: np.zeros((len(t), 2)))
