"""Planning: a parsed run config (:class:`robustsuite.run.config.RunConfig`) becomes independent units of
work (method × model × dataset × seed) as plain data (:class:`Unit`), each with the identity of everything
that determines its result, so Ray or batch jobs can compute them (:mod:`robustsuite.run.worker`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import runners
from .._io import safe_name, stable_hash
from . import provenance
from .config import RunConfig
from .config import strings as strings  # the parameter walk, where the identity code has always found it

log = logging.getLogger("robustsuite")
# packages whose code computes every unit's numbers (the method's own distribution is added per unit)
CORE_PACKAGES = ("robustsuite", "robustsuite-common", "torch", "numpy", "scipy", "transformers")


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


def unit_cost(unit: Unit, config: RunConfig) -> float:
    """The expected cost of ``unit``: its method's ``resources.cpu_seconds`` (the whole unit, shards included), else
    its shard count (every unsharded unit alike). ``--workers`` starts the costliest first; the ETA weighs by it."""
    return float(config.resources(unit.method).get("cpu_seconds", shard_count(unit)))


def costliest_first(units: list[Unit], config: RunConfig) -> list[int]:
    """The indices of ``units``, costliest first (:func:`unit_cost`; ties keep the plan's order): the order that
    lets parallel workers finish together (longest-processing-time first)."""
    costs = [unit_cost(u, config) for u in units]
    return sorted(range(len(units)), key=lambda k: -costs[k])


def plan(config: RunConfig | Mapping[str, Any], *, cache: dict[str, Any] | None = None) -> list[Unit]:
    """Expand ``config`` (a :class:`RunConfig`; a dict is parsed first) into units (method × target × seed), each
    with its identity (datasets are loaded into ``cache`` for it, so a bad spec fails here)."""
    config = RunConfig.parse(config)
    cache = {} if cache is None else cache
    units = []
    for method in config.methods:
        for model, dataset in method.targets:
            unit_params = {**method.params, "model": model, "dataset": dataset}
            if method.labels is not None:
                unit_params["labels"] = list(method.labels)
            for s in [config.seed] if method.deterministic else range(config.seed, config.seed + config.seeds):
                ident = unit_identity(method.name, unit_params, None if method.deterministic else s,
                                      limit=config.limit, cache=cache)
                units.append(Unit(method.name, model, dataset, unit_params, s, ident, method.allowed_models,
                                  method.deterministic))
    log.info("planned %d units", len(units))
    return units
