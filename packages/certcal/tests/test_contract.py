"""The input contract (issue 25 item 7): every public name in ``certcal.__all__`` that takes a model or data gets
the shared catalogue of bad inputs (robustsuite_common.testing) and must refuse each with a ValueError/TypeError
naming the argument, before any forward pass of the model (or, where only the model can say how many classes it
has, after the one probe pass on two inputs that reads it), and give the caller's model back unchanged (state,
mode, requires_grad); every output form of the model is accepted. A public name without an entry here fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import certcal
from certcal import experiment, overview
from robustsuite_common.contract_tests import BAD_CONFIDENCES as BAD_CONF
from robustsuite_common.contract_tests import (
    BAD_CORRECT,
    Entry,
    bn_cnn,
    confidence_entry,
    vision_contract_tests,
)
from robustsuite_common.contract_tests import CONFIDENCES as Z
from robustsuite_common.contract_tests import CORRECT as C
from robustsuite_common.experiment import Split
from robustsuite_common.testing import CountingModel, bad_labels

K = 4  # classes of the test model
N = 6


def Net() -> torch.nn.Module:  # noqa: N802 (read as the model class it builds)
    """A tiny vision model with BatchNorm and Dropout (so a model in train mode would change if evaluated as is):
    PyTorch's initialisation after torch.manual_seed(0)."""
    return bn_cnn(K, seed=0)


def images(n: int = N) -> torch.Tensor:
    return torch.rand(n, 1, 8, 8, generator=torch.Generator().manual_seed(1))


def labels(n: int = N) -> torch.Tensor:
    return torch.arange(n) % K


def _act(m, x, y):
    cfg = certcal.ACTComparisonConfig(methods=("none", "gaussian"), seeds=(0,), radii=(0.0,), epochs=1, batch_size=4,
                                      n0=5, n=10, n_boot=5, certify_batch_size=64)
    return certcal.act_comparison(m, x, y, x, y, config=cfg)


def _experiment(m, x, y):
    if hasattr(x, "shape") and len(x) != N:  # a Split needs one label per input: here the images are under test
        y = y[: len(x)]
    cfg = experiment.preset("demo")
    from robustsuite_common.config import override

    cfg = override(cfg, {"test_samples": N, "smoothing.sigmas": [0.25], "certify.n0": 5, "certify.n": 10,
                         "calibration.radii": [0.0], "calibration.n_boot": 5, "acce.steps": 2, "ace.steps": 1,
                         "act.enabled": False})
    return experiment.run(experiment.Models(base=m, noise={0.25: m}),
                          experiment.Data(train=Split(x, y), test=Split(x, y)), cfg, progress=False)


def _overview(m, x, y):
    if hasattr(x, "shape") and len(x) != N:  # as for the experiment: the images are under test
        y = y[: len(x)]
    from robustsuite_common.config import override

    return overview.run(overview.Models(m), overview.Data(Split(x, y)),
                        override(overview.preset("demo"), {"n_boot": 100}), progress=False)


MODEL_ENTRIES: dict[str, Entry] = {
    "certify": Entry(lambda m, x, y: certcal.certify(m, x, sigma=0.25, n0=5, n=10, batch_size=16), y_name=None),
    "predict": Entry(lambda m, x, y: certcal.predict(m, x, sigma=0.25, n=10, batch_size=16), y_name=None),
    "sample_counts": Entry(lambda m, x, y: certcal.sample_counts(m, x, sigma=0.25, num=5, batch_size=16,
                                                                 generator=torch.Generator()), y_name=None),
    "BetaACE": Entry(lambda m, x, y: certcal.BetaACE(steps=1)(m, x, y, 0.1)),
    "ace_benchmark": Entry(lambda m, x, y: certcal.ace_benchmark(m, x, y, eps={"linf": 0.1}, steps=1, n_boot=5)),
    "calibration_under_attack_check": Entry(lambda m, x, y: certcal.calibration_under_attack_check(
        m, x, y, eps=0.1, steps=1, n_boot=5)),
    "adversarial_calibration_training": Entry(lambda m, x, y: certcal.adversarial_calibration_training(
        m, x, y, method="smoothadv", epochs=1, batch_size=4, num_noise=1, attack_steps=1)),
    "gaussian_noise_training": Entry(lambda m, x, y: certcal.gaussian_noise_training(m, x, y, epochs=1, batch_size=4)),
    "act_comparison": Entry(_act, x_name="x_train", y_name="y_train"),
    "experiment": Entry(_experiment, x_name="data.test.x", y_name="data.test.y"),
    "overview": Entry(_overview, x_name="data.split.x", y_name="data.split.y"),
}


