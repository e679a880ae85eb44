"""TextAttack's DeepWordBug, offline, through the temperature wrapper (imports textattack: ~15 s)."""

import numpy as np
import pytest

import iortemp

pytestmark = pytest.mark.slow


def test_deepwordbug_offline_shows_ior_and_is_seeded(tiny_text, corpus):
    pytest.importorskip("nltk")  # textattack itself must be imported through iortemp (offline shim)
    _, (xva, yva), (xte, yte) = corpus
    x, y = xte[:30], yte[:30]
    atk = iortemp.TextAttackRecipe(recipe="deepwordbug")
    up = iortemp.TemperatureScaled(tiny_text, 0.005)
    base = iortemp.evaluate_attack(tiny_text, x, y, atk, seed=0)
    plain = iortemp.evaluate_attack(up, x, y, atk, seed=0)
    t_cal = iortemp.calibrate_temperature(iortemp.logits64(up, xva), yva)
    cal = iortemp.evaluate_attack(up, x, y, atk, temperature=t_cal, seed=0)
    assert plain.adversarial_accuracy > base.adversarial_accuracy
    assert cal.adversarial_accuracy <= base.adversarial_accuracy + 0.05
    again = atk(tiny_text, x[:8], y[:8], seed=0)
    first = atk(tiny_text, x[:8], y[:8], seed=0)
    assert again.adversarial == first.adversarial
    state = np.random.get_state()[1].copy()  # noqa: NPY002 - checking the global state is restored
    atk(tiny_text, x[:2], y[:2], seed=5)
    assert np.array_equal(state, np.random.get_state()[1])  # noqa: NPY002


def test_recipe_bad_name():
    with pytest.raises(ValueError, match="recipe"):
        iortemp.TextAttackRecipe(recipe="hotflip")
