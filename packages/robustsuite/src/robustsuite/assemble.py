"""The report (schema 2.0) from unit records: one section per method (and model), units that differ only in seed
merged, and notes on what comparisons between sections can claim.

- Seeds: a metric identical across seeds keeps its value and per-sample interval; one that varies gets the mean
  and :func:`robustsuite_common.intervals.seed_interval` (clipped to the metric's range: its interval's
  ``bounds``, else its unit's), or a note instead with fewer than three seeds. Deterministic units (the runner's
  ``SEEDED = False``, or ``"deterministic": true`` in the record) are not seeds: computed once.
- Comparisons (same method and dataset spec): sections on the same data (:func:`data_identity`) share their
  items, so non-overlapping intervals are only indicative and a difference is stated as established only by a
  paired test (exact McNemar on both sections' per-sample ``correct`` records); sections on different data are
  independent samples, compared by their intervals.

Provenance is computed by the caller (:func:`robustsuite.run.provenance`), so this module depends on nothing
that plans or runs units.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from . import runners
from ._io import stable_hash
from .report import SCHEMA_VERSION, top_warnings
from .report.schema import is_number, section_from_v1

_UNIT_BOUNDS = {"fraction": (0.0, 1.0), "%": (0.0, 100.0)}


def _v2(sec: dict) -> dict:
    """A unit record's section in schema 2.0 (records written before 2.0 hold flat 1.x sections)."""
    return {"checks": [], **sec} if "model_at_chance" in sec else section_from_v1(sec) | {"checks": []}


def _bounds(m: dict) -> tuple[float | None, float | None]:
    b = (m.get("interval") or {}).get("bounds")
    if b and any(v is not None for v in b):
        return b[0], b[1]
    return _UNIT_BOUNDS.get(m.get("unit") or "", (None, None))


def _fmt(m: dict) -> str:
    iv = m.get("interval")
    return f"{m['value']:.4g}" + (f" [{iv['low']:.4g}, {iv['high']:.4g}]" if iv else "")


def _aggregate_seeds(group: list[dict]) -> dict:
    """One section from the sections of a unit run with several seeds (see the module docstring)."""
    from robustsuite_common.intervals import MIN_SEEDS, seed_interval

    seeds = [r["unit"]["seed"] for r in group]
    secs = [_v2(r["section"]) for r in group]
    base = dict(secs[0])
    metrics: dict[str, Any] = {}
    rows, fixed, varying = [], [], []
    for k, m0 in base["metrics"].items():
        vals = [s["metrics"].get(k, {}).get("value") for s in secs]
        if not all(is_number(v) for v in vals) or len(set(vals)) == 1:
            metrics[k] = m0  # not a number, or does not depend on the seed: as the first seed has it
            fixed += [k] if all(is_number(v) for v in vals) else []
            continue
        iv = seed_interval([float(v) for v in vals], bounds=_bounds(m0))
        m = {"value": float(sum(vals) / len(vals)), "label": m0.get("label", ""), "unit": m0.get("unit", "")}
        metrics[k] = m | ({"interval": iv.to_dict(), "note": f"mean over {len(vals)} seeds"} if iv is not None else
                          {"note": f"mean over {len(vals)} seeds; fewer than {MIN_SEEDS} seeds: no interval across "
                                   "seeds (per-seed values in the seeds table)"})
        varying.append(k)
        rows.append([m0.get("label") or k, *vals, m["value"], *(iv.ci if iv is not None else (None, None))])
    n = len(seeds)
    spread = ", ".join(f"{metrics[k].get('label') or k} {_fmt(metrics[k])}" for k in varying[:3])
    how = "Student-t 95 % interval across seeds" if n >= MIN_SEEDS else \
        f"fewer than {MIN_SEEDS} seeds: no interval across seeds"
    base["summary"] = (f"Over {n} seeds ({', '.join(map(str, seeds))}): "
                       + (f"mean {spread} ({how})" if varying else "every numeric metric is identical across seeds")
                       + f". Seed {seeds[0]}: {secs[0]['summary']}")
    base["metrics"] = metrics
    if rows:
        base["tables"] = [*base["tables"], {
            "name": "seeds", "title": f"Per-seed values (seeds {', '.join(map(str, seeds))}), mean and {how}",
            "columns": ["metric", *[f"seed {s}" for s in seeds], "mean", "mean_ci_low", "mean_ci_high"],
            "rows": rows, "units": {}, "bounds": {}}]
    base["notes"] = [*base["notes"], f"{n} seeds: metrics that vary with the seed show their mean and {how} (per-seed "
                     f"values in the seeds table); metrics identical across seeds ({', '.join(fixed) or 'none'}) keep "
                     f"their per-sample interval; tables and figures show seed {seeds[0]}."]
    return base


