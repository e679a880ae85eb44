"""Runs: the run config parsed once (:mod:`.config`, :class:`RunConfig`), planning units of work (:mod:`.units`), checking and computing them (:mod:`.worker`), executors (local or
Ray, :mod:`.executors`), per-unit locks (:mod:`.lock`), one-command runs (:mod:`.execute`), plan files, one unit per
batch job and ``collect`` (:mod:`.batch`), and provenance (:mod:`.provenance`).

A run is a set of independent, serialisable units (method × model × dataset × seed), each writing its own record
``units/<unit id>.json`` atomically: that is what makes resume possible, and what lets a run that outgrows one
machine be dispatched to Ray or to batch jobs instead of a home-made scheduler.
"""

from .batch import PLAN_FILE, collect, load_planned_unit, run_planned_shard, run_planned_unit, write_plan
from .config import MethodConfig, RunConfig, apply_overrides, benchmarks, demo_config, load_config, run_config
from .execute import execute, forget_units
from .resources import resolve_device
from .units import Unit, plan, shard_count, unit_identity
from .worker import (
                     cached_record,
                     check_inputs,
                     compute_shard,
                     compute_unit,
                     failed_path,
                     lock_path,
                     unit_path,
)

__all__ = ["PLAN_FILE", "MethodConfig", "RunConfig", "Unit", "apply_overrides", "benchmarks", "cached_record", "check_inputs", "collect", "compute_shard",
           "compute_unit", "demo_config", "execute", "forget_units", "failed_path", "load_config", "load_planned_unit", "lock_path",
           "plan", "resolve_device", "run_config", "run_planned_shard", "run_planned_unit", "shard_count",
           "unit_identity", "unit_path", "write_plan"]
