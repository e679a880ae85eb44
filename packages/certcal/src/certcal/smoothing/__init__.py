"""Gaussian randomized smoothing (Cohen et al. 2019; paper App. A.1): CERTIFY and PREDICT.

The smoothed classifier g(x) = argmax_k P(f(x + delta) = k), delta ~ N(0, sigma^2 I). Noise draws for many
inputs are flattened into one stream of (input, draw) pairs and evaluated ``batch_size`` at a time, so one
forward pass serves several inputs (or one input's many draws).

Where the noise comes from (``certify(..., stream=)``):

- ``"batch"`` (default): one generator seeded with ``seed`` feeds the whole call, so an input's noise depends
  on the inputs before it and on ``batch_size``.
- ``"per_input"``: input number ``first_index + i`` gets its own noise, drawn in blocks of
  :data:`NOISE_BLOCK` draws, each block from a generator seeded by ``SeedSequence([seed, index, phase,
  block])``, and every forward pass holds whole noise blocks of one input. An input's certificate then depends
  only on the seed, its global index, its pixels and ``batch_size``, never on the other inputs of the call:
  certifying a dataset in shards (``first_index`` = the shard's offset) and concatenating
  (:meth:`CertifyResult.concatenate`) equals certifying it in one call, bit for bit, which is what lets a long
  certification run as many independent tasks. (Its counts do not depend on ``batch_size`` either; its scores
  can differ in the last float bits, because a model's arithmetic can depend on the size of the batch.)

The modules: :mod:`.noise` (sampling), :mod:`.bounds` (the statistics), :mod:`.certificate` (CERTIFY),
:mod:`.prediction` (PREDICT).
"""

from .bounds import clopper_pearson_lower, max_certifiable_radius
from .certificate import CertifyResult, certify
from .noise import NOISE_BLOCK, NOISE_STREAMS, sample_counts
from .prediction import PredictResult, predict

__all__ = [
    "NOISE_BLOCK",
    "NOISE_STREAMS",
    "CertifyResult",
    "PredictResult",
    "certify",
    "clopper_pearson_lower",
    "max_certifiable_radius",
    "predict",
    "sample_counts",
]
