"""Executors: where the units of a run are computed (``robustsuite run/demo --executor local|ray``).

Both compute a unit with :func:`robustsuite.run.worker.compute_unit` (under the unit's lock, written
atomically to ``units/<unit>.json`` or ``.failed.json``), so the run directory and its report do not depend
on the executor, and a run started with one can be resumed with the other.

- :class:`LocalExecutor` computes the units one after another in this process (models loaded once per run).
- :class:`RayExecutor` submits every unit as a Ray task with the resources of :func:`unit_resources`, to a
  local Ray started here or to an existing cluster (``address``; the run directory must be visible to every
  worker at the same path). The shards of a sharded unit (:func:`robustsuite.run.units.shard_count`) run as
  tasks of their own first; the unit's task then merges them in order.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .config import RunConfig

if TYPE_CHECKING:
    from concurrent.futures import Future

EXECUTORS = ("local", "ray")
STARTS = 3  # attempts at starting a local Ray (RayExecutor(start_attempts=...))
# (index in the submitted list, record or None when the unit is locked elsewhere, status)
Outcome = tuple[int, dict | None, str]


class _Executor:
    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalExecutor(_Executor):
    """Compute the units one after another in this process (the default), with ``threads`` torch intra-op threads
    (default: one, or ``ROBUSTSUITE_THREADS``; the caller's count is restored afterwards). One thread is the
    default because results depend on the thread count (reductions sum in another order) and because several
    threads wait for each other at every small operator on a busy machine; parallelism comes from processes
    (``--workers``)."""

    name = "local"

    def __init__(self, threads: int | None = None) -> None:
        from robustsuite_common.threads import requested_threads

        self.threads = requested_threads() if threads is None else threads

    def resolve_device(self, spec: str):
        from .resources import resolve_device

        return resolve_device(spec)

    def compute(self, jobs: list, run_dir: Path, *, config: RunConfig, device, progress: bool,
                cache: dict[str, Any], on_start: Callable[[Any], None] | None = None) -> Iterator[Outcome]:
        """Yield ``(index, record, status)`` per unit of ``jobs`` as it finishes; status "locked" (record
        ``None``) when another live process holds the unit's lock."""
        from robustsuite_common.threads import limited_threads

        from .lock import UnitLocked
        from .worker import compute_unit

        for k, unit in enumerate(jobs):
            try:
                with limited_threads(self.threads):
                    record, status = compute_unit(unit, run_dir, device=device, log_format=config.log_format,
                                                  limit=config.limit,
                                                  progress=progress, cache=cache,
                                                  on_start=(lambda u=unit: on_start(u)) if on_start else None)
            except UnitLocked:
                record, status = None, "locked"
            yield k, record, status


_WORKER_CACHE: dict[str, Any] = {"run": None, "cache": {}}


def _identity_error(unit, limit: int | None, cache: dict[str, Any]) -> str | None:
    """Why this worker would compute something else than was planned for ``unit`` (``None``: it would not)."""
    from .units import identity_mismatch

    diff = identity_mismatch(unit, limit, cache)
    return diff and (f"ConfigError: this Ray worker would compute something else than was planned ({diff}); "
                     "install the driver's package versions, local files and data on every worker")


def _working_dir(cwd: str) -> contextlib.AbstractContextManager:
    """Run in the driver's working directory ``cwd`` when it exists here (relative specs resolve against it)."""
    return contextlib.chdir(cwd) if os.path.isdir(cwd) else contextlib.nullcontext()


def _worker_cache(run_token: str) -> dict[str, Any]:
    """Models stay loaded in a worker process for the next task of the same run (``run_token``)."""
    if _WORKER_CACHE["run"] != run_token:
        _WORKER_CACHE["run"], _WORKER_CACHE["cache"] = run_token, {}
    return _WORKER_CACHE["cache"]


def compute_shard_remote(unit, index: int, run_dir: str, device_spec: str, limit: int | None, cwd: str,
                         run_token: str) -> str:
    """The body of a shard's Ray task: :func:`robustsuite.run.worker.compute_shard`. Returns its status, or
    ``"failed: <error>"``: a failed shard does not fail the unit's task, which computes missing shards itself
    (and then reports the error in the unit's record if it recurs)."""
    from .resources import resolve_device
    from .worker import compute_shard

    with _working_dir(cwd):
        try:
            error = _identity_error(unit, limit, _worker_cache(run_token))
            if error is not None:
                return f"failed: {error}"
            return compute_shard(unit, index, Path(run_dir), device=resolve_device(device_spec), limit=limit,
                                 cache=_worker_cache(run_token))
        except Exception as e:  # reported by the unit's own task
            return f"failed: {type(e).__name__}: {e}"


def compute_remote(unit, run_dir: str, device_spec: str, log_format: str | None, limit: int | None,
                   cwd: str, run_token: str, *shards_done: str) -> tuple[dict | None, str]:
    """The body of a Ray task: check that this worker computes what was planned, then
    :func:`robustsuite.run.worker.compute_unit`; ``(None, "locked")`` when a live process elsewhere holds the
    unit's lock. ``shards_done``: the results of the unit's shard tasks (Ray starts this task after them)."""
    from .lock import UnitLocked
    from .resources import resolve_device
    from .worker import compute_unit, write_failure

    with _working_dir(cwd):
        error = _identity_error(unit, limit, _worker_cache(run_token))
        if error is not None:
            return write_failure(Path(run_dir), unit, error, error), "failed"
        try:
            return compute_unit(unit, Path(run_dir), device=resolve_device(device_spec), log_format=log_format,
                                limit=limit, progress=False, cache=_worker_cache(run_token))
        except UnitLocked:
            return None, "locked"


class RayExecutor(_Executor):
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
        from .resources import resolve_device

        resolve_device(spec, here=False)
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

    def compute(self, jobs: list, run_dir: Path, *, config: RunConfig, device, progress: bool,
                cache: dict[str, Any], on_start: Callable[[Any], None] | None = None) -> Iterator[Outcome]:
        """Submit ``jobs`` at once; yield ``(index, record, status)`` in the order they finish."""
        import time

        from ray.exceptions import RayError

        from .resources import RAY_KEYS
        from .units import costliest_first, shard_count
        from .worker import write_failure

        if not jobs:
            return
        ray = self._ray
        self._connect()
        task = ray.remote(compute_remote)
        run_dir = Path(run_dir).resolve()
        token = f"{run_dir}:{time.time_ns()}"
        needs = [{k: v for k, v in config.resources(unit.method).items() if k in RAY_KEYS} for unit in jobs]
        if not self.address:  # a local Ray does not grow: a request above its total would wait forever
            self._check_feasible(config, jobs, needs)
        limit = config.limit
        shard_task = ray.remote(compute_shard_remote)
        refs = {}
        for k in costliest_first(jobs, config):  # Ray schedules tasks that fit in about the order they come
            unit, need = jobs[k], needs[k]
            count = shard_count(unit)
            # a sharded unit: its shards run as tasks of their own; the unit's task waits for them (Ray resolves
            # the object refs passed as arguments first), then merges them in order
            shards = [shard_task.options(name=f"robustsuite:{unit.id}:shard-{j}-of-{count}", **need).remote(
                unit, j, str(run_dir), str(device), limit, os.getcwd(), token) for j in range(count)
                if count > 1]
            ref = task.options(name=f"robustsuite:{unit.id}", **need).remote(
                unit, str(run_dir), str(device), config.log_format, limit, os.getcwd(), token, *shards)
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
                except RayError as e:  # the task's process died (OOM kill, lost node)
                    error = f"{type(e).__name__}: {e}"
                    record = write_failure(run_dir, jobs[k], error, traceback.format_exc())
                    status = "failed"
                yield k, record, status

    def _check_feasible(self, config: RunConfig, jobs: list, needs: list[dict[str, Any]]) -> None:
        total = self._ray.cluster_resources()
        names = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}
        for unit, need in zip(jobs, needs, strict=True):
            for key, value in need.items():
                have = total.get(names[key], 0)
                if value > have:
                    table, raw = (config.raw.get("methods") or {}).get(unit.method) or {}, config.raw
                    where = (f"methods.{unit.method}.resources" if key in (table.get("resources") or {}) else
                             "resources" if key in (raw.get("resources") or {}) else
                             f"the default for device {config.device!r}, resources")
                    raise ConfigError(f"{where}.{key} = {value} for {unit.method} units, but the local Ray has "
                                      f"{have:g} {names[key]} in all; lower it or pass --address of a larger "
                                      "cluster")

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False


