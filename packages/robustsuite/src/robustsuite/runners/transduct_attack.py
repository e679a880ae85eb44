"""transduct-attack section: transductive defenses under transfer and model-space attacks (paper 003).

Declarative: ``transduct_attack.experiment`` plays the paper's Tables 1, 2, 3, 4, 6 and Figure 1 (its typed
``Config``, presets, checkpoints, records and figures, its title, and the label names its ``Data`` takes from the
dataset); this module only names and resolves the inputs.
"""

from __future__ import annotations

from robustsuite_common.config import Str, config, param

NAME = "transduct_attack"
PAPER = "003"
EXPERIMENT = "transduct_attack.experiment"
#: transduct_attack.experiment.Result.title, written here because `robustsuite methods` lists the titles without importing the
#: experiment (and torch); tests/test_runner_titles.py holds them equal
TITLE = "Transductive defenses under adaptive attacks (RMC, DENT, DANN, TADV, URejectron vs FPA/GMSA)"


@config
class Inputs:
    model: Str = param("builtin:fashion-cnn", unit="model spec",
                       doc="standard base model (RMC row 1, DANN's base, URejectron's classifier)")
    at_model: Str = param("builtin:fashion-cnn-at", unit="model spec",
                          doc="adversarially trained base (RMC row 2), trained at config.threat.at_model_eps")
    dataset: Str = param("builtin:fashion-mnist", unit="dataset spec", doc="images in [0, 1] (train and test)")


def inputs(ctx, specs: Inputs, config):
    from transduct_attack.experiment import Data, Models

    models = Models(standard=ctx.model(specs.model), adversarial=ctx.model(specs.at_model))
    return models, Data.from_dataset(ctx.dataset(specs.dataset), name=specs.dataset)
