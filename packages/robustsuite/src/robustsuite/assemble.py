"""The report from unit records: sections keyed per method (and model), units that differ only in seed merged
into one section with intervals across seeds, and notes on whether compared numbers are separated.

Provenance (versions, lock hash, git) is computed by the caller (:func:`robustsuite.run.provenance`) and passed
in, so this module depends on nothing that plans or runs units.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from . import runners
from .report import SCHEMA_VERSION


def _is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _aggregate_seeds(group: list[dict]) -> dict:
    """One section from the sections of a unit run with several seeds: numeric metrics become the mean over
    seeds with a Student-t 95 % interval across seeds; the per-seed values go into a table."""
    from .intervals import t_interval

    seeds = [r["unit"]["seed"] for r in group]
    secs = [r["section"] for r in group]
    base = dict(secs[0])
    names = [k for k, v in base["metrics"].items()
             if not k.endswith(("_ci_low", "_ci_high")) and all(_is_number(s["metrics"].get(k)) for s in secs)]
    metrics: dict[str, Any] = {}
    rows, fixed = [], []
    for k in names:
        vals = [s["metrics"][k] for s in secs]
        if len(set(vals)) == 1:  # does not depend on the seed: keep the value and its per-sample interval
            metrics[k] = vals[0]
            for suffix in ("_ci_low", "_ci_high"):
                if k + suffix in base["metrics"]:
                    metrics[k + suffix] = base["metrics"][k + suffix]
            fixed.append(k)
            continue
        m, lo, hi = t_interval([float(v) for v in vals])
        metrics[k], metrics[f"{k}_ci_low"], metrics[f"{k}_ci_high"] = m, lo, hi
        rows.append([k, *vals, m, lo, hi])
    for k, v in base["metrics"].items():  # non-numeric metrics of the first seed
        if k not in names and not k.endswith(("_ci_low", "_ci_high")):
            metrics[k] = v
    table = {"name": "seeds", "title": f"Per-seed values (seeds {', '.join(map(str, seeds))}) and Student-t 95 % "
             "interval across seeds", "columns": ["metric", *[f"seed {s}" for s in seeds], "mean", "mean_ci_low",
                                                  "mean_ci_high"], "rows": rows}
    varying = [k for k in names if k not in fixed]
    spread = ", ".join(_fmt_ci(metrics, k) if k + "_ci_low" in metrics else f"{k} {metrics[k]:.4g}"
                       for k in varying[:3])
    base["summary"] = (f"Over {len(seeds)} seeds ({', '.join(map(str, seeds))}): "
                       + (f"mean {spread} (Student-t 95 % interval across seeds)" if varying else
                          "every numeric metric is identical across seeds")
                       + f". Seed {seeds[0]}: {secs[0]['summary']}")
    base["metrics"] = metrics
    if rows:
        base["tables"] = [*base["tables"], table]
    base["notes"] = [*base["notes"], f"{len(seeds)} seeds: metrics that vary with the seed show their mean and a "
                     "Student-t 95 % interval across seeds (per-seed values in the seeds table); metrics identical "
                     f"across seeds ({', '.join(fixed) or 'none'}) keep their per-sample interval; tables and figures "
                     f"show seed {seeds[0]}."]
    return base


def _fmt_ci(m: dict, k: str, name: bool = True) -> str:
    return (f"{k} " if name else "") + f"{m[k]:.4g} [{m[k + '_ci_low']:.4g}, {m[k + '_ci_high']:.4g}]"


def _comparison_notes(sections: dict[str, dict]) -> None:
    """For sections of one method on one dataset: say, per shared metric with an interval, whether the
    compared numbers are separated by their 95 % intervals (written from the numbers)."""
    from .intervals import separated

    groups: dict[tuple, list[str]] = {}
    for key, sec in sections.items():
        groups.setdefault((sec["method"], sec.get("dataset")), []).append(key)
    for keys in groups.values():
        if len(keys) < 2:
            continue
        for i, a in enumerate(keys):
            ma = sections[a]["metrics"]
            for b in keys[i + 1:]:
                mb = sections[b]["metrics"]
                shared = [k for k in ma if f"{k}_ci_low" in ma and f"{k}_ci_low" in mb and _is_number(ma[k])
                          and _is_number(mb.get(k)) and all(_is_number(x.get(f"{k}_ci_{s}")) for x in (ma, mb)
                                                            for s in ("low", "high"))]
                for k in shared:
                    sep = separated((ma[f"{k}_ci_low"], ma[f"{k}_ci_high"]), (mb[f"{k}_ci_low"], mb[f"{k}_ci_high"]))
                    verdict = "separated by their 95 % intervals" if sep else \
                        "NOT separated: their 95 % intervals overlap, so this difference is not established"
                    note = (f"{k}: {sections[a]['model']} {_fmt_ci(ma, k, False)} vs {sections[b]['model']} "
                            f"{_fmt_ci(mb, k, False)} — {verdict}.")
                    for key in (a, b):
                        sections[key]["notes"] = [*sections[key]["notes"], note]


def _section_keys(groups: list[list[dict]]) -> list[str]:
    """Readable unique section keys: the method alone; with several sections, ``method:model``, then
    ``method:model:dataset``, then numbered."""
    by_method: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_method.setdefault(g[0]["unit"]["method"], []).append(i)
    out = [""] * len(groups)
    for method, idx in by_method.items():
        if len(idx) == 1:
            out[idx[0]] = method
            continue
        units = [groups[i][0]["unit"] for i in idx]
        for level in (1, 2, 3):
            cand = [":".join([method, u["model"], *([u["dataset"]] if level > 1 else []),
                              *([str(n + 1)] if level > 2 else [])]) for n, u in enumerate(units)]
            if len(set(cand)) == len(cand):
                break
        for i, c in zip(idx, cand, strict=True):
            out[i] = c
    return out


def assemble(records: list[dict], *, config: dict, seed: int, device: str, created: str, provenance: dict) -> dict:
    """The report dict (see :data:`robustsuite.report.REPORT_SCHEMA`) from unit records; units that differ only
    in seed are merged into one section with intervals across seeds."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        if r["status"] == "done":
            groups.setdefault(r["unit"].get("group") or r["unit"]["id"], []).append(r)
    group_list = list(groups.values())
    per_method: dict[str, int] = {}
    for g in group_list:
        per_method[g[0]["unit"]["method"]] = per_method.get(g[0]["unit"]["method"], 0) + 1
    sections = {}
    for key, g in zip(_section_keys(group_list), group_list, strict=True):
        u = g[0]["unit"]
        mod = runners.get(u["method"])
        sec = _aggregate_seeds(g) if len(g) > 1 else dict(g[0]["section"])
        if u["method"] == "overview":  # overview titles name model and data; prefix the section's title
            sec["title"] = f"{mod.TITLE} — {sec['title']}"
        elif per_method[u["method"]] > 1:  # the same method on several models: tell the sections apart
            sec["title"] = f"{sec['title']} ({u['model']})"
        sections[key] = sec | {"method": u["method"], "paper": getattr(mod, "PAPER", None), "model": u["model"],
                               "dataset": u["dataset"], "seeds": [r["unit"]["seed"] for r in g],
                               "seconds": round(sum(r["seconds"] for r in g), 3),
                               "samples": [p for r in g for p in r.get("samples") or []]}
    _comparison_notes(sections)
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {"id": provenance["id"],
                "created": created, "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "seed": seed, "seeds": sorted({r["unit"].get("seed", seed) for r in records}) or [seed],
                "device": device, "config": config, "versions": provenance["versions"],
                "uv_lock_sha256": provenance["uv_lock_sha256"], "user_git": provenance["user_git"],
                "command": provenance["command"], "platform": provenance["platform"]},
        "units": [{"id": r["unit"]["id"], "method": r["unit"]["method"], "model": r["unit"]["model"],
                   "dataset": r["unit"]["dataset"], "seed": r["unit"].get("seed", seed), "status": r["status"],
                   "seconds": round(r["seconds"], 3) if r["seconds"] is not None else None, "error": r["error"], "samples": r.get("samples") or []}
                  for r in records],
        "sections": sections,
    }
