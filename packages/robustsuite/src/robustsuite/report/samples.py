"""Per-sample records (``--log-samples``): one row per input, as Parquet (pyarrow) or JSON lines (non-finite
floats written as null)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from robustsuite_common.extras import optional_import

FORMATS = ("parquet", "jsonl")


def _column(values) -> list:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    if isinstance(values, np.ndarray):
        return [v.tolist() for v in values] if values.ndim > 1 else values.tolist()
    return [v.item() if hasattr(v, "item") else v for v in values]


def to_columns(samples) -> dict[str, list]:
    """A dict of equal-length columns from a dict of columns or a list of row dicts."""
    if isinstance(samples, Mapping):
        cols = {str(k): _column(v) for k, v in samples.items()}
    elif isinstance(samples, Sequence) and all(isinstance(r, Mapping) for r in samples):
        keys = list(dict.fromkeys(k for r in samples for k in r))
        cols = {str(k): _column([r.get(k) for r in samples]) for k in keys}
    else:
        raise TypeError("samples must be a dict of columns or a list of dicts (one per input)")
    lengths = {k: len(v) for k, v in cols.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"sample columns differ in length: {lengths}")
    return cols


def _json_safe(value):
    """JSON has no NaN/inf: non-finite floats (an abstained radius, a missing score) become null, also inside
    list columns; Parquet keeps them as they are."""
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_samples(stem: Path, samples, fmt: str) -> Path:
    """Write ``samples`` to ``stem.parquet`` or ``stem.jsonl`` atomically; returns the path."""
    from robustsuite_common.io import atomic_write, write_text

    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {FORMATS}, got {fmt!r}")
    cols = to_columns(samples)
    path = Path(f"{stem}.{fmt}")
    if fmt == "parquet":
        pa = optional_import("pyarrow", extra="robustsuite[parquet]", feature="--log-samples parquet")
        pq = optional_import("pyarrow.parquet", extra="robustsuite[parquet]", feature="--log-samples parquet")
        return atomic_write(path, lambda p: pq.write_table(pa.table(cols), p))
    rows = zip(*cols.values(), strict=True)
    return write_text(path, "".join(json.dumps({k: _json_safe(v) for k, v in zip(cols, row, strict=True)},
                                               allow_nan=False, default=str) + "\n" for row in rows))


def read_samples(path: Path) -> list[dict]:
    """Rows of a per-sample file written by :func:`write_samples`."""
    path = Path(path)
    if path.suffix == ".parquet":
        pq = optional_import("pyarrow.parquet", extra="robustsuite[parquet]",
                             feature="reading a .parquet sample log")
        return pq.read_table(path).to_pylist()
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
