"""Markdown and self-contained HTML renderings of a 2.0 report (the JSON stays the source of truth): Jinja templates
(``templates/``) walk each section in one order (:func:`_view`): warnings, where it was measured, summary, sanity
flags, the headline chart with its table, metrics (labels with units, intervals with their method), other tables,
figures, notes.

**Headline convention.** A section comparing a clean with an attacked score names a table ``headline`` with the
columns :data:`HEADLINE_COLUMNS` (``condition``: the attacker, system or defense of the row; more may follow);
``units["clean"]`` names the score. It is drawn as a bar chart (intervals as error bars) before the other tables.

**Sanity flag convention.** A metric ``pgd_minus_autoattack`` (or ``<prefix>.pgd_minus_autoattack``): the paired
difference of robust accuracy under PGD and standard AutoAttack on the same inputs, with companions
``robust_accuracy_pgd`` and ``robust_accuracy_autoattack`` (same prefix); the flag shows when its interval lies
above zero.
"""

from __future__ import annotations

import base64
import functools
import io
import re
import textwrap
from pathlib import Path

from robustsuite_common.experiment import HEADLINE_COLUMNS

from .check import CI_HIGH, CI_LOW
from .schema import Scalar, is_number

HEADLINE = "headline"
SANITY = "pgd_minus_autoattack"


def format_value(v: Scalar, digits: int = 4) -> str:
    """A report cell: floats to ``digits`` significant figures, None as an en dash, bools as yes/no."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


_fmt = format_value


def metric_rows(metrics: dict[str, dict]) -> list[tuple[str, str, str, str]]:
    """``(label with unit, value, interval with its level and method, note)`` per metric (the key when it has
    no label)."""
    rows = []
    for k, m in metrics.items():
        iv, unit = m.get("interval"), m.get("unit") or ""
        how = f"{100 * iv.get('level', 0.95):g} %" + (f", {iv['method']}" if iv.get("method") else "") if iv else ""
        rows.append(((m.get("label") or k) + (f" ({unit})" if unit else ""), _fmt(m.get("value")),
                     f"[{_fmt(iv['low'])}, {_fmt(iv['high'])}] ({how})" if iv else "", m.get("note") or ""))
    return rows


def table_cells(columns: list[str], rows: list[list[Scalar]], units: dict[str, str] | None = None
                ) -> tuple[list[str], list[list[str]]]:
    """Columns ``C``, ``C_ci_low``, ``C_ci_high`` rendered as one column ``C`` holding ``x [lo, hi]``; a column
    with a unit is headed ``C (unit)``."""
    units = units or {}
    keep = [i for i, c in enumerate(columns)
            if not (c.endswith((CI_LOW, CI_HIGH)) and c.rsplit("_ci_", 1)[0] in columns)]
    ci = {i: (columns.index(columns[i] + CI_LOW), columns.index(columns[i] + CI_HIGH)) for i in keep
          if columns[i] + CI_LOW in columns and columns[i] + CI_HIGH in columns}

    def cell(row: list[Scalar], i: int) -> str:
        lo, hi = (row[ci[i][0]], row[ci[i][1]]) if i in ci else (None, None)
        return _fmt(row[i]) + (f" [{_fmt(lo)}, {_fmt(hi)}]" if lo is not None and hi is not None else "")

    heads = [columns[i] + (f" ({units[columns[i]]})" if units.get(columns[i]) else "") for i in keep]
    return heads, [[cell(row, i) for i in keep] for row in rows]


def sanity_flags(sec: dict) -> list[str]:
    """The section's PGD-vs-AutoAttack flags (see the module docstring), written from its numbers."""
    out, metrics = [], sec.get("metrics", {})
    for key, m in metrics.items():
        iv = m.get("interval")
        if not (key == SANITY or key.endswith(("." + SANITY, ":" + SANITY))) or not iv or not iv["low"] > 0:
            continue
        prefix = key[: -len(SANITY)]
        named = [f"{lab} {_fmt(metrics[prefix + k]['value'])}" for k, lab in
                 (("robust_accuracy_pgd", "PGD"), ("robust_accuracy_autoattack", "standard AutoAttack"))
                 if prefix + k in metrics]
        out.append(f"{prefix.rstrip('.:') + ': ' if prefix else ''}PGD leaves clearly more points robust than "
                   f"standard AutoAttack on the same inputs ({', '.join(named) + '; ' if named else ''}paired "
                   f"difference {_fmt(m['value'])} [{_fmt(iv['low'])}, {_fmt(iv['high'])}]): the PGD number "
                   "overstates robustness.")
    return out


def headline_table(sec: dict) -> dict | None:
    t = next((t for t in sec.get("tables", []) if t["name"] == HEADLINE), None)
    missing = [] if t is None else [c for c in HEADLINE_COLUMNS if c not in t["columns"]]
    if missing:
        raise ValueError(f"table 'headline' must have the columns {list(HEADLINE_COLUMNS)}; missing {missing}")
    return t


