"""The adapter between runner modules and the umbrella's units of work: :class:`ExperimentRunner` presents a method
package's experiment as the runner interface.

A runner module sets ``EXPERIMENT`` (the import path of ``<pkg>.experiment``) and only declares what the
umbrella must resolve, and nothing of the method::

    NAME = "certcal"
    PAPER = "004"
    EXPERIMENT = "certcal.experiment"

    @config
    class Inputs:                      # the model and dataset specs the experiment needs (strings)
        model: Str = param("builtin:fashion-cnn", doc="base model", unit="model spec")
        dataset: Str = param("builtin:fashion-mnist", doc="images", unit="dataset spec")

    def inputs(ctx, specs: Inputs, config):      # -> (models, data) as <pkg>.experiment.run takes them
        ...

The section's title is the experiment's ``Result.title`` (a runner module may set ``TITLE`` instead).
A method's table in a run config holds the ``Inputs`` fields at its top level, ``preset`` (the package's named
preset the experiment's config starts from, default ``"demo"``) and a ``config`` sub-table of overrides that
the package's typed ``Config`` validates at planning time. ``Inputs`` may declare default ``targets`` (pairs of
model and dataset specs, each a unit; used when the table names no ``model``/``models``), and the module may define
``check(specs, config)``, called for every unit at planning time, for rules that join the specs and the config
(raising :class:`~robustsuite.errors.ConfigError`). The experiment module provides ``Config``,
``preset(name)``, ``PRESETS``, ``run(models, data, config, *, store=None, progress=True)``, optionally
``figures(result)``, ``shard_count(config)`` with ``run_shard(models, data, config, index, count, *, store,
progress)``, ``EXECUTION_FIELDS`` (dotted config paths that change how, not what, is computed) and
``SEEDED = False`` when its result does not depend on the seed (the unit is then computed once for all seeds; the
runner module may say so instead). The unit's seed is the config's ``seed`` (a config without one does not
depend on it).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from types import ModuleType
from typing import Any

from ..errors import ConfigError, did_you_mean

RESERVED = ("preset", "config")
#: keys every method's table accepts besides its own: the unit's targets and label names
TARGET_KEYS = ("model", "dataset", "models", "targets", "labels")
_TARGETS_SCHEMA = {"model": {"type": "string"}, "dataset": {"type": "string"},
                   "models": {"type": "array", "items": {"type": "string"}},
                   "targets": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
                                                          "minItems": 2, "maxItems": 2}},
                   "labels": {"type": "array", "items": {"type": ["string", "integer"]}}}


def _reject_unknown(name: str, params: dict[str, Any], valid: set[str]) -> None:
    """:class:`ConfigError` for a key of ``[methods.<name>]`` outside ``valid``, with the closest valid key."""
    for key in (k for k in params if k not in valid):
        raise ConfigError(f"[methods.{name}]: unknown key {key!r}{did_you_mean(key, sorted(valid))} (valid keys: "
                          f"{sorted(valid)})")


def _drop(d: dict[str, Any], dotted: str) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        d = d.get(p, {})
        if not isinstance(d, dict):
            return
    d.pop(leaf, None)


class ExperimentRunner:
    """Presents a declarative runner module (``EXPERIMENT`` set) as the runner interface ``run.py`` drives:
    ``DEFAULTS``, ``check_params``, ``resolve_params``, ``run``, ``shard_count``, ``run_shard``."""

    LOGS_SAMPLES = True

    def __init__(self, module: ModuleType) -> None:
        for attr in ("NAME", "EXPERIMENT", "Inputs", "inputs"):
            if not hasattr(module, attr):
                raise ImportError(f"runner module {module.__name__} sets EXPERIMENT but lacks {attr}")
        self.module = module
        self.__name__ = module.__name__
        self.NAME = module.NAME
        self.PAPER = getattr(module, "PAPER", None)
        self.PACKAGES = getattr(module, "PACKAGES", (module.EXPERIMENT.split(".")[0].replace("_", "-"),))

    @functools.cached_property
    def experiment(self) -> ModuleType:
        return importlib.import_module(self.module.EXPERIMENT)

    @functools.cached_property
    def TITLE(self) -> str:  # noqa: N802 - the runner interface's name
        """The runner module's ``TITLE`` if it sets one, else the experiment's own (``Result.title``), read when
        first asked for (importing the experiment then, not at discovery)."""
        title = getattr(self.module, "TITLE", None)
        return str(title) if title is not None else str(self.experiment.Result.title)

    @property
    def SEEDED(self) -> bool:  # noqa: N802 - the runner interface's name
        return bool(getattr(self.module, "SEEDED", getattr(self.experiment, "SEEDED", True)))

    @functools.cached_property
    def DEFAULTS(self) -> dict[str, Any]:  # noqa: N802 - the runner interface's name
        from robustsuite_common.config import to_dict

        return {**to_dict(self.module.Inputs()), "preset": "demo", "config": {}}

    def resolve(self, params: dict[str, Any]) -> tuple[Any, Any]:
        """``(specs, config)`` from a unit's parameters; :class:`ConfigError` naming the table on bad input."""
        from robustsuite_common.config import ConfigError as BadConfig
        from robustsuite_common.config import from_dict

        exp = self.experiment
        fields = {f.name for f in dataclasses.fields(self.module.Inputs)}
        where = f"[methods.{self.NAME}]"
        _reject_unknown(self.NAME, params, fields | set(RESERVED) | set(TARGET_KEYS))
        try:
            specs = from_dict(self.module.Inputs, {k: v for k, v in params.items() if k in fields}, where=where)
            name = params.get("preset", "demo")
            if name not in exp.PRESETS:
                raise ConfigError(f"{where} preset must be one of {sorted(exp.PRESETS)}, got {name!r}")
            overrides = params.get("config") or {}
            if not isinstance(overrides, dict):
                raise ConfigError(f"{where} config must be a table of the experiment's settings, got {overrides!r}")
            cfg = from_dict(exp.Config, overrides, base=exp.preset(name), where=f"{where}.config")
        except BadConfig as e:
            raise ConfigError(str(e)) from None
        return specs, cfg

    def check_params(self, params: dict[str, Any]) -> None:
        self.resolve(params)

    def check_classes(self, params: dict[str, Any], n_classes: int) -> None:
        """What the runner needs of the model's class count (its module's ``check_classes(specs, config, k)``, if it
        has one), checked by ``plan`` as by ``run`` before any unit starts: :class:`ConfigError` saying what to set."""
        check = getattr(self.module, "check_classes", None)
        if check is not None:
            specs, cfg = self.resolve(params)
            check(specs, cfg, int(n_classes))

    def resolve_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """What a unit's identity hashes: its parameters with ``config`` replaced by the complete resolved config,
        minus the seed (the unit's own) and the experiment's ``EXECUTION_FIELDS``."""
        from robustsuite_common.config import to_dict

        specs, cfg = self.resolve(params)
        check = getattr(self.module, "check", None)
        if check is not None:
            check(specs, cfg)
        full = to_dict(cfg)
        full.pop("seed", None)
        for dotted in getattr(self.experiment, "EXECUTION_FIELDS", ()):
            _drop(full, dotted)
        return {**params, "config": full}

    def _config(self, ctx, params: dict[str, Any]) -> tuple[Any, Any]:
        from robustsuite_common.config import override

        specs, cfg = self.resolve(params)
        return specs, override(cfg, seed=int(ctx.seed)) if hasattr(cfg, "seed") else cfg

    def _store(self, ctx) -> Any:
        from robustsuite_common.experiment import DirStore

        return DirStore(ctx.work_dir())

    def run(self, ctx, params: dict[str, Any]):
        specs, cfg = self._config(ctx, params)
        models, data = self.module.inputs(ctx, specs, cfg)
        result = self.experiment.run(models, data, cfg, store=self._store(ctx), progress=ctx.progress)
        from ..report.section import section_from_result

        about = getattr(self.module, "checks_model", None)  # the spec the checks are about (default: model)
        checked = about(specs) if about is not None else specs.model
        if getattr(result, "checks", ()):
            result = dataclasses.replace(result, checks=tuple(c if c.model else dataclasses.replace(c, model=checked)
                                                              for c in result.checks))

        return section_from_result(ctx, result, getattr(self.experiment, "figures", None), self.TITLE)

    def shard_count(self, params: dict[str, Any]) -> int:
        fn = getattr(self.experiment, "shard_count", None)
        if fn is None:
            return 1
        return int(fn(self.resolve(params)[1]))

    def run_shard(self, ctx, params: dict[str, Any], index: int, count: int) -> None:
        specs, cfg = self._config(ctx, params)
        models, data = self.module.inputs(ctx, specs, cfg)
        self.experiment.run_shard(models, data, cfg, index, count, store=self._store(ctx), progress=ctx.progress)

    def rows(self) -> dict[str, Any]:
        """Each input spec and config field with its description, unit, paper reference and bounds."""
        from robustsuite_common.config import schema_rows

        return {"inputs": schema_rows(self.module.Inputs), "presets": sorted(self.experiment.PRESETS),
                "config": schema_rows(self.experiment.Config)}

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the method's table in a run config: the input specs, ``preset`` and ``config``."""
        from robustsuite_common.config import schema

        inputs, config = schema(self.module.Inputs), schema(self.experiment.Config)
        defs = {**inputs.pop("$defs", {}), **config.pop("$defs", {})}
        config.pop("required", None)  # every field has a default: overrides are partial
        props = {**_TARGETS_SCHEMA, **inputs["properties"],
                 "preset": {"enum": sorted(self.experiment.PRESETS), "default": "demo",
                            "description": "the named settings the config starts from"},
                 "config": config}
        out = {"title": self.NAME, "type": "object", "properties": props, "additionalProperties": False}
        return {**out, "$defs": defs} if defs else out
