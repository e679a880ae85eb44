"""A model's calibration-and-robustness overview on one split, as one call (the umbrella report's first section).

    from certcal import overview

    result = overview.run(overview.Models(model, name="my-cnn", adversarial_eps=8 / 255),
                          overview.Data(test_split, name="cifar10"), overview.preset("demo"), store=DirStore("ckpt"))
    result.metrics["ece_debiased"], result.tables["headline"], result.records["samples"][0]

- Clean accuracy with its Clopper-Pearson interval; a model whose interval contains the chance rate (the majority
  class's share) is flagged ``model_at_chance`` with a warning.
- Calibration (:func:`certcal.calibration_error`, ``n_bins`` equal-width bins): the plug-in ECE is biased upward (an
  average of absolute values of noisy gaps), so the result reports the **debiased ECE** (plug-in minus its mean
  under the perfectly calibrated null, labels drawn from the model's own confidences: consistency resampling,
  Bröcker & Smith 2007) with an interval that contains it, and the **calibration test**'s p-value (how often the
  null's plug-in ECE reaches the observed one); the adaptive ECE (equal-mass bins) and the Brier score with a BCa
  bootstrap interval.
- Robust accuracy, for an adversarially trained vision model (``config.eps``, or ``Models.adversarial_eps``):
  standard AutoAttack (:mod:`robustsuite_common.autoattack`, seeded, the version named in the metric) at that ε on
  the first ``autoattack_n`` images, in batches checkpointed in ``store`` (an interrupted run resumes), with its
  Clopper-Pearson interval, as the ``headline`` table. Without AutoAttack installed (``pip install
  'robustsuite-common[autoattack]'``) the result warns instead of failing.

Nothing depends on a run's seed (resampling and AutoAttack use ``config.resample_seed``): ``SEEDED = False``. Every
input gets a record in ``records["samples"]``: ``id``, ``input``, ``label``, ``prediction``, ``confidence``,
``correct`` and ``robust`` (``None`` where AutoAttack did not run). ``figures(result)`` draws the confidence
histogram beside the reliability diagram.
"""

from __future__ import annotations

from robustsuite_common.experiment import Split

from .config import PRESETS, Config, paper_values, preset
from .figures import figures
from .inputs import Data, Models
from .result import TITLE, Result
from .run import robust_accuracy, run

__all__ = ["Config", "Data", "Models", "PRESETS", "Result", "SEEDED", "Split", "TITLE", "figures", "paper_values",
           "preset", "robust_accuracy", "run"]

#: the result does not depend on a run's seed (its resamples and AutoAttack use ``config.resample_seed``)
SEEDED = False

