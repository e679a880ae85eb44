"""Executors: where the units of a run are computed (``robustsuite run/demo --executor local|ray``).

Both executors compute a unit with the same function, :func:`robustsuite.run.compute_unit`: under the unit's
lock (``units/<unit>.lock``), written atomically to ``units/<unit>.json`` (or ``.failed.json``) in the run
directory. So the run directory, and the report assembled from it, do not depend on the executor, and a run
started with one executor can be resumed with the other.

- :class:`LocalExecutor` computes the units one after another in this process (models loaded once per run).
- :class:`RayExecutor` submits every unit as a Ray task (``ray.remote``) with the resources of
  :func:`unit_resources`, to a local Ray started here (``ray.init(num_cpus=...)``) or to an existing cluster
  (``address``); the run directory must be visible to every worker at the same path (a shared file system).
  A unit whose runner splits its data-parallel work into shards (:func:`robustsuite.run.shard_count`, e.g.
  certcal's ``shards``) runs each shard as a task of its own first; the unit's task then merges them in order,
  so the result does not depend on the number of shards.
"""

from __future__ import annotations

import contextlib
import os
import re
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import ConfigError

EXECUTORS = ("local", "ray")
RESOURCE_KEYS = ("num_cpus", "num_gpus", "memory")
STARTS = 3  # attempts at starting a local Ray (RayExecutor(start_attempts=...))
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}

# (index in the submitted list, record or None when the unit is locked elsewhere, status)
Outcome = tuple[int, dict | None, str]


