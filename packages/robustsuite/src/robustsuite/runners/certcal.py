"""certcal section: the certified-calibration experiment of paper 004, run by ``certcal.experiment``.

The umbrella only resolves the specs: the base model (β-ACE target, and the start of noise fine-tuning for a σ
without a smoothing model), the dataset, and one Gaussian-noise-trained smoothing model per σ of the config
(``noise_models``, in the order of ``config.smoothing.sigmas``; empty: fine-tune the base model for every σ).
"""

from __future__ import annotations

from robustsuite_common.config import Str, config, param

from ..errors import ConfigError

NAME = "certcal"
#: certcal.experiment.TITLE, written here because `robustsuite methods` lists the titles without importing the
#: method packages (certcal imports torch); test_runner_certcal.py holds the two equal
TITLE = "Certified calibration: CBS and CCE under Gaussian smoothing, calibration attacks, ACT"
PAPER = "004"
EXPERIMENT = "certcal.experiment"


@config
class Inputs:
    model: Str = param("builtin:fashion-cnn", unit="model spec",
                       doc="base model: β-ACE target, and noise fine-tuning start for a σ without a smoothing model")
    dataset: Str = param("builtin:fashion-mnist", unit="dataset spec", doc="images in [0, 1] (train and test splits)")
    noise_models: tuple[Str, ...] = param(
        ("builtin:fashion-cnn-noise-0.25", "builtin:fashion-cnn-noise-0.5"), unit="model specs",
        doc="Gaussian-noise-trained smoothing models, one per config.smoothing.sigmas (same order); empty: "
            "fine-tune the base model with noise of each σ")


def inputs(ctx, specs: Inputs, cfg):
    from certcal.experiment import Data, Models

    sigmas = tuple(cfg.smoothing.sigmas)
    if specs.noise_models and len(specs.noise_models) != len(sigmas):
        raise ConfigError(f"[methods.{NAME}] noise_models must list one model per sigma of config.smoothing.sigmas "
                          f"({len(sigmas)}: {list(sigmas)}), got {len(specs.noise_models)}")
    noise = {s: ctx.model(m) for s, m in zip(sigmas, specs.noise_models, strict=False)}
    ds = ctx.dataset(specs.dataset)
    return (Models(base=ctx.model(specs.model), noise=noise),
            Data(train=ds.train, test=ds.test, label_names=tuple(ds.classes) if ds.classes else None))
