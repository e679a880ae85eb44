"""Computing units: input checks before any unit starts, unit records (checked against the unit's identity
when read), and the one function every executor uses for a unit (:func:`compute_unit`) or a shard
(:func:`compute_shard`)."""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import runners
from .._io import stable_hash, write_json
from ..errors import ConfigError
from ..report import Section
from .config import strings
from .resources import resolve_device
from .units import Unit

if TYPE_CHECKING:
    import torch

log = logging.getLogger("robustsuite")


def unit_path(run_dir: Path, unit: Unit, suffix: str = ".json") -> Path:
    return Path(run_dir) / "units" / f"{unit.id}{suffix}"


def lock_path(run_dir: Path, unit: Unit) -> Path:
    return unit_path(run_dir, unit, ".lock")


def failed_path(run_dir: Path, unit: Unit) -> Path:
    return unit_path(run_dir, unit, ".failed.json")


def write_failure(run_dir: Path, unit: Unit, error: str, trace: str, seconds: float = 0.0) -> dict:
    """Write ``units/<unit>.failed.json`` (with the traceback) and return the failed record (without it)."""
    record = {"unit": unit.to_dict(), "status": "failed", "seconds": seconds, "section": None, "error": error,
              "samples": []}
    write_json(failed_path(run_dir, unit), record | {"traceback": trace})
    return record


