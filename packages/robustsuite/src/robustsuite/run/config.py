"""The run config, parsed once at the door: a benchmark TOML (or a shipped benchmark by name), the CLI's options and
its ``--set`` overrides are merged and validated here into a frozen :class:`RunConfig` (run settings typed, each
method's table checked against its experiment's typed config with defaults applied, resources parsed). Everything
below (:func:`robustsuite.run.plan`, :func:`~robustsuite.run.execute`, the executors, ``collect``) reads that
object and validates nothing again. ``RunConfig.raw`` is the config as written (what ``run.json``, ``plan.json`` and
the report record, and what the run's id hashes)."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import runners
from ..errors import ConfigError, did_you_mean
from .resources import resolve_device, unit_resources

RUN_KEYS = {"seed", "seeds", "device", "methods", "labels", "limit", "log_samples", "resources"}
BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
#: spec schemes whose value is a local path; ``hf:`` only when it starts with ``./`` or ``../``
_PATH_SCHEMES = {"torch", "csv", "jsonl", "npz", "imagefolder", "idx", "hf-disk"}

Target = tuple[str, str]  # (model spec, dataset spec)


@dataclass(frozen=True)
class MethodConfig:
    """One ``[methods.<name>]`` table, validated: ``params`` is the table with the method's defaults applied
    (without ``labels``, ``resources`` and the target keys), ``targets`` the (model, dataset) pairs it runs on."""

    name: str
    params: Mapping[str, Any]
    targets: tuple[Target, ...]
    labels: tuple[str, ...] | None = None
    allowed_models: frozenset[str] | None = None  # a config naming its own models may load only those builtins
    deterministic: bool = False  # the runner declares ``SEEDED = False``: one unit for every seed
    resources: Mapping[str, Any] = field(default_factory=dict)  # what one unit asks its executor for


@dataclass(frozen=True)
class RunConfig:
    """A run's settings, typed and validated once (:meth:`parse`); ``raw`` is the config as written."""

    raw: Mapping[str, Any]
    methods: tuple[MethodConfig, ...]
    seed: int = 0
    seeds: int = 1
    device: str = "cpu"
    limit: int | None = None
    log_format: str | None = None  # "parquet" | "jsonl" | None: per-sample records (``log_samples``)

    @classmethod
    def parse(cls, config: Mapping[str, Any] | RunConfig) -> RunConfig:
        """Validate a config dict (top-level keys, resources, device syntax, seeds, limit, each method's table and
        targets, ``log_samples``); :class:`ConfigError` naming the key, with the closest valid one."""
        if isinstance(config, RunConfig):
            return config
        if not isinstance(config, Mapping):
            raise ConfigError(f"a run config must be a table, got {type(config).__name__}")
        raw = copy.deepcopy(dict(config))
        unknown = set(raw) - RUN_KEYS
        if unknown:
            raise ConfigError(f"unknown top-level config keys {sorted(unknown)}; allowed: {sorted(RUN_KEYS)}")
        methods = raw.get("methods")
        if not isinstance(methods, dict) or not methods:
            raise ConfigError("config needs a [methods.<name>] table for at least one method")
        # every [resources] table first: where units run, not part of any unit's identity
        resources = {name: unit_resources(raw, name) for name in methods}
        device = str(raw.get("device", "cpu"))
        resolve_device(device, here=False)  # its syntax; availability: check_inputs, on the machine that computes
        seed = _check_int(raw, "seed", 0) or 0
        seeds = _check_int(raw, "seeds", 1) or 1
        limit = _check_int(raw, "limit", 1)
        parsed = tuple(_method(name, table, raw, resources[name]) for name, table in methods.items())
        return cls(raw, parsed, seed=seed, seeds=seeds, device=device, limit=limit, log_format=_log_format(raw))

    @classmethod
    def recorded(cls, config: Mapping[str, Any]) -> RunConfig:
        """A config as a plan recorded it (``plan.json``): its run settings, without validating its methods again
        (they were validated when it was planned; its units are in the plan, and may name files of other machines)."""
        return cls(copy.deepcopy(dict(config)), (), seed=_check_int(config, "seed", 0) or 0,
                   seeds=_check_int(config, "seeds", 1) or 1, device=str(config.get("device", "cpu")),
                   limit=_check_int(config, "limit", 1), log_format=_log_format(config))

    def to_dict(self) -> dict[str, Any]:
        """A copy of the config as written (``raw``)."""
        return copy.deepcopy(dict(self.raw))

    def resources(self, method: str) -> dict[str, Any]:
        """What one unit of ``method`` asks its executor for (:func:`robustsuite.run.resources.unit_resources`)."""
        return next((dict(m.resources) for m in self.methods if m.name == method), unit_resources(self.raw, method))