def _cert() -> certcal.CertifyResult:
    return certcal.certify(Net(), images(), sigma=0.25, n0=5, n=20, batch_size=64, return_scores=True)


#: entry points that take data but no model: (call on good arguments, {argument: bad values})
LO, UP = Z - 0.1, Z + 0.1
DATA_ENTRIES: dict[str, tuple[Callable[..., Any], dict[str, Any], dict[str, dict[str, Any]]]] = {
    "expected_calibration_error": confidence_entry(certcal.expected_calibration_error),
    "adaptive_calibration_error": confidence_entry(certcal.adaptive_calibration_error),
    "brier_score": confidence_entry(certcal.brier_score),
    "reliability_diagram": confidence_entry(certcal.reliability_diagram),
    "calibration_error": confidence_entry(lambda **kw: certcal.calibration_error(**kw, n_boot=20)),
    "bin_index": (certcal.bin_index, {"confidences": Z}, {"confidences": {"nan": [np.nan], "negative": [-0.5]}}),
    "certified_brier_score": (certcal.certified_brier_score, {"lower": LO, "upper": UP, "correct": C},
                              {"lower": {**BAD_CONF, "above_upper": [0.95, 0.55, 0.25, 0.95]},
                               "correct": BAD_CORRECT}),
    "certified_calibration_error": (certcal.certified_calibration_error, {"lower": LO, "upper": UP, "correct": C},
                                    {"upper": BAD_CONF, "correct": BAD_CORRECT}),
    "brier_confidences": (certcal.brier_confidences, {"lower": LO, "upper": UP, "correct": C},
                          {"lower": BAD_CONF, "correct": BAD_CORRECT}),
    "confidence_bounds": (lambda **kw: certcal.confidence_bounds(sigma=0.25, **kw), {"scores": np.full((2, 5), 0.7)},
                          {"scores": {"nan": np.full((2, 5), np.nan), "above_one": np.full((2, 5), 1.5),
                                      "empty": np.zeros((0, 5)), "one_dimensional": np.full(5, 0.7)}}),
    "clopper_pearson_lower": (lambda **kw: certcal.clopper_pearson_lower(trials=10, alpha=0.001, **kw),
                              {"successes": [3, 10]}, {"successes": {"above_trials": [11], "negative": [-1],
                                                                     "fractional": [2.5]}}),
    "certified_calibration_curve": (lambda **kw: certcal.certified_calibration_curve(_cert(), radii=[0.0], **kw),
                                    {"labels": labels().numpy()}, {"labels": {
                                        **{k: v.numpy() for k, v in bad_labels(N, K).items()}}}),
    "common_set_curve": (lambda **kw: certcal.common_set_curve(_cert(), radii=[0.0], n_boot=5, **kw),
                         {"labels": labels().numpy()}, {"labels": {
                             **{k: v.numpy() for k, v in bad_labels(N, K).items()}}}),
    "certificate_widths": (lambda **kw: certcal.certificate_widths(_cert(), **kw), {"radii": [0.0, 0.1]},
                           {"radii": {"negative": [-0.1], "nan": [float("nan")], "empty": []}}),
    "CertifyResult": (lambda **kw: _cert().certified_accuracy(**kw), {"labels": labels(), "radius": 0.0},
                      {"labels": bad_labels(N, K), "radius": {"negative": -1.0, "nan": float("nan")}}),
}

#: public names that take neither a model nor data: constants, configurations, result types, grids of numbers
NO_MODEL_OR_DATA = {
    "ACE_CONFIGURATIONS", "ACT_GRID_KEYS", "ACT_METHODS", "ACTComparisonConfig", "BOUND_METHODS", "CCE_METHODS", "NOISE_BLOCK",
    "NOISE_STREAMS", "TRAINING_METHODS", "__version__", "ADMMConfig", "DECEConfig", "admm_grid", "bin_edges",
    "max_certifiable_radius", "ACEBenchmark", "ACEBenchmarkRow", "ACEResult", "ACTComparison", "ACTModel", "ACTRow",
    "ACTVerdict", "ACTWeights", "CCEResult", "CalibrationError", "CertificateWidths", "CertifiedCalibrationCurve",
    "CommonSetCurve", "ConfidenceBounds", "PredictResult", "RadiusRow", "ReliabilityDiagram", "TrainingResult",
}