def headline_path(key: str) -> str:
    """Where the headline chart of section ``key`` is written, relative to the run directory."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", key).strip("-.") or "section"
    return f"figures/report/{safe}-headline.png"


def headline_series(sec: dict) -> tuple[list[str], dict[str, tuple[list, list[list[float]]]]]:
    """``(row labels, {"clean" | "attacked": (values, [lower errors, upper errors])})`` of the section's
    headline table: what the chart draws (a missing interval draws no error bar)."""
    t = headline_table(sec)
    recs = [dict(zip(t["columns"], r, strict=True)) for r in t["rows"]] if t is not None else []
    series = {}
    for col in ("clean", "attacked"):
        vals = [r[col] if is_number(r[col]) else None for r in recs]
        lo = [v - r[f"{col}_ci_low"] if v is not None and is_number(r[f"{col}_ci_low"]) else 0.0
              for v, r in zip(vals, recs, strict=True)]
        hi = [r[f"{col}_ci_high"] - v if v is not None and is_number(r[f"{col}_ci_high"]) else 0.0
              for v, r in zip(vals, recs, strict=True)]
        series[col] = (vals, [lo, hi])
    return [str(r["condition"]) for r in recs], series


def headline_png(sec: dict) -> bytes | None:
    """The headline chart (PNG): clean against attacked score per row, intervals as error bars."""
    t = headline_table(sec)
    if t is None or not t["rows"]:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels, series = headline_series(sec)
    ys = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(8, 1.8 + 0.5 * len(labels)))
    for off, col, colour in ((-0.2, "clean", "tab:gray"), (0.2, "attacked", "tab:red")):
        vals, err = series[col]
        ax.barh(ys + off, [np.nan if v is None else v for v in vals], height=0.38, xerr=np.array(err),
                color=colour, label=col, capsize=3)
    ax.set_yticks(ys, labels)
    ax.invert_yaxis()
    unit = t.get("units", {}).get("clean", "")
    if unit == "fraction":
        ax.set_xlim(0, 1)
    ax.set_xlabel("score" + (f" ({unit})" if unit else "") + ", 95 % intervals")
    ax.set_title("\n".join(textwrap.wrap(t["title"], 80)), fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell or paragraph (pipes, backticks, angle brackets, newlines)."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;")
            .replace(">", "&gt;").replace("\n", " "))


def provenance_lines(run: dict) -> list[str]:
    """Provenance as plain lines (package versions, lock hash, the user's own git commit if any)."""
    lines = [f"created {run['created']} · finished {run.get('finished') or '–'} · seed(s) "
             f"{', '.join(map(str, run.get('seeds') or [run['seed']]))} · device {run['device']}",
             "versions: " + ", ".join(f"{k} {v}" for k, v in run["versions"].items() if v),
             f"uv.lock sha256: {run.get('uv_lock_sha256') or 'not found'}"]
    ug = run.get("user_git")
    lines.append(f"your git repository {ug['repository']} at commit {ug['commit']}"
                 + (" (with uncommitted changes)" if ug.get("dirty") else "") if ug else
                 "your git commit: none recorded (the run was not started inside a git repository)")
    if run.get("git"):
        lines.append(f"git: {run['git']}")
    if run.get("migrated_from"):
        lines.append(f"read from a schema {run['migrated_from']} report.json (migrated to the current schema)")
    lines.append(f"command: {run['command']}")
    return lines


def section_meta(key: str, sec: dict) -> str:
    seeds = sec.get("seeds") or []
    how = ("deterministic: computed once, its numbers do not depend on the seed" if sec.get("deterministic")
           else f"seed(s) {', '.join(map(str, seeds))}" if seeds else "")
    return " · ".join(p for p in (f"section {key}", f"model {sec.get('model')}", f"dataset {sec.get('dataset')}",
                                  how) if p)


UNIT_COLUMNS = ("unit", "method", "model", "dataset", "seed", "status", "seconds", "error")
SCORECARD_COLUMNS = ("group", "status", "check", "statistic [interval] (n)", "rule", "evidence", "next step")
STATUS_WORDS = {"supported": "the measured robustness holds up",
                "supported-with-caveats": "the measured robustness holds up, with caveats",
                "not-supported": "the measured robustness does NOT hold up",
                "inconclusive": "inconclusive: this evaluation cannot decide", "pass": "pass", "warn": "warn", "fail": "FAIL", "not-applicable": "n/a"}
ICONS = {"supported": "✔", "supported-with-caveats": "⚠", "not-supported": "✘", "inconclusive": "?", "pass": "✔",
         "warn": "⚠", "fail": "✘", "not-applicable": "–"}


def _statistic(c: dict) -> str:
    if c.get("statistic") is None:
        return "–"
    iv, n = c.get("interval"), c.get("n")
    p = (f"; p = {_fmt(c['p_value'], 3)}, adjusted {_fmt(c['p_adjusted'], 3)}" if c.get("p_value") is not None
         and c.get("p_adjusted") is not None else "")
    return (_fmt(c["statistic"], 3) + (f" [{_fmt(iv[0], 3)}, {_fmt(iv[1], 3)}]" if iv else "")
            + (f" (n = {n})" if n is not None else "") + p)


def verdict_view(v: dict) -> dict:
    """A verdict as the page shows it: the banner's words, icon and robust accuracy, and one scorecard row per check
    (group, status in words with its icon, check, statistic [interval] (n), rule, evidence link, next step)."""
    ri = v.get("robust_interval")
    robust = ((v.get("robust_attack") or "robust accuracy") + f": {_fmt(v['robust_accuracy'], 3)}"
              + (f" [{_fmt(ri[0], 3)}, {_fmt(ri[1], 3)}]" if ri else "")
              if v.get("robust_accuracy") is not None else "no AutoAttack robust accuracy (not an image model, or no ε): "
              "judged on the checks below")
    rows = [[c["group"], f"{ICONS[c['status']]} {STATUS_WORDS[c['status']]}", f"{c['title']} ({c['id']})",
             _statistic(c), c["rule"], c.get("evidence") or "",
             c.get("next_step") or "" if c["status"] in ("warn", "fail") else ""] for c in v["checks"]]
    counts = {s: sum(c["status"] == s for c in v["checks"]) for s in ("fail", "warn", "pass", "not-applicable")}
    return {"model": v["model"], "status": v["status"], "icon": ICONS[v["status"]], "words": STATUS_WORDS[v["status"]],
            "robust": robust, "rule": v["rule"], "rows": rows,
            "counts": ", ".join(f"{k} {n}" for k, n in counts.items() if n)}


def paper_effects(report: dict) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """Every section's ``paper_effects`` table (the paper's effect, its number, ours, the verdict), for the
    paper-fidelity page: ``(section key, section title, columns, rows)``."""
    out = []
    for key, sec in report["sections"].items():
        for t in sec.get("tables", []):
            if t["name"] == "paper_effects":
                cols, rows = table_cells(t["columns"], t["rows"], t.get("units"))
                out.append((key, sec["title"], cols, rows))
    return out
METRIC_COLUMNS = ("metric", "value", "interval", "note")


def _view(report: dict) -> dict:
    """What the templates (``templates/report.{md,html}.j2``) read: every part of the report as display strings,
    each section's parts in reading order."""
    sections = []
    for key, sec in report["sections"].items():
        head = headline_table(sec)
        tables = [(t["name"], (t["title"], *table_cells(t["columns"], t["rows"], t.get("units"))))
                  for t in sec["tables"]]
        sections.append({
            "key": key, "title": sec["title"], "warnings": sec.get("warnings", []), "meta": section_meta(key, sec),
            "summary": sec["summary"], "flags": sanity_flags(sec),
            "headline": headline_path(key) if head is not None and head["rows"] else None,
            "first": [t for name, t in tables if name == HEADLINE], "metrics": metric_rows(sec["metrics"]),
            "tables": [t for name, t in tables if name not in (HEADLINE, "paper_effects")], "figures": sec["figures"], "notes": sec["notes"],
            "samples": sec.get("samples") or []})
    units = [[u["id"], u["method"], u["model"], u["dataset"], str(u.get("seed", "–")), u["status"],
              _fmt(u.get("seconds")), u.get("error") or ""] for u in report["units"]]
    return {"run": report["run"], "warnings": report.get("warnings") or [], "provenance": provenance_lines(report["run"]),
            "verdicts": [verdict_view(v) for v in report.get("verdicts") or []], "scorecard_columns": SCORECARD_COLUMNS,
            "paper_effects": paper_effects(report),
            "unit_columns": UNIT_COLUMNS, "units": units, "metric_columns": METRIC_COLUMNS, "sections": sections}


@functools.cache
def _templates():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             autoescape=jinja2.select_autoescape(["html.j2"]))
    env.filters["md"] = _md
    return env


def render_markdown(report: dict) -> str:
    return _templates().get_template("report.md.j2").render(_view(report))


def render_html(report: dict, run_dir: Path) -> str:
    """Self-contained HTML: figures (and headline charts) are read from ``run_dir`` and embedded as data URIs."""
    def embed(path: str) -> str:
        file = Path(run_dir) / path
        return "data:image/png;base64," + base64.b64encode(file.read_bytes()).decode() if file.is_file() else ""

    return _templates().get_template("report.html.j2").render(_view(report), embed=embed)
