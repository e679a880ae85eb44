"""What a unit asks its executor for (``num_cpus``, ``num_gpus``, ``memory``) and what it is expected to cost
(``cpu_seconds``): the ``[resources]`` tables of a config. Resources change where and when a unit runs, never what it
computes: they are not part of any unit's identity."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError

RESOURCE_KEYS = ("num_cpus", "num_gpus", "memory", "cpu_seconds")
#: the keys a Ray task is given (``cpu_seconds`` is a scheduling hint, not a Ray resource)
RAY_KEYS = ("num_cpus", "num_gpus", "memory")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


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
    out: dict[str, Any] = {k: table[k] for k in ("num_cpus", "num_gpus", "cpu_seconds") if k in table}
    for key, v in out.items():
        low_ok = v >= 0 if key == "num_gpus" else v > 0
        if isinstance(v, bool) or not isinstance(v, int | float) or not low_ok:
            raise ConfigError(f"{where}.{key} must be a number {'>= 0' if key == 'num_gpus' else '> 0'}, "
                              f"got {v!r}")
    if "memory" in table:
        out["memory"] = parse_memory(table["memory"], where=f"{where}.memory")
    return out


def unit_resources(config: Mapping[str, Any], method: str) -> dict[str, Any]:
    """What one unit of ``method`` asks the executor for: ``num_cpus`` (default 1), ``num_gpus`` (default 1
    when the run's ``device`` is ``cuda``/``cuda:N``, else 0), ``memory`` in bytes (default: none reserved) and
    ``cpu_seconds``, the expected CPU-seconds of one unit (default: none given; ``--workers`` starts the costliest
    units first and the progress display weighs units by it), overridden by the run's ``[resources]`` table, then
    by ``[methods.<method>.resources]``."""
    device = str(config.get("device", "cpu"))
    out: dict[str, Any] = {"num_cpus": 1, "num_gpus": 1 if device.startswith("cuda") else 0}
    out |= _check_table(config.get("resources"), "resources")
    method_table = (config.get("methods") or {}).get(method)
    if isinstance(method_table, dict):
        out |= _check_table(method_table.get("resources"), f"methods.{method}.resources")
    return out


def resolve_device(device: str, *, here: bool = True):
    """The torch device of ``device`` (``auto``: CUDA when available); ``here=False`` only checks the syntax
    (the device is resolved on each worker) and returns ``device``."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu") if here else device
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}") from e
    if not here:
        return device
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} requested but CUDA is not available here; use 'cpu' or 'auto'")
    return dev
