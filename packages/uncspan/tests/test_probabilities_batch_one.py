"""A softmax model is refused with ``batch_size=1`` as with larger batches (issue 36)."""

from __future__ import annotations

import pytest

import uncspan
from robustsuite_common.testing import assert_refuses_probabilities


@pytest.mark.parametrize("batch_size", [1, 4])
def test_uncertainty_span_refuses_a_softmax_model_at_any_batch_size(batch_size):
    assert_refuses_probabilities(lambda m, x: uncspan.uncertainty_span(m, x, eps=0.01, steps=1, batch_size=batch_size),
                                 n_inputs=4, n_classes=4)