CPU_LOG = "cpu.log"


def cpu_logged(job: str, run_dir: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` (a unit's or a shard's task) with a line appended to ``RUN_DIR/cpu.log``: ``JOB USER SYSTEM
    WALL rc=N``, the user and system CPU seconds of this worker process during the task, its wall seconds and its
    status (0 done or finished already, 1 failed, 3 locked elsewhere); ``awk '{s+=$(NF-3)+$(NF-2)} END {print
    s/3600}' cpu.log`` sums the CPU-hours of a run."""
    import time

    before, t0, rc = os.times(), time.perf_counter(), 1
    try:
        out = fn(*args)
        status = out[1] if isinstance(out, tuple) else out
        rc = 3 if status == "locked" else 1 if str(status).startswith("failed") else 0
        return out
    finally:
        after = os.times()
        line = (f"{job} {after.user - before.user:.2f} {after.system - before.system:.2f} "
                f"{time.perf_counter() - t0:.2f} rc={rc}\n")
        with open(Path(run_dir) / CPU_LOG, "a", encoding="utf-8") as f:
            f.write(line)


class ProcessExecutor(_Executor):
    """``--workers N``: the units, and the shards of sharded units (before the unit that merges them), in N spawned
    processes with one torch thread each (``ROBUSTSUITE_THREADS``), through the functions of the Ray tasks: the
    same records as a serial run. Models stay loaded in a worker for its next task. Each task's CPU time goes to
    ``RUN_DIR/cpu.log`` (:func:`cpu_logged`)."""

    name = "processes"

    def __init__(self, workers: int) -> None:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        from robustsuite_common.threads import requested_threads, use_threads

        # spawn, not fork: torch's thread pools do not survive a fork
        self._workers = workers
        self._pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=use_threads,
                                         initargs=(requested_threads(),))
        for _ in range(workers):  # start the workers now: importing torch overlaps the driver's input checks
            self._pool.submit(exec, "import torch")  # returns None (a module would be pickled back and fail)

    resolve_device = LocalExecutor.resolve_device

    def compute(self, jobs: list, run_dir: Path, *, config: RunConfig, device, progress: bool,
                cache: dict[str, Any], on_start: Callable[[Any], None] | None = None) -> Iterator[Outcome]:
        """Yield ``(index, record, status)`` per unit of ``jobs`` as it finishes (in any order). Tasks are handed
        to the pool one per idle worker, costliest unit first (:func:`~robustsuite.run.units.costliest_first`; a
        sharded unit's shards, then the unit that merges them as soon as they are done), so that the workers
        finish together and a unit is reported started when a worker takes it."""
        from collections import deque
        from concurrent.futures import FIRST_COMPLETED, wait

        from .units import costliest_first, shard_count
        from .worker import write_failure

        run, token = (str(run_dir), str(device)), os.urandom(8).hex()
        log_format, limit = config.log_format, config.limit
        counts = {k: shard_count(u) for k, u in enumerate(jobs)}
        todo: deque[tuple[int, int | None]] = deque(
            task for k in costliest_first(jobs, config)
            for task in ([(k, j) for j in range(counts[k])] if counts[k] > 1 else [(k, None)]))
        running: dict[Future[Any], tuple[int, int | None]] = {}
        started: set[int] = set()
        while todo or running:
            while todo and len(running) < self._workers:
                k, j = todo.popleft()
                u = jobs[k]
                if j is None:
                    f = self._pool.submit(cpu_logged, u.id, run[0], compute_remote, u, *run, log_format, limit,
                                          os.getcwd(), token)
                else:
                    f = self._pool.submit(cpu_logged, f"{u.id} --shard {j}", run[0], compute_shard_remote, u, j,
                                          *run, limit, os.getcwd(), token)
                running[f] = (k, j)
                if on_start and k not in started:
                    started.add(k)
                    on_start(u)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                k, j = running.pop(f)
                if j is not None:  # a shard: once all of its unit's are done, the unit merges them (next)
                    counts[k] -= 1
                    if counts[k] == 0:
                        todo.appendleft((k, None))
                    continue
                try:
                    record, status = f.result()
                except Exception as e:  # the worker process died (killed, out of memory)
                    record = write_failure(run_dir, jobs[k], f"{type(e).__name__}: {e}", traceback.format_exc())
                    status = "failed"
                yield k, record, status

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None and not issubclass(exc_type, Exception):  # Ctrl-C: stop the running units
            for proc in list((getattr(self._pool, "_processes", None) or {}).values()):
                proc.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)


def make_executor(name: str, address: str | None = None, *, num_cpus: int | None = None, workers: int = 1):
    """The executor named by ``--executor`` (``local`` or ``ray``); ``--address`` only with ``ray``; ``--workers``
    only with ``local`` (:class:`ProcessExecutor` when above 1)."""
    if name not in EXECUTORS:
        raise ConfigError(f"--executor must be one of {list(EXECUTORS)}, got {name!r}")
    if name == "local":
        if address is not None:
            raise ConfigError("--address needs --executor ray (it is the address of a Ray cluster)")
        return ProcessExecutor(workers) if workers > 1 else LocalExecutor()
    if workers > 1:
        raise ConfigError("--workers is for the local executor; on Ray each unit's resources.num_cpus decide")
    return RayExecutor(address, num_cpus=num_cpus)
