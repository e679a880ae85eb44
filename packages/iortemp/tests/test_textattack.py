"""TextAttack's DeepWordBug, offline, through the temperature wrapper (imports textattack: ~15 s)."""

import numpy as np
import pytest

import iortemp
from robustsuite_common.intervals import mean_interval, proportion_of


@pytest.mark.slow
def test_deepwordbug_offline_shows_ior_and_is_seeded(tiny_text, corpus):
    pytest.importorskip("nltk")  # textattack itself must be imported through iortemp (offline shim)
    _, (xva, yva), (xte, yte) = corpus
    x, y = xte[:30], yte[:30]
    atk = iortemp.TextAttackRecipe(recipe="deepwordbug")
    up = iortemp.TemperatureScaled(tiny_text, temperature=0.005)
    base = iortemp.evaluate_attack(tiny_text, x, y, atk, seed=0)
    plain = iortemp.evaluate_attack(up, x, y, atk, seed=0)
    t_cal = iortemp.calibrate_temperature(iortemp.logits64(up, xva), yva)
    cal = iortemp.evaluate_attack(up, x, y, atk, temperature=t_cal, seed=0)
    cp = proportion_of

    def boot(v):
        return mean_interval(v, seed=0)

    assert cp(base.correct_adversarial).below(cp(base.correct_clean))  # DeepWordBug attacks
    # paired per-text differences on the same 30 texts (their bootstrap interval is the data's own margin)
    c = {k: np.array(e.correct_adversarial, dtype=float) for k, e in (("base", base), ("plain", plain), ("cal", cal))}
    assert boot(c["plain"] - c["base"]).low > 0  # the illusion: the saturated victim survives more texts
    assert boot(c["plain"] - c["cal"]).low > 0  # the adversary's temperature removes it
    assert cp(cal.correct_adversarial).overlaps(cp(base.correct_adversarial))
    again = atk(tiny_text, x[:8], y[:8], seed=0)
    first = atk(tiny_text, x[:8], y[:8], seed=0)
    assert again.adversarial == first.adversarial
    state = np.random.get_state()[1].copy()  # noqa: NPY002 - checking the global state is restored
    atk(tiny_text, x[:2], y[:2], seed=5)
    assert np.array_equal(state, np.random.get_state()[1])  # noqa: NPY002


def test_recipe_bad_name():
    with pytest.raises(ValueError, match="recipe"):
        iortemp.TextAttackRecipe(recipe="hotflip")


@pytest.mark.slow
def test_pwws_offline_from_local_wordnet(tiny_text, corpus):
    """PWWS with WordNet read from local files (Debian's wordnet-base), no download."""
    pytest.importorskip("nltk")
    from iortemp.wordnet import find_wordnet, wordnet_synonyms

    if find_wordnet() is None:
        pytest.skip("WordNet 3.0 not installed (Debian wordnet-base / $IORTEMP_WORDNET / NLTK data)")
    assert {"movie", "picture"} <= set(wordnet_synonyms("film"))
    _, _, (xte, yte) = corpus
    atk = iortemp.TextAttackRecipe(recipe="pwws")
    ev = iortemp.evaluate_attack(tiny_text, xte[:30], yte[:30], atk, keep_adversarial=True)
    cp = proportion_of
    assert cp(ev.correct_adversarial).below(cp(ev.correct_clean))  # PWWS attacks
    changed = [a for a, t in zip(ev.adversarial, xte[:30], strict=True) if a != t]
    assert changed and all(len(a.split()) == len(t.split()) for a, t in zip(ev.adversarial, xte[:30], strict=True))


def test_recipes_name_what_to_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="wordnet"):
        iortemp.TextAttackRecipe(recipe="pwws", wordnet=str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="WordNet"):
        iortemp.TextAttackRecipe(recipe="pwws", wordnet=str(tmp_path))  # exists, holds no WordNet files
    with pytest.raises(FileNotFoundError, match="embedding"):
        iortemp.TextAttackRecipe(recipe="textfooler", embedding=str(tmp_path / "vectors.txt"))
    with pytest.raises(FileNotFoundError, match="masked_lm"):
        iortemp.TextAttackRecipe(recipe="bae", masked_lm=str(tmp_path / "bert"))
