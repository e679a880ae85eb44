"""The ``paper_effects`` table every method section carries, and the one rule that gives its verdicts.

Each package lists its paper's headline effects as data (``paper_effects.json`` beside its experiment): for each
effect a readable ``effect``, where the paper reports it (``paper``), the paper's signed magnitude in the unit the
experiment measures it (``paper_value``), and ``why`` (the protocol difference that explains a verdict other than
``reproduced``; a string, or a mapping from verdict to string). The package's experiment measures each effect as a
signed difference with an interval (paired where the comparison is on the same points), and
:func:`paper_effects_table` turns those into the table, with the verdict of :func:`effect_verdict`:

- ``not tested``: the experiment did not run that part (no measurement or no interval);
- ``not reproduced``: the interval does not exclude 0 on the paper's side;
- ``reproduced``: it excludes 0 on the paper's side and comes within :data:`REL_TOL` of the paper's magnitude
  (``low <= (1 + REL_TOL) * paper`` and ``high >= (1 - REL_TOL) * paper`` for a positive effect, mirrored for a
  negative one);
- ``direction only``: it excludes 0 on the paper's side but not near the paper's magnitude.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .experiment import Metric, Table

__all__ = [
    "package_effects",
    "VERDICTS",
    "EFFECT_COLUMNS",
    "REL_TOL",
    "VERDICT_RULE",
    "Effect",
    "effect_verdict",
    "load_effects",
    "paper_effects_table",
    "from_metric",
    "find_metric",
    "difference",
    "Measurement",
    "recheck_paper_effects",
]

VERDICTS = ("reproduced", "direction only", "not reproduced", "not tested")
#: the columns of every ``paper_effects`` table, in this order
EFFECT_COLUMNS = ("effect", "paper", "measured", "low", "high", "verdict", "why")
#: how far (relative to the paper's magnitude) a measured interval may miss the paper's number and still count as
#: reproducing it: the interval must reach [(1 - REL_TOL)·paper, (1 + REL_TOL)·paper]
REL_TOL = 0.5
#: the rule in one sentence (what the READMEs and the report state)
VERDICT_RULE = ("reproduced: the effect's interval excludes 0 on the paper's side and reaches within 50 % of the "
                "paper's magnitude; direction only: it excludes 0 on the paper's side only; not reproduced: it "
                "does not exclude 0 on the paper's side; not tested: the experiment did not run that part")


def _num(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def effect_verdict(measured: float | None, low: float | None, high: float | None, *, paper_value: float) -> str:
    """The verdict on one effect from its measured interval ``[low, high]`` (the module's rule).

    ``paper_value`` is the paper's signed effect in the unit of ``measured``; its sign is the paper's direction.
    A missing measurement or interval (``None`` or NaN) is ``not tested``."""
    m, lo, hi = _num(measured), _num(low), _num(high)
    paper = float(paper_value)
    if not math.isfinite(paper) or paper == 0:
        raise ValueError(f"paper_value must be a finite, non-zero signed effect, got {paper_value!r}")
    if m is None or lo is None or hi is None:
        return "not tested"
    if lo > hi:
        raise ValueError(f"low must not exceed high, got [{low}, {high}]")
    if paper < 0:  # mirror: a negative effect is a positive one of the negated interval
        lo, hi, paper = -hi, -lo, -paper
    if lo <= 0:
        return "not reproduced"
    if lo <= (1 + REL_TOL) * paper and hi >= (1 - REL_TOL) * paper:
        return "reproduced"
    return "direction only"


@dataclass(frozen=True)
class Effect:
    """One headline effect of a paper, as the package's data file lists it."""

    key: str
    effect: str
    paper: str
    paper_value: float
    why: str | Mapping[str, str] = ""

    def why_for(self, verdict: str) -> str:
        """The explanation shown beside ``verdict`` (empty for ``reproduced`` unless the file gives one)."""
        if isinstance(self.why, str):
            return "" if verdict == "reproduced" else self.why
        return str(self.why.get(verdict, "" if verdict == "reproduced" else self.why.get("default", "")))


def load_effects(path: str | Path) -> tuple[Effect, ...]:
    """The effects listed in a package's ``paper_effects.json`` (``{"effects": [{key, effect, paper, paper_value,
    why}, ...]}``), checked: unique keys, a non-zero paper value, ``why`` keyed by known verdicts."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out: list[Effect] = []
    for d in data["effects"]:
        why = d.get("why", "")
        if isinstance(why, dict):
            bad = set(why) - set(VERDICTS) - {"default"}
            if bad:
                raise ValueError(f"effect {d['key']!r}: why has unknown verdicts {sorted(bad)}")
        e = Effect(str(d["key"]), str(d["effect"]), str(d["paper"]), float(d["paper_value"]), why)
        effect_verdict(None, None, None, paper_value=e.paper_value)  # checks the paper value
        out.append(e)
    keys = [e.key for e in out]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate effect keys in {path}")
    return tuple(out)


@functools.cache
def package_effects(package: str) -> tuple[Effect, ...]:
    """The effects a package ships as ``<package>/paper_effects.json`` (e.g. ``"certcal.experiment"``), read once."""
    from importlib import resources

    with resources.as_file(resources.files(package).joinpath("paper_effects.json")) as path:
        return load_effects(path)


Measurement = tuple[float | None, float | None, float | None] | None


def paper_effects_table(effects: Sequence[Effect], measure: Callable[[str], Measurement] | Mapping[str, Measurement],
                        *, title: str = "The paper's headline effects, measured here") -> Table:
    """The ``paper_effects`` table: one row per effect, ``measure(key)`` (or ``measure[key]``) giving
    ``(measured, low, high)`` or ``None`` when the experiment did not run that part."""
    rows = []
    for e in effects:
        got = measure.get(e.key) if isinstance(measure, Mapping) else measure(e.key)
        m, lo, hi = (None, None, None) if got is None else (_num(got[0]), _num(got[1]), _num(got[2]))
        if m is not None and lo is not None and hi is not None:
            tol = 1e-9 * (1 + max(abs(m), abs(lo), abs(hi)))
            if not lo - tol <= m <= hi + tol:
                raise ValueError(f"effect {e.key!r}: interval [{lo}, {hi}] excludes its estimate {m}")
        verdict = effect_verdict(m, lo, hi, paper_value=e.paper_value)
        rows.append((e.effect, e.paper, m, lo, hi, verdict, e.why_for(verdict)))
    return Table("paper_effects", title, EFFECT_COLUMNS, tuple(rows))


def from_metric(metric: Metric | None, *, shift: float = 0.0, scale: float = 1.0) -> Measurement:
    """``(value, low, high)`` of ``metric`` as ``scale · (x + shift)`` (a negative scale swaps the ends), or
    ``None`` when the metric is missing, not numeric, or has no interval."""
    value = None if metric is None else _num(metric.value)
    if metric is None or metric.interval is None or value is None:
        return None
    ends = sorted((scale * (float(metric.interval.low) + shift), scale * (float(metric.interval.high) + shift)))
    return scale * (value + shift), ends[0], ends[1]


def find_metric(metrics: Mapping[str, Metric], pattern: str) -> Metric | None:
    """The first metric (in the result's order) whose key matches the regular expression ``pattern`` in full."""
    rx = re.compile(pattern)
    return next((m for k, m in metrics.items() if rx.fullmatch(k)), None)


def difference(a: Measurement, b: Measurement) -> Measurement:
    """``a − b`` for two measurements whose intervals were computed apart (not paired): the conservative interval
    ``[low_a − high_b, high_a − low_b]`` (it holds whatever the dependence between the two estimates). Use only
    where the experiment has no paired interval of the difference, and say so in the effect's ``why``."""
    if a is None or b is None or None in a or None in b:
        return None
    return a[0] - b[0], a[1] - b[2], a[2] - b[1]  # type: ignore[operator]


def recheck_paper_effects(table: Table, effects: Sequence[Effect],
                          measured: Mapping[str, Measurement] | None = None) -> list[str]:
    """What is wrong with a ``paper_effects`` table (empty when nothing): its name and columns, one row per effect
    in order, each verdict recomputed from the row's own interval with :func:`effect_verdict`, and, when
    ``measured`` is given (the package's measurements of a result), each row's numbers equal to those."""
    problems: list[str] = []
    if table.name != "paper_effects" or tuple(table.columns) != EFFECT_COLUMNS:
        problems.append(f"table {table.name!r} with columns {list(table.columns)}; expected 'paper_effects' with "
                        f"{list(EFFECT_COLUMNS)}")
        return problems
    recs = table.records()
    if [r["effect"] for r in recs] != [e.effect for e in effects]:
        problems.append("the rows are not the listed effects in order")
        return problems
    for r, e in zip(recs, effects, strict=True):
        v = effect_verdict(_num(r["measured"]), _num(r["low"]), _num(r["high"]), paper_value=e.paper_value)
        if r["verdict"] != v:
            problems.append(f"{e.key}: verdict {r['verdict']!r}, the rule gives {v!r}")
        if r["why"] != e.why_for(v):
            problems.append(f"{e.key}: why is not the data file's text for {v!r}")
        if measured is not None:
            got = measured.get(e.key)
            want = (None, None, None) if got is None else tuple(_num(x) for x in got)
            have = (_num(r["measured"]), _num(r["low"]), _num(r["high"]))
            if any((a is None) != (b is None) or (a is not None and abs(a - b) > 1e-9 * (1 + abs(b)))  # type: ignore[operator]
                   for a, b in zip(have, want, strict=True)):
                problems.append(f"{e.key}: row {have} differs from the result's numbers {want}")
    return problems
