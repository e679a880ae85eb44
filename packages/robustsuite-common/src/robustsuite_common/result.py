"""An experiment's result: :class:`Metric` (a number with its unit, readable label and checked interval),
:class:`Table`, the headline table (:func:`headline`), :class:`Figure`, and :class:`ExperimentResult` (metrics,
tables, per-sample records, a summary, ``to_dict``/``from_dict``/``save``/``load``). An interval that excludes its
estimate is refused on construction."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from .intervals import Interval, IntervalError
from .io import write_json

__all__ = ["Metric", "Table", "Figure", "ExperimentResult", "json_safe", "HEADLINE_COLUMNS", "headline", "ci_of",
           "Scalar"]

Scalar = str | int | float | bool | None
T = TypeVar("T", bound="ExperimentResult")


def json_safe(value: Any) -> Scalar:
    """A JSON scalar: numpy/torch numbers become Python numbers, NaN and infinity become ``None``."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise TypeError(f"expected a scalar (str, number, bool, None), got {type(value).__name__}")


@dataclass(frozen=True)
class Metric:
    """A number as a reader should see it: its ``value``, a readable ``label`` and ``unit`` (``"%"``,
    ``"fraction"``, ``"count"``, ``"points"``, ``"s"``, ``""``), and its :class:`Interval` when there is one
    (checked: it contains the value and stays in the metric's range). ``note`` says why an interval is
    missing (e.g. "fewer than three seeds")."""

    value: Scalar
    label: str = ""
    unit: str = ""
    interval: Interval | None = None
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", json_safe(self.value))
        if self.interval is not None:
            if not isinstance(self.value, int | float) or isinstance(self.value, bool):
                raise IntervalError(f"metric {self.label!r}: an interval needs a numeric value, got {self.value!r}")
            if abs(float(self.value) - float(self.interval.estimate)) > 1e-9 * (1 + abs(float(self.value))):
                raise IntervalError(f"metric {self.label!r}: value {self.value} differs from its interval's "
                                    f"estimate {self.interval.estimate}")

    @classmethod
    def of(cls, interval: Interval, label: str = "", unit: str = "", note: str = "") -> Metric:
        """The metric whose value is ``interval``'s estimate."""
        return cls(float(interval.estimate), label, unit, interval, note)

    @property
    def ci(self) -> tuple[float, float] | None:
        return None if self.interval is None else self.interval.ci

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"value": self.value, "label": self.label, "unit": self.unit}
        if self.interval is not None:
            d["interval"] = self.interval.to_dict()
        if self.note:
            d["note"] = self.note
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metric:
        iv = d.get("interval")
        return cls(d.get("value"), d.get("label", ""), d.get("unit", ""),
                   None if iv is None else Interval.from_dict(iv), d.get("note", ""))


_CI = ("_ci_low", "_ci_high")


