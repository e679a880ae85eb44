"""Runs: a TOML config becomes independent units of work (method × model × dataset), each checkpointed.

Every finished unit writes ``units/<unit id>.json`` (atomically); running the same config into the same
run directory again skips finished units, so an interrupted run resumes where it stopped. Units are plain
data (:class:`Unit`), so a run that outgrows one machine can hand them to a distributed engine (e.g. Ray)
and collect the same files.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import subprocess
import sys
import time
import tomllib
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from . import runners
from ._io import hash_path, safe_name, sha256_file, stable_hash, write_json
from .errors import ConfigError
from .report import Section, write_report

PACKAGES = ("robustsuite", "zeroe-perturb", "iortemp", "uncspan", "transduct-attack", "certcal", "torch",
            "transformers", "numpy", "scipy", "scikit-learn", "cvxpy", "textattack", "robustbench")
# packages whose code computes every unit's numbers (the method's own distribution is added per unit)
CORE_PACKAGES = ("robustsuite", "torch", "numpy", "scipy", "transformers")
RUN_KEYS = {"seed", "seeds", "device", "methods", "labels", "limit", "log_samples", "resources"}
TARGET_KEYS = {"model", "dataset", "models", "targets", "labels"}


@dataclass(frozen=True)
class Unit:
    """One serialisable unit of work: a method on one model and dataset with one seed.

    ``identity`` holds everything that determines the result (method, every parameter after defaults, model and
    dataset specs with the content hash of local files, seed, ``limit``, explicit labels and the versions of the
    packages that compute it); :attr:`id` is derived from it, so a resumed run reuses a unit only when nothing
    that matters changed.
    """

    method: str
    model: str
    dataset: str
    params: dict[str, Any]
    seed: int = 0
    identity: dict[str, Any] = field(default_factory=dict, compare=False)
    allowed_models: frozenset[str] | None = field(default=None, compare=False)

    @property
    def id(self) -> str:
        return (f"{self.method}--{_short(self.model)}--{_short(self.dataset)}--s{self.seed}--"
                f"{stable_hash(self.identity or self.params, 12)}")

    @property
    def group(self) -> str:
        """The identity without the seed: units that differ only in seed form one group (``--seeds``)."""
        return stable_hash({k: v for k, v in (self.identity or {"params": self.params}).items() if k != "seed"}, 12)

    def to_dict(self) -> dict:
        return {"id": self.id, "method": self.method, "model": self.model, "dataset": self.dataset,
                "seed": self.seed, "params": self.params, "identity": self.identity, "group": self.group}


def _short(spec: str) -> str:
    """A readable file-name part for a spec: local paths shortened to their last component."""
    scheme, _, value = spec.partition(":")
    if "/" in value:
        value = value.rstrip("/").rsplit("/", 1)[-1]
    return safe_name(f"{scheme}-{value}" if value else spec, 32)


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def method_packages(method: str) -> tuple[str, ...]:
    """Distributions whose code computes ``method``'s numbers (a runner may name them in ``PACKAGES``)."""
    mod = runners.get(method)
    own = getattr(mod, "PACKAGES", None)
    if own is None:
        own = (method.replace("_", "-"),) if _version(method.replace("_", "-")) else ()
    return tuple(dict.fromkeys((*CORE_PACKAGES, *own)))


def _strings(obj) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _strings(v)


def unit_identity(method: str, params: dict, seed: int, *, limit: int | None = None,
                  hashes: dict[str, str] | None = None) -> dict:
    """Everything that determines a unit's result (see :class:`Unit`); local files enter by content hash."""
    from .loaders import local_path

    hashes = {} if hashes is None else hashes
    local = {}
    for spec in sorted(set(_strings(params))):
        path = local_path(spec)
        if path is not None:
            key = str(path.resolve())
            if key not in hashes:
                hashes[key] = hash_path(path)
            local[spec] = hashes[key]
    # keys that change how a unit is computed (e.g. ``shards``), never what: left out of the identity
    execution = set(getattr(runners.get(method), "EXECUTION_PARAMS", ()))
    params = {k: v for k, v in params.items() if k not in execution}
    return {"method": method, "params": params, "seed": seed, "limit": limit, "local_files": local,
            "versions": {p: _version(p) for p in method_packages(method)}}


