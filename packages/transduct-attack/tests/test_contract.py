"""The input contract (issue 25) over every public name of ``transduct_attack.__all__`` that takes a model or
data: bad images, bad labels and models of every output form; the model comes back as it came.

Each entry of ``CATALOGUE`` calls one entry point with ``(model, x, y)`` and names the arguments the images and
the labels go to. A public name that takes a model or data and has no entry (nor a reason in ``EXEMPT``) fails
``test_every_public_name_is_covered``.
"""

from __future__ import annotations

import re

import pytest
import torch

import transduct_attack as ta
from robustsuite_common.testing import CountingModel, bad_images, bad_labels, output_forms, refusal, snapshot
from transduct_attack.networks import SmallCNN, build

K, N = 4, 4  # classes (AutoAttack's standard version needs 4), points per batch


def _model() -> torch.nn.Module:
    return build(lambda: SmallCNN(in_channels=1, n_classes=K, image_size=8, width=4, hidden=8),
                 torch.Generator().manual_seed(0))


def _data(n: int = N, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 8, 8, generator=g), torch.arange(n) % K


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def _train():
    return _data(16, seed=2)


def _game(attack):
    def call(m, x, y):
        return ta.play_game(attack, ta.StaticDefense(m), x, y, eps=0.05, batch_size=2)

    return call


def _attack(attack):
    def call(m, x, y):
        return attack(x, y, eps=0.05, defense=ta.StaticDefense(m), generator=_gen())

    return call


PGD1 = ta.PGD(steps=1)


def _dent_table():
    """A Table 2 of another copy of the model (its games are not the call under test)."""
    return ta.dent_table(_model(), *_data(), eps=0.05, n=2, batch_size=2, T=0, pgd_steps=1, n_untargeted=1,
                         n_targeted=0)
