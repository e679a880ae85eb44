"""The input contract (issue 25) over every public name in ``iortemp.__all__``.

Every entry point that takes a model or data is fed the shared catalogue of bad inputs
(``robustsuite_common.testing``) and must raise a ``ValueError``/``TypeError`` naming the argument before any
forward pass (a counting model; labels out of range may cost the one forward pass that tells the number of
classes), or give a correct result; a model given in train mode (BatchNorm) comes back with the same mode,
buffers and ``requires_grad``; every model output form (tensor, tuple, dict, ``ModelOutput``) gives the same
result. A public name without an entry here fails :func:`test_every_public_name_is_in_the_catalogue`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import iortemp
from iortemp._toy import SYNONYMS, build_tiny_bert
from robustsuite_common.models import evaluating
from robustsuite_common.testing import (
    CountingModel,
    bad_images,
    bad_labels,
    bad_texts,
    output_forms,
    snapshot,
)

TEXTS = ["the plot was superb , the cast was awful and the music felt dull",
         "the film was wonderful , the ending was nice and the score felt fine",
         "the script was dreadful , the pacing was bland and the story felt weak",
         "the acting was brilliant , the dialogue was good and the scenery felt solid"]
LABELS = [1, 1, 0, 1]
K_VISION = 10


def _pgd():
    return iortemp.PGDLinf(eps=0.1, steps=2)


def _swap():
    return iortemp.GreedyWordSwap(candidates=SYNONYMS, max_candidates=3)


def _search(**kw):
    return {"max_evaluations": 2, **kw}


def _attacked(attack, key, cell):
    """The entries both catalogues have: name -> call(model, inputs, labels) with the attack ``attack()``
    (named ``key`` in the illusion table, whose adversarial-correct entry ``cell`` reads)."""
    return {
        "evaluate_attack": lambda m, x, y: iortemp.evaluate_attack(m, x, y, attack()).adversarial_predictions,
        "transfer_attack": lambda m, x, y: iortemp.transfer_attack(m, m, x, y, attack()).adversarial_predictions,
        "logits64": lambda m, x, y: iortemp.logits64(m, x),
        "predict": lambda m, x, y: iortemp.predict(m, x),
        "detect_ior": lambda m, x, y: iortemp.detect_ior(m, x, y, attack(), val_inputs=x, val_labels=y,
                                                         max_evaluations=2).plain.adversarial_predictions,
        "illusion_table": lambda m, x, y: cell(iortemp.illusion_table(
            {"b": m}, {key: attack()}, x, y, val_inputs=x, val_labels=y, max_evaluations=2).rows[0]["adversarial_correct"]),
        "temperature_sweep": lambda m, x, y: [p.adversarial_accuracy for p in iortemp.temperature_sweep(
            m, x, y, attack(), [0.01, 1.0])],
        "optimize_temperature": lambda m, x, y: iortemp.optimize_temperature(m, x, y, attack(), max_evaluations=2).curve,
    }


# ---------------------------------------------------------------------------------------------- vision catalogue
# name -> call(model, x, y) returning something comparable across output forms
VISION = {
    **_attacked(_pgd, "pgd", lambda cell: cell["pgd"]),
    "PGDLinf": lambda m, x, y: _pgd()(m, x, y).adversarial,
    "temperature_illusion_check": lambda m, x, y: _check_numbers(iortemp.temperature_illusion_check(
        m, x, y, eps=0.1, steps=2, max_evaluations=2)),
    "AutoAttackLinf": lambda m, x, y: iortemp.AutoAttackLinf(eps=0.1)(m, x, y).adversarial,
    "robust_accuracy": lambda m, x, y: iortemp.robust_accuracy(m, x, y, eps=0.1).robust,
    "TemperatureScaled": lambda m, x, y: _served_and_reported(iortemp.TemperatureScaled(m, temperature=0.005), x),
    "TemperatureScaledModule": lambda m, x, y: _served_and_reported(iortemp.TemperatureScaledModule(m, temperature=2e6), x),
    "served_systems": lambda m, x, y: [iortemp.logits64(s, x) for s in iortemp.served_systems(m).values()],
    "PlattScaler": lambda m, x, y: iortemp.logits64(iortemp.PlattScaler().fit(
        np.random.default_rng(0).normal(size=(8, K_VISION)), np.arange(8)).wrap(m), x),
}


def _check_numbers(c):
    return [c.statistic or 0.0, *(c.interval or (0.0, 0.0)), c.p_value or 1.0, c.n]


def _served_and_reported(wrapper, x):
    """The wrapper's served logits (its forward, as an attack calls it) and its float64 reporting logits."""
    reported = iortemp.logits64(wrapper, x)  # checks the images first
    if x.shape[0] == 0:
        return reported
    with evaluating(wrapper), torch.no_grad():  # a module's own forward: its mode is the caller's business
        served = wrapper(x).double().numpy()
    return np.concatenate([served, reported])


