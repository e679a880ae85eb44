"""The whole-report check run on every write: numbers that cannot be right are refused, not printed.

- every interval (a metric's, or a table's ``X``/``X_ci_low``/``X_ci_high`` columns) contains its estimate and
  stays inside its metric's range (the interval's ``bounds``, the table's ``bounds[X]``);
- a metric's interval estimates that metric's value;
- every verdict's status is the one the combination rule gives from its checks, and its robust accuracy lies in its
  interval;
- a section with ``model_at_chance: true`` carries a warning, and every section warning is listed in the
  report's top-level ``warnings``.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ConfigError

CI_LOW, CI_HIGH = "_ci_low", "_ci_high"


class ReportCheckError(ConfigError):
    """A report that states something its numbers do not support (the problems are listed)."""

    def __init__(self, problems: list[str], where: str = "report") -> None:
        self.problems = list(problems)
        shown = "; ".join(problems[:8]) + (f"; and {len(problems) - 8} more" if len(problems) > 8 else "")
        super().__init__(f"{where} fails the report check ({len(problems)} problem(s)): {shown}")


def _tol(*values: float) -> float:
    return 1e-9 * (1.0 + max(abs(v) for v in values))


def _g(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def interval_problems(est: Any, lo: Any, hi: Any, bounds: Any = (None, None)) -> list[str]:
    """What is wrong with ``est [lo, hi]`` in range ``bounds`` (empty when nothing is)."""
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in (est, lo, hi)):
        return [f"interval {_g(est)} [{_g(lo)}, {_g(hi)}] is not made of finite numbers"]
    tol, out = _tol(est, lo, hi), []
    if not lo - tol <= est <= hi + tol:
        out.append(f"interval [{_g(lo)}, {_g(hi)}] excludes its estimate {_g(est)}")
    b_lo, b_hi = (list(bounds) + [None, None])[:2] if bounds else (None, None)
    if (b_lo is not None and lo < b_lo - tol) or (b_hi is not None and hi > b_hi + tol):
        out.append(f"interval [{_g(lo)}, {_g(hi)}] leaves the metric's range [{_g(b_lo)}, {_g(b_hi)}]")
    return out


def section_problems(key: str, sec: dict) -> list[str]:
    out = []
    for name, m in sec.get("metrics", {}).items():
        iv = m.get("interval") if isinstance(m, dict) else None
        if iv is None:
            continue
        where = f"section {key!r} metric {name!r}"
        out += [f"{where}: {p}" for p in interval_problems(iv.get("estimate"), iv.get("low"), iv.get("high"),
                                                            iv.get("bounds"))]
        v, est = m.get("value"), iv.get("estimate")
        if isinstance(v, int | float) and isinstance(est, int | float) and abs(v - est) > _tol(v, est):
            out.append(f"{where}: value {_g(v)} differs from its interval's estimate {_g(est)}")
    for t in sec.get("tables", []):
        cols = list(t["columns"])
        for c in (c for c in cols if c + CI_LOW in cols and c + CI_HIGH in cols):
            idx = [cols.index(c + suffix) for suffix in ("", CI_LOW, CI_HIGH)]
            for i, row in enumerate(t["rows"]):
                est, lo, hi = (row[j] for j in idx)
                if None not in (est, lo, hi):
                    out += [f"section {key!r} table {t['name']!r} row {i} column {c!r}: {p}"
                            for p in interval_problems(est, lo, hi, t.get("bounds", {}).get(c))]
    if sec.get("model_at_chance") and not sec.get("warnings"):
        out.append(f"section {key!r}: model_at_chance is true but the section has no warning saying so")
    return out


def top_warnings(sections: dict[str, dict]) -> list[dict[str, str]]:
    """The report's top-level ``warnings``: every section's, in section order."""
    return [{"section": k, "message": w} for k, s in sections.items() for w in s.get("warnings", [])]


def check_report(report: dict) -> list[str]:
    """Every problem of ``report`` (a 2.0 dict) as a readable line; an empty list when it is consistent."""
    out: list[str] = []
    listed = {(w.get("section"), w.get("message")) for w in report.get("warnings", [])}
    from .verdicts import verdict_problems

    out += verdict_problems(report)
    for key, sec in report.get("sections", {}).items():
        out += section_problems(key, sec)
        out += [f"section {key!r}: warning {w!r} is missing from the report's top-level warnings"
                for w in sec.get("warnings", []) if (key, w) not in listed]
    return out
