"""The model contract (output forms, untouched models) and the argument checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from robustsuite_common.checks import (
    check_choice,
    check_float,
    check_images,
    check_int,
    check_labels,
    check_same_length,
    check_texts,
)
from robustsuite_common.models import (
    ModelOutputError,
    as_model_input,
    evaluating,
    forward_logits,
    logits_from,
    looks_like_probabilities,
)
from robustsuite_common.testing import bad_images, bad_labels, bad_texts, output_forms, snapshot


def tiny() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(4))


@pytest.mark.parametrize("form", output_forms(), ids=lambda f: f.name)
def test_every_output_form_gives_the_same_logits(form):
    model = tiny().eval()
    x = torch.rand(5, 1, 6, 6)
    ref = model(x)
    assert torch.equal(logits_from(form.wrap(model)(x)), ref)
    torch.testing.assert_close(forward_logits(form.wrap(model), x, batch_size=2), ref.detach())


def test_probabilities_are_refused_unless_declared():
    p = torch.softmax(torch.randn(6, 4), 1)
    assert looks_like_probabilities(p) and not looks_like_probabilities(torch.randn(6, 4))
    with pytest.raises(ModelOutputError, match="probabilities"):
        logits_from(p)
    z = logits_from(p, outputs="probabilities")
    assert torch.allclose(torch.softmax(z, 1), p, atol=1e-6)
    with pytest.raises(ValueError, match="outputs must be one of"):
        logits_from(p, outputs="probs")
    with pytest.raises(ModelOutputError, match="shape"):
        logits_from(torch.zeros(3))
    with pytest.raises(ModelOutputError, match="rows"):
        logits_from(torch.zeros(3, 2), n=4)
    with pytest.raises(ModelOutputError, match="got str"):
        logits_from("logits")


def test_evaluating_gives_the_model_back_untouched_even_on_error():
    model = tiny()
    model(torch.rand(4, 1, 6, 6))  # materialise the lazy layer
    model.train()
    model[0].weight.requires_grad_(False)
    before = snapshot(model)
    with pytest.raises(RuntimeError, match="boom"), evaluating(model, freeze_parameters=True):
        assert not model.training and not any(p.requires_grad for p in model.parameters())
        model.train()
        model(torch.rand(8, 1, 6, 6) * 5)  # would move BatchNorm's running statistics
        raise RuntimeError("boom")
    before.assert_same(model)
    with pytest.raises(AssertionError, match="running_mean"):
        model(torch.rand(8, 1, 6, 6) * 5)  # train mode: statistics move
        before.assert_same(model)


def test_as_model_input_casts_to_the_model_dtype():
    model = tiny()
    model(torch.rand(1, 1, 6, 6))
    assert as_model_input(model, torch.rand(2, 1, 6, 6, dtype=torch.float64)).dtype == torch.float32
    assert as_model_input(model.double(), torch.rand(2, 1, 6, 6).half()).dtype == torch.float64


@pytest.mark.parametrize("case", list(bad_images()))
def test_check_images_refuses_the_catalogue_naming_the_argument(case):
    with pytest.raises((ValueError, TypeError), match="^x_adv"):
        check_images("x_adv", bad_images()[case])


def test_check_images_accepts_good_and_non_contiguous():
    x = torch.rand(4, 1, 8, 8)
    assert check_images("x", x) is x
    check_images("x", x.transpose(2, 3))
    check_images("x", x * 2 - 1, low=-1, high=1)


@pytest.mark.parametrize("case", list(bad_labels(4, 3)))
def test_check_labels_refuses_the_catalogue(case):
    with pytest.raises((ValueError, TypeError), match="^y"):
        check_labels("y", bad_labels(4, 3)[case], n_classes=3, length=4)


@pytest.mark.parametrize("case", list(bad_texts()))
def test_check_texts_refuses_the_catalogue(case):
    with pytest.raises((ValueError, TypeError), match="^texts"):
        check_texts("texts", bad_texts()[case])


def test_scalar_checks_name_the_argument():
    assert check_choice("norm", "Linf", ("Linf", "L2")) == "Linf"
    with pytest.raises(ValueError, match=r"^norm must be one of \['Linf', 'L2'\], got 'l3'"):
        check_choice("norm", "l3", ("Linf", "L2"))
    with pytest.raises(ValueError, match="^norm"):
        check_choice("norm", ["unhashable"], {"Linf"})
    for bad in (True, 1.0, "3"):
        with pytest.raises(TypeError, match="^steps"):
            check_int("steps", bad)
    with pytest.raises(ValueError, match="^steps must be >= 1"):
        check_int("steps", 0, ge=1)
    for bad, match in ((float("inf"), "finite"), (float("nan"), "finite"), (-2.0, "> 0"), ("1", "number")):
        with pytest.raises((ValueError, TypeError), match=f"^temperature.*{match}"):
            check_float("temperature", bad, gt=0)
    assert check_float("T", 1e7, gt=0) == 1e7
    assert check_float("eps", np.float32(0.5), ge=0, le=1) == 0.5
    with pytest.raises(ValueError, match="x has 2, y has 3"):
        check_same_length(x=[1, 2], y=[1, 2, 3])


def test_a_model_declared_to_output_probabilities_is_seen_through_log():
    """``as_logits_model``: the same softmax as the model's probabilities, for modules and plain callables alike;
    a module stays a module (and pickles), a callable keeps its other attributes."""
    import pickle

    from robustsuite_common.models import LogProbabilities, LogProbabilityModule, as_logits_model

    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(36, 4), nn.Softmax(dim=1)).eval()
    x = torch.rand(5, 1, 6, 6)
    wrapped = as_logits_model(net)
    assert isinstance(wrapped, LogProbabilityModule) and isinstance(wrapped, nn.Module)
    with torch.no_grad():
        torch.testing.assert_close(torch.softmax(wrapped(x), 1), net(x))
        torch.testing.assert_close(pickle.loads(pickle.dumps(wrapped))(x), wrapped(x))

    class Probs:
        num_classes = 4

        def __call__(self, texts):
            return torch.softmax(torch.arange(4.0) * len(texts[0]), 0).expand(len(texts), 4).numpy()

    texts = ["a", "bb", "cccccccccccccccccccccccccccccc"]
    text_model = as_logits_model(Probs())
    assert isinstance(text_model, LogProbabilities) and text_model.num_classes == 4
    z = text_model(texts)
    assert np.isfinite(z).all()  # a probability that underflows to 0 is clipped, not log(0)
    np.testing.assert_allclose(torch.softmax(torch.as_tensor(z), 1).numpy(), Probs()(texts), atol=1e-6)


def test_probabilities_refused_on_one_row_and_as_numpy():
    """Issue 36: one row is enough to refuse probabilities (a method seeing one input at a time), and numpy
    arrays (text classifiers' outputs, logits passed as data) go through the same check."""
    from robustsuite_common.models import refuse_probabilities, text_logits

    p = torch.softmax(torch.randn(1, 3, generator=torch.Generator().manual_seed(0)), 1)
    with pytest.raises(ModelOutputError, match="probabilities"):
        logits_from(p)
    with pytest.raises(ModelOutputError, match="^scores look like probabilities"):
        refuse_probabilities("scores", p.numpy())
    assert refuse_probabilities("scores", p.log().numpy()) is not None
    with pytest.raises(ModelOutputError, match="probabilities"):
        text_logits(lambda t: p.numpy().repeat(len(t), 0), ["a"])
    with pytest.raises(ModelOutputError, match="2 rows of logits for a batch of 1"):
        text_logits(lambda t: p.log().numpy().repeat(2, 0), ["a", "b"], batch_size=1)
    z = text_logits(lambda t: p.numpy().repeat(len(t), 0), ["a", "b"], outputs="probabilities")
    np.testing.assert_allclose(np.exp(z), p.numpy().repeat(2, 0).astype(np.float64), rtol=1e-6)


def test_texts_with_lone_surrogates_are_refused_naming_the_item():
    assert check_texts("texts", ["fine", "café ☕"]) == ["fine", "café ☕"]
    with pytest.raises(ValueError, match=r"^texts\[1\] is not valid Unicode text: a lone surrogate '\\ud800'"):
        check_texts("texts", ["fine", "bad \ud800 text"])
