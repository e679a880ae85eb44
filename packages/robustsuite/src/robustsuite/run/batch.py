"""Batch schedulers without Ray: ``plan --write`` writes the plan, ``run-unit`` computes one planned unit (or one
shard of it) per job, ``collect`` assembles the report from whatever is finished."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._io import write_json
from ..errors import ConfigError
from .config import RunConfig
from .provenance import prepare_dir, write_run_report
from .resources import resolve_device
from .units import Unit, identity_diff, identity_mismatch, plan, shard_count
from .worker import (
    cached_record,
    check_inputs,
    compute_shard,
    compute_unit,
    failed_path,
    read_record,
    unit_path,
)

PLAN_FILE = "plan.json"


def write_plan(config: RunConfig | Mapping[str, Any], run_dir: Path) -> list[Unit]:
    """Write ``plan.json`` (config, unit ids in order) and ``plan/<unit id>.json`` (unit and settings)."""
    config = RunConfig.parse(config)
    units = plan(config)
    run_dir = Path(run_dir)
    created = prepare_dir(config.to_dict(), run_dir)
    settings = {"device": config.device, "limit": config.limit, "log_format": config.log_format}
    for u in units:
        write_json(run_dir / "plan" / f"{u.id}.json",
                   u.to_dict() | {"allowed_models": sorted(u.allowed_models) if u.allowed_models is not None
                                  else None, "settings": settings})
    write_json(run_dir / PLAN_FILE, {"created": created, "config": config.to_dict(), "units": [u.id for u in units],
                                     "shards": {u.id: shard_count(u) for u in units if shard_count(u) > 1}})
    return units


def _read_json(path: Path, what: str, run_dir: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path} ({what}) is not readable ({type(e).__name__}: {e}); write the plan again with "
                          f"`robustsuite plan CONFIG --out {run_dir} --write`") from e


def load_planned_unit(run_dir: Path, unit_id: str, cache: dict[str, Any] | None = None) -> tuple[Unit, dict]:
    """The planned unit ``unit_id`` and its settings; its identity recomputed here must match the plan's."""
    run_dir = Path(run_dir)
    path = run_dir / "plan" / f"{unit_id}.json"
    if not (run_dir / PLAN_FILE).is_file():
        raise ConfigError(f"no {PLAN_FILE} in {run_dir}; "
                          f"write one with `robustsuite plan CONFIG --out {run_dir} --write`")
    if not path.is_file():
        ids = _read_json(run_dir / PLAN_FILE, "the plan", run_dir)["units"]
        raise ConfigError(f"unit {unit_id!r} is not in the plan of {run_dir} ({len(ids)} units; "
                          f"list them with `robustsuite collect {run_dir}` or see {run_dir / PLAN_FILE})")
    spec = _read_json(path, "a planned unit", run_dir)
    unit = Unit.from_dict(spec)
    if unit.id != unit_id:
        raise ConfigError(f"{path}: its content gives unit id {unit.id}, not {unit_id} (file edited?)")
    diff = identity_mismatch(unit, spec["settings"].get("limit"), cache)
    if diff is not None:
        raise ConfigError(f"unit {unit_id} would compute something else on this machine than was planned "
                          f"({diff}); install the planned versions or plan again here")
    return unit, spec["settings"]


def _checked_device(unit: Unit, settings: dict[str, Any], cache: dict[str, Any]) -> Any:
    """The device here, after the unit's inputs are checked on it (as ``run`` checks them)."""
    device = resolve_device(settings.get("device") or "cpu")
    check_inputs([unit], cache=cache, device=device, limit=settings.get("limit"))
    return device


def run_planned_shard(run_dir: Path, unit_id: str, index: int, *, progress: bool = False) -> str:
    """Run shard ``index`` of one planned unit (``robustsuite run-unit DIR UNIT --shard K``): "done", "skip"
    (the unit is already finished) or "locked" (another process is computing that shard)."""
    cache: dict[str, Any] = {}
    unit, settings = load_planned_unit(run_dir, unit_id, cache)
    if cached_record(run_dir, unit, settings.get("log_format")) is not None:
        return "skip"
    return compute_shard(unit, index, Path(run_dir), device=_checked_device(unit, settings, cache),
                         limit=settings.get("limit"), progress=progress, cache=cache)


