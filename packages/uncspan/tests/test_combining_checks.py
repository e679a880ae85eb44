"""Results combined by one function must share their budget (issue 36): a "paired" MUS difference of spans at
two budgets is refused, naming the field."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from uncspan import UncertaintySpan
from uncspan.analysis import mus_difference


def _span(eps: float, norm: str = "Linf") -> UncertaintySpan:
    rng = np.random.default_rng(0)
    h = rng.uniform(0, 1, 20)
    pred, conf = np.zeros(20, dtype=np.int64), np.full(20, 0.5)
    return UncertaintySpan(eps, norm, 5, "pgd", h, h * 0.5, h + 0.3, pred, pred, pred, conf, conf, conf)


@pytest.mark.parametrize(("b", "field"), [(_span(0.3), "eps"), (_span(0.01, "L2"), "norm")])
def test_mus_difference_refuses_spans_of_different_budgets(b, field):
    with pytest.raises(ValueError, match=rf"^span_b has {field}=.* but span_a has {field}="):
        mus_difference(_span(0.01), b, n_boot=50)


def test_mus_difference_of_spans_at_one_budget_is_paired():
    a = _span(0.01)
    b = dataclasses.replace(a, entropy_under=a.entropy_under + 0.1)
    d = mus_difference(b, a, n_boot=50)
    assert d.interval.estimate == pytest.approx(0.1)


def test_deep_ensemble_of_members_with_different_class_counts_names_the_member():
    import torch

    from uncspan import DeepEnsemble

    members = [torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, k)) for k in (3, 3, 5)]
    with pytest.raises(ValueError, match=r"^members\[2\] returns 5 classes but members\[0\] returns 3"):
        DeepEnsemble(members)(torch.rand(2, 1, 4, 4))


def test_known_classes_beyond_the_model_are_refused_by_name():
    import torch

    from uncspan import KnownClassesModel

    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 4))
    with pytest.raises(ValueError, match=r"^classes must be class indices below the model's 4 classes, got 7"):
        KnownClassesModel(model, [0, 7])(torch.rand(2, 1, 4, 4))
    assert KnownClassesModel(model, [1, 3])(torch.rand(2, 1, 4, 4)).shape == (2, 2)


def test_channels_last_images_are_refused_before_the_model_sees_them():
    import torch

    import uncspan

    calls = []
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 4))
    model.register_forward_pre_hook(lambda *a: calls.append(1))
    with pytest.raises(ValueError, match="channels last"):
        uncspan.uncertainty_span(model, torch.rand(3, 28, 28, 1), eps=0.01, steps=1)
    assert calls == []