def data_identity(record: dict) -> str:
    """What data a unit was measured on: the ``data`` entry of its identity (source and content hash, when the
    run records it), else its dataset spec and ``limit``."""
    u = record["unit"]
    ident = u.get("identity") or {}
    what = record.get("data_identity") or u.get("data_identity") or ident.get("data") \
        or {"dataset": u.get("dataset"), "limit": ident.get("limit")}
    return stable_hash(what, 16)


def _correct_by_id(run_dir: Path | None, sec: dict) -> dict | None:
    """``{id: correct}`` from the section's per-sample records, when it logged a ``correct`` column."""
    if run_dir is None:
        return None
    from .report.samples import read_samples

    for rel in sec.get("samples") or []:
        path = Path(run_dir) / rel
        if not path.is_file():
            continue
        rows = read_samples(path)
        if rows and "correct" in rows[0] and "id" in rows[0]:
            return {json.dumps(r["id"]): bool(r["correct"]) for r in rows if r.get("correct") is not None}
    return None


def _pair_note(k: str, a: dict, b: dict, run_dir: Path | None, seed: int) -> str:
    ma, mb = a["metrics"][k], b["metrics"][k]
    ia, ib = ma["interval"], mb["interval"]
    head = f"{ma.get('label') or k}: {a['model']} {_fmt(ma)} vs {b['model']} {_fmt(mb)}"
    apart = ia["high"] < ib["low"] or ib["high"] < ia["low"]
    if a.get("data_identity") != b.get("data_identity"):
        return (f"{head} — measured on different data (independent samples): "
                + ("separated by their 95 % intervals." if apart else
                   "NOT separated: their 95 % intervals overlap, so this difference is not established."))
    ca, cb = (_correct_by_id(run_dir, s) for s in (a, b)) if k == "accuracy" else (None, None)
    shared = sorted(set(ca) & set(cb)) if ca and cb else []
    if shared and ca is not None and cb is not None:
        from robustsuite_common.intervals import mcnemar

        t = mcnemar([ca[i] for i in shared], [cb[i] for i in shared], seed=seed)
        d = t.difference
        return (f"{head} — the same {len(shared)} items, paired: exact McNemar p = {t.p_value:.3g} ({t.only_a} items "
                f"right only for {a['model']}, {t.only_b} only for {b['model']}), difference {d.estimate:.4g} "
                f"[{d.low:.4g}, {d.high:.4g}]: " + ("the difference is established by the paired test." if
                                                   t.significant() else "the paired test does not establish it."))
    return (f"{head} — measured on the same data, so the items are paired and the two intervals are not "
            "independent: " + ("they do not overlap, which is indicative only" if apart else "they overlap")
            + "; a paired test needs both sections' per-sample records (--log-samples).")


def _comparison_notes(sections: dict[str, dict], run_dir: Path | None, seed: int) -> None:
    groups: dict[tuple, list[str]] = {}
    for key, sec in sections.items():
        groups.setdefault((sec["method"], sec.get("dataset")), []).append(key)
    for a, b in (pair for keys in groups.values() for pair in itertools.combinations(keys, 2)):
        sa, sb = sections[a], sections[b]
        for k, m in sa["metrics"].items():
            mb = sb["metrics"].get(k) or {}
            if m.get("interval") and mb.get("interval") and is_number(m.get("value")) and is_number(mb.get("value")):
                note = _pair_note(k, sa, sb, run_dir, seed)
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
        units = [groups[i][0]["unit"] for i in idx]
        for level in (0, 1, 2, 3):
            cand = [":".join([method, *([u["model"]] if level > 0 else []), *([u["dataset"]] if level > 1 else []),
                              *([str(n + 1)] if level > 2 else [])]) for n, u in enumerate(units)]
            if len(set(cand)) == len(cand):
                break
        for i, c in zip(idx, cand, strict=True):
            out[i] = c
    return out