# name -> (call(model, x, y), the images' argument name, the labels' argument name or None)
CATALOGUE = {
    "play_game": (_game(ta.NoAttack()), "x", "y"),
    "NoAttack": (_attack(ta.NoAttack()), "x", "y"),
    "TransferPGD": (_attack(ta.TransferPGD(solver=PGD1)), "x", "y"),
    "TransferAutoAttack": (_attack(ta.TransferAutoAttack(version="custom", attacks=["apgd-ce"], n_iter=2)), "x", "y"),
    "AdaptiveAutoAttack": (lambda m, x, y: ta.AdaptiveAutoAttack(version="custom", attacks=["apgd-ce"], n_iter=2)(
        x, y, eps=0.05, defense=ta.DENT(m, steps=1), generator=_gen()), "x", "y"),
    "FPA": (_attack(ta.FPA(T=1, solver=PGD1)), "x", "y"),
    "GMSA": (_attack(ta.GMSA(mode="min", T=1, solver=PGD1)), "x", "y"),
    "PGD": (lambda m, x, y: PGD1.run([m], x, y, eps=0.05, generator=_gen()), "x", "y"),
    "PGDEnsemble": (lambda m, x, y: ta.PGDEnsemble(steps=1, n_untargeted=1, n_targeted=1).run(
        [m], x, y, eps=0.05, generator=_gen()), "x", "y"),
    "robust_accuracy": (lambda m, x, y: ta.robust_accuracy(m, x, y, eps=0.05, attack="pgd", pgd_steps=1), "x", "y"),
    "StaticDefense": (lambda m, x, y: ta.StaticDefense(m).adapt(x, state=None, generator=_gen()).predict(x), "x",
                      None),
    "RMC": (lambda m, x, y: ta.RMC(m, x, y, k=4, aug_steps=1, aug_eps=0.05, max_epochs=1, patience=1,
                                   calibration_k=4).adapt(_data()[0], state=None, generator=_gen()), "train_x",
            "train_y"),
    "DENT": (lambda m, x, y: ta.DENT(m, steps=1).adapt(x, state=None, generator=_gen()).predict(x), "x", None),
    "DANN": (lambda m, x, y: ta.DANN(x, y, base_model=m, epochs=1, batch_size=4).adapt(
        _data()[0], state=None, generator=_gen()), "train_x", "train_y"),
    "TADV": (lambda m, x, y: ta.TADV(x, y, base_model=m, eps=0.05, epochs=1, batch_size=4, adv_steps=1).adapt(
        _data()[0], state=None, generator=_gen()), "train_x", "train_y"),
    "URejectron": (lambda m, x, y: ta.URejectron(m, x, epochs=1, batch_size=4).adapt(
        _data()[0], state=None, generator=_gen()), "train_x", None),
    "rejection_curve": (lambda m, x, y: ta.rejection_curve(ta.NoAttack(), ta.URejectron(m, _train()[0], epochs=1),
                                                           x, y, eps=0.05, thresholds=[0.5]), "x", "y"),
    "repeat_game": (lambda m, x, y: ta.repeat_game(ta.NoAttack(), lambda s: ta.StaticDefense(m), x, y, eps=0.05,
                                                   n=2, batch_size=2, seeds=[0]), "x", "y"),
    "score_round": (lambda m, x, y: ta.score_round(ta.Adaptation(model=m), x, y), "x_adv", "y"),
    "Adaptation": (lambda m, x, y: ta.Adaptation(model=m).predict(x), None, None),
    "label_order": (lambda m, x, y: ta.label_order(x, y), "x", "y"),
    "train_classifier": (lambda m, x, y: ta.train_classifier(m, x, y, epochs=1, generator=_gen()), "x", "y"),
    "defense_table": (lambda m, x, y: ta.defense_table(ta.StaticDefense(m), {"none": ta.NoAttack()}, x, y,
                                                       eps=0.05, n=2, batch_size=2, static_model=m,
                                                       static_attacks=["none"]), "x", "y"),
    "rmc_table": (lambda m, x, y: ta.rmc_table(m, *_train(), x, y, config=ta.RMCTableConfig(
        eps=0.05, n=2, batch_size=1, k=4, epochs=1, patience=1, T=0, pgd_steps=1, attacks=("none",))), "x_test", "y_test"),
    "dann_table": (lambda m, x, y: ta.dann_table(m, *_train(), x, y, eps=0.05, n=2, epochs=1, T=0, pgd_steps=1),
                   "x_test", "y_test"),
    "tadv_table": (lambda m, x, y: ta.tadv_table(*_train(), x, y, eps=0.05, n=2, epochs=1, adv_steps=1, T=0,
                                                 pgd_steps=1), "x_test", "y_test"),
    "dent_base_model": (lambda m, x, y: ta.dent_base_model(x, y, eps=0.05, epochs=1, adv_steps=1), "x_train",
                        "y_train"),
    "dent_table": (lambda m, x, y: ta.dent_table(m, x, y, eps=0.05, n=2, batch_size=2, T=0, pgd_steps=1,
                                                 n_untargeted=1, n_targeted=0), "x_test", "y_test"),
    "dent_adaptation": (lambda m, x, y: ta.dent_adaptation(ta.DENT(m, steps=1), _dent_table(), x), "x_test", None),
    "transductive_gain_check": (lambda m, x, y: ta.transductive_gain_check(
        ta.DENT(m, steps=1), x, y, eps=0.05, T=1, pgd_steps=1, n_untargeted=1, n_targeted=0, base_attack="pgd",
        n_boot=100), "x", "y"),
    "cw_l2": (lambda m, x, y: ta.cw_l2(m, x, y, steps=2, binary_search_steps=2), "x", "y"),
    "corrupt": (lambda m, x, y: ta.corrupt(x, kind="contrast", severity=2), "x", None),
    "perturbed_rejection_curve": (lambda m, x, y: ta.perturbed_rejection_curve(
        lambda a, b, g: ta.cw_l2(m, a, b, steps=1), ta.URejectron(m, _train()[0], epochs=1), x, y, thresholds=[0.5],
        name="cw"), "x", "y"),
    "urejectron_figure": (lambda m, x, y: ta.urejectron_figure(m, _train()[0], x, y, eps=0.05, n=2, epochs=1,
                                                               thresholds=[0.5], T=0, pgd_steps=1), "x_test", "y_test"),
}
EXEMPT = {
    "__version__": "a string",
    "ThreatModel": "rules of a game, no model or data", "TransductiveDefense": "abstract base class",
    "Attack": "abstract base class", "AttackResult": "a result record", "RoundScore": "a result record",
    "GameResult": "a result record", "RoundRecord": "a result record", "SeededResult": "a result record",
    "RejectionCurve": "a result record", "RobustAccuracy": "a result record", "TableCell": "a result record",
    "SeedSummary": "a result record", "Comparison": "a result record", "DefenseTable": "a result record",
    "DentAdaptation": "a result record", "URejectronFigure": "a result record",
    "RMCTableConfig": "a recipe record (rmc_table's config)",
    "experiment": "a module: its run checks its own inputs (test_experiment)",
    "MODEL_SPACE_ATTACKS": "a constant", "ROBUST_ATTACKS": "a constant", "merge_games": "takes GameResults",
    "game_keys": "takes counts", "draw_points": "takes counts", "attack_suite": "takes hyper-parameters",
    "cross_entropy": "a loss on logits the callers (PGD, the attacks) checked",
    "cw_untargeted": "a loss on logits the callers checked", "cw_targeted": "a loss on logits the callers checked",
    "max_wrong_probability": "a loss on logits the callers checked",
}
NEEDS_AA = {"TransferAutoAttack", "AdaptiveAutoAttack"}
MUTATES: dict[str, str] = {}  # train_classifier trains a copy since issue 36 (in_place=True opts in)
#: entry points without a model: the classes are read from the labels, so "out of range" does not exist
NO_CLASSES = {"label_order", "tadv_table", "dent_base_model"}