def run_planned_unit(run_dir: Path, unit_id: str, *, progress: bool = False) -> tuple[dict, str]:
    """Run one planned unit (``robustsuite run-unit``): ``(record, status)``; a finished unit is not redone
    ("skip"); raises :class:`robustsuite.run.lock.UnitLocked` when it is being computed elsewhere."""
    cache: dict[str, Any] = {}
    unit, settings = load_planned_unit(run_dir, unit_id, cache)
    record = cached_record(run_dir, unit, settings.get("log_format"))
    if record is not None:
        return record, "skip"
    return compute_unit(unit, Path(run_dir), device=_checked_device(unit, settings, cache),
                        log_format=settings.get("log_format"), limit=settings.get("limit"), progress=progress,
                        cache=cache)


def _finished_before(run_dir: Path, units: list[Unit], missing: list[str]) -> list[str]:
    """The units the existing report lists as done that would now be pending, with what differs."""
    try:
        old = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
        done = {(u["method"], u["model"], u["dataset"], u.get("seed")): u["id"] for u in old["units"]
                if u.get("status") == "done"}
    except (OSError, ValueError, KeyError, TypeError):
        return []
    out = []
    for u in units:
        old_id = done.get((u.method, u.model, u.dataset, u.seed))
        if u.id in missing and old_id is not None:
            try:
                was = json.loads((run_dir / "units" / f"{old_id}.json").read_text())["unit"]["identity"]
                why = identity_diff(was, u.identity)
            except (OSError, ValueError, KeyError, TypeError):
                why = "its record is gone"
            out.append(f"{u.method} on {u.model} / {u.dataset}, seed {u.seed}: finished as {old_id} ({why})")
    return out


def collect(run_dir: Path, *, command: str = "") -> tuple[dict, list[str]]:
    """Assemble and write the report of ``run_dir`` from its finished units (``robustsuite collect``): units
    from ``plan.json`` (or from ``run.json`` when newer); returns the report and the ids of "pending" units. A
    finished report is never replaced by one where its finished units are pending (their identity changed):
    that is a :class:`ConfigError` saying what differs."""
    run_dir = Path(run_dir)
    plan_file, run_file = run_dir / PLAN_FILE, run_dir / "run.json"
    if plan_file.is_file() and (not run_file.is_file() or plan_file.stat().st_mtime >= run_file.stat().st_mtime):
        meta = _read_json(plan_file, "the plan", run_dir)
        units = [Unit.from_dict(_read_json(run_dir / "plan" / f"{uid}.json", "a planned unit", run_dir))
                 for uid in meta["units"]]
        config = RunConfig.recorded(meta["config"])
    elif run_file.is_file():
        meta = _read_json(run_file, "the run's config", run_dir)
        config = RunConfig.parse(meta["config"])
        units = plan(config)
    else:
        raise ConfigError(f"{run_dir} holds neither {PLAN_FILE} nor run.json; "
                          f"write a plan with `robustsuite plan CONFIG --out {run_dir} --write`")
    fmt = config.log_format
    records, missing = [], []
    for u in units:
        record = cached_record(run_dir, u, fmt) or read_record(failed_path(run_dir, u), u, "failed")
        if record is None:
            missing.append(u.id)
            record = {"unit": u.to_dict(), "status": "pending", "seconds": None, "section": None,
                      "error": None, "samples": []}
        record.pop("traceback", None)
        records.append(record)
    rejected = [u for u in units if u.id in missing and unit_path(run_dir, u).is_file()
                and read_record(unit_path(run_dir, u), u) is None]
    if rejected:  # a record is there but not usable (edited, another unit's, corrupt): never reported, never ignored
        u = rejected[0]
        raise ConfigError(f"{unit_path(run_dir, u)} is not a valid record of unit {u.id} (edited after it was written, "
                          "or damaged; the warning above says how), so it is not reported; recompute it with "
                          f"`robustsuite run CONFIG --out {run_dir}` (which replaces it) or `robustsuite run-unit "
                          f"{run_dir} {u.id}`"
                          + (f" ({len(rejected) - 1} more such records)" if len(rejected) > 1 else ""))
    stale = _finished_before(run_dir, units, missing)
    if stale:
        raise ConfigError(f"collect would turn {len(stale)} finished unit(s) of {run_dir / 'report.json'} into pending "
                          "ones, because what they depend on changed since they ran: " + "; ".join(stale)
                          + f". The report is left as it was; recompute them with `robustsuite run CONFIG --out "
                          f"{run_dir}` (or `run-unit` jobs of a new plan)")
    report = write_run_report(run_dir, records, config=config.to_dict(), seed=config.seed, device=config.device,
                              created=meta["created"], command=command)
    return report, missing
