"""Overview section: a model's calibration and robustness on one split, computed by ``certcal.overview`` (clean
accuracy with the at-chance flag, debiased ECE and calibration test, standard AutoAttack robust accuracy for an
adversarially trained model).

The umbrella only resolves the specs: the model, the dataset's split named by ``config.split``, and the ε the model
was adversarially trained at, from the shipped registry (``builtin:fashion-cnn-at``'s recipe), so ``robust_accuracy =
"auto"`` attacks exactly the adversarially trained models.
"""

from __future__ import annotations

from robustsuite_common.config import Str, config, param

from ..errors import ConfigError

NAME = "overview"
#: certcal.overview.TITLE, written here because `robustsuite methods` lists the titles without importing the
#: method packages (certcal imports torch); test_runner_overview.py holds the two equal
TITLE = "Models and data: clean accuracy, calibration and robust accuracy"
PAPER = None
EXPERIMENT = "certcal.overview"
PACKAGES = ("certcal", "robustsuite-common")  # calibration metrics; intervals and AutoAttack


@config
class Inputs:
    targets: tuple[tuple[Str, Str], ...] = param(
        (("builtin:fashion-cnn", "builtin:fashion-mnist"), ("builtin:fashion-cnn-at", "builtin:fashion-mnist"),
         ("builtin:wordnet-roberta", "builtin:wordnet-topics")), unit="[model spec, dataset spec]",
        doc="the models and data described, one section each (used unless model or models is given)")
    model: Str = param("builtin:fashion-cnn", unit="model spec", doc="the model described (a vision model or a "
                       "text classifier)")
    dataset: Str = param("builtin:fashion-mnist", unit="dataset spec", doc="its data (config.split is evaluated)")


def training_eps(spec: str) -> float | None:
    """The L∞ ε a shipped model (``builtin:NAME``) was adversarially trained at (its recipe), else ``None``."""
    from ..zoo.shipped import adversarial_eps

    return adversarial_eps(spec.split(":", 1)[1]) if spec.startswith("builtin:") else None


def check(specs: Inputs, cfg) -> None:
    """At planning time: ``robust_accuracy = "always"`` needs an ε (``config.eps``, or the registry's)."""
    if cfg.robust_accuracy == "always" and not cfg.eps and training_eps(specs.model) is None:
        raise ConfigError(f"[methods.{NAME}] robust_accuracy = 'always' needs config.eps > 0 for {specs.model!r} (not "
                          "an adversarially trained model of the shipped registry)")


def inputs(ctx, specs: Inputs, cfg):
    from certcal.overview import Data, Models

    ds = ctx.dataset(specs.dataset)
    summary = ds.summary()
    models = Models(ctx.model(specs.model), name=specs.model, adversarial_eps=training_eps(specs.model))
    data = Data(getattr(ds, cfg.split), name=specs.dataset, sizes=ctx.dataset_sizes(specs.dataset),
                source=summary["source"] or "")
    return models, data