def test_every_public_name_is_covered():
    missing = [n for n in ta.__all__ if n not in CATALOGUE and n not in EXEMPT]
    assert not missing, f"public names without a contract entry: {missing}"
    assert not set(CATALOGUE) & set(EXEMPT)


def _skip_without_aa(name):
    if name in NEEDS_AA:
        pytest.importorskip("pyautoattack")


CASES = [(n, k) for n, (_, xn, _) in CATALOGUE.items() if xn is not None for k in bad_images((N, 1, 8, 8))]


@pytest.mark.parametrize("name,bad", CASES)
def test_bad_images_are_refused_by_name_before_any_forward_pass(name, bad):
    _skip_without_aa(name)
    call, xname, _ = CATALOGUE[name]
    x = bad_images((N, 1, 8, 8))[bad]
    _, y = _data()
    message = refusal(lambda m: call(m, x, y), CountingModel(_model()))
    assert re.search(rf"\b{xname}\b", message), message


LABEL_CASES = [(n, k) for n, (_, _, yn) in CATALOGUE.items() if yn is not None for k in bad_labels(N, K)
               if not (n in NO_CLASSES and k == "out_of_range")]


@pytest.mark.parametrize("name,bad", LABEL_CASES)
def test_bad_labels_are_refused_by_name_before_any_forward_pass(name, bad):
    _skip_without_aa(name)
    call, _, yname = CATALOGUE[name]
    x, _ = _train() if yname in ("train_y", "y_train") else _data()
    y = bad_labels(x.shape[0], K)[bad]
    # the class count is read from the model's output (one forward pass on one input), as certcal and uncspan do
    message = refusal(lambda m: call(m, x, y), CountingModel(_model()), max_calls=1 if bad == "out_of_range" else 0)
    assert re.search(rf"\b{yname}\b", message), message