def _deterministic(record: dict) -> bool:
    return bool(record["unit"].get("deterministic")) or \
        getattr(runners.get(record["unit"]["method"]), "SEEDED", True) is False


def failed_unit_warnings(records: list[dict]) -> list[dict[str, str]]:
    """One top-level warning per failed unit (its section is missing from the report, and a reader of the Warnings
    must not take the report for complete)."""
    return [{"section": r["unit"]["id"],
             "message": f"unit failed, so its section is missing from this report: {r.get('error') or 'no message'} "
                        f"(traceback in units/{r['unit']['id']}.failed.json; the next run retries it)"}
            for r in records if r["status"] == "failed"]


def assemble(records: list[dict], *, config: dict, seed: int, device: str, created: str, provenance: dict,
             run_dir: Path | None = None) -> dict:
    """The report dict (see :data:`robustsuite.report.REPORT_SCHEMA`) from unit records; units that differ only
    in seed are merged into one section with intervals across seeds. With ``run_dir``, comparisons on the same
    items use the sections' per-sample records for a paired test."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        if r["status"] == "done":
            groups.setdefault(r["unit"].get("group") or r["unit"]["id"], []).append(r)
    group_list = list(groups.values())
    per_method = Counter(g[0]["unit"]["method"] for g in group_list)
    sections = {}
    for key, g in zip(_section_keys(group_list), group_list, strict=True):
        u = g[0]["unit"]
        mod = runners.get(u["method"])
        fixed = _deterministic(g[0])
        sec = _aggregate_seeds(g) if len(g) > 1 and not fixed else _v2(g[0]["section"])
        if u["method"] == "overview":  # overview titles name model and data; prefix the section's title
            sec["title"] = f"{mod.TITLE} — {sec['title']}"
        elif per_method[u["method"]] > 1:  # the same method on several models: tell the sections apart
            sec["title"] = f"{sec['title']} ({u['model']})"
        used = g[:1] if fixed else g
        sec = sec | {"deterministic": fixed, "method": u["method"], "paper": getattr(mod, "PAPER", None),
                     "model": u["model"], "dataset": u["dataset"], "data_identity": data_identity(g[0]),
                     "seeds": [r["unit"]["seed"] for r in used],
                     "seconds": round(sum(r["seconds"] for r in used), 3),
                     "samples": [p for r in used for p in r.get("samples") or []]}
        sections[key] = {"warnings": sec.pop("warnings", []), **sec}
    _comparison_notes(sections, run_dir, seed)
    from .report.verdicts import build_verdicts

    return {
        "schema_version": SCHEMA_VERSION,
        "warnings": top_warnings(sections) + failed_unit_warnings(records),
        "verdicts": build_verdicts(sections),
        "run": {"id": provenance["id"],
                "created": created, "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "seed": seed, "seeds": sorted({r["unit"].get("seed", seed) for r in records}) or [seed],
                "device": device, "config": config, "versions": provenance["versions"],
                "uv_lock_sha256": provenance["uv_lock_sha256"], "user_git": provenance["user_git"],
                "command": provenance["command"], "platform": provenance["platform"]},
        "units": [{"id": r["unit"]["id"], "method": r["unit"]["method"], "model": r["unit"]["model"],
                   "dataset": r["unit"]["dataset"], "seed": r["unit"].get("seed", seed), "status": r["status"],
                   "seconds": round(r["seconds"], 3) if r["seconds"] is not None else None, "error": r["error"],
                   "samples": r.get("samples") or [], "deterministic": _deterministic(r)}
                  for r in records],
        "sections": sections,
    }