def _fingerprint(out: Any) -> Any:
    if isinstance(out, certcal.TrainingResult):
        return [round(float(p.detach().double().sum()), 10) for p in out.model.parameters()]
    if isinstance(out, tuple):
        return [None if a is None else np.asarray(a).tolist() for a in out]
    if hasattr(out, "to_dict"):
        d = out.to_dict()
        return {k: v for k, v in d.items() if k not in ("config",)}
    return out


CONTRACT = vision_contract_tests(
    certcal.__all__, MODEL_ENTRIES, DATA_ENTRIES, NO_MODEL_OR_DATA, net=Net, images=images, labels=labels, n_classes=K,
    fingerprint=_fingerprint, x_named=lambda name, entry, message: entry.x_name in message or (
        name == "experiment" and "data.t" in message),
    y_named=lambda name, entry, message: entry.y_name.split(".")[-1] in message)
test_every_public_name_is_in_the_catalogue = CONTRACT.catalogue
test_bad_images_refused_before_any_forward_pass = CONTRACT.bad_images
test_bad_labels_refused_before_the_work = CONTRACT.bad_labels
test_model_comes_back_unchanged_and_every_output_form_gives_the_same_result = CONTRACT.output_forms


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
def test_float64_and_half_images_are_cast_not_refused(dtype):
    x = images()
    ref = certcal.certify(Net(), x, sigma=0.25, n0=5, n=20, batch_size=64, return_scores=True)
    got = certcal.certify(Net(), x.to(dtype), sigma=0.25, n0=5, n=20, batch_size=64, return_scores=True)
    if dtype == torch.float64:  # the same float32 pixels after the cast: the same certificate
        assert np.array_equal(got.counts, ref.counts) and np.array_equal(got.scores, ref.scores)
    assert got.counts.sum() == N * 20


def test_a_one_output_model_is_refused():
    class One(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 1)

        def forward(self, x):
            return self.lin(x.flatten(1))

    for fn in (lambda m: certcal.certify(m, images(), sigma=0.25, n0=5, n=10),
               lambda m: certcal.predict(m, images(), sigma=0.25, n=10)):
        model = CountingModel(One())
        with pytest.raises(ValueError, match="at least 2 classes"):
            fn(model)
        assert model.calls == 1


def test_probabilities_are_refused_unless_declared():
    class Softmax(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Net()

        def forward(self, x):
            return torch.softmax(self.inner(x), 1)

    with pytest.raises(ValueError, match="probabilities"):
        certcal.certify(Softmax(), images(), sigma=0.25, n0=5, n=10)
    declared = certcal.certify(Softmax(), images(), sigma=0.25, n0=5, n=10, outputs="probabilities")
    plain = certcal.certify(Net(), images(), sigma=0.25, n0=5, n=10)
    assert np.array_equal(declared.counts, plain.counts)  # log p gives the same argmax as the logits


@pytest.mark.parametrize("name", sorted(DATA_ENTRIES))
def test_bad_data_refused_naming_the_argument(name):
    fn, good, bad = DATA_ENTRIES[name]
    fn(**good)  # the good call works
    for arg, cases in bad.items():
        for case, value in cases.items():
            with pytest.raises((ValueError, TypeError)) as err:
                fn(**{**good, arg: value})
            assert arg in str(err.value), (name, arg, case, str(err.value))


def test_experiment_refuses_wrong_input_types_and_mismatched_models():
    x, y = images(), labels()
    with pytest.raises(TypeError, match="models"):
        experiment.run({"base": Net()}, experiment.Data(Split(x, y), Split(x, y)), experiment.preset("demo"))
    with pytest.raises(TypeError, match="config"):
        experiment.run(experiment.Models(Net()), experiment.Data(Split(x, y), Split(x, y)), {"seed": 0})
    with pytest.raises(TypeError, match="models.base"):
        experiment.Models(base="builtin:fashion-cnn")
    with pytest.raises(ValueError, match="models.noise keys"):
        experiment.Models(base=Net(), noise={-0.25: Net()})

    class Wide(torch.nn.Module):  # expects 28x28 images
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(784, K)

        def forward(self, z):
            return self.lin(z.flatten(1))

    with pytest.raises(ValueError, match=r"models.base cannot take data.test.x of shape \(1, 8, 8\)"):
        _experiment(Wide(), x, y)