@dataclass(frozen=True)
class Table:
    """A results table: ``columns`` and ``rows`` of JSON scalars. A column ``X`` with companions ``X_ci_low``
    and ``X_ci_high`` holds an estimate and its interval; every such row is checked to contain its estimate
    (and to stay inside ``bounds[X]`` when given). ``units`` maps a column to its unit."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Scalar, ...], ...]
    units: Mapping[str, str] = field(default_factory=dict)
    bounds: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.name):
            raise ValueError(f"table name must be an identifier (letters, digits, _ . -), got {self.name!r}")
        cols = tuple(str(c) for c in self.columns)
        rows = tuple(tuple(json_safe(v) for v in r) for r in self.rows)
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "rows", rows)
        for i, row in enumerate(rows):
            if len(row) != len(cols):
                raise ValueError(f"table {self.name!r}: row {i} has {len(row)} cells for {len(cols)} columns")
        for col, lo_i, hi_i in self.interval_columns():
            j = cols.index(col)
            b_lo, b_hi = self.bounds.get(col, (None, None))
            for i, row in enumerate(rows):
                est, lo, hi = cast("tuple[float | None, float | None, float | None]", (row[j], row[lo_i], row[hi_i]))
                if est is None or lo is None or hi is None:
                    continue
                tol = 1e-9 * (1 + max(abs(est), abs(lo), abs(hi)))
                if not lo - tol <= est <= hi + tol:
                    raise IntervalError(f"table {self.name!r} row {i}: {col} interval [{lo}, {hi}] excludes {est}")
                if (b_lo is not None and lo < b_lo - tol) or (b_hi is not None and hi > b_hi + tol):
                    raise IntervalError(f"table {self.name!r} row {i}: {col} interval [{lo}, {hi}] leaves its range "
                                        f"[{b_lo}, {b_hi}]")

    def interval_columns(self) -> list[tuple[str, int, int]]:
        """``(column, low index, high index)`` for every column with ``_ci_low``/``_ci_high`` companions."""
        out = []
        for c in self.columns:
            if c + _CI[0] in self.columns and c + _CI[1] in self.columns:
                out.append((c, self.columns.index(c + _CI[0]), self.columns.index(c + _CI[1])))
        return out

    def column(self, name: str) -> list[Scalar]:
        if name not in self.columns:
            raise KeyError(f"table {self.name!r} has no column {name!r}; columns: {list(self.columns)}")
        j = self.columns.index(name)
        return [r[j] for r in self.rows]

    def records(self) -> list[dict[str, Scalar]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "columns": list(self.columns),
                "rows": [list(r) for r in self.rows], "units": dict(self.units),
                "bounds": {k: list(v) for k, v in self.bounds.items()}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Table:
        return cls(d["name"], d["title"], tuple(d["columns"]), tuple(tuple(r) for r in d["rows"]),
                   dict(d.get("units", {})), {k: (v[0], v[1]) for k, v in d.get("bounds", {}).items()})


#: the columns every ``headline`` table has (what a report draws first, as a bar chart); :func:`headline` adds
#: ``attack``, and a report accepts more after them
HEADLINE_COLUMNS = ("condition", "clean", "clean_ci_low", "clean_ci_high", "attacked", "attacked_ci_low",
                    "attacked_ci_high")


def _triple(v: Any) -> tuple[Scalar, Scalar, Scalar]:
    if hasattr(v, "estimate"):  # an Interval
        return v.estimate, v.low, v.high
    if isinstance(v, tuple | list):
        return tuple(v)  # type: ignore[return-value]
    return v, None, None


def headline(title: str, rows: Iterable[tuple[Any, Any, Any, Any]], *, unit: str = "fraction",
             bounds: tuple[float | None, float | None] = (0.0, 1.0)) -> Table:
    """The ``headline`` table of a result: per condition (an attacker, system or defense), the clean and the attacked
    score, each an :class:`~robustsuite_common.intervals.Interval`, an ``(estimate, low, high)`` triple or a bare
    number, and the attack that gave the attacked score. A report draws it first, as a bar chart with the intervals
    as error bars: the picture a reader wants before the detailed tables."""
    out = [(str(cond), *_triple(clean), *_triple(attacked), str(attack)) for cond, clean, attacked, attack in rows]
    return Table("headline", title, (*HEADLINE_COLUMNS, "attack"), tuple(out), units={"clean": unit, "attacked": unit},
                 bounds={"clean": bounds, "attacked": bounds})


def ci_of(record: Mapping[str, Any], column: str) -> tuple[Scalar, Scalar, Scalar]:
    """``(estimate, low, high)`` of ``column`` in a table record (its ``_ci_low``/``_ci_high`` companions)."""
    return record[column], record.get(column + _CI[0]), record.get(column + _CI[1])


@dataclass(frozen=True)
class Figure:
    """A figure an experiment's ``figures(result)`` draws from a result: ``name`` (file stem), ``caption`` and
    the matplotlib ``figure`` (the caller saves and closes it)."""

    name: str
    caption: str
    figure: Any


def _records_safe(records: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    def cell(v: Any) -> Any:
        if isinstance(v, list | tuple):
            return [cell(e) for e in v]
        if isinstance(v, np.ndarray):
            return [cell(e) for e in v.tolist()]
        return json_safe(v)

    return {name: [{str(k): cell(v) for k, v in row.items()} for row in rows] for name, rows in records.items()}


@dataclass(frozen=True)
class ExperimentResult:
    """What ``<pkg>.experiment.run`` returns.

    ``tables`` and ``metrics`` are keyed by identifiers (in display order); ``records`` holds per-sample rows
    by name (each row a dict of JSON scalars, with the user's ``id`` and label names); ``summary`` is written
    from the result's own numbers; ``warnings`` are what a reader must see first (e.g. a model at chance).
    ``config`` is the config as a dict (:func:`robustsuite_common.config.to_dict`). ``checks`` are the verdict's
    rows this experiment computed (:class:`robustsuite_common.verdict.Check`), gathered per model by the umbrella.
    """

    experiment: str
    config: Mapping[str, Any]
    tables: Mapping[str, Table]
    metrics: Mapping[str, Metric]
    summary: str
    records: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    checks: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        from .verdict import Check

        for c in self.checks:
            if not isinstance(c, Check):
                raise TypeError(f"checks must hold robustsuite_common.verdict.Check rows, got {type(c).__name__}")
        object.__setattr__(self, "checks", tuple(self.checks))
        for key, t in self.tables.items():
            if not isinstance(t, Table) or t.name != key:
                raise ValueError(f"tables[{key!r}] must be a Table named {key!r}")
        for key, m in self.metrics.items():
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
                raise ValueError(f"metric keys must be identifiers, got {key!r}")
            if not isinstance(m, Metric):
                raise TypeError(f"metrics[{key!r}] must be a Metric, got {type(m).__name__}")
        object.__setattr__(self, "records", _records_safe(self.records))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    def metric(self, key: str) -> Metric:
        if key not in self.metrics:
            raise KeyError(f"no metric {key!r}; metrics: {sorted(self.metrics)}")
        return self.metrics[key]

    def value(self, key: str) -> Scalar:
        """The value of metric ``key``."""
        return self.metric(key).value

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "config": dict(self.config),
                "tables": [t.to_dict() for t in self.tables.values()],
                "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
                "summary": self.summary, "records": {k: list(v) for k, v in self.records.items()},
                "notes": list(self.notes), "warnings": list(self.warnings),
                "checks": [c.to_dict() for c in self.checks]}

    @classmethod
    def from_dict(cls: type[T], d: Mapping[str, Any]) -> T:
        from .verdict import Check

        tables = [Table.from_dict(t) for t in d["tables"]]
        return cls(experiment=d["experiment"], config=d["config"], tables={t.name: t for t in tables},  # type: ignore[call-arg]
                   metrics={k: Metric.from_dict(m) for k, m in d["metrics"].items()}, summary=d["summary"],
                   records=d.get("records", {}), notes=tuple(d.get("notes", ())),
                   warnings=tuple(d.get("warnings", ())),
                   checks=tuple(Check.from_dict(c) for c in d.get("checks", ())))

    def save(self, path: str | Path) -> Path:
        """Write the result as JSON (atomically)."""
        return write_json(path, self.to_dict())

    @classmethod
    def load(cls: type[T], path: str | Path) -> T:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))  # type: ignore[attr-defined]


def field_names(obj: Any) -> list[str]:
    """Field names of a dataclass instance or class."""
    return [f.name for f in dataclasses.fields(obj)]
