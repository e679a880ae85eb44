"""A run in one command: plan the config, check every unit's inputs, compute the unfinished units with an executor
(:mod:`robustsuite.run.executors`), then write the report. Every finished unit writes ``units/<unit id>.json``
(atomically), so an interrupted run resumes where it stopped."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError, did_you_mean
from .config import RunConfig
from .provenance import check_run_dir, prepare_dir, write_run_report
from .units import Unit, plan
from .worker import cached_record, check_inputs, failed_path, lock_path, read_record, unit_path

log = logging.getLogger("robustsuite")


def _failed_since(run_dir: Path, unit: Unit, since: float) -> dict | None:
    """The failure record another process wrote for ``unit`` after ``since`` (so it is not retried at once)."""
    path = failed_path(run_dir, unit)
    try:
        if path.stat().st_mtime < since:
            return None
    except FileNotFoundError:
        return None
    record = read_record(path, unit, "failed")
    if record is not None:
        record.pop("traceback", None)
    return record


def forget_units(config: RunConfig | Mapping[str, Any], run_dir: Path, unit_ids: Iterable[str], *, cache: dict[str, Any] | None = None
                 ) -> list[str]:
    """Remove the records of ``unit_ids`` (units of ``config``) from ``run_dir``, so the next run recomputes them:
    forces a unit to be computed again (an edited or damaged record is recomputed anyway). An id that is not a unit
    of the config is refused (:class:`ConfigError`, with the closest id), before anything is removed."""
    wanted = list(unit_ids)
    if not wanted:
        return []
    units = {u.id: u for u in plan(config, cache=cache)}
    for uid in wanted:
        if uid not in units:
            hint = did_you_mean(uid, units) or f" (its units: {', '.join(units)})"
            raise ConfigError(f"unit {uid} is not a unit of this config{hint}")
    for uid in wanted:
        for path in (unit_path(run_dir, units[uid]), failed_path(run_dir, units[uid])):
            Path(path).unlink(missing_ok=True)
    return wanted


def execute(config: RunConfig | Mapping[str, Any], run_dir: Path, *, progress: bool = True, command: str = "",
            on_unit: Callable[[Unit, str], None] | None = None, executor=None,
            cache: dict[str, Any] | None = None) -> dict:
    """Run every unfinished unit of ``config`` (a :class:`RunConfig`; a dict is parsed first) in ``run_dir``, then
    write the report; returns it.

    Before any unit starts, the units' inputs are checked (:func:`robustsuite.run.worker.check_inputs`): a bad spec,
    labels or model output raises here and nothing runs. ``executor`` computes the units
    (:class:`~robustsuite.run.executors.LocalExecutor` in this process by default, or a
    :class:`~robustsuite.run.executors.RayExecutor`); the run directory and the report do not depend on it.
    ``on_unit(unit, status)`` is called with status "start", "skip", "done", "failed" or "waiting" (the unit is
    being computed by another process sharing ``run_dir``). Units locked elsewhere are deferred until the end, then
    awaited: their owner's result is used, or the unit is computed here when its owner died, so each unit
    is computed once however many processes share the directory. ``cache`` holds loaded models and datasets (a
    caller that planned the config already passes its cache).
    """
    from .executors import LocalExecutor
    from .lock import wait_released

    check_run_dir(run_dir)  # a file in the way, a folder that cannot be written: before any work
    config = RunConfig.parse(config)
    shared_cache: dict[str, Any] = {} if cache is None else cache
    units = plan(config, cache=shared_cache)
    executor = LocalExecutor() if executor is None else executor
    device = executor.resolve_device(config.device)
    fmt, limit, run_dir = config.log_format, config.limit, Path(run_dir)
    records: list[dict | None] = [cached_record(run_dir, u, fmt) for u in units]
    todo = [i for i, r in enumerate(records) if r is None]
    check_inputs([units[i] for i in todo], cache=shared_cache, device=device if executor.name == "local" else "cpu",
                 limit=limit)
    created = prepare_dir(config.to_dict(), run_dir)
    started = time.time()
    on_start = None if on_unit is None else (lambda u, notify=on_unit: notify(u, "start"))

    def report(unit: Unit, status: str) -> None:
        log.info("unit %s: %s", unit.id, {"skip": "finished already (reused)", "waiting": "being computed "
                                          "elsewhere; waiting for it after the other units"}.get(status, status))
        if on_unit:
            on_unit(unit, status)

    def compute(idx: list[int]) -> list[int]:
        """Compute the units ``idx`` with the executor; returns those locked elsewhere."""
        locked = []
        for k, record, status in executor.compute(
                [units[i] for i in idx], run_dir, config=config, device=device, progress=progress,
                cache=shared_cache, on_start=on_start):
            i = idx[k]
            if status == "locked":
                locked.append(i)
            else:
                records[i] = record
            report(units[i], "waiting" if status == "locked" else status)
        return locked

    for i, unit in enumerate(units):
        if records[i] is not None:
            report(unit, "skip")
    deferred = sorted(compute(todo))
    while deferred:
        i = deferred[0]
        wait_released(lock_path(run_dir, units[i]))
        failed = _failed_since(run_dir, units[i], started)
        record = cached_record(run_dir, units[i], fmt)
        if failed is not None and record is None:
            records[i] = failed  # the owner failed it during this run: reported, retried by the next run
            deferred.pop(0)
            report(units[i], "failed")
        elif record is not None:  # the owner finished it
            records[i] = record
            deferred.pop(0)
            report(units[i], "skip")
        elif not compute([i]):
            deferred.pop(0)
    return write_run_report(run_dir, [r for r in records if r is not None], config=config.to_dict(),
                            seed=config.seed, device=str(device), created=created, command=command)
