"""Planning: a TOML config (or a shipped benchmark, :mod:`robustsuite.benchmarks`) becomes independent units of
work (method × model × dataset × seed) as plain data (:class:`Unit`), each with the identity of everything
that determines its result, so Ray or batch jobs can compute them (:mod:`robustsuite.run.worker`)."""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import runners
from .._io import safe_name, stable_hash
from ..errors import ConfigError
from . import provenance

log = logging.getLogger("robustsuite")
# packages whose code computes every unit's numbers (the method's own distribution is added per unit)
CORE_PACKAGES = ("robustsuite", "robustsuite-common", "torch", "numpy", "scipy", "transformers")
RUN_KEYS = {"seed", "seeds", "device", "methods", "labels", "limit", "log_samples", "resources"}
BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@dataclass(frozen=True)
class Unit:
    """One serialisable unit of work: a method on one model and dataset with one seed.

    ``identity`` holds everything that determines the result (method, every parameter after defaults, model and
    dataset specs with the content hash of local files and of the data loaded, seed, ``limit``, explicit labels
    and the versions of the packages that compute it); :attr:`id` is derived from it, so a resumed run reuses a
    unit only when nothing that matters changed. A ``deterministic`` unit (its runner declares ``SEEDED = False``)
    does not depend on the seed: it is computed once for all seeds.
    """

    method: str
    model: str
    dataset: str
    params: dict[str, Any]
    seed: int = 0
    identity: dict[str, Any] = field(default_factory=dict, compare=False)
    allowed_models: frozenset[str] | None = field(default=None, compare=False)
    deterministic: bool = False

    @property
    def id(self) -> str:
        seed = "det" if self.deterministic else f"s{self.seed}"
        return (f"{self.method}--{_short(self.model)}--{_short(self.dataset)}--{seed}--"
                f"{stable_hash(self.identity or self.params, 12)}")

    @property
    def group(self) -> str:
        """The identity without the seed: units that differ only in seed form one group (``--seeds``)."""
        return stable_hash({k: v for k, v in (self.identity or {"params": self.params}).items() if k != "seed"}, 12)

    def to_dict(self) -> dict:
        return {"id": self.id, "method": self.method, "model": self.model, "dataset": self.dataset,
                "seed": self.seed, "params": self.params, "identity": self.identity, "group": self.group,
                "deterministic": self.deterministic}

    @classmethod
    def from_dict(cls, d: dict) -> Unit:
        allowed = d.get("allowed_models")
        return cls(d["method"], d["model"], d["dataset"], d["params"], d["seed"], d["identity"],
                   frozenset(allowed) if allowed is not None else None, bool(d.get("deterministic", False)))


def _short(spec: str) -> str:
    """A readable file-name part for a spec: local paths shortened to their last component."""
    scheme, _, value = spec.partition(":")
    if "/" in value:
        value = value.rstrip("/").rsplit("/", 1)[-1]
    return safe_name(f"{scheme}-{value}" if value else spec, 32)


def method_packages(method: str) -> tuple[str, ...]:
    """Distributions whose code computes ``method``'s numbers (the runner's ``PACKAGES``)."""
    return tuple(dict.fromkeys((*CORE_PACKAGES, *runners.get(method).PACKAGES)))


def strings(obj) -> Iterable[str]:
    """Every string inside a parameter value (specs hide in lists and tables)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict | list | tuple):
        for v in obj.values() if isinstance(obj, dict) else obj:
            yield from strings(v)


def data_identity(spec: str, cache: dict[str, Any]) -> dict[str, str]:
    """Where a dataset spec's data came from and the SHA-256 of what was loaded (:func:`robustsuite.data.fingerprint`):
    the shipped Fashion-MNIST subset and Debian's full set give different identities."""
    from ..data import fingerprint, load_dataset

    key = f"fingerprint::{spec}"
    if key not in cache:
        if f"dataset::{spec}" not in cache:
            log.info("loading dataset %s to fingerprint it", spec)
            cache[f"dataset::{spec}"] = load_dataset(spec)
        ds = cache[f"dataset::{spec}"]
        cache[key] = {"source": ds.source, "sha256": fingerprint(ds)}
    return cache[key]