def _check_int(config: Mapping[str, Any], key: str, lo: int) -> int | None:
    from robustsuite_common.checks import check_int

    if config.get(key) is None:
        return None
    try:
        return check_int(key, config[key], ge=lo)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None


def _log_format(config: Mapping[str, Any]) -> str | None:
    """The ``log_samples`` format of a config (``None``: no per-sample records)."""
    from ..report.samples import FORMATS

    fmt = config.get("log_samples")
    if fmt in (None, False):
        return None
    if fmt is True:
        return "parquet"
    if fmt not in FORMATS:
        raise ConfigError(f"log_samples must be one of {FORMATS} (or true), got {fmt!r}")
    return fmt


def strings(obj: Any) -> Iterable[str]:
    """Every string inside a parameter value (specs hide in lists and tables)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict | list | tuple):
        for v in obj.values() if isinstance(obj, dict) else obj:
            yield from strings(v)


def _method(name: str, table: Any, config: Mapping[str, Any], resources: dict[str, Any]) -> MethodConfig:
    """``[methods.<name>]`` validated (unknown keys, types, bounds, labels, targets) with the defaults applied."""
    from ..zoo import missing_path

    mod = runners.get(name)
    if not isinstance(table, dict):
        raise ConfigError(f"[methods.{name}] must be a table")
    overrides = {k: v for k, v in table.items() if k != "resources"}
    labels = overrides.get("labels", config.get("labels"))
    if labels is not None and not (isinstance(labels, list) and labels and all(isinstance(v, str | int) for v in labels)):
        raise ConfigError(f"[methods.{name}] labels must be a non-empty list of class names in class-index order, "
                          f"got {labels!r}")
    mod.check_params(overrides)
    params = {**mod.DEFAULTS, **{k: v for k, v in overrides.items() if k != "labels"}}
    names_models = bool({"model", "models", "targets"} & set(overrides))
    allowed = frozenset(s for s in strings(overrides) if s.startswith("builtin:")) if names_models else None
    targets: list[Any]
    if "targets" in overrides or ("targets" in params and not {"model", "models"} & set(overrides)):
        targets = params.pop("targets")
    else:
        params.pop("targets", None)
        targets = [[m, params.get("dataset")] for m in params.pop("models", None) or [params.get("model")]]
    seen: list[Target] = []
    for target in targets:
        if not (isinstance(target, list | tuple) and len(target) == 2 and all(isinstance(t, str) for t in target)):
            raise ConfigError(f"[methods.{name}]: each target must be [model_spec, dataset_spec], got {target!r}")
        if tuple(target) in seen:
            raise ConfigError(f"[methods.{name}]: target {list(target)!r} is listed twice (it would run twice as "
                              "two identical units); list it once")
        seen.append((target[0], target[1]))
        missing = missing_path(target[0])
        if missing is not None:  # before any dataset is loaded for a unit's identity
            raise ConfigError(f"[methods.{name}] model {target[0]}: {missing} does not exist")
    return MethodConfig(name, params, tuple(seen), None if labels is None else tuple(str(v) for v in labels),
                        allowed, not mod.SEEDED, resources)


# ------------------------------------------------------------------------------------------------ at the door


def benchmarks() -> dict[str, Path]:
    """The benchmark files shipped with robustsuite (``robustsuite benchmarks``), by name."""
    return {p.stem: p for p in sorted(BENCHMARKS.glob("*.toml"))}


def load_config(path: Path | str) -> dict:
    """A TOML config file, or a shipped benchmark by name (``demo``, ``paper-cpu``), as written (not validated:
    :meth:`RunConfig.parse`)."""
    path = Path(path)
    if not path.is_file() and path.suffix != ".toml" and str(path) in benchmarks():
        path = benchmarks()[str(path)]
    try:
        with open(path, "rb") as f:
            config = tomllib.load(f)
    except FileNotFoundError as e:
        raise ConfigError(f"config file not found: {path} (shipped benchmarks: {', '.join(benchmarks())})") from e
    except IsADirectoryError as e:
        raise ConfigError(f"config must be a TOML file, got the directory {path}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML ({e})") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 ({e.reason} at byte {e.start}); save the config as UTF-8") from e
    if isinstance(config.get("methods"), dict):
        config["methods"] = _relative_to(config["methods"], path.parent)
    return config


def _relative_to(obj: Any, base: Path) -> Any:
    """``obj`` (a config's methods) with each spec's relative local path resolved against ``base`` (the config
    file's folder), not the current directory: ``csv:data/reviews.csv`` beside the config is found from anywhere."""
    if isinstance(obj, dict):
        return {k: _relative_to(v, base) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_relative_to(v, base) for v in obj]
    if not isinstance(obj, str) or ":" not in obj:
        return obj
    scheme, _, value = obj.partition(":")
    if not (scheme in _PATH_SCHEMES or (scheme == "hf" and value.startswith(("./", "../")))):
        return obj
    path, sep, query = value.partition("?")
    absolute = not path or Path(path).is_absolute() or path.startswith("~")
    return obj if absolute else f"{scheme}:{base / path}{sep}{query}"


def demo_config(methods: Iterable[str] | None = None, seed: int = 0, device: str = "cpu") -> dict:
    """The shipped ``demo`` benchmark (every method, offline), optionally for a subset of its methods."""
    return select_methods(load_config("demo"), methods, what="the demo") | {"seed": seed, "device": device}


def select_methods(config: dict, methods: Iterable[str] | None, *, what: str = "the config") -> dict:
    """``config`` with only the sections ``methods`` names (all when empty): ``--methods``; unit ids are unchanged."""
    have, chosen = dict(config.get("methods") or {}), [m for m in (methods or ()) if m]
    for m in (m for m in chosen if m not in have):
        raise ConfigError(f"--methods: unknown method {m!r}{did_you_mean(m, have)} ({what} has {sorted(have)})")
    return config | {"methods": {m: have[m] for m in dict.fromkeys(chosen or have)}}


def apply_overrides(config: dict, sets: list[str]) -> dict:
    """Apply ``--set dotted.key=value`` overrides (e.g. ``methods.certcal.config.smoothing.sigmas=[0.5]``, ``seed=3``;
    values as :func:`robustsuite_common.config.parse_sets` reads them) to a copy of ``config``."""
    from robustsuite_common.config import ConfigError as BadSet
    from robustsuite_common.config import nest, parse_sets

    try:
        return nest(parse_sets(sets, example="methods.certcal.config.certify.n=500"), base=config)
    except BadSet as e:
        raise ConfigError(str(e)) from None


def run_config(config: Mapping[str, Any], *, methods: Iterable[str] | None = None, sets: Iterable[str] = (),
               seeds: int | None = None, limit: int | None = None, log_samples: str | None = None) -> RunConfig:
    """The door: ``config`` (a loaded TOML, the demo's, an audit's) with the CLI's ``--methods``, ``--set``, ``--seeds``,
    ``--limit`` and ``--log-samples`` merged in, parsed into a :class:`RunConfig`."""
    merged = apply_overrides(select_methods(dict(config), methods), list(sets))
    options = {"seeds": seeds, "limit": limit, "log_samples": log_samples or None}
    return RunConfig.parse(merged | {k: v for k, v in options.items() if v is not None})
