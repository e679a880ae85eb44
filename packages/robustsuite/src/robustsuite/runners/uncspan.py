"""Uncertainty span section (paper 001): ``uncspan.experiment.run`` on the specs below (Table IV with robust
accuracy by standard AutoAttack, s-ECE, the ε-sweep, Table V). Settings: ``uncspan.experiment.Config``."""

from __future__ import annotations

from robustsuite_common.config import Bool, Str, config, param

NAME = "uncspan"
TITLE = "Uncertainty span under over- and under-confidence attacks"
PAPER = "001"
EXPERIMENT = "uncspan.experiment"


@config
class Compared:
    spec: Str = param(doc="a model ranked with `model` (in `compare`) or a Table V model (in `osr_models`)",
                      unit="model spec")
    adversarially_trained: Bool | None = param(None, doc="declared adversarial training (never guessed from the name)")


@config
class Inputs:
    model: Str = param("builtin:fashion-cnn", doc="model ranked in Table IV", unit="model spec")
    model_adversarially_trained: Bool | None = param(False, doc="whether `model` was adversarially trained")
    compare: tuple[Compared | Str, ...] = param((Compared("builtin:fashion-cnn-at", True),), unit="model specs",
                                                doc="models ranked with it: {spec, adversarially_trained} tables")
    dataset: Str = param("builtin:fashion-mnist", doc="test images of the ranked models", unit="dataset spec")
    osr_models: tuple[Compared | Str, ...] = param(
        ("builtin:fashion-osr-cnn", "builtin:fashion-osr-cnn-at"), unit="model specs",
        doc="Table V models (undefended and adversarially trained): specs or {spec, adversarially_trained} tables; a "
            "shipped model given as a spec is declared by its build recipe (its PGD-AT ε), any other is undeclared")
    osr_dataset: Str = param("builtin:fashion-mnist-osr", unit="dataset spec", doc="Table V's in-distribution test "
                             "split; its extras['open_set'] are the open set unless config.ood.open_set_classes")
    ood_dataset: Str = param("extras:ood", unit="dataset spec", doc="'extras:ood' (osr_dataset's) or any dataset "
                             "whose test split is the OOD set (resized to the in-distribution shape)")


def check_classes(specs: Inputs, cfg, n_classes: int) -> None:
    """Standard (and plus) AutoAttack runs targeted attacks over the 3 runner-up classes at least: a model with fewer
    than 4 classes is refused before any unit starts, with the setting that avoids it."""
    from ..errors import ConfigError

    lb = cfg.leaderboard
    if lb.robust_attack == "autoattack" and lb.autoattack_version in ("standard", "plus") and n_classes < 4:
        raise ConfigError(f"[methods.uncspan] model {specs.model} has {n_classes} classes: the robust-accuracy column's "
                          f"AutoAttack ({lb.autoattack_version!r}) needs at least 4; set "
                          "config.leaderboard.robust_attack = \"pgd\"")


def osr_declared(entry: Compared | str) -> tuple[str, bool | None]:
    """``(spec, adversarially_trained)`` of a Table V entry: a table's own declaration; for a bare ``builtin:`` spec
    the shipped model's build recipe (adversarially trained iff its recipe's ε > 0); ``None`` otherwise."""
    if not isinstance(entry, str):
        return entry.spec, entry.adversarially_trained
    if not entry.startswith("builtin:"):
        return entry, None
    from ..zoo.shipped import adversarial_eps, record

    name = entry.split(":", 1)[1]
    return entry, None if record(name) is None else adversarial_eps(name) is not None


def _vision(ctx, spec: str, field: str):
    ds = ctx.dataset(spec)
    if ds.modality != "vision":
        raise ValueError(f"uncspan needs a vision dataset for {field}; {spec} is {ds.modality}")
    return ds


def inputs(ctx, specs: Inputs, cfg):
    from uncspan.experiment import Data, Models

    entries = {specs.model: specs.model_adversarially_trained}
    for c in specs.compare:
        spec, flag = (c, None) if isinstance(c, str) else (c.spec, c.adversarially_trained)
        entries[spec] = flag if flag is not None or spec not in entries else entries[spec]
    ds = _vision(ctx, specs.dataset, "dataset")
    if not specs.osr_models:  # no Table V models: no open-set data to load
        models = Models(ranked={s: ctx.model(s) for s in entries},
                        adversarially_trained={s: f for s, f in entries.items() if f is not None})
        return models, Data(test=ds.test).named(ds.classes)
    osr = _vision(ctx, specs.osr_dataset, "osr_dataset")
    ood = osr.extras.get("ood") if specs.ood_dataset == "extras:ood" else \
        _vision(ctx, specs.ood_dataset, "ood_dataset").test
    open_set = None if cfg.ood.open_set_classes else osr.extras.get("open_set")
    osr_flags = dict(osr_declared(e) for e in specs.osr_models)
    flags = {**osr_flags, **{s: f for s, f in entries.items() if f is not None}}
    models = Models(ranked={s: ctx.model(s) for s in entries},
                    adversarially_trained={s: f for s, f in flags.items() if f is not None},
                    osr={s: ctx.model(s) for s in osr_flags})
    return models, Data(test=ds.test, osr=osr.test, ood=ood, open_set=open_set).named(ds.classes, osr.classes)