def unit_identity(method: str, params: dict, seed: int | None, *, limit: int | None = None,
                  cache: dict[str, Any] | None = None) -> dict:
    """Everything that determines a unit's result (:class:`Unit`); files and data enter by content hash."""
    from .._io import hash_path
    from ..data import is_dataset_spec
    from ..loaders import local_path

    cache = {} if cache is None else cache
    # a unit is identified by its complete resolved config (preset + overrides), without execution fields
    params = runners.get(method).resolve_params(params)
    local, data = {}, {}
    for spec in sorted(set(strings(params))):
        path = local_path(spec)
        if path is not None:
            key = f"hash::{path.resolve()}"
            if key not in cache:
                cache[key] = hash_path(path)
            local[spec] = cache[key]
        if is_dataset_spec(spec):
            data[spec] = data_identity(spec, cache)
    return {"method": method, "params": params, "seed": seed, "limit": limit, "local_files": local, "data": data,
            "versions": {p: provenance.version(p) for p in method_packages(method)}}


def identity_diff(planned: dict, here: dict) -> str:
    """What differs between two identities, readably (``versions: planned {...}, here {...}``)."""
    keys = sorted(k for k in set(here) | set(planned) if stable_hash(here.get(k)) != stable_hash(planned.get(k)))
    return "; ".join(f"{k}: planned {planned.get(k)!r}, here {here.get(k)!r}" for k in keys)


def identity_mismatch(unit: Unit, limit: int | None, cache: dict[str, Any] | None = None) -> str | None:
    """What would differ from ``unit``'s planned identity if it were computed here (``None``: nothing)."""
    seed = None if unit.deterministic else unit.seed
    here = unit_identity(unit.method, unit.params, seed, limit=limit, cache=cache)
    return None if stable_hash(here) == stable_hash(unit.identity) else identity_diff(unit.identity, here)


def shard_count(unit: Unit) -> int:
    """Into how many shards (run before the unit) ``unit`` splits (its experiment's ``shard_count``, or 1)."""
    return runners.get(unit.method).shard_count(unit.params)


def benchmarks() -> dict[str, Path]:
    """The benchmark files shipped with robustsuite (``robustsuite benchmarks``), by name."""
    return {p.stem: p for p in sorted(BENCHMARKS.glob("*.toml"))}


def load_config(path: Path | str) -> dict:
    """A TOML config file, or a shipped benchmark by name (``demo``, ``paper-cpu``)."""
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


#: spec schemes whose value is a local path; ``hf:`` only when it starts with ``./`` or ``../``
_PATH_SCHEMES = {"torch", "csv", "jsonl", "npz", "imagefolder", "idx", "hf-disk"}


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
    if not path or Path(path).is_absolute() or path.startswith("~"):
        return obj
    return f"{scheme}:{base / path}{sep}{query}"


def demo_config(methods: Iterable[str] | None = None, seed: int = 0, device: str = "cpu") -> dict:
    """The shipped ``demo`` benchmark (every method, offline), optionally for a subset of its methods."""
    config = load_config("demo")
    chosen = list(methods) if methods else list(config["methods"])
    unknown = [m for m in chosen if m not in config["methods"]]
    if unknown:
        raise ConfigError(f"unknown method {unknown[0]!r}; the demo has {sorted(config['methods'])}")
    return config | {"seed": seed, "device": device, "methods": {m: config["methods"][m] for m in chosen}}


def _check_int(config: dict, key: str, lo: int) -> int | None:
    from robustsuite_common.checks import check_int

    if config.get(key) is None:
        return None
    try:
        return check_int(key, config[key], ge=lo)
    except (TypeError, ValueError) as e:
        raise ConfigError(str(e)) from None


