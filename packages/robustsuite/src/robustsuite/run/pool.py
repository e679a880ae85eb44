"""``robustsuite run … --workers N``: the units of a run (and the shards of sharded units) in N local processes.

Each worker is a fresh (spawned) Python process with one torch intra-op thread (``ROBUSTSUITE_THREADS``), so N
workers use N cores and compute exactly what a serial run computes: a unit goes through the same
:func:`robustsuite.run.worker.compute_unit` (under the unit's lock, written atomically to ``units/<unit>.json``),
and a sharded unit's shards (:func:`robustsuite.run.worker.compute_shard`) run as tasks of their own before the
unit's task merges them in order, as with ``run-unit --shard`` and with Ray. Models stay loaded in a worker for
its next task. This replaces the shell script that ran ``run-unit`` jobs through ``xargs -P`` (tools/paper_cpu.sh).
"""

from __future__ import annotations

import multiprocessing
import queue as queue_mod
import traceback
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .executors import Outcome, _Executor, _worker_cache

_EVENTS: Any = None  # the queue a worker announces the start of a unit on (set by _init_worker)


def _init_worker(threads: int, events) -> None:
    from robustsuite_common.threads import use_threads

    global _EVENTS
    _EVENTS = events
    use_threads(threads)  # before the task imports torch


def _unit_task(unit, run_dir: str, device_spec: str, log_format: str | None, limit: int | None,
               run_token: str) -> tuple[dict | None, str]:
    from .lock import UnitLocked
    from .worker import compute_unit, resolve_device

    def started() -> None:
        if _EVENTS is not None:
            _EVENTS.put(unit.id)

    try:
        return compute_unit(unit, Path(run_dir), device=resolve_device(device_spec), log_format=log_format,
                            limit=limit, progress=False, cache=_worker_cache(run_token), on_start=started)
    except UnitLocked:
        return None, "locked"


def _shard_task(unit, index: int, run_dir: str, device_spec: str, limit: int | None, run_token: str) -> str:
    """A shard's status; a failed shard does not fail the unit, whose own task computes missing shards itself
    (and records the error if it recurs)."""
    from .worker import compute_shard, resolve_device

    try:
        return compute_shard(unit, index, Path(run_dir), device=resolve_device(device_spec), limit=limit,
                             cache=_worker_cache(run_token))
    except Exception as e:  # reported by the unit's own task
        return f"failed: {type(e).__name__}: {e}"


class ProcessExecutor(_Executor):
    """Compute the units in ``workers`` local processes (``threads`` torch threads each, default one)."""

    name = "processes"

    def __init__(self, workers: int, *, threads: int | None = None) -> None:
        from robustsuite_common.threads import requested_threads

        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"--workers must be a positive integer, got {workers!r}")
        self.workers, self.threads = workers, requested_threads() if threads is None else threads
        self._pool: ProcessPoolExecutor | None = None
        self._events = None

    def resolve_device(self, spec: str):
        from .worker import resolve_device

        return resolve_device(spec)

    def _start(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context("spawn")  # not fork: torch's thread pools do not survive a fork
            self._events = ctx.Queue()
            self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init_worker,
                                             initargs=(self.threads, self._events))
        return self._pool

    def compute(self, jobs: list, run_dir: Path, *, config: dict, device, log_format: str | None,
                limit: int | None, progress: bool, cache: dict[str, Any],
                on_start: Callable[[Any], None] | None = None) -> Iterator[Outcome]:
        """Yield ``(index, record, status)`` per unit of ``jobs`` as it finishes (in any order)."""
        from .units import shard_count
        from .worker import write_failure

        pool, token, run_dir = self._start(), uuid.uuid4().hex, Path(run_dir)
        args = (str(run_dir), str(device))
        shards_left: dict[int, set[Future]] = {}
        units: dict[Future, int] = {}
        shard_of: dict[Future, int] = {}
        by_id = {u.id: u for u in jobs}

        def submit_unit(k: int) -> None:
            units[pool.submit(_unit_task, jobs[k], *args, log_format, limit, token)] = k

        # the shards first (the long units' work, split), then the units without shards, in the plan's order
        for k, unit in enumerate(jobs):
            count = shard_count(unit)
            if count > 1:
                shards_left[k] = set()
                for j in range(count):
                    f = pool.submit(_shard_task, unit, j, *args, limit, token)
                    shards_left[k].add(f)
                    shard_of[f] = k
        for k in range(len(jobs)):
            if k not in shards_left:
                submit_unit(k)
        pending = set(units) | set(shard_of)
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            self._announce(by_id, on_start)
            for f in done:
                if f in shard_of:
                    k = shard_of.pop(f)
                    shards_left[k].discard(f)
                    if not shards_left[k]:  # every shard finished (or failed): the unit merges them
                        submit_unit(k)
                        pending |= {g for g, i in units.items() if i == k}
                    continue
                k = units.pop(f)
                try:
                    record, status = f.result()
                except Exception as e:  # the worker process died (killed, out of memory)
                    record = write_failure(run_dir, jobs[k], f"{type(e).__name__}: {e}", traceback.format_exc())
                    status = "failed"
                self._announce(by_id, on_start)
                yield k, record, status

    def _announce(self, by_id: dict, on_start: Callable[[Any], None] | None) -> None:
        while self._events is not None:
            try:
                uid = self._events.get_nowait()
            except queue_mod.Empty:
                return
            if on_start and uid in by_id:
                on_start(by_id[uid])

    def close(self, *, interrupted: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if interrupted:  # Ctrl-C: the workers got it too; stop the ones still running (their units stay unfinished)
            for p in list(getattr(pool, "_processes", {}).values()):
                p.terminate()
        pool.shutdown(wait=True, cancel_futures=True)

    def __exit__(self, exc_type, *exc) -> None:
        self.close(interrupted=exc_type is not None and issubclass(exc_type, BaseException)
                   and not issubclass(exc_type, Exception))