NO_LABELS = {"logits64", "predict", "TemperatureScaled", "TemperatureScaledModule", "served_systems", "PlattScaler"}
EMPTY_OK = {"logits64", "predict", "TemperatureScaled", "TemperatureScaledModule", "served_systems", "PlattScaler"}
VISION_ARG = r"\b(inputs|x|val_inputs)\b"


class _Net(torch.nn.Module):
    """A small CNN with BatchNorm (its running statistics change if it is run in train mode)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                        torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, K_VISION))

    def forward(self, x):
        return self.body(x) * 3.0


@pytest.fixture()
def net():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        m = _Net()
    return m


@pytest.fixture(scope="module")
def images():
    x = torch.rand((4, 1, 8, 8), generator=torch.Generator().manual_seed(1))
    return x, torch.tensor([0, 1, 2, 3])


@pytest.mark.parametrize("name", sorted(VISION))
@pytest.mark.parametrize("bad", sorted(bad_images()))
def test_vision_bad_images_refused_before_any_forward_pass(name, bad, net, images):
    x = bad_images()[bad]
    _, y = images
    y = y[: x.shape[0]] if hasattr(x, "shape") and x.ndim == 4 else y
    counting = CountingModel(net.eval())
    if bad == "empty" and name in EMPTY_OK:
        VISION[name](counting, x, y)
        return
    with pytest.raises((ValueError, TypeError), match=VISION_ARG):
        VISION[name](counting, x, y)
    assert counting.calls == 0


@pytest.mark.parametrize("name", sorted(set(VISION) - NO_LABELS))
@pytest.mark.parametrize("bad", sorted(bad_labels(4, K_VISION)))
def test_vision_bad_labels_refused_before_the_attack(name, bad, net, images):
    x, _ = images
    counting = CountingModel(net.eval())
    with pytest.raises((ValueError, TypeError), match=r"\b(labels|y|val_labels)\b"):
        VISION[name](counting, x, bad_labels(4, K_VISION)[bad])
    # out of range needs the model's number of classes: at most a validation forward and the one-input probe
    assert counting.calls <= (2 if bad == "out_of_range" else 0)


@pytest.mark.parametrize("name", sorted(VISION))
def test_vision_model_comes_back_untouched(name, net, images):
    x, y = images
    net.train()
    for p in list(net.parameters())[:2]:
        p.requires_grad_(False)
    before = snapshot(net)
    VISION[name](net, x, y)
    before.assert_same(net)  # mode, BatchNorm running statistics, requires_grad


@pytest.mark.parametrize("name", sorted(VISION))
def test_vision_every_output_form_gives_the_same_result(name, net, images):
    x, y = images
    net.eval()
    want = VISION[name](net, x, y)
    for form in output_forms():
        got = VISION[name](form.wrap(net), x, y)
        np.testing.assert_array_equal(_arr(got), _arr(want), err_msg=form.name)


def _arr(v):
    if isinstance(v, torch.Tensor):
        return v.detach().numpy()
    if isinstance(v, list | tuple) and v and isinstance(v[0], np.ndarray | torch.Tensor):
        return np.concatenate([_arr(e) for e in v])
    return np.asarray(v, dtype=float)


def test_temperatures_from_1e_3_to_1e7_give_finite_numbers(net, images):
    x, y = images
    net.eval()
    for t in (1e-3, 5e-3, 1.0, 2e6, 1e7):
        z = iortemp.logits64(iortemp.TemperatureScaled(net, temperature=t), x)
        assert np.isfinite(z).all() and math.isfinite(iortemp.confidence_stats(z).mean)
        assert np.isfinite(iortemp.TemperatureScaled(net, temperature=t)(x).log_softmax(1).detach().numpy()).all()
        assert math.isfinite(iortemp.temperature_nll(iortemp.logits64(net, x), y, temperature=t))


# ------------------------------------------------------------------------------------------------ text catalogue


@pytest.fixture(scope="module")
def bert():
    model, tok = build_tiny_bert(TEXTS, seed=0)
    return model, tok


# name -> call(classifier, texts, labels); the classifier has .model and .tokenizer (a tiny BERT)
TEXT = {
    **_attacked(_swap, "s", lambda cell: cell),
    "GreedyWordSwap": lambda c, t, y: _swap()(c, t, y).adversarial,
    "TextAttackRecipe": lambda c, t, y: iortemp.TextAttackRecipe(recipe="deepwordbug")(c, t, y).adversarial,
    "text_attack": lambda c, t, y: iortemp.text_attack("wordswap", model=c, neighbours=2)(c, t, y).adversarial,
    "adversarial_augmentation": lambda c, t, y: iortemp.adversarial_augmentation(c, t, y, _swap())[0],
    "TemperatureScaled": lambda c, t, y: iortemp.TemperatureScaled(c, temperature=0.01)(t),
    "TemperatureScaledText": lambda c, t, y: iortemp.TemperatureScaledText(c, temperature=2e6).logits64(t),
    "CachedTextClassifier": lambda c, t, y: iortemp.CachedTextClassifier(c)(t),
    "HFTextClassifier": lambda c, t, y: iortemp.HFTextClassifier(c.model, c.tokenizer, max_length=32)(t),
    "served_systems": lambda c, t, y: [iortemp.logits64(s, t) for s in iortemp.served_systems(c).values()],
    "train_classifier": lambda c, t, y: iortemp.train_classifier(c.model, c.tokenizer, t, y, config=iortemp.TrainingConfig(
        epochs=1, max_length=32)),
    "ddi_normalization_ablation": lambda c, t, y: iortemp.ddi_normalization_ablation(
        c.model, c.tokenizer, t, y, t, y, settings=("none",), seeds=(0,), config=iortemp.TrainingConfig(
            epochs=1, max_length=32)),
}
# bad inputs only: their good call trains (by design, in place) or imports TextAttack (slow)
TEXT_BAD_ONLY = {"train_classifier", "ddi_normalization_ablation", "TextAttackRecipe"}
TEXT_NO_LABELS = {"logits64", "predict", "TemperatureScaled", "TemperatureScaledText", "CachedTextClassifier",
                  "HFTextClassifier", "served_systems"}
TEXT_EMPTY_OK = TEXT_NO_LABELS
TEXT_ARG = r"\b(inputs|texts|text_list|val_inputs|train_texts|test_texts)\b"


@pytest.fixture()
def clf(bert, counting_text):
    model, tok = bert
    return counting_text(iortemp.HFTextClassifier(model, tok, max_length=32))


@pytest.mark.parametrize("name", sorted(TEXT))
@pytest.mark.parametrize("bad", sorted(bad_texts()))
def test_text_bad_texts_refused_before_any_query(name, bad, clf):
    texts = bad_texts()[bad]
    if bad == "empty" and name in TEXT_EMPTY_OK:
        TEXT[name](clf, texts, [])
        return
    with pytest.raises((ValueError, TypeError), match=TEXT_ARG):
        TEXT[name](clf, texts, LABELS)
    assert clf.calls == 0


@pytest.mark.parametrize("name", sorted(set(TEXT) - TEXT_NO_LABELS))
@pytest.mark.parametrize("bad", sorted(bad_labels(4, 2)))
def test_text_bad_labels_refused_before_the_attack(name, bad, clf):
    with pytest.raises((ValueError, TypeError), match=r"\b(labels|y|val_labels|train_labels|test_labels)\b"):
        TEXT[name](clf, TEXTS, bad_labels(4, 2)[bad])
    assert clf.calls <= (2 if bad == "out_of_range" else 0)


@pytest.mark.parametrize("name", sorted(set(TEXT) - TEXT_BAD_ONLY))
def test_text_model_comes_back_untouched(name, clf):
    clf.model.train()
    before = snapshot(clf.model)
    out = TEXT[name](clf, TEXTS, LABELS)
    before.assert_same(clf.model)
    assert out is not None
    clf.model.eval()


# ------------------------------------------------------------------------------------------------ data catalogue
NAN = np.array([[0.0, np.nan], [1.0, 0.0]])
Z = np.array([[0.0, 1.0], [2.0, 0.5], [0.3, 0.1]])
Y = np.array([1, 0, 0])

# name -> (good call, [(bad call, exception, message)])
DATA = {
    "confidence_stats": (lambda: iortemp.confidence_stats(Z, temperature=1e7), [
        (lambda: iortemp.confidence_stats(Z, temperature=-2), ValueError, "temperature"),
        (lambda: iortemp.confidence_stats(Z, temperature=0), ValueError, "temperature"),
        (lambda: iortemp.confidence_stats(Z, temperature=float("nan")), ValueError, "temperature"),
        (lambda: iortemp.confidence_stats(NAN), ValueError, "logits"),
        (lambda: iortemp.confidence_stats(np.zeros(3)), ValueError, "logits")]),
    "calibration_error": (lambda: iortemp.calibration_error(Z, Y), [
        (lambda: iortemp.calibration_error(NAN, [0, 1]), ValueError, "logits"),
        (lambda: iortemp.calibration_error(Z, [0, 1, 2]), ValueError, "labels"),
        (lambda: iortemp.calibration_error(Z, [0.0, 1.0, 0.0]), TypeError, "labels"),
        (lambda: iortemp.calibration_error(Z, Y, temperature=0), ValueError, "temperature")]),
    "calibrate_temperature": (lambda: iortemp.calibrate_temperature(Z, Y), [
        (lambda: iortemp.calibrate_temperature(NAN, [0, 1]), ValueError, "logits"),
        (lambda: iortemp.calibrate_temperature(Z, [0, 1]), ValueError, "labels")]),
    "fit_temperature": (lambda: iortemp.fit_temperature(Z, Y), [
        (lambda: iortemp.fit_temperature(Z, [-1, 0, 0]), ValueError, "labels")]),
    "temperature_nll": (lambda: iortemp.temperature_nll(Z, Y, temperature=1e-3), [
        (lambda: iortemp.temperature_nll(Z, Y, temperature=-1.0), ValueError, "temperature"),
        (lambda: iortemp.temperature_nll(NAN, [0, 1], temperature=1.0), ValueError, "logits")]),
    "min_norm_simplex": (lambda: iortemp.min_norm_simplex(np.eye(2)), [
        (lambda: iortemp.min_norm_simplex(np.full((2, 2), np.nan)), ValueError, "gram"),
        (lambda: iortemp.min_norm_simplex(np.ones((2, 3))), ValueError, "gram")]),
    "paired_verdict": (lambda: iortemp.paired_verdict([[True, False]], [[False, False]]), [
        (lambda: iortemp.paired_verdict([[True]], [[True, False]]), ValueError, "plain and best"),
        (lambda: iortemp.paired_verdict([[True]], [[True]], threshold=1.0), ValueError, "threshold")]),
    "run_interval": (lambda: iortemp.run_interval([[True, False]]), [
        (lambda: iortemp.run_interval([]), ValueError, "correct_per_seed")]),
    "IllusionTable": (lambda: iortemp.IllusionTable((), ()).to_dict(), [
        (lambda: iortemp.IllusionTable(("a",), ({"predictions": [0], "samples": {"a": []}},)).sample_records([0.5]),
         TypeError, "labels")]),
    "EmbeddingNeighbours": (lambda: iortemp.EmbeddingNeighbours(["a", "b"], np.eye(2), k=1)("a"), [
        (lambda: iortemp.EmbeddingNeighbours("ab", np.eye(2)), TypeError, "words"),
        (lambda: iortemp.EmbeddingNeighbours(["a", "b"], np.full((2, 2), np.nan)), ValueError, "vectors"),
        (lambda: iortemp.EmbeddingNeighbours(["a", "b"], np.eye(3)), ValueError, "vectors")]),
    "call_attack": (lambda: iortemp.call_attack(None, ["a"], [0], lambda v, x, y: x), [
        (lambda: iortemp.call_attack(None, ["a"], [0], 3), TypeError, "attack")]),
    "search_temperature": (lambda: iortemp.search_temperature(lambda t: abs(math.log10(t)), max_evaluations=3), [
        (lambda: iortemp.search_temperature(lambda t: 0.0, init_temperature=0), ValueError, "init_temperature"),
        (lambda: iortemp.search_temperature(lambda t: 0.0, log10_bounds=(-30, 30)), ValueError, "log10_bounds")]),
    "mean_embedding_norm": (None, [(lambda: iortemp.mean_embedding_norm(torch.nn.Linear(2, 2)), TypeError, "model")]),
    "ascc_perturbation": (None, []),  # model contract below (test_ascc_and_embedding_helpers_leave_the_model)
}
# constructors and factories refuse bad settings
DATA["PGDLinf"] = (lambda: iortemp.PGDLinf(eps=1.0), [
    (lambda: iortemp.PGDLinf(eps=float("inf")), ValueError, "eps"), (lambda: iortemp.PGDLinf(eps=0), ValueError, "eps"),
    (lambda: iortemp.PGDLinf(eps=1.5), ValueError, "eps"), (lambda: iortemp.PGDLinf(steps=0), ValueError, "steps")])
DATA["AutoAttackLinf"] = (lambda: iortemp.AutoAttackLinf(eps=0.3), [
    (lambda: iortemp.AutoAttackLinf(eps=float("inf")), ValueError, "eps"),
    (lambda: iortemp.AutoAttackLinf(version="apgd"), ValueError, "version")])
DATA["robust_accuracy"] = (None, [(lambda: iortemp.robust_accuracy(torch.nn.Linear(1, 2), torch.rand(1, 1, 1, 1), [0],
                                                                   attack="fgsm"), ValueError, "attack")])
DATA["text_attack"] = (None, [(lambda: iortemp.text_attack("hotflip"), ValueError, "name"),
                              (lambda: iortemp.text_attack("wordswap", model=lambda t: None), TypeError, "wordswap")])
DATA["TemperatureScaled"] = (None, [(lambda: iortemp.TemperatureScaled(lambda t: None, temperature=0), ValueError, "temperature"),
                                    (lambda: iortemp.TemperatureScaled(42, temperature=1.0), TypeError, "model")])
DATA["served_systems"] = (None, [(lambda: iortemp.served_systems(lambda t: None, design_temperatures={"up": -1}), ValueError,
                                  "design_temperatures")])
DATA["PlattScaler"] = (None, [(lambda: iortemp.PlattScaler().fit(NAN, [0, 1]), ValueError, "logits"),
                              (lambda: iortemp.PlattScaler(kind="diag"), ValueError, "kind")])

# no model and no data: results, configs and constants
EXEMPT = {
    "AdversarialEvaluation": "result type", "AttackOutput": "result type", "CalibrationError": "result type",
    "ConfidenceStats": "result type", "IORReport": "result type", "NormalizationAblation": "result type",
    "RobustAccuracy": "result type", "SweepPoint": "result type", "TemperatureFit": "result type",
    "TemperatureSearchResult": "result type", "TrainingResult": "result type",
    "TrainingConfig": "hyper-parameters (validated on construction, test_training.py)",
    "ROBUST_ATTACKS": "constant", "TEXT_ATTACKS": "constant", "__version__": "constant",
}


def test_every_public_name_is_in_the_catalogue():
    covered = set(VISION) | set(TEXT) | set(DATA) | set(EXEMPT)
    assert set(iortemp.__all__) - covered == set(), "public names without a contract entry"
    assert covered - set(iortemp.__all__) == set(), "catalogue entries for names that are not public"


@pytest.mark.parametrize("name", sorted(DATA))
def test_data_entry_points_refuse_bad_values_and_accept_good_ones(name):
    good, bad = DATA[name]
    if good is not None:
        out = good()
        assert out is not None
    for call, exc, match in bad:
        with pytest.raises(exc, match=match):
            call()


def test_ascc_and_embedding_helpers_leave_the_model(bert):
    model, tok = bert
    model.train()
    before = snapshot(model)
    clf = iortemp.HFTextClassifier(model, tok, max_length=32)
    batch = clf.encode(TEXTS[:2])
    from iortemp.ascc import ascc_candidates, ascc_table

    cand, mask = ascc_candidates(batch["input_ids"], ascc_table(tok, SYNONYMS, 2), 2)
    w = iortemp.ascc_perturbation(model, batch, cand, mask, config=iortemp.TrainingConfig(ascc_steps=2),
                                  generator=torch.Generator().manual_seed(0))
    assert torch.allclose(w.sum(-1), torch.ones(w.shape[:2]))
    assert iortemp.mean_embedding_norm(model) > 0
    iortemp.EmbeddingNeighbours.from_hf(model, tok, k=2)
    before.assert_same(model)
    model.eval()
