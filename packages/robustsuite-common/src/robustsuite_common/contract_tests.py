"""The input-contract tests (issue 25 item 7) of a package whose entry points take a vision model, images and labels,
written once: :func:`vision_contract_tests` builds the parametrised tests a package's ``tests/test_contract.py``
assigns to ``test_…`` names, from its catalogue of :class:`Entry` (how to call each public entry point).

Each entry must refuse every bad image batch (:func:`robustsuite_common.testing.bad_images`) and label vector
(:func:`~robustsuite_common.testing.bad_labels`) with a ``ValueError``/``TypeError`` naming the argument before any
forward pass (labels beyond the model's classes: after the one pass that reads the class count), give the caller's
model back unchanged, and give one result for every model output form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from .testing import CountingModel, bad_images, bad_labels, output_forms, refusal, snapshot

__all__ = ["Entry", "bn_cnn", "catalogue_problems", "results_across_output_forms", "vision_contract_tests",
           "CONFIDENCES", "CORRECT", "BAD_CONFIDENCES", "BAD_CORRECT", "confidence_entry"]

#: good top-label confidences and 0/1 correctness for the entry points that take data, not a model (ECE, Brier,
#: reliability diagrams), and named bad values of each
CONFIDENCES, CORRECT = np.array([0.9, 0.6, 0.3, 0.8]), np.array([1, 0, 0, 1])
BAD_CONFIDENCES = {"nan": [np.nan, 0.5, 0.5, 0.5], "above_one": [1.5, 0.5, 0.5, 0.5], "wrong_length": [0.5, 0.5]}
BAD_CORRECT = {"not_binary": [2, 0, 1, 1], "wrong_length": [1, 0]}


def confidence_entry(fn: Callable[..., Any]) -> tuple[Callable[..., Any], dict[str, Any], dict[str, dict[str, Any]]]:
    """A data entry of a contract catalogue for ``fn(confidences=…, correct=…)``: ``(fn, good arguments, {argument:
    named bad values})`` with :data:`CONFIDENCES`, :data:`CORRECT` and their bad values."""
    return fn, {"confidences": CONFIDENCES, "correct": CORRECT}, {"confidences": BAD_CONFIDENCES,
                                                                   "correct": BAD_CORRECT}


@dataclass(frozen=True)
class Entry:
    """How a contract test calls one public entry point: ``call(model, x, y)``; the names its errors use for x and y."""

    call: Callable[[Any, Any, Any], Any]
    x_name: str = "x"
    y_name: str | None = "y"


def bn_cnn(n_classes: int, *, seed: int = 0, weights: str = "default") -> Any:
    """A tiny vision model on ``(N, 1, 8, 8)`` images with BatchNorm and Dropout (so a model evaluated in train mode
    would change): ``conv`` 1->3 channels, ``bn``, ReLU, ``drop`` (p = 0.5), ``head`` to ``n_classes`` logits.
    ``weights="default"``: PyTorch's initialisation after ``torch.manual_seed(seed)``; ``"normal"``: PyTorch's
    initialisation (from the global generator as it stands), then every parameter drawn N(0, 0.5^2) and the
    BatchNorm running mean N(0, 0.1^2) from a generator seeded with ``seed``."""
    if weights not in ("default", "normal"):
        raise ValueError(f"weights must be 'default' or 'normal', got {weights!r}")
    import torch

    class BNCNN(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            if weights == "default":
                torch.manual_seed(seed)
            self.conv = torch.nn.Conv2d(1, 3, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(3)
            self.drop = torch.nn.Dropout(0.5)
            self.head = torch.nn.Linear(3 * 8 * 8, n_classes)
            if weights == "normal":
                g = torch.Generator().manual_seed(seed)
                with torch.no_grad():
                    for p in self.parameters():
                        p.copy_(torch.randn(p.shape, generator=g) * 0.5)
                    mean: Any = self.bn.running_mean  # a buffer BatchNorm always has (track_running_stats)
                    mean.copy_(torch.randn(3, generator=g) * 0.1)

        def forward(self, x: Any) -> Any:
            return self.head(self.drop(torch.relu(self.bn(self.conv(x))).flatten(1)))

    return BNCNN()


def catalogue_problems(public: Any, *catalogues: Any) -> list[str]:
    """The public names that no catalogue of a contract test covers, and the entries that are not public."""
    covered = set().union(*(set(c) for c in catalogues))
    problems = [f"public names without an input-contract entry: {sorted(set(public) - covered)}"]
    problems += [f"catalogue entries that are not public: {sorted(covered - set(public))}"]
    return [p for p, bad in zip(problems, (set(public) - covered, covered - set(public)), strict=True) if bad]


def results_across_output_forms(call: Callable[[Any], Any], make_model: Callable[[], Any],
                                fingerprint: Callable[[Any], Any]) -> list[Any]:
    """``fingerprint(call(model))`` for ``model`` = ``make_model()`` wrapped in each of :func:`output_forms`,
    asserting that each model comes back unchanged (its :func:`snapshot`); a caller asserts the results equal."""
    results = []
    for form in output_forms():
        model = form.wrap(make_model())
        before = snapshot(model)
        out = call(model)
        before.assert_same(model)
        results.append(fingerprint(out))
    return results


def vision_contract_tests(public: Any, entries: dict[str, Entry], *others: Any, net: Callable[[], Any],
                          images: Callable[[], Any], labels: Callable[[], Any], n_classes: int,
                          fingerprint: Callable[[Any], Any],
                          x_named: Callable[[str, Entry, str], bool] | None = None,
                          y_named: Callable[[str, Entry, str], bool] | None = None) -> SimpleNamespace:
    """The contract tests of a package: ``public`` its ``__all__``, ``entries`` (name -> :class:`Entry`) the entry
    points that take a model, ``others`` the other catalogues that cover its remaining public names; ``net()`` a
    fresh model of ``n_classes`` classes with BatchNorm and a ``conv`` layer, ``images()`` / ``labels()`` the
    good batch. ``x_named(name, entry, message)`` / ``y_named`` say whether a refusal names the argument
    (default: ``entry.x_name`` / ``entry.y_name`` in the message). Returns the tests ``catalogue``, ``bad_images``, ``bad_labels`` and
    ``output_forms``, to be assigned to ``test_…`` names of the package's test module."""
    import pytest

    x_named = x_named or (lambda name, entry, message: entry.x_name in message)
    y_named = y_named or (lambda name, entry, message: str(entry.y_name) in message)  # only entries with y
    n, shape = len(labels()), tuple(images().shape)

    def catalogue() -> None:
        assert catalogue_problems(public, entries, *others) == []

    @pytest.mark.parametrize("case", sorted(bad_images(shape)))
    @pytest.mark.parametrize("name", sorted(entries))
    def bad_image_batches(name: str, case: str) -> None:
        entry, x = entries[name], bad_images(shape)[case]
        model = CountingModel(net())
        model.train()
        message = refusal(lambda m: entry.call(m, x, labels()), model)
        assert x_named(name, entry, message), message
        if case == "range_0_255":
            assert "got values in [" in message  # the observed range is named
        if case == "no_batch_dim":
            assert "(N, C, H, W)" in message

    @pytest.mark.parametrize("case", sorted(bad_labels(n, n_classes)))
    @pytest.mark.parametrize("name", sorted(k for k, e in entries.items() if e.y_name is not None))
    def bad_label_vectors(name: str, case: str) -> None:
        entry, y = entries[name], bad_labels(n, n_classes)[case]
        # labels beyond the model's classes need the class count: at most the one probe pass that reads it
        message = refusal(lambda m: entry.call(m, images(), y), CountingModel(net()),
                          max_calls=1 if case == "out_of_range" else 0)
        assert y_named(name, entry, message), message

    def callers_net() -> Any:
        model = net()
        model.train()  # a caller's model in train mode, with a frozen layer
        model.conv.weight.requires_grad_(False)
        return model

    @pytest.mark.parametrize("name", sorted(entries))
    def every_output_form(name: str) -> None:
        entry = entries[name]
        results = results_across_output_forms(lambda m: entry.call(m, images(), labels()), callers_net, fingerprint)
        assert all(r == results[0] for r in results), name

    return SimpleNamespace(catalogue=catalogue, bad_images=bad_image_batches, bad_labels=bad_label_vectors,
                           output_forms=every_output_form)
