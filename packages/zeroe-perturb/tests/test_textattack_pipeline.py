"""TextAttack integration (issue 15, items 3-4): every attacker is a ``WordSwap`` that TextAttack's
greedy WIR search and constraints (``StopwordModification``…) accept; segment keeps punctuation."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import zeroe_perturb as zp

pytestmark = pytest.mark.skipif(importlib.util.find_spec("textattack") is None, reason="textattack not installed")

POSITIVE = {"good", "great", "wonderful", "excellent", "lovely"}


@pytest.fixture(scope="module")
def ta():
    from zeroe_perturb._textattack_compat import import_textattack

    return import_textattack()


def _keyword_wrapper(ta):
    class KeywordModel(ta.models.wrappers.ModelWrapper):
        """Logit of "positive" = number of positive words occurring verbatim (lower-cased), so each
        misspelt one lowers the score (greedy search makes progress) and all must go to flip it."""

        model = None

        def __call__(self, texts):
            counts = [sum(w in POSITIVE for w in t.lower().split()) for t in texts]
            return np.array([[0.5, float(c)] for c in counts])

    return KeywordModel()


@pytest.mark.parametrize("attack", zp.ATTACKS)
def test_every_transformation_is_a_word_swap_for_greedy_wir(ta, attack):
    from textattack.search_methods import GreedyWordSwapWIR
    from textattack.transformations import WordSwap

    from zeroe_perturb.integrations import textattack_transformation

    t = textattack_transformation(attack, phi=0.5, seed=0)
    assert isinstance(t, WordSwap)
    assert GreedyWordSwapWIR().check_transformation_compatibility(t)


@pytest.mark.parametrize("attack", ["intrude", "visual", "truncate", "keyboard-typo", "disemvowel"])
def test_full_attack_with_stopword_constraint(ta, attack):
    """A full ``textattack.Attack`` (goal function + constraints + greedy WIR): it flips the keyword
    model by perturbing the sentiment word, never a stopword; forbidding that word makes it fail."""
    from textattack import Attack
    from textattack.attack_results import FailedAttackResult, SuccessfulAttackResult
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR

    from zeroe_perturb.integrations import textattack_transformation

    wrapper = _keyword_wrapper(ta)
    text = "the movie was wonderful and the music was great"
    stop = ["the", "was", "and"]
    attack_obj = Attack(UntargetedClassification(wrapper), [RepeatModification(), StopwordModification(stop)],
                        textattack_transformation(attack, phi=0.5, n_candidates=2, seed=0),
                        GreedyWordSwapWIR(wir_method="delete"))
    res = attack_obj.attack(text, 1)
    assert isinstance(res, SuccessfulAttackResult), res
    before, after = text.split(), res.perturbed_result.attacked_text.text.split()
    for w in stop:
        assert after.count(w) == before.count(w)
    assert "wonderful" not in after and "great" not in after
    # the constraint is honoured, not ignored: with the sentiment words protected the attack fails
    blocked = Attack(UntargetedClassification(wrapper),
                     [RepeatModification(), StopwordModification(stop + ["wonderful", "great"])],
                     textattack_transformation(attack, phi=0.5, n_candidates=2, seed=0),
                     GreedyWordSwapWIR(wir_method="delete"))
    assert isinstance(blocked.attack(text, 1), FailedAttackResult)


def test_segment_transformation_keeps_punctuation_in_place(ta):
    """Item 3: joining two words never moves a punctuation mark (only whitespace disappears)."""
    from textattack.shared import AttackedText

    from zeroe_perturb.integrations import textattack_transformation

    t = textattack_transformation("segment", seed=0)
    for s in ["Hello, world and more.", "one - two three! four", "It works; really well"]:
        cands = t(AttackedText(s), pre_transformation_constraints=[])
        assert cands
        for c in cands:
            assert c.text.replace(" ", "") == s.replace(" ", ""), (s, c.text)
            assert c.text.count(" ") == s.count(" ") - 1
