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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import torch

from . import runners
from ._io import stable_hash, write_json
from .errors import ConfigError
from .report import SCHEMA_VERSION, Section, write_report

PACKAGES = ("robustsuite", "zeroe-perturb", "iortemp", "uncspan", "transduct-attack", "certcal", "torch",
            "transformers", "numpy", "scipy", "scikit-learn", "cvxpy", "textattack", "robustbench")
RUN_KEYS = {"seed", "device", "methods"}


@dataclass(frozen=True)
class Unit:
    """One serialisable unit of work."""

    method: str
    model: str
    dataset: str
    params: dict[str, Any]

    @property
    def id(self) -> str:
        slug = "-".join(s.replace("builtin:", "").replace(":", "_").replace("/", "_")[:40]
                        for s in (self.model, self.dataset))
        return f"{self.method}--{slug}--{stable_hash(self.params, 8)}"


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


def plan(config: dict) -> list[Unit]:
    """Validate ``config`` and expand it into units (one per method × target)."""
    unknown = set(config) - RUN_KEYS
    if unknown:
        raise ConfigError(f"unknown top-level config keys {sorted(unknown)}; allowed: {sorted(RUN_KEYS)}")
    methods = config.get("methods")
    if not isinstance(methods, dict) or not methods:
        raise ConfigError("config needs a [methods.<name>] table for at least one method")
    units = []
    for name, overrides in methods.items():
        mod = runners.get(name)
        if not isinstance(overrides, dict):
            raise ConfigError(f"[methods.{name}] must be a table")
        allowed = set(mod.DEFAULTS) | {"model", "dataset", "models", "targets"}
        bad = set(overrides) - allowed
        if bad:
            raise ConfigError(f"[methods.{name}]: unknown keys {sorted(bad)}; allowed: {sorted(allowed)}")
        params = {**mod.DEFAULTS, **overrides}
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
            units.append(Unit(name, model, dataset, {**params, "model": model, "dataset": dataset}))
    return units


def _versions() -> dict[str, str | None]:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def _git_hash() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} requested but CUDA is not available here; use 'cpu' or 'auto'")
    return dev


def execute(config: dict, run_dir: Path, *, progress: bool = True, command: str = "",
            on_unit: Callable[[Unit, str], None] | None = None) -> dict:
    """Run every unfinished unit of ``config`` in ``run_dir``, then write the report; returns it.

    ``on_unit(unit, status)`` is called with status "start", "skip", "done" or "failed".
    """
    units = plan(config)
    seed = int(config.get("seed", 0))
    device = resolve_device(str(config.get("device", "cpu")))
    run_dir = Path(run_dir)
    (run_dir / "units").mkdir(parents=True, exist_ok=True)
    meta_path = run_dir / "run.json"
    created = json.loads(meta_path.read_text())["created"] if meta_path.is_file() else \
        _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    write_json(meta_path, {"created": created, "config": config})
    shared_cache: dict[str, Any] = {}
    records = []
    for unit in units:
        done_path = run_dir / "units" / f"{unit.id}.json"
        if done_path.is_file():
            records.append(json.loads(done_path.read_text()))
            if on_unit:
                on_unit(unit, "skip")
            continue
        if on_unit:
            on_unit(unit, "start")
        ctx = runners.RunContext(run_dir=run_dir, method=unit.method, seed=seed, device=device, progress=progress,
                                 _cache=shared_cache)
        t0 = time.perf_counter()
        try:
            section = runners.get(unit.method).run(ctx, dict(unit.params))
            if not isinstance(section, Section):
                raise TypeError(f"runner {unit.method} returned {type(section).__name__}, not a Section")
            record = {"unit": unit.__dict__ | {"id": unit.id}, "status": "done",
                      "seconds": time.perf_counter() - t0, "section": section.to_dict(), "error": None}
            write_json(done_path, record)
            status = "done"
        except Exception as e:  # a failing unit is recorded; the other units still run
            record = {"unit": unit.__dict__ | {"id": unit.id}, "status": "failed",
                      "seconds": time.perf_counter() - t0, "section": None,
                      "error": f"{type(e).__name__}: {e}"}
            write_json(run_dir / "units" / f"{unit.id}.failed.json",
                       record | {"traceback": traceback.format_exc()})
            status = "failed"
        records.append(record)
        if on_unit:
            on_unit(unit, status)
    report = assemble(records, config=config, seed=seed, device=str(device), created=created, command=command)
    write_report(run_dir, report)
    return report


def assemble(records: list[dict], *, config: dict, seed: int, device: str, created: str, command: str) -> dict:
    per_method: dict[str, int] = {}
    for r in records:
        per_method[r["unit"]["method"]] = per_method.get(r["unit"]["method"], 0) + 1
    sections = {}
    for r in records:
        if r["status"] != "done":
            continue
        u = r["unit"]
        key = u["method"] if per_method[u["method"]] == 1 else f"{u['method']}:{u['model']}"
        mod = runners.get(u["method"])
        sec = dict(r["section"])
        if u["method"] == "overview":  # overview titles name model and data; prefix the section's title
            sec["title"] = f"{mod.TITLE} — {sec['title']}"
        elif per_method[u["method"]] > 1:  # the same method on several models: tell the sections apart
            sec["title"] = f"{sec['title']} ({u['model']})"
        sections[key] = sec | {"paper": getattr(mod, "PAPER", None), "model": u["model"], "dataset": u["dataset"],
                               "seconds": round(r["seconds"], 3)}
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {"id": stable_hash(config, 10),
                "created": created, "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "seed": seed, "device": device, "config": config, "versions": _versions(), "git": _git_hash(),
                "command": command or " ".join(sys.argv), "platform": platform.platform()},
        "units": [{"id": r["unit"]["id"], "method": r["unit"]["method"], "model": r["unit"]["model"],
                   "dataset": r["unit"]["dataset"], "status": r["status"], "seconds": round(r["seconds"], 3),
                   "error": r["error"]} for r in records],
        "sections": sections,
    }