def read_record(path: Path, unit: Unit, status: str = "done") -> dict | None:
    """The record in ``path`` if it is ``unit``'s (same id and identity) with ``status``, else ``None``
    (with a warning naming the file when it is corrupt or another unit's: the unit is recomputed)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        log.warning("%s is not a readable unit record (%s: %s): recomputing unit %s", path, type(e).__name__, e,
                    unit.id)
        return None
    held = record.get("unit") if isinstance(record, dict) else None
    held = held if isinstance(held, dict) else {}
    if held.get("id") != unit.id or stable_hash(held.get("identity")) != stable_hash(unit.identity):
        log.warning("%s holds the record of unit %s, not of %s (overwritten or edited?): recomputing it", path,
                    held.get("id"), unit.id)
        return None
    if record.get("status") != status or (status == "done" and not isinstance(record.get("section"), dict)):
        log.warning("%s is not a %s unit record: recomputing unit %s", path, status, unit.id)
        return None
    if status == "done" and record.get("digest") != record_digest(record):
        log.warning("%s: its content does not match its digest (edited after it was written, or written before "
                    "records carried one): not used; `robustsuite run` recomputes unit %s and replaces it", path,
                    unit.id)
        return None
    return record


def record_digest(record: dict) -> str:
    """SHA-256 of a unit record's whole content (every field but ``digest``): any edit of a metric, an interval or
    a table after the record was written changes it, so a tampered record is never reported."""
    return stable_hash({k: v for k, v in record.items() if k != "digest"}, length=64)


def seal(record: dict) -> dict:
    """``record`` with its :func:`record_digest`, as it is written."""
    return {**record, "digest": record_digest(record)}


def cached_record(run_dir: Path, unit: Unit, log_format: str | None = None) -> dict | None:
    """The finished record of ``unit`` in ``run_dir`` (``None`` if it must run: absent, unreadable, another unit's,
    or samples wanted but not logged)."""
    record = read_record(unit_path(run_dir, unit), unit)
    if record is None or log_format is None:
        return record
    if not record.get("samples") and getattr(runners.get(unit.method), "LOGS_SAMPLES", False):
        return None
    if any(not (Path(run_dir) / p).is_file() or not p.endswith(f".{log_format}") for p in record.get("samples") or []):
        return None  # a sample file is missing or in the other format
    return record


def _context(unit: Unit, run_dir: Path, *, device, log_format: str | None, limit: int | None, progress: bool,
             cache: dict[str, Any] | None) -> runners.RunContext:
    return runners.RunContext(run_dir=Path(run_dir), method=unit.method, seed=unit.seed, device=device,
                              progress=progress, _cache={} if cache is None else cache, unit_id=unit.id,
                              model_spec=unit.model, dataset_spec=unit.dataset, labels=unit.params.get("labels"),
                              limit=limit, allowed_models=unit.allowed_models, log_format=log_format)


def _runner_params(unit: Unit) -> dict[str, Any]:
    return {k: v for k, v in unit.params.items() if k != "labels"}  # labels ride on the context


LOCAL_SCHEMES = ("csv", "jsonl", "npz", "imagefolder", "idx", "hf-disk")  # dataset specs naming a local path


def torch_device_type() -> type:
    import torch

    return torch.device


def check_inputs(units: Iterable[Unit], *, cache: dict[str, Any], device: str | torch.device | None = "cpu",
                 limit: int | None = None) -> None:
    """Before any unit starts: every local model path exists; each unit's model and dataset load, the labels map
    onto the model's classes (explicit ``labels`` may not contradict its ``id2label``), and one forward pass on a
    few samples gives logits (N, K) with every class index below K — outputs that look like probabilities are
    refused unless the spec declares ``?outputs=probabilities``. Raises :class:`ConfigError` / ``SpecError``."""
    from robustsuite_common.models import looks_like_probabilities

    from ..data import is_dataset_spec, local_path
    from ..predict import predict_logits
    from ..zoo import missing_path

    units = list(units)
    if device is not None and not isinstance(device, torch_device_type()):
        resolve_device(str(device))  # "cuda" without CUDA: refused here, as `run` refuses it
    for unit in units:  # every file first: nothing is loaded before a missing path is reported
        for spec in strings(unit.params):
            path = None if is_dataset_spec(spec) else missing_path(spec)
            if path is not None:
                raise ConfigError(f"[methods.{unit.method}] model {spec}: {path} does not exist")
            if spec.partition(":")[0] in LOCAL_SCHEMES and local_path(spec) is None:
                raise ConfigError(f"[methods.{unit.method}] dataset {spec}: file not found")
    seen = set()
    for unit in units:
        key = (unit.method, unit.model, unit.dataset, str(unit.params.get("labels")))
        if key in seen:
            continue
        seen.add(key)
        log.info("checking %s on %s", unit.model, unit.dataset)
        ctx = _context(unit, Path("."), device=device, log_format=None, limit=limit, progress=False, cache=cache)
        model, ds = ctx.model(unit.model), ctx.dataset(unit.dataset)
        split = next((s for s in (ds.test, ds.val, ds.train) if len(s)), None)
        if split is None:
            raise ConfigError(f"dataset {unit.dataset} has no samples")
        try:
            logits = predict_logits(model, split.head(8).x, outputs="log_probabilities")  # raw: checked below
        except Exception as e:  # shape or modality mismatch, probabilities: say which model and data
            raise ConfigError(f"model {unit.model} cannot take inputs from {unit.dataset} ({ds.modality}, shape "
                              f"{tuple(getattr(split.x, 'shape', (len(split.x),)))}): {type(e).__name__}: {e}") from e
        import torch

        if logits.ndim != 2:
            raise ConfigError(f"model {unit.model} returned shape {logits.shape}; expected (N, num_classes) logits")
        if looks_like_probabilities(torch.as_tensor(logits)):  # at any number of samples, one included
            raise ConfigError(f"model {unit.model} outputs probabilities (every row in [0, 1], summing to 1), not "
                              f"logits; scored as logits they give wrong confidences. Return logits, or declare it: "
                              f"model = \"{unit.model}{'&' if '?' in unit.model else '?'}outputs=probabilities\"")
        runners.get(unit.method).check_classes(_runner_params(unit), logits.shape[1])  # e.g. AutoAttack's >= 4
        top = max((int(s.y.max()) for s in (ds.train, ds.val, ds.test) if len(s)), default=-1)
        if top >= logits.shape[1]:
            raise ConfigError(f"dataset {unit.dataset} has class index {top} but model {unit.model} outputs "
                              f"{logits.shape[1]} classes (dataset classes: {list(ds.classes)})")


def compute_unit(unit: Unit, run_dir: Path, *, device, log_format: str | None, limit: int | None,
                 progress: bool = False, cache: dict[str, Any] | None = None,
                 on_start: Callable[[], None] | None = None) -> tuple[dict, str]:
    """Compute one unit under its lock and write its record; ``(record, status)`` with status "done",
    "failed" or "skip" (finished elsewhere meanwhile). Raises :class:`~robustsuite.run.lock.UnitLocked` when a
    live process elsewhere holds the lock."""
    from .lock import try_acquire

    run_dir = Path(run_dir)
    with try_acquire(lock_path(run_dir, unit)):
        record = cached_record(run_dir, unit, log_format)  # finished while we were not holding the lock
        if record is not None:
            return record, "skip"
        if on_start:
            on_start()
        log.info("unit %s: computing %s on %s with %s (seed %s)", unit.id, unit.method, unit.dataset, unit.model,
                 "any: deterministic" if unit.deterministic else unit.seed)
        ctx = _context(unit, run_dir, device=device, log_format=log_format, limit=limit, progress=progress,
                       cache=cache)
        t0 = time.perf_counter()
        try:
            section = runners.get(unit.method).run(ctx, _runner_params(unit))
            if not isinstance(section, Section):
                raise TypeError(f"runner {unit.method} returned {type(section).__name__}, not a Section")
            section = section.to_dict()
            if unit.deterministic:
                section["notes"] = [*section["notes"], "Deterministic: computed once, for every seed (the result "
                                    "does not depend on the seed)."]
            record = {"unit": unit.to_dict(), "status": "done", "seconds": time.perf_counter() - t0,
                      "section": section, "error": None, "samples": list(ctx.samples)}
            record = seal(json.loads(json.dumps(record, default=str)))  # the digest of what is read back
            write_json(unit_path(run_dir, unit), record)
            failed_path(run_dir, unit).unlink(missing_ok=True)
            log.info("unit %s: done in %.1f s", unit.id, record["seconds"])
            return record, "done"
        except Exception as e:  # a failing unit is recorded; the other units still run
            record = write_failure(run_dir, unit, f"{type(e).__name__}: {e}", traceback.format_exc(),
                                   time.perf_counter() - t0)
            log.info("unit %s: failed: %s", unit.id, record["error"])
            return record, "failed"


def compute_shard(unit: Unit, index: int, run_dir: Path, *, device, limit: int | None, progress: bool = False,
                  cache: dict[str, Any] | None = None) -> str:
    """Compute shard ``index`` of ``unit`` (its runner's ``run_shard``, e.g. certifying a slice of the inputs,
    saved atomically in the unit's work directory); "done", or "locked" when another live process is
    computing it. The unit's ``run`` merges its shards in order, computing missing ones itself, so the section
    does not depend on where (or whether) they ran. Raises the runner's error when the shard fails."""
    from .lock import UnitLocked, try_acquire
    from .units import shard_count

    count = shard_count(unit)
    if count == 1:
        raise ConfigError(f"unit {unit.id} has no shards ({unit.method} "
                          + ("does not split its work" if not hasattr(runners.get(unit.method).experiment, "run_shard")
                             else "with shards = 1") + "); run it without --shard")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        raise ConfigError(f"shard must be an integer in [0, {count}) for unit {unit.id} ({count} shards), "
                          f"got {index!r}")
    run_dir = Path(run_dir)
    (run_dir / "units").mkdir(parents=True, exist_ok=True)
    try:
        with try_acquire(unit_path(run_dir, unit, f".shard-{index}.lock")):
            log.info("unit %s: computing shard %d of %d", unit.id, index, count)
            ctx = _context(unit, run_dir, device=device, log_format=None, limit=limit, progress=progress,
                           cache=cache)
            runners.get(unit.method).run_shard(ctx, _runner_params(unit), index, count)
    except UnitLocked:
        return "locked"
    return "done"