def parse_memory(value: Any, *, where: str = "memory") -> int:
    """Bytes from an integer or a string such as ``"4GiB"``, ``"500 MB"``, ``"2e9"`` (Ray's ``memory``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{where} must be a number of bytes or a string like '4GiB', got {value!r}")
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", value)
        if m is None or m.group(2).lower() not in _UNITS:
            raise ConfigError(f"{where} must be a number of bytes or a string like '4GiB' (units "
                              f"{', '.join(u for u in _UNITS if u)}), got {value!r}")
        value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not value > 0:
        raise ConfigError(f"{where} must be > 0 bytes, got {value!r}")
    return int(value)


def _check_table(table: Any, where: str) -> dict[str, Any]:
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table with keys {list(RESOURCE_KEYS)}, got {table!r}")
    unknown = set(table) - set(RESOURCE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; allowed: {list(RESOURCE_KEYS)}")
    out: dict[str, Any] = {}
    for key in ("num_cpus", "num_gpus"):
        if key in table:
            v = table[key]
            lo_ok = v > 0 if key == "num_cpus" else v >= 0
            if isinstance(v, bool) or not isinstance(v, int | float) or not lo_ok:
                raise ConfigError(f"{where}.{key} must be a number {'> 0' if key == 'num_cpus' else '>= 0'}, "
                                  f"got {v!r}")
            out[key] = v
    if "memory" in table:
        out["memory"] = parse_memory(table["memory"], where=f"{where}.memory")
    return out


def check_resources(config: dict) -> None:
    """Validate the ``[resources]`` table and every ``[methods.NAME.resources]`` table of ``config``."""
    _check_table(config.get("resources"), "resources")
    for name, table in (config.get("methods") or {}).items():
        if isinstance(table, dict):
            _check_table(table.get("resources"), f"methods.{name}.resources")


def unit_resources(config: dict, method: str) -> dict[str, Any]:
    """What one unit of ``method`` asks the executor for: ``num_cpus`` (default 1), ``num_gpus`` (default 1
    when the run's ``device`` is ``cuda``/``cuda:N``, else 0) and ``memory`` in bytes (default: none reserved),
    overridden by the run's ``[resources]`` table, then by ``[methods.<method>.resources]``.

    Resources do not enter a unit's identity: they change where a unit runs, not what it computes.
    """
    device = str(config.get("device", "cpu"))
    out: dict[str, Any] = {"num_cpus": 1, "num_gpus": 1 if device.startswith("cuda") else 0}
    out |= _check_table(config.get("resources"), "resources")
    method_table = (config.get("methods") or {}).get(method)
    if isinstance(method_table, dict):
        out |= _check_table(method_table.get("resources"), f"methods.{method}.resources")
    return out


class LocalExecutor:
    """Compute the units one after another in this process (the default)."""

    name = "local"

    def resolve_device(self, spec: str):
        from .run import resolve_device

        return resolve_device(spec)

    def compute(self, jobs: list, run_dir: Path, *, config: dict, device, log_format: str | None,
                limit: int | None, progress: bool, cache: dict[str, Any],
                on_start: Callable[[Any], None] | None = None) -> Iterator[Outcome]:
        """Yield ``(index, record, status)`` per unit of ``jobs`` as it finishes; status "locked" (record
        ``None``) when another live process holds the unit's lock."""
        from ._lock import UnitLocked
        from .run import compute_unit

        for k, unit in enumerate(jobs):
            try:
                record, status = compute_unit(unit, run_dir, device=device, log_format=log_format, limit=limit,
                                              progress=progress, cache=cache,
                                              on_start=(lambda u=unit: on_start(u)) if on_start else None)
            except UnitLocked:
                yield k, None, "locked"
                continue
            yield k, record, status

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_WORKER_CACHE: dict[str, Any] = {"run": None, "cache": {}}


def _identity_error(unit, limit: int | None) -> str | None:
    """Why this worker would compute something else than was planned for ``unit`` (``None``: it would not)."""
    from .run import identity_here

    here = identity_here(unit.method, unit.params, unit.seed, limit=limit)
    if here == unit.identity:
        return None
    diff = sorted(k for k in set(here) | set(unit.identity) if here.get(k) != unit.identity.get(k))
    return ("ConfigError: this Ray worker would compute something else than was planned ("
            + "; ".join(f"{k}: planned {unit.identity.get(k)!r}, here {here.get(k)!r}" for k in diff)
            + "); install the driver's package versions and local files on every worker")


@contextlib.contextmanager
def _working_dir(cwd: str) -> Iterator[None]:
    """Run in the driver's working directory ``cwd`` when it exists here (relative specs resolve against it)."""
    before = os.getcwd()
    if os.path.isdir(cwd):
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def _worker_cache(run_token: str) -> dict[str, Any]:
    """Models stay loaded in a worker process for the next task of the same run (``run_token``)."""
    if _WORKER_CACHE["run"] != run_token:
        _WORKER_CACHE["run"], _WORKER_CACHE["cache"] = run_token, {}
    return _WORKER_CACHE["cache"]


def compute_shard_remote(unit, index: int, run_dir: str, device_spec: str, limit: int | None, cwd: str,
                         run_token: str) -> str:
    """The body of a shard's Ray task: :func:`robustsuite.run.compute_shard`. Returns its status, or
    ``"failed: <error>"``: a failed shard does not fail the unit's task, which computes missing shards itself
    (and then reports the error in the unit's record if it recurs)."""
    from .run import compute_shard, resolve_device

    with _working_dir(cwd):
        try:
            error = _identity_error(unit, limit)
            if error is not None:
                return f"failed: {error}"
            return compute_shard(unit, index, Path(run_dir), device=resolve_device(device_spec), limit=limit,
                                 cache=_worker_cache(run_token))
        except Exception as e:  # reported by the unit's own task
            return f"failed: {type(e).__name__}: {e}"


def compute_remote(unit, run_dir: str, device_spec: str, log_format: str | None, limit: int | None,
                   cwd: str, run_token: str, *shards_done: str) -> tuple[dict | None, str]:
    """The body of a Ray task: check that this worker computes what was planned, then
    :func:`robustsuite.run.compute_unit` (the local executor's function). Returns ``(record, status)``;
    ``(None, "locked")`` when a live process elsewhere holds the unit's lock.

    ``shards_done`` are the results of the unit's shard tasks (Ray starts this task after they finished).
    Relative specs resolve against the driver's working directory ``cwd`` when it exists here. Models stay
    loaded in the worker process for the next unit of the same run (``run_token``), as in a local run.
    """
    from ._io import write_json
    from ._lock import UnitLocked
    from .run import compute_unit, failed_path, resolve_device

    with _working_dir(cwd):
        error = _identity_error(unit, limit)
        if error is not None:
            record = {"unit": unit.to_dict(), "status": "failed", "seconds": 0.0, "section": None, "error": error,
                      "samples": []}
            write_json(failed_path(Path(run_dir), unit), record | {"traceback": error})
            return record, "failed"
        try:
            return compute_unit(unit, Path(run_dir), device=resolve_device(device_spec), log_format=log_format,
                                limit=limit, progress=False, cache=_worker_cache(run_token))
        except UnitLocked:
            return None, "locked"


class RayExecutor:
    """Submit every unit as a Ray task with the resources of :func:`unit_resources`.

    ``address=None`` starts a local Ray with ``num_cpus`` CPUs (default: all) unless this process is already
    connected to one; otherwise ``ray.init(address=address)`` connects to an existing cluster (``"auto"``,
    ``"HOST:6379"`` or ``"ray://HOST:10001"``). A Ray started here is shut down by :meth:`close`.
    """

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, start_attempts: int = STARTS):
        # a driver under `uv run` would otherwise make Ray re-create the uv environment for every worker
        # (packaging the working directory: about a minute here); the workers of a local Ray already run
        # this interpreter. Set RAY_ENABLE_UV_RUN_RUNTIME_ENV=1 to keep Ray's behaviour.
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        try:
            import ray
        except ImportError as e:
            raise ConfigError("--executor ray needs Ray, an optional extra: pip install 'robustsuite[ray]' "
                              "(in this repository: uv sync, or uv sync --extra ray)") from e
        self._ray = ray
        self.address, self.num_cpus, self.start_attempts = address, num_cpus, start_attempts
        self._started = False

    def resolve_device(self, spec: str) -> str:
        """The device is resolved on each worker (the driver may have no GPU); here only its syntax is checked."""
        import torch

        if spec != "auto":
            try:
                torch.device(spec)
            except RuntimeError as e:
                raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {spec!r}") from e
        return spec

    def _connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            return
        if self.address:
            try:
                ray.init(address=self.address)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise ConfigError(f"--address {self.address}: cannot connect to a Ray cluster there "
                                  f"({type(e).__name__}: {e})") from e
            self._started = True
            return
        # a new raylet waits a fixed ~15 s for its dashboard agent (a Python process) to report its ports and
        # aborts otherwise; on an overloaded machine the agent's imports can take longer (seen here at load
        # averages 13-26 on 2 cores), and a later attempt often makes it
        for attempt in range(1, self.start_attempts + 1):
            try:
                ray.init(num_cpus=self.num_cpus, include_dashboard=False)
                break
            except Exception as e:  # Ray raises a bare Exception for the startup timeout
                ray.shutdown()
                if attempt == self.start_attempts:
                    raise ConfigError(f"--executor ray could not start a local Ray in {attempt} attempts "
                                      f"({type(e).__name__}: {e}); start one with `ray start --head "
                                      "--num-cpus N` and pass --address auto") from e
        self._started = True

    def compute(self, jobs: list, run_dir: Path, *, config: dict, device, log_format: str | None,
                limit: int | None, progress: bool, cache: dict[str, Any],
                on_start: Callable[[Any], None] | None = None) -> Iterator[Outcome]:
        """Submit ``jobs`` at once; yield ``(index, record, status)`` in the order they finish."""
        import time

        from ._io import write_json
        from .run import failed_path, shard_count

        if not jobs:
            return
        ray = self._ray
        self._connect()
        task = ray.remote(compute_remote)
        run_dir = Path(run_dir).resolve()
        token = f"{run_dir}:{time.time_ns()}"
        needs = [unit_resources(config, unit.method) for unit in jobs]
        if not self.address:  # a local Ray does not grow: a request above its total would wait forever
            self._check_feasible(config, jobs, needs)
        shard_task = ray.remote(compute_shard_remote)
        refs = {}
        for k, (unit, need) in enumerate(zip(jobs, needs, strict=True)):
            count = shard_count(unit)
            # a sharded unit: its shards run as tasks of their own; the unit's task waits for them (Ray resolves
            # the object refs passed as arguments first), then merges them in order
            shards = [shard_task.options(name=f"robustsuite:{unit.id}:shard-{j}-of-{count}", **need).remote(
                unit, j, str(run_dir), str(device), limit, os.getcwd(), token) for j in range(count)
                if count > 1]
            ref = task.options(name=f"robustsuite:{unit.id}", **need).remote(
                unit, str(run_dir), str(device), log_format, limit, os.getcwd(), token, *shards)
            refs[ref] = k
            if on_start:
                on_start(unit)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                k = refs[ref]
                try:
                    record, status = ray.get(ref)
                except ray.exceptions.RayError as e:  # the task's process died (OOM kill, lost node)
                    unit = jobs[k]
                    record = {"unit": unit.to_dict(), "status": "failed", "seconds": 0.0, "section": None,
                              "error": f"{type(e).__name__}: {e}", "samples": []}
                    write_json(failed_path(run_dir, unit), record | {"traceback": traceback.format_exc()})
                    status = "failed"
                yield k, record, status

    def _check_feasible(self, config: dict, jobs: list, needs: list[dict[str, Any]]) -> None:
        total = self._ray.cluster_resources()
        names = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}
        for unit, need in zip(jobs, needs, strict=True):
            for key, value in need.items():
                have = total.get(names[key], 0)
                if value > have:
                    table = (config.get("methods") or {}).get(unit.method) or {}
                    where = (f"methods.{unit.method}.resources" if key in (table.get("resources") or {}) else
                             "resources" if key in (config.get("resources") or {}) else
                             f"the default for device {config.get('device', 'cpu')!r}, resources")
                    raise ConfigError(f"{where}.{key} = {value} for {unit.method} units, but the local Ray has "
                                      f"{have:g} {names[key]} in all; lower it or pass --address of a larger "
                                      "cluster")

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def make_executor(name: str, address: str | None = None, *, num_cpus: int | None = None):
    """The executor named by ``--executor`` (``local`` or ``ray``); ``--address`` only with ``ray``."""
    if name not in EXECUTORS:
        raise ConfigError(f"--executor must be one of {list(EXECUTORS)}, got {name!r}")
    if name == "local":
        if address is not None:
            raise ConfigError("--address needs --executor ray (it is the address of a Ray cluster)")
        return LocalExecutor()
    return RayExecutor(address, num_cpus=num_cpus)