def _method_params(name: str, mod, overrides: dict) -> dict:
    """The method's table validated (unknown keys, types, bounds, checks across keys) with defaults applied."""
    mod.check_params(overrides)
    return {**mod.DEFAULTS, **{k: v for k, v in overrides.items() if k != "labels"}}


def plan(config: dict, *, cache: dict[str, Any] | None = None) -> list[Unit]:
    """Validate ``config`` and expand it into units (method × target × seed), each with its identity (datasets
    are loaded into ``cache`` for it, so a bad spec fails here)."""
    from ..zoo import missing_path
    from .resources import check_resources

    unknown = set(config) - RUN_KEYS
    if unknown:
        raise ConfigError(f"unknown top-level config keys {sorted(unknown)}; allowed: {sorted(RUN_KEYS)}")
    methods = config.get("methods")
    if not isinstance(methods, dict) or not methods:
        raise ConfigError("config needs a [methods.<name>] table for at least one method")
    check_resources(config)  # where units run (executors.unit_resources), not part of any unit's identity
    from .resources import resolve_device

    resolve_device(str(config.get("device", "cpu")), here=False)  # its syntax; availability: check_inputs
    seed = _check_int(config, "seed", 0) or 0
    n_seeds = _check_int(config, "seeds", 1) or 1
    limit = _check_int(config, "limit", 1)
    cache = {} if cache is None else cache
    units = []
    for name, overrides in methods.items():
        mod = runners.get(name)
        if not isinstance(overrides, dict):
            raise ConfigError(f"[methods.{name}] must be a table")
        overrides = {k: v for k, v in overrides.items() if k != "resources"}
        labels = overrides.get("labels", config.get("labels"))
        if labels is not None and not (isinstance(labels, list) and labels and all(isinstance(v, str | int) for v in labels)):
            raise ConfigError(f"[methods.{name}] labels must be a non-empty list of class names in class-index order, "
                              f"got {labels!r}")
        params = _method_params(name, mod, overrides)
        # a config that names its own models may only load the builtin models it names itself
        names_models = bool({"model", "models", "targets"} & set(overrides))
        allowed = frozenset(s for s in strings(overrides) if s.startswith("builtin:")) if names_models else None
        if "targets" in overrides or ("targets" in params and not {"model", "models"} & set(overrides)):
            targets = params.pop("targets")
        else:
            params.pop("targets", None)
            targets = [[m, params.get("dataset")] for m in params.pop("models", None) or [params.get("model")]]
        deterministic = not mod.SEEDED
        seen_targets: set[tuple[str, str]] = set()
        for target in targets:
            if not (isinstance(target, list | tuple) and len(target) == 2 and all(isinstance(t, str) for t in target)):
                raise ConfigError(f"[methods.{name}]: each target must be [model_spec, dataset_spec], got {target!r}")
            if tuple(target) in seen_targets:
                raise ConfigError(f"[methods.{name}]: target {list(target)!r} is listed twice (it would run twice as "
                                  "two identical units); list it once")
            seen_targets.add(tuple(target))
            missing = missing_path(target[0])
            if missing is not None:  # before any dataset is loaded for the identity
                raise ConfigError(f"[methods.{name}] model {target[0]}: {missing} does not exist")
            unit_params = {**params, "model": target[0], "dataset": target[1]}
            if labels is not None:
                unit_params["labels"] = [str(v) for v in labels]
            for s in [seed] if deterministic else range(seed, seed + n_seeds):
                ident = unit_identity(name, unit_params, None if deterministic else s, limit=limit, cache=cache)
                units.append(Unit(name, target[0], target[1], unit_params, s, ident, allowed, deterministic))
    log.info("planned %d units", len(units))
    return units


def log_format(config: dict) -> str | None:
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