def identity_here(method: str, params: dict, seed: int, *, limit: int | None = None) -> dict:
    """A planned unit's identity recomputed on this machine from its stored parameters, resolved as :func:`plan`
    resolved them (a declarative runner's ``resolve_params``: the complete config of its preset and overrides)."""
    resolved = getattr(runners.get(method), "resolve_params", lambda p: p)(params)
    return unit_identity(method, resolved, seed, limit=limit)


def shard_count(unit: Unit) -> int:
    """Into how many shards the data-parallel part of ``unit`` splits (its runner's ``shard_count(params)``;
    1 for runners without shards). Shards run as separate tasks (Ray, ``run-unit --shard``) before the unit."""
    fn = getattr(runners.get(unit.method), "shard_count", None)
    return 1 if fn is None else int(fn(unit.params))


def load_config(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError as e:
        raise ConfigError(f"config file not found: {path}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML ({e})") from e


def demo_config(methods: Iterable[str] | None = None, seed: int = 0, device: str = "cpu") -> dict:
    """The demo: every available runner with its DEFAULTS (embedded models and data, offline)."""
    avail = runners.available()
    chosen = list(methods) if methods else list(avail)
    for m in chosen:
        if m not in avail:
            raise ConfigError(f"unknown method {m!r}; available: {sorted(avail)}")
    return {"seed": seed, "device": device, "methods": {m: {} for m in chosen}}


def _check_int(config: dict, key: str, lo: int) -> int | None:
    v = config.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ConfigError(f"{key} must be an integer >= {lo}, got {v!r}")
    return v


def plan(config: dict) -> list[Unit]:
    """Validate ``config`` and expand it into units (method × target × seed), each with its identity."""
    from .config import validate_method_params
    from .executors import check_resources

    unknown = set(config) - RUN_KEYS
    if unknown:
        raise ConfigError(f"unknown top-level config keys {sorted(unknown)}; allowed: {sorted(RUN_KEYS)}")
    methods = config.get("methods")
    if not isinstance(methods, dict) or not methods:
        raise ConfigError("config needs a [methods.<name>] table for at least one method")
    check_resources(config)  # where units run (executors.unit_resources), not part of any unit's identity
    seed = _check_int(config, "seed", 0) or 0
    n_seeds = _check_int(config, "seeds", 1) or 1
    limit = _check_int(config, "limit", 1)
    top_labels = config.get("labels")
    hashes: dict[str, str] = {}
    units = []
    for name, overrides in methods.items():
        mod = runners.get(name)
        if not isinstance(overrides, dict):
            raise ConfigError(f"[methods.{name}] must be a table")
        overrides = {k: v for k, v in overrides.items() if k != "resources"}
        validate_method_params(name, {k: v for k, v in overrides.items() if k not in TARGET_KEYS})
        check = getattr(mod, "check_params", None)  # checks across keys, before any work
        if check is not None:
            try:
                check({**mod.DEFAULTS, **overrides})
            except (TypeError, ValueError) as e:
                raise ConfigError(f"[methods.{name}] {e}") from e
        labels = overrides.get("labels", top_labels)
        if labels is not None and not (isinstance(labels, list) and labels and all(isinstance(v, str | int) for v in labels)):
            raise ConfigError(f"[methods.{name}] labels must be a non-empty list of class names in class-index order, "
                              f"got {labels!r}")
        params = {**mod.DEFAULTS, **{k: v for k, v in overrides.items() if k != "labels"}}
        names_models = bool({"model", "models", "targets"} & set(overrides))
        # a config that names its own models may only load the builtin models it names itself
        allowed = frozenset(s for s in _strings(overrides) if s.startswith("builtin:")) if names_models else None
        if "targets" in overrides or ("targets" in params and not {"model", "models"} & set(overrides)):
            targets = params.pop("targets")
        else:
            params.pop("targets", None)
            models = params.pop("models", None) or [params.get("model")]
            targets = [[m, params.get("dataset")] for m in models]
        for target in targets:
            if not (isinstance(target, list | tuple) and len(target) == 2 and all(isinstance(t, str) for t in target)):
                raise ConfigError(f"[methods.{name}]: each target must be [model_spec, dataset_spec], got {target!r}")
            model, dataset = target
            unit_params = {**params, "model": model, "dataset": dataset}
            if labels is not None:
                unit_params["labels"] = [str(v) for v in labels]
            resolved = getattr(mod, "resolve_params", lambda p: p)(unit_params)  # a declarative runner's full config
            for s in range(seed, seed + n_seeds):
                ident = unit_identity(name, resolved, s, limit=limit, hashes=hashes)
                units.append(Unit(name, model, dataset, unit_params, s, ident, allowed))
    return units


def _versions() -> dict[str, str | None]:
    return {p: _version(p) for p in PACKAGES}


def _find_upwards(name: str, starts: Iterable[Path]) -> Path | None:
    for start in starts:
        for d in [start, *start.parents]:
            if (d / name).is_file():
                return d / name
    return None


def uv_lock() -> Path | None:
    """The ``uv.lock`` of the environment robustsuite runs from (next to its sources, else above the cwd)."""
    return _find_upwards("uv.lock", [Path(__file__).resolve().parent, Path.cwd()])


def user_git() -> dict | None:
    """The git commit of the user's working directory, only when the run is started inside a repository."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=5,
                             cwd=Path.cwd())
        if top.returncode != 0:
            return None
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path.cwd())
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=10, cwd=Path.cwd())
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    if head.returncode != 0 or not commit:
        return None
    return {"commit": commit, "repository": top.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def resolve_device(device: str):
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} requested but CUDA is not available here; use 'cpu' or 'auto'")
    return dev


def _log_format(config: dict) -> str | None:
    from .samples import FORMATS

    fmt = config.get("log_samples")
    if fmt in (None, False):
        return None
    if fmt is True:
        return "parquet"
    if fmt not in FORMATS:
        raise ConfigError(f"log_samples must be one of {FORMATS} (or true), got {fmt!r}")
    return fmt


def unit_path(run_dir: Path, unit: Unit) -> Path:
    return Path(run_dir) / "units" / f"{unit.id}.json"


def cached_record(run_dir: Path, unit: Unit, log_format: str | None = None) -> dict | None:
    """The finished record of ``unit`` in ``run_dir`` (``None`` if it must run: absent, or samples wanted but
    not logged)."""
    path = unit_path(run_dir, unit)
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    if log_format is not None and not record.get("samples") and getattr(runners.get(unit.method), "LOGS_SAMPLES",
                                                                         False):
        return None
    if log_format is not None and any(not (Path(run_dir) / p).is_file() or not p.endswith(f".{log_format}")
                                      for p in record.get("samples") or []):
        return None  # a sample file is missing or in the other format
    return record


def _preflight(ctx, unit: Unit) -> None:
    """Before any work: load the unit's model and dataset, one forward pass gives the number of classes, and
    the dataset's labels must fit it."""
    from .predict import predict_logits

    model, ds = ctx.model(unit.model), ctx.dataset(unit.dataset)
    split = next((s for s in (ds.test, ds.val, ds.train) if len(s)), None)
    if split is None:
        raise ConfigError(f"dataset {unit.dataset} has no samples")
    try:
        logits = predict_logits(model, split.x[:2], device=ctx.device)
    except Exception as e:  # shape or modality mismatch: say which model and data
        raise ConfigError(f"model {unit.model} cannot take inputs from {unit.dataset} "
                          f"({ds.modality}, shape {tuple(getattr(split.x, 'shape', (len(split.x),)))}): "
                          f"{type(e).__name__}: {e}") from e
    if logits.ndim != 2:
        raise ConfigError(f"model {unit.model} returned shape {logits.shape}; expected (N, num_classes) logits")
    k = logits.shape[1]
    top = max((int(s.y.max()) for s in (ds.train, ds.val, ds.test) if len(s)), default=-1)
    if top >= k:
        raise ConfigError(f"dataset {unit.dataset} has class index {top} but model {unit.model} outputs {k} classes "
                          f"(dataset classes: {list(ds.classes)})")


def lock_path(run_dir: Path, unit: Unit) -> Path:
    return Path(run_dir) / "units" / f"{unit.id}.lock"


def failed_path(run_dir: Path, unit: Unit) -> Path:
    return Path(run_dir) / "units" / f"{unit.id}.failed.json"


def _prepare_dir(config: dict, run_dir: Path) -> str:
    """Create the run directory and ``run.json`` (keeping the first ``created``); returns ``created``."""
    (run_dir / "units").mkdir(parents=True, exist_ok=True)
    meta_path = run_dir / "run.json"
    created = None
    if meta_path.is_file():
        try:
            created = json.loads(meta_path.read_text())["created"]
        except (json.JSONDecodeError, KeyError):
            created = None
    created = created or _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    write_json(meta_path, {"created": created, "config": config})
    return created


def compute_unit(unit: Unit, run_dir: Path, *, device, log_format: str | None, limit: int | None,
                 progress: bool = False, cache: dict[str, Any] | None = None,
                 on_start: Callable[[], None] | None = None) -> tuple[dict, str]:
    """Compute one unit under its lock and write its record; returns ``(record, status)``.

    ``status`` is "done", "failed" or "skip" (finished by another process while this one waited for the lock).
    Raises :class:`robustsuite._lock.UnitLocked` when a live process elsewhere holds the unit's lock.
    """
    from ._lock import try_acquire

    run_dir = Path(run_dir)
    with try_acquire(lock_path(run_dir, unit)):
        record = cached_record(run_dir, unit, log_format)  # finished while we were not holding the lock
        if record is not None:
            return record, "skip"
        if on_start:
            on_start()
        ctx = _context(unit, run_dir, device=device, log_format=log_format, limit=limit, progress=progress,
                       cache=cache)
        t0 = time.perf_counter()
        try:
            _preflight(ctx, unit)
            section = runners.get(unit.method).run(ctx, {k: v for k, v in unit.params.items() if k != "labels"})
            if not isinstance(section, Section):
                raise TypeError(f"runner {unit.method} returned {type(section).__name__}, not a Section")
            record = {"unit": unit.to_dict(), "status": "done", "seconds": time.perf_counter() - t0,
                      "section": section.to_dict(), "error": None, "samples": list(ctx.samples)}
            write_json(unit_path(run_dir, unit), record)
            failed_path(run_dir, unit).unlink(missing_ok=True)
            return record, "done"
        except Exception as e:  # a failing unit is recorded; the other units still run
            record = {"unit": unit.to_dict(), "status": "failed", "seconds": time.perf_counter() - t0,
                      "section": None, "error": f"{type(e).__name__}: {e}", "samples": []}
            write_json(failed_path(run_dir, unit), record | {"traceback": traceback.format_exc()})
            return record, "failed"


def _context(unit: Unit, run_dir: Path, *, device, log_format: str | None, limit: int | None, progress: bool,
             cache: dict[str, Any] | None) -> runners.RunContext:
    return runners.RunContext(run_dir=run_dir, method=unit.method, seed=unit.seed, device=device,
                              progress=progress, _cache={} if cache is None else cache, unit_id=unit.id,
                              model_spec=unit.model, dataset_spec=unit.dataset, labels=unit.params.get("labels"),
                              limit=limit, allowed_models=unit.allowed_models, log_format=log_format)


def shard_lock_path(run_dir: Path, unit: Unit, index: int) -> Path:
    return Path(run_dir) / "units" / f"{unit.id}.shard-{index}.lock"


def compute_shard(unit: Unit, index: int, run_dir: Path, *, device, limit: int | None, progress: bool = False,
                  cache: dict[str, Any] | None = None) -> str:
    """Compute shard ``index`` of ``unit`` (its runner's ``run_shard``) into the unit's work directory.

    Returns "done", or "locked" when another live process is computing that shard. A shard is a part of the
    unit's data-parallel work (e.g. the certification of a slice of the inputs) that the runner saves
    atomically and its ``run`` reuses, merging the shards in order: the section is the same whether the shards
    ran here, on other workers, or not at all (then ``run`` computes them itself). Raises the runner's error
    when the shard fails.
    """
    from ._lock import UnitLocked, try_acquire

    count = shard_count(unit)
    if count == 1:
        raise ConfigError(f"unit {unit.id} has no shards ({unit.method} "
                          + ("does not split its work" if not hasattr(runners.get(unit.method), "run_shard")
                             else "with shards = 1") + "); run it without --shard")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        raise ConfigError(f"shard must be an integer in [0, {count}) for unit {unit.id} ({count} shards), "
                          f"got {index!r}")
    run_dir = Path(run_dir)
    (run_dir / "units").mkdir(parents=True, exist_ok=True)
    try:
        with try_acquire(shard_lock_path(run_dir, unit, index)):
            ctx = _context(unit, run_dir, device=device, log_format=None, limit=limit, progress=progress,
                           cache=cache)
            runners.get(unit.method).run_shard(ctx, {k: v for k, v in unit.params.items() if k != "labels"},
                                               index, count)
    except UnitLocked:
        return "locked"
    return "done"


def _failed_since(run_dir: Path, unit: Unit, since: float) -> dict | None:
    """The failure record another process wrote for ``unit`` after ``since`` (so it is not retried at once)."""
    path = failed_path(run_dir, unit)
    try:
        if path.stat().st_mtime < since:
            return None
        record = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    record.pop("traceback", None)
    return record


def execute(config: dict, run_dir: Path, *, progress: bool = True, command: str = "",
            on_unit: Callable[[Unit, str], None] | None = None, poll: float = 2.0, executor=None) -> dict:
    """Run every unfinished unit of ``config`` in ``run_dir``, then write the report; returns it.

    ``executor`` computes the units (:mod:`robustsuite.executors`: the default
    :class:`~robustsuite.executors.LocalExecutor` in this process, or a
    :class:`~robustsuite.executors.RayExecutor`); the run directory and the report do not depend on it.
    ``on_unit(unit, status)`` is called with status "start", "skip", "done", "failed" (with the error message
    in ``unit_errors[unit.id]`` of the returned report's units) or "waiting" (the unit is being computed by
    another process sharing ``run_dir``; its lock message is in ``unit.id``'s lock file). Units locked elsewhere
    are deferred until the end, then awaited: their owner's result is used, or the unit is taken over when its
    owner died (stale lock), so each unit is computed once however many processes share the directory.
    """
    from ._lock import wait_released
    from .executors import LocalExecutor

    units = plan(config)
    executor = LocalExecutor() if executor is None else executor
    device = executor.resolve_device(str(config.get("device", "cpu")))
    log_format = _log_format(config)
    limit = config.get("limit")
    run_dir = Path(run_dir)
    created = _prepare_dir(config, run_dir)
    started = time.time()
    shared_cache: dict[str, Any] = {}
    records: list[dict | None] = [None] * len(units)

    def compute(idx: list[int]) -> list[int]:
        """Compute the units ``idx`` with the executor; returns those locked elsewhere."""
        locked = []
        for k, record, status in executor.compute(
                [units[i] for i in idx], run_dir, config=config, device=device, log_format=log_format, limit=limit,
                progress=progress, cache=shared_cache, on_start=(lambda u: on_unit(u, "start")) if on_unit else None):
            i = idx[k]
            if status == "locked":
                locked.append(i)
                if on_unit:
                    on_unit(units[i], "waiting")
                continue
            records[i] = record
            if on_unit:
                on_unit(units[i], status)
        return locked

    todo = []
    for i, unit in enumerate(units):
        records[i] = cached_record(run_dir, unit, log_format)
        if records[i] is None:
            todo.append(i)
        elif on_unit:
            on_unit(unit, "skip")
    deferred = sorted(compute(todo))
    while deferred:
        i = deferred[0]
        wait_released(lock_path(run_dir, units[i]), poll=poll)
        failed = _failed_since(run_dir, units[i], started)
        record = cached_record(run_dir, units[i], log_format)
        if failed is not None and record is None:
            records[i] = failed  # the owner failed it during this run: reported, retried by the next run
            deferred.pop(0)
            if on_unit:
                on_unit(units[i], "failed")
        elif record is not None:  # the owner finished it
            records[i] = record
            deferred.pop(0)
            if on_unit:
                on_unit(units[i], "skip")
        elif not compute([i]):
            deferred.pop(0)
    report = assemble([r for r in records if r is not None], config=config,
                      seed=units[0].seed if units else 0, device=str(device), created=created, command=command)
    write_report(run_dir, report)
    return report


# ---- batch schedulers: plan files, one unit per process, collect -------------------------------------------

PLAN_FILE = "plan.json"


def write_plan(config: dict, run_dir: Path) -> list[Unit]:
    """Write ``plan.json`` (config, unit ids in order) and ``plan/<unit id>.json`` (the full unit spec: method,
    model, dataset, params, seed, identity, allowed models, device, limit, sample format) into ``run_dir``."""
    units = plan(config)
    log_format = _log_format(config)
    run_dir = Path(run_dir)
    created = _prepare_dir(config, run_dir)
    settings = {"device": str(config.get("device", "cpu")), "limit": config.get("limit"), "log_format": log_format}
    for u in units:
        write_json(run_dir / "plan" / f"{u.id}.json",
                   u.to_dict() | {"allowed_models": sorted(u.allowed_models) if u.allowed_models is not None
                                  else None, "settings": settings})
    write_json(run_dir / PLAN_FILE, {"created": created, "config": config, "units": [u.id for u in units],
                                     "shards": {u.id: shard_count(u) for u in units if shard_count(u) > 1}})
    return units


def load_planned_unit(run_dir: Path, unit_id: str) -> tuple[Unit, dict]:
    """The unit ``unit_id`` of the plan in ``run_dir`` and its settings; its identity is recomputed here and must
    match the planned one (same package versions and local file contents as where it was planned)."""
    run_dir = Path(run_dir)
    path = run_dir / "plan" / f"{unit_id}.json"
    if not (run_dir / PLAN_FILE).is_file():
        raise ConfigError(f"no {PLAN_FILE} in {run_dir}; "
                          f"write one with `robustsuite plan CONFIG --out {run_dir} --write`")
    if not path.is_file():
        ids = json.loads((run_dir / PLAN_FILE).read_text())["units"]
        raise ConfigError(f"unit {unit_id!r} is not in the plan of {run_dir} ({len(ids)} units; "
                          f"list them with `robustsuite collect {run_dir}` or see {run_dir / PLAN_FILE})")
    spec = json.loads(path.read_text())
    allowed = spec.get("allowed_models")
    unit = Unit(spec["method"], spec["model"], spec["dataset"], spec["params"], spec["seed"], spec["identity"],
                frozenset(allowed) if allowed is not None else None)
    if unit.id != unit_id:
        raise ConfigError(f"{path}: its content gives unit id {unit.id}, not {unit_id} (file edited?)")
    settings = spec["settings"]
    here = identity_here(unit.method, unit.params, unit.seed, limit=settings.get("limit"))
    if here != unit.identity:
        diff = sorted(k for k in set(here) | set(unit.identity) if here.get(k) != unit.identity.get(k))
        detail = "; ".join(f"{k}: planned {unit.identity.get(k)!r}, here {here.get(k)!r}" for k in diff)
        raise ConfigError(f"unit {unit_id} would compute something else on this machine than was planned ({detail}); "
                          "install the planned versions or plan again here")
    return unit, settings


def run_planned_shard(run_dir: Path, unit_id: str, index: int, *, progress: bool = False) -> str:
    """Run shard ``index`` of one planned unit (``robustsuite run-unit DIR UNIT --shard K``): "done", "skip"
    (the unit is already finished) or "locked" (another process is computing that shard)."""
    unit, settings = load_planned_unit(run_dir, unit_id)
    if cached_record(run_dir, unit, settings.get("log_format")) is not None:
        return "skip"
    return compute_shard(unit, index, Path(run_dir), device=resolve_device(settings.get("device") or "cpu"),
                         limit=settings.get("limit"), progress=progress)


def run_planned_unit(run_dir: Path, unit_id: str, *, progress: bool = False) -> tuple[dict, str]:
    """Run one planned unit (``robustsuite run-unit``): ``(record, status)``; a finished unit is not redone
    ("skip"); raises :class:`robustsuite._lock.UnitLocked` when it is being computed elsewhere."""
    unit, settings = load_planned_unit(run_dir, unit_id)
    record = cached_record(run_dir, unit, settings.get("log_format"))
    if record is not None:
        return record, "skip"
    return compute_unit(unit, Path(run_dir), device=resolve_device(settings.get("device") or "cpu"),
                        log_format=settings.get("log_format"), limit=settings.get("limit"), progress=progress)


def collect(run_dir: Path, *, command: str = "") -> tuple[dict, list[str]]:
    """Assemble the report of ``run_dir`` from its finished units (``robustsuite collect``).

    Units come from ``plan.json`` (else, or when a later ``run`` rewrote ``run.json``, from the config in
    ``run.json``, re-planned); returns the report (written
    to ``run_dir``) and the ids of the units that are neither done nor failed, listed in the report with status
    "pending".
    """
    run_dir = Path(run_dir)
    plan_file, run_file = run_dir / PLAN_FILE, run_dir / "run.json"
    if plan_file.is_file() and (not run_file.is_file() or plan_file.stat().st_mtime >= run_file.stat().st_mtime):
        meta = json.loads((run_dir / PLAN_FILE).read_text())
        units = [load_planned_unit(run_dir, uid)[0] for uid in meta["units"]]
    elif (run_dir / "run.json").is_file():
        meta = json.loads((run_dir / "run.json").read_text())
        units = plan(meta["config"])
    else:
        raise ConfigError(f"{run_dir} holds neither {PLAN_FILE} nor run.json; "
                          f"write a plan with `robustsuite plan CONFIG --out {run_dir} --write`")
    config = meta["config"]
    log_format = _log_format(config)
    records, missing = [], []
    for u in units:
        record = cached_record(run_dir, u, log_format)
        if record is None and failed_path(run_dir, u).is_file():
            record = json.loads(failed_path(run_dir, u).read_text())
            record.pop("traceback", None)
        if record is None:
            missing.append(u.id)
            record = {"unit": u.to_dict(), "status": "pending", "seconds": None, "section": None,
                      "error": None, "samples": []}
        records.append(record)
    report = assemble(records, config=config, seed=int(config.get("seed", 0) or 0),
                      device=str(config.get("device", "cpu")), created=meta["created"], command=command)
    write_report(run_dir, report)
    return report, missing


def provenance(config: dict, command: str) -> dict:
    """What the report's ``run`` block records about where and with what the numbers were computed."""
    lock = uv_lock()
    return {"id": stable_hash(config, 10), "versions": _versions(),
            "uv_lock_sha256": sha256_file(lock) if lock else None, "user_git": user_git(),
            "command": command or " ".join(sys.argv), "platform": platform.platform()}


def assemble(records: list[dict], *, config: dict, seed: int, device: str, created: str, command: str) -> dict:
    """The report from unit records (:func:`robustsuite.assemble.assemble`) with this run's provenance."""
    from .assemble import assemble as _assemble

    return _assemble(records, config=config, seed=seed, device=device, created=created,
                     provenance=provenance(config, command))
