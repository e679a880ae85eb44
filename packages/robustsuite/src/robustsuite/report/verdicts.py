"""The report's first content: one verdict per model, gathered from the checks its sections carry.

Every check is computed by the package that owns its method (``robustsuite_common.indicators`` for the
robust-accuracy evaluation, each method package for its lens) and travels in its section's ``checks``; this module
only gathers them per model, points each at the section holding its evidence, and applies the one combination rule
(:func:`robustsuite_common.verdict.verdict`: p-values adjusted together, then statuses combined, never averaged).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ROBUST_METRIC", "build_verdicts", "verdict_problems"]

#: The overview's metric the banner shows: AutoAttack robust accuracy with its Clopper-Pearson interval.
ROBUST_METRIC = "robust_accuracy_autoattack"


def _headline(sections: dict[str, dict], model: str) -> dict[str, Any]:
    for sec in sections.values():
        m = sec.get("metrics", {}).get(ROBUST_METRIC)
        if sec.get("model") == model and m and isinstance(m.get("value"), int | float):
            iv = m.get("interval")
            return {"robust_accuracy": float(m["value"]),
                    "robust_interval": (iv["low"], iv["high"]) if iv else None,
                    "robust_attack": m.get("label", "")}
    return {}


def build_verdicts(sections: dict[str, dict]) -> list[dict]:
    """The ``verdicts`` list of a report: one entry per model whose sections carry checks, in section order."""
    from robustsuite_common.verdict import Check, verdict

    by_model: dict[str, list[Check]] = {}
    for key, sec in sections.items():
        for c in sec.get("checks") or []:
            model = c.get("model") or sec.get("model") or "model"
            where = f"#{key}" + (f" ({c['evidence']})" if c.get("evidence") else "")
            by_model.setdefault(model, []).append(Check.from_dict({**c, "model": model, "evidence": where}))
    out = []
    for model, checks in by_model.items():
        head = _headline(sections, model)
        n = next((c.n for c in checks if c.id == "sample-size"), None)
        v = verdict(model, checks, robust_accuracy=head.get("robust_accuracy"),
                    robust_interval=head.get("robust_interval"), robust_attack=head.get("robust_attack", ""), n=n)
        out.append(v.to_dict())
    return out


def verdict_problems(report: dict) -> list[str]:
    """What is wrong with the report's verdicts: a status the rule does not give from its checks, a check whose
    interval excludes its statistic, an unknown status."""
    from robustsuite_common.verdict import Check, CheckError, combine

    out = []
    for v in report.get("verdicts") or []:
        try:
            checks = [Check.from_dict(c) for c in v.get("checks", [])]
        except (CheckError, TypeError) as e:
            out.append(f"verdict of {v.get('model')!r}: {e}")
            continue
        status, _ = combine(checks)
        if status != v.get("status"):
            out.append(f"verdict of {v.get('model')!r}: status {v.get('status')!r}, but its checks give {status!r}")
        ri = v.get("robust_interval")
        ra = v.get("robust_accuracy")
        if ri and ra is not None and not (ri[0] - 1e-9 <= ra <= ri[1] + 1e-9):
            out.append(f"verdict of {v.get('model')!r}: robust accuracy {ra} outside its interval {ri}")
    return out
