"""The overview's typed configuration and its presets.

``demo`` is the umbrella's former overview parameters with AutoAttack on 100 images instead of 200; ``paper``
the conventions of the literature the numbers come from (``paper.json``): standard AutoAttack on the whole split
(RobustBench reports it on all 10,000 test images) and twice the resamples; ``paper-cpu`` what the ``paper-cpu``
benchmark runs (the demo's settings: AutoAttack on the first 100 images).
"""

from __future__ import annotations

from typing import Any, Literal

from robustsuite_common import contract
from robustsuite_common.config import Float, Int, config, param
from robustsuite_common.contract import choose_preset

__all__ = ["Config", "PRESETS", "paper_values", "preset"]


@config
class Config:
    """A model's calibration-and-robustness overview on one split: clean accuracy, calibration (15 equal-width bins
    by default), and standard AutoAttack robust accuracy for an adversarially trained model."""

    split: Literal["train", "val", "test"] = param("test", unit="choice", doc="split evaluated (data.split is it)")
    n_bins: Int = param(15, ge=1, unit="bins", doc="equal-width confidence bins of the ECE (equal-mass bins of the "
                        "adaptive ECE)", paper="Guo et al. 2017")
    n_boot: Int = param(1000, ge=100, unit="resamples", doc="bootstrap and null (consistency) resamples of the "
                        "calibration numbers", paper="Bröcker & Smith 2007")
    resample_seed: Int = param(0, ge=0, unit="", doc="seed of those resamples and of AutoAttack (fixed: the "
                               "overview does not depend on a run's seed)")
    robust_accuracy: Literal["auto", "always", "never"] = param(
        "auto", unit="choice", doc="AutoAttack robust accuracy: auto for adversarially trained models (eps given, or "
        "models.adversarial_eps known)")
    eps: Float = param(0.0, ge=0, unit="pixels in [0, 1] (norm as config.norm)", doc="AutoAttack's budget; 0: the ε "
                       "the model was adversarially trained at (models.adversarial_eps)")
    norm: Literal["Linf", "L2"] = param("Linf", unit="choice", doc="the threat model's norm")
    autoattack_n: Int = param(200, ge=0, unit="images", doc="first N images of the split attacked (0: all)")
    autoattack_batch: Int = param(100, ge=1, unit="images", doc="images per AutoAttack call = per checkpoint")
    autoattack_version: Literal["standard", "plus", "rand"] = param("standard", unit="choice",
                                                                     doc="AutoAttack version",
                                                                     paper="Croce & Hein 2020")
    indicators: bool = param(True, unit="", doc="after AutoAttack, the verdict's validity and attack-strength checks "
                             "on the same points (robustsuite_common.indicators: FGSM, PGD, an APGD-CE ε sweep, "
                             "doubled iterations, an unbounded attack, gradients, determinism)",
                             paper="Croce & Hein 2020; Carlini et al. 2019; Pintor et al. 2022")
    indicator_iterations: Int = param(20, ge=1, unit="iterations", doc="PGD steps and APGD-CE iterations of the "
                                      "indicators (doubled once for the more-iterations check)")
    claim: Float = param(0.0, ge=0, le=1, unit="fraction", doc="a claimed robust accuracy checked against "
                         "AutoAttack's Clopper-Pearson upper bound (0: no claim)")


PRESETS: dict[str, Config] = {
    # the umbrella demo: standard AutoAttack on the first 100 test images, one batch (issue 37: the former 200 took
    # about 10 of the demo's 26 minutes on 2 cores, mostly Square's 5,000 queries per robust image; the AT CNN's
    # robust accuracy keeps an interval well away from 0 and from its clean accuracy). The former sizes: the
    # `demo-full` benchmark; AutoAttack on the whole split: `paper`.
    "demo": Config(autoattack_n=100),
    # AutoAttack on every image of the split, as RobustBench evaluates; more resamples for the calibration numbers
    "paper": Config(n_boot=2000, autoattack_n=0, autoattack_version="standard"),
    # the paper-cpu benchmark: the demo's settings (standard AutoAttack on the first 100 test images)
    "paper-cpu": Config(autoattack_n=100),
}


def preset(name: str) -> Config:
    """The named preset (``ValueError`` listing the names)."""
    return choose_preset(PRESETS, name)


def paper_values() -> dict[str, Any]:
    """The settings the overview's numbers follow (standard AutoAttack, RobustBench's evaluation, the ECE's bins),
    ``paper.json`` beside it: the overview has no paper of its own."""
    return contract.paper_values("certcal.overview")