@pytest.mark.parametrize("form", [f.name for f in output_forms()])
@pytest.mark.parametrize("name", list(CATALOGUE))
def test_every_output_form_runs_and_the_model_comes_back_as_it_came(name, form):
    """A model returning a tuple, a dict with logits or a ModelOutput runs like one returning logits; a model
    given in train mode comes back in train mode with its BatchNorm statistics untouched."""
    _skip_without_aa(name)
    call, _, yname = CATALOGUE[name]
    wrap = next(f.wrap for f in output_forms() if f.name == form)
    model = wrap(_model()).train()
    before = snapshot(model)
    x, y = _train() if yname in ("train_y", "y_train") else _data()
    call(model, x, y)
    if name in MUTATES:  # its weights are trained by contract
        return
    before.assert_same(model)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
@pytest.mark.parametrize("name", ["play_game", "robust_accuracy", "PGD", "rmc_table", "DENT", "TransferPGD"])
def test_float64_and_half_inputs_are_cast_to_the_models_dtype(name, dtype):
    call, _, yname = CATALOGUE[name]
    x, y = _data()
    ref = call(_model(), x, y)
    out = call(_model(), x.to(dtype), y)
    if isinstance(ref, torch.Tensor) and ref.is_floating_point():
        assert out.dtype == torch.float32 and torch.allclose(out, ref, atol=2e-3 if dtype == torch.float16 else 1e-6)
    elif hasattr(ref, "accuracy"):
        assert abs(out.accuracy - ref.accuracy) <= (0.5 if dtype == torch.float16 else 0.0)


def test_out_of_range_labels_are_refused_naming_y_and_the_classes():
    """Issue 25: NoAttack with labels out of range used to score 0.0."""
    model = CountingModel(_model())
    x, _ = _data()
    with pytest.raises(ValueError, match=rf"\by\b.*{K} classes"):
        ta.play_game(ta.NoAttack(), ta.StaticDefense(model), x, torch.full((N,), 7), eps=0.05, batch_size=2)
    assert model.calls <= 1  # the class count is read from one forward pass on one input (issue 36)


def test_experiment_run_checks_models_data_and_config_first():
    from robustsuite_common.experiment import Split
    from transduct_attack import experiment as E

    model = CountingModel(_model())
    x, y = _data(8)
    good = E.Data(train=Split(x, y), test=Split(x, y))
    cfg = E.preset("demo")
    with pytest.raises(TypeError, match="models"):
        E.run({"standard": model}, good, cfg, progress=False)
    with pytest.raises(TypeError, match="models.adversarial"):
        E.run(E.Models(standard=model, adversarial="cnn"), good, cfg, progress=False)
    with pytest.raises(ValueError, match=r"data.test.x"):
        E.run(E.Models(model, model), E.Data(train=Split(x, y), test=Split(x * 255, y)), cfg, progress=False)
    with pytest.raises(ValueError, match=r"rmc.points"):  # labels out of range, but the cheap checks come first
        E.run(E.Models(model, model), E.Data(train=Split(x, y + 20), test=Split(x, y)), cfg, progress=False)
    with pytest.raises(ValueError, match=r"rmc.points"):
        E.run(E.Models(model, model), good, cfg, progress=False)  # the demo draws more points than 8
    with pytest.raises(TypeError, match="config"):
        E.run(E.Models(model, model), good, {"seed": 0}, progress=False)
    assert model.calls == 0
    # the class count is read from the model's output: one forward pass on one input, after every other check
    from robustsuite_common.config import override

    small = override(cfg, {g: {"points": 4, "train_points": 8} for g in ("rmc", "dann", "tadv", "dent", "urejectron")})
    with pytest.raises(ValueError, match=r"data.train.y"):
        E.run(E.Models(model, model), E.Data(train=Split(x, y + 20), test=Split(x, y)), small, progress=False)
    assert model.calls == 1
