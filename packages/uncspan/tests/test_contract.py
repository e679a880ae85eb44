"""The input contract (issue 25 item 7): every public name in ``uncspan.__all__`` that takes a model or data gets the
shared catalogue of bad inputs (robustsuite_common.testing) and must refuse each with a ValueError/TypeError naming
the argument, before any forward pass of the model (labels beyond the model's classes: after the one probe pass that
reads the number of classes), and give the caller's model back unchanged (state, mode, requires_grad); every
output form of the model is accepted; float64 / half and non-contiguous inputs are cast or read as they are. A
public name without an entry here fails the first test."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import uncspan
from robustsuite_common.config import from_dict
from robustsuite_common.contract_tests import CONFIDENCES as Z
from robustsuite_common.contract_tests import (
    Entry,
    bn_cnn,
    confidence_entry,
    vision_contract_tests,
)
from robustsuite_common.experiment import Split
from robustsuite_common.testing import bad_images, bad_labels
from uncspan import experiment

K, N = 4, 6  # classes of the test model, inputs


def Net() -> torch.nn.Module:  # noqa: N802 (read as the model class it builds)
    """A tiny vision model with BatchNorm and Dropout (a model in train mode would change if evaluated as is):
    weights N(0, 0.5^2) and a BatchNorm running mean N(0, 0.1^2) from a generator seeded 0."""
    return bn_cnn(K, seed=0, weights="normal")


def images(n: int = N) -> torch.Tensor:
    return torch.rand(n, 1, 8, 8, generator=torch.Generator().manual_seed(1))


def labels(n: int = N) -> torch.Tensor:
    return torch.arange(n) % K


def _experiment(m, x, y):
    if hasattr(x, "shape") and len(x) != N:  # a Split needs one label per input: here the images are under test
        y = y[: len(x)]
    cfg = from_dict(experiment.Config, {"leaderboard": {"n": N, "robust_attack": "pgd", "pgd_steps": 1},
                                        "attack": {"steps": 1, "restarts": 0}, "sweep": {"eps": [0.0, 0.1], "n": 4,
                                                                                         "steps": 1},
                                        "metrics": {"n_boot": 100, "auroc_n_boot": 100}},
                    base=experiment.preset("demo"))
    return experiment.run(experiment.Models({"m": m}), experiment.Data(test=Split(x, y)), cfg, progress=False)


def _ood(m, x, y):
    return uncspan.ood_under_attack(m, x, images(4) * 0.5, eps=[0.0, 0.1], steps=1, n_boot=100)


MODEL_ENTRIES: dict[str, Entry] = {
    "OverConfidenceAttack": Entry(lambda m, x, y: uncspan.OverConfidenceAttack(steps=1)(m, x, 0.1), y_name=None),
    "UnderConfidenceAttack": Entry(lambda m, x, y: uncspan.UnderConfidenceAttack(steps=1)(m, x, 0.1), y_name=None),
    "MisclassificationAttack": Entry(lambda m, x, y: uncspan.MisclassificationAttack(steps=1)(m, x, 0.1, y=y)),
    "uncertainty_span": Entry(lambda m, x, y: uncspan.uncertainty_span(m, x, eps=0.1, steps=1, restarts=0), y_name=None),
    "rank_models": Entry(lambda m, x, y: uncspan.rank_models({"m": m}, x, y, config=uncspan.RankConfig(
        eps=0.1, steps=1, restarts=0, n_boot=100, attack="pgd"))),
    # the AutoAttack path with its cheapest configuration (version "rand": APGD-CE and APGD-DLR only, 2 iterations;
    # standard AutoAttack's Square runs 5,000 queries per robust point): the contract, not the attack, is tested here
    "robust_accuracy": Entry(lambda m, x, y: uncspan.robust_accuracy(m, x, y, eps=0.1, attack=uncspan.AutoAttack(
        version="rand", n_iter=2, n_restarts=1))),
    "eps_sweep": Entry(lambda m, x, y: uncspan.eps_sweep(m, x, y, eps=[0.0, 0.1], steps=1, restarts=0, n_boot=100)),
    "ood_under_attack": Entry(_ood, x_name="x_in", y_name=None),
    "KnownClassesModel": Entry(lambda m, x, y: uncspan.uncertainty_span(uncspan.KnownClassesModel(m, [0, 1, 2]), x,
                                                                          eps=0.1, steps=1, restarts=0), y_name=None),
    "MCDropoutModel": Entry(lambda m, x, y: uncspan.MCDropoutModel(m, n_samples=2).decompose(x), y_name=None),
    "DeepEnsemble": Entry(lambda m, x, y: uncspan.DeepEnsemble([m, m]).decompose(x), y_name=None),
    "experiment": Entry(_experiment, x_name="data.test.x", y_name="data.test.y"),
    "uncertainty_under_attack_check": Entry(lambda m, x, y: uncspan.uncertainty_under_attack_check(
        m, x, y, eps=0.1, steps=1, n_boot=100)),
}


def _span(n: int = N) -> uncspan.UncertaintySpan:
    return uncspan.uncertainty_span(Net(), images(n), eps=0.1, steps=1, restarts=0)


def _board() -> uncspan.Leaderboard:
    return uncspan.rank_models({"a": Net()}, images(), labels(),
                               config=uncspan.RankConfig(eps=0.1, steps=1, restarts=0, n_boot=100, attack="pgd"))


def _outcome(n: int = N) -> uncspan.RobustOutcome:
    return uncspan.RobustOutcome("pgd", "pgd", np.zeros(n, bool), np.zeros(n, int), np.ones(n))


P = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
BAD_PROBS = {"nan": np.full((2, 3), np.nan), "logits": np.array([[2.0, -1.0, 0.5]]), "negative": np.array([[1.5, -0.5]]),
             "one_class": np.array([[1.0]]), "not_an_array": "0.5"}
BAD_VECTOR = {"nan": [np.nan, 1.0], "empty": [], "two_dimensional": [[1.0, 2.0]], "not_numbers": "ab"}
BAD_SCORES = {"nan": [np.nan, 0.2], "empty": [], "two_dimensional": [[0.1, 0.2]]}
BAD_Y = {k: v for k, v in bad_labels(N, K).items() if k != "out_of_range"}  # no model to know the classes
BAD_IMAGES = {k: v for k, v in bad_images((N, 1, 8, 8)).items()}

#: entry points that take data but no model: (call on good arguments, {argument: bad values})
DATA_ENTRIES: dict[str, tuple[Callable[..., Any], dict[str, Any], dict[str, dict[str, Any]]]] = {
    "entropy": (uncspan.entropy, {"probs": P}, {"probs": BAD_PROBS}),
    "max_softmax_probability": (uncspan.max_softmax_probability, {"probs": P}, {"probs": BAD_PROBS}),
    "epistemic_decomposition": (uncspan.epistemic_decomposition, {"member_probs": np.stack([P, P])},
                                {"member_probs": {"nan": np.full((2, 2, 3), np.nan), "two_dimensional": P,
                                                  "logits": np.full((2, 2, 3), 2.0)}}),
    "entropy_from_logits": (uncspan.entropy_from_logits, {"logits": torch.zeros(2, 3)},
                            {"logits": {"not_a_tensor": np.zeros((2, 3)), "one_class": torch.zeros(2, 1)}}),
    "mus": (uncspan.mus, {"entropy_under": [1.0, 2.0], "entropy_over": [0.0, 1.0]},
            {"entropy_under": BAD_VECTOR, "entropy_over": {"wrong_length": [0.0]}}),
    "msus": (uncspan.msus, {"entropy_under": [1.0, 2.0], "entropy_over": [0.0, 1.0]},
             {"entropy_under": BAD_VECTOR, "entropy_over": {"wrong_length": [0.0]}}),
    "signed_ece": confidence_entry(uncspan.signed_ece),
    "expected_calibration_error": confidence_entry(uncspan.expected_calibration_error),
    "reliability_bins": confidence_entry(uncspan.reliability_bins),
    "detection_metrics": (uncspan.detection_metrics, {"scores_in": Z, "scores_out": Z + 1},
                          {"scores_in": BAD_SCORES, "scores_out": BAD_SCORES}),
    "auroc_ci": (lambda **kw: uncspan.auroc_ci(**kw, n_boot=100), {"scores_in": Z, "scores_out": Z + 1},
                 {"scores_in": BAD_SCORES, "scores_out": BAD_SCORES}),
    "auroc_difference": (lambda **kw: uncspan.auroc_difference(**kw, n_boot=100),
                         {"scores_in": Z, "scores_out": Z + 1, "scores_out_ref": Z + 2},
                         {"scores_out": BAD_SCORES, "scores_out_ref": {"wrong_length": [0.1]}}),
    "paired_difference": (lambda **kw: uncspan.paired_difference(**kw, n_boot=100), {"a": Z, "b": Z + 1},
                          {"a": {"nan": [np.nan] * 4, "empty": []}, "b": {"two_dimensional": [[1.0] * 4]}}),
    "entropy_widening": (lambda **kw: uncspan.entropy_widening(**kw, n_boot=100), {"span": _span()},
                         {"span": {"a_dict": {"entropy_clean": [1.0]}}}),
    "mus_difference": (lambda **kw: uncspan.mus_difference(**kw, n_boot=100), {"span_a": _span(), "span_b": _span()},
                       {"span_a": {"an_array": np.ones(3)}}),
    "span_signed_ece": (uncspan.span_signed_ece, {"span": _span(), "y": labels()}, {"y": BAD_Y}),
    "adversarial_training_effect": (uncspan.adversarial_training_effect, {"board": _board()},
                                    {"board": {"a_dict": {"rows": []}}}),
    "leaderboard_row": (lambda **kw: uncspan.leaderboard_row("m", **kw, n_boot=100),
                        {"span": _span(), "y": labels(), "robust": _outcome()},
                        {"y": BAD_Y, "span": {"none": None}, "robust": {"wrong_length": _outcome(2)}}),
    "plot_entropy_distributions": (uncspan.plot_entropy_distributions, {"spans": {"m": _span()}},
                                   {"spans": {"empty": {}, "an_array": np.ones(3)}}),
    "plot_reliability_diagrams": (uncspan.plot_reliability_diagrams, {"spans": {"m": _span()}, "y": labels()},
                                  {"y": BAD_Y, "spans": {"empty": {}}}),
    "plot_eps_sweep": (uncspan.plot_eps_sweep, {"sweeps": uncspan.eps_sweep(Net(), images(), labels(), eps=[0.0, 0.1],
                                                                            steps=1, n_boot=100)},
                       {"sweeps": {"empty": {}, "a_span": {"m": _span()}}}),
    "open_set_split": (uncspan.open_set_split, {"x": images(), "y": labels(), "open_classes": [3]},
                       {"x": BAD_IMAGES, "y": BAD_Y, "open_classes": {"absent": [7], "a_string": "3"}}),
    "match_images": (uncspan.match_images, {"x": images(), "like": (1, 4, 4)}, {"x": BAD_IMAGES}),
    "pgd_gap": (uncspan.pgd_gap, {"pgd": _outcome(), "autoattack": _outcome()},
                {"pgd": {"an_array": np.zeros(N, bool)}, "autoattack": {"wrong_length": _outcome(2)}}),
    "robustbench_leaderboard": (lambda **kw: uncspan.robustbench_leaderboard(["Absent"], **kw, model_dir="/nonexistent"),
                                {"x": images(), "y": labels()}, {"x": BAD_IMAGES, "y": BAD_Y}),
}

#: public names that take neither a model nor data: constants, result types, attack configurations, the abstract
#: attack base class (its subclasses' entries above cover its __call__) and the RobustBench loader (names and a dir)
NO_MODEL_OR_DATA = {
    "__version__", "STRONGEST_UNDER_OBJECTIVES", "ROBUST_ATTACKS", "AttackResult", "UncertaintyAttack",
    "UncertaintySpan", "SpanStatistic", "ReliabilityBins", "PairedDifference", "EntropyWidening", "TrainingComparison",
    "TrainingEffect", "SpanSignedECE", "DetectionMetrics", "OODRow", "OODUnderAttack", "EpsSweepRow", "EpsSweep",
    "LeaderboardRow", "Leaderboard", "RankConfig", "AutoAttack", "RobustOutcome", "PGDGap", "EpistemicDecomposition",
    "load_robustbench_models",
}


def _fingerprint(out: Any) -> str:
    if hasattr(out, "to_dict"):
        try:
            d = out.to_dict(per_sample=True)
        except TypeError:
            d = out.to_dict()
    else:
        d = {k: np.asarray(v).tolist() for k, v in vars(out).items() if v is not None}
    return json.dumps(d, sort_keys=True, default=str)


CONTRACT = vision_contract_tests(
    uncspan.__all__, MODEL_ENTRIES, DATA_ENTRIES, NO_MODEL_OR_DATA, net=Net, images=images, labels=labels, n_classes=K,
    fingerprint=_fingerprint,
    # (the experiment's Split refuses a wrong length itself, naming y)
    y_named=lambda name, entry, message: entry.y_name in message or (name == "experiment" and "y must" in message))
test_every_public_name_is_in_the_catalogue = CONTRACT.catalogue
test_bad_images_refused_before_any_forward_pass = CONTRACT.bad_images
test_bad_labels_refused_naming_y_before_the_work = CONTRACT.bad_labels
test_model_comes_back_unchanged_and_every_output_form_gives_the_same_result = CONTRACT.output_forms


@pytest.mark.parametrize("name", sorted(MODEL_ENTRIES))
def test_float64_half_and_non_contiguous_inputs(name):
    """float64 and half inputs are cast to the model's dtype (the same result as the cast input); a non-contiguous
    batch gives the result of its contiguous copy."""
    entry = MODEL_ENTRIES[name]
    x = images()
    ref = _fingerprint(entry.call(Net(), x, labels()))
    assert _fingerprint(entry.call(Net(), x.double(), labels())) == ref
    half = x.half()
    assert _fingerprint(entry.call(Net(), half, labels())) == _fingerprint(entry.call(Net(), half.float(), labels()))
    strided = x.transpose(2, 3)
    assert not strided.is_contiguous()
    assert _fingerprint(entry.call(Net(), strided, labels())) == _fingerprint(
        entry.call(Net(), strided.contiguous(), labels()))


@pytest.mark.parametrize("name, arg, case", [(n, a, c) for n, (_, _, bad) in sorted(DATA_ENTRIES.items())
                                             for a, cases in bad.items() for c in cases])
def test_data_entries_refuse_bad_values_naming_the_argument(name, arg, case):
    fn, good, bad = DATA_ENTRIES[name]
    fn(**good)  # the good arguments work
    with pytest.raises((ValueError, TypeError)) as err:
        fn(**{**good, arg: bad[arg][case]})
    assert arg in str(err.value), str(err.value)
