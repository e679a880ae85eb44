"""Markdown and self-contained HTML renderings of a 2.0 report (the JSON stays the source of truth).

Per section, in this order: its warnings, where it was measured, the summary, the sanity flag, the headline
chart with its table, the metrics (readable labels with units, the interval with its method), the other
tables, figures and notes.

**Headline convention.** A section whose results compare a clean with an attacked score names a table
``headline`` with the columns ``condition`` (the attacker, system or defense of the row), ``clean``,
``clean_ci_low``, ``clean_ci_high``, ``attacked``, ``attacked_ci_low``, ``attacked_ci_high`` (more columns
such as ``attack`` or ``n`` may follow); ``units["clean"]`` names the score. The renderer draws it as a bar
chart of clean against attacked score per row with the intervals as error bars, before the other tables.

**Sanity flag convention.** A metric ``pgd_minus_autoattack`` (or ``<prefix>.pgd_minus_autoattack``): the
paired difference of robust accuracy under the section's PGD and under standard AutoAttack on the same
inputs, with its interval; companions ``robust_accuracy_pgd`` and ``robust_accuracy_autoattack`` (same
prefix) are named beside it. When the interval lies above zero the section shows the flag.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from .schema import CI_HIGH, CI_LOW, Scalar, is_number

HEADLINE = "headline"
HEADLINE_COLUMNS = ("condition", "clean", "clean_ci_low", "clean_ci_high", "attacked", "attacked_ci_low",
                    "attacked_ci_high")
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


def metric_name(key: str, m: dict) -> str:
    """The metric's label (its key when it has none) with its unit."""
    unit = m.get("unit") or ""
    return (m.get("label") or key) + (f" ({unit})" if unit else "")


def interval_text(iv: dict | None) -> str:
    if not iv:
        return ""
    level = f"{100 * iv.get('level', 0.95):g} %"
    how = ", ".join(p for p in (level, iv.get("method") or "") if p)
    return f"[{_fmt(iv['low'])}, {_fmt(iv['high'])}] ({how})"


def metric_rows(metrics: dict[str, dict]) -> list[tuple[str, str, str, str]]:
    """``(name with unit, value, interval with its method, note)`` per metric."""
    return [(metric_name(k, m), _fmt(m.get("value")), interval_text(m.get("interval")), m.get("note") or "")
            for k, m in metrics.items()]


def table_cells(columns: list[str], rows: list[list[Scalar]], units: dict[str, str] | None = None
                ) -> tuple[list[str], list[list[str]]]:
    """Columns ``C``, ``C_ci_low``, ``C_ci_high`` rendered as one column ``C`` holding ``x [lo, hi]``; a column
    with a unit is headed ``C (unit)``."""
    units = units or {}
    keep = [i for i, c in enumerate(columns)
            if not (c.endswith((CI_LOW, CI_HIGH)) and c.rsplit("_ci_", 1)[0] in columns)]
    out = []
    for row in rows:
        cells = []
        for i in keep:
            c = columns[i]
            text = _fmt(row[i])
            if c + CI_LOW in columns and c + CI_HIGH in columns:
                lo, hi = row[columns.index(c + CI_LOW)], row[columns.index(c + CI_HIGH)]
                if lo is not None and hi is not None:
                    text += f" [{_fmt(lo)}, {_fmt(hi)}]"
            cells.append(text)
        out.append(cells)
    return [columns[i] + (f" ({units[columns[i]]})" if units.get(columns[i]) else "") for i in keep], out


def sanity_flags(sec: dict) -> list[str]:
    """The section's PGD-vs-AutoAttack flags (see the module docstring), written from its numbers."""
    out, metrics = [], sec.get("metrics", {})
    for key, m in metrics.items():
        if not (key == SANITY or key.endswith(("." + SANITY, ":" + SANITY))):
            continue
        iv = m.get("interval")
        if not iv or not iv["low"] > 0:
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
    if t is None:
        return None
    missing = [c for c in HEADLINE_COLUMNS if c not in t["columns"]]
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
    import io

    import matplotlib

    matplotlib.use("Agg")
    import textwrap

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
    if ug:
        lines.append(f"your git repository {ug['repository']} at commit {ug['commit']}"
                     + (" (with uncommitted changes)" if ug.get("dirty") else ""))
    else:
        lines.append("your git commit: none recorded (the run was not started inside a git repository)")
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


def render_markdown(report: dict) -> str:
    run = report["run"]
    out = [f"# robustsuite report `{run['id']}`", ""]
    if report.get("warnings"):
        out += ["## Warnings", ""] + [f"- **{_md(w['section'])}**: {_md(w['message'])}" for w in report["warnings"]]
        out.append("")
    out += [f"- {_md(line)}" for line in provenance_lines(run)] + [""]
    out += ["## Units", "", "| unit | method | model | dataset | seed | status | seconds | error |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    out += [f"| {_md(u['id'])} | {_md(u['method'])} | {_md(u['model'])} | {_md(u['dataset'])} | "
            f"{u.get('seed', '–')} | {u['status']} | {_fmt(u.get('seconds'))} | {_md(u.get('error') or '')} |"
            for u in report["units"]]
    out.append("")
    for key, sec in report["sections"].items():
        out += [f"## {_md(sec['title'])}", ""]
        out += [f"> **WARNING**: {_md(w)}" for w in sec.get("warnings", [])]
        out += [""] if sec.get("warnings") else []
        out += [f"*{_md(section_meta(key, sec))}*", "", _md(sec["summary"]), ""]
        out += [f"> **Sanity check**: {_md(f)}" for f in sanity_flags(sec)]
        out += [""] if sanity_flags(sec) else []
        if headline_table(sec) is not None and headline_table(sec)["rows"]:
            out += [f"![clean vs attacked]({headline_path(key)})", ""]
        tables = sec["tables"]
        for t in (t for t in tables if t["name"] == HEADLINE):
            out += _md_table(t)
        if sec["metrics"]:
            out += ["| metric | value | interval | note |", "| --- | --- | --- | --- |"]
            out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in metric_rows(sec["metrics"])]
            out.append("")
        for t in (t for t in tables if t["name"] != HEADLINE):
            out += _md_table(t)
        for f in sec["figures"]:
            out += [f"![{_md(f['caption'])}]({f['path']})", "", f"*{_md(f['caption'])}*", ""]
        out += [f"> {_md(n)}" for n in sec["notes"]]
        if sec.get("samples"):
            out += ["", "Per-sample records: " + ", ".join(f"`{p}`" for p in sec["samples"])]
        out.append("")
    return "\n".join(out)


def _md_table(t: dict) -> list[str]:
    cols, rows = table_cells(t["columns"], t["rows"], t.get("units"))
    return [f"**{_md(t['title'])}**", "", "| " + " | ".join(_md(c) for c in cols) + " |", "|" + " --- |" * len(cols),
            *["| " + " | ".join(_md(v) for v in row) + " |" for row in rows], ""]


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}figure{margin:1em 0}
img{max-width:100%;border:1px solid #ddd}.meta{color:#666;font-size:.9em}.note{background:#fff8e1;padding:.4em .8em}
.warning{background:#fde8e8;border-left:4px solid #c62828;padding:.4em .8em;font-weight:600}
.sanity{background:#fff3e0;border-left:4px solid #ef6c00;padding:.4em .8em}
section{border-top:2px solid #444;margin-top:2em}.failed{background:#fde8e8}td.err{text-align:left;font-family:monospace}"""


def _img(path: Path, alt: str) -> str:
    src = ("data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()) if path.is_file() else ""
    e = html.escape
    return f"<figure><img alt='{e(alt)}' src='{src}'><figcaption>{e(alt)}</figcaption></figure>"


def _html_table(t: dict, e) -> str:
    cols, rows = table_cells(t["columns"], t["rows"], t.get("units"))
    return (f"<h3>{e(t['title'])}</h3><table><tr>" + "".join(f"<th>{e(c)}</th>" for c in cols) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{e(v)}</td>" for v in row) + "</tr>" for row in rows) + "</table>")


def render_html(report: dict, run_dir: Path) -> str:
    """Self-contained HTML: figures (and headline charts) are read from ``run_dir`` and embedded as data URIs."""
    e = html.escape
    run = report["run"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>robustsuite {e(run['id'])}</title>",
             f"<style>{_CSS}</style></head><body><h1>robustsuite report <code>{e(run['id'])}</code></h1>"]
    if report.get("warnings"):
        parts.append("<h2>Warnings</h2>" + "".join(
            f"<p class='warning'><a href='#{e(w['section'])}'>{e(w['section'])}</a>: {e(w['message'])}</p>"
            for w in report["warnings"]))
    parts += ["<p class='meta'>" + "<br>".join(e(line) for line in provenance_lines(run)) + "</p>",
              "<h2>Units</h2><table><tr><th>unit</th><th>method</th><th>model</th><th>dataset</th><th>seed</th>"
              "<th>status</th><th>seconds</th><th>error</th></tr>"]
    for u in report["units"]:
        cls = " class='failed'" if u["status"] != "done" else ""
        parts.append(f"<tr{cls}><td>{e(u['id'])}</td><td>{e(u['method'])}</td><td>{e(u['model'])}</td>"
                     f"<td>{e(u['dataset'])}</td><td>{e(str(u.get('seed', '–')))}</td><td>{e(u['status'])}</td>"
                     f"<td>{e(_fmt(u.get('seconds')))}</td><td class='err'>{e(u.get('error') or '')}</td></tr>")
    parts.append("</table>")
    for key, sec in report["sections"].items():
        parts.append(f"<section id='{e(key)}'><h2>{e(sec['title'])}</h2>")
        parts += [f"<p class='warning'>WARNING: {e(w)}</p>" for w in sec.get("warnings", [])]
        parts.append(f"<p class='meta'>{e(section_meta(key, sec))}</p><p>{e(sec['summary'])}</p>")
        parts += [f"<p class='sanity'>Sanity check: {e(f)}</p>" for f in sanity_flags(sec)]
        if headline_table(sec) is not None and headline_table(sec)["rows"]:
            parts.append(_img(Path(run_dir) / headline_path(key), f"clean vs attacked: {sec['title']}"))
        tables = sec["tables"]
        parts += [_html_table(t, e) for t in tables if t["name"] == HEADLINE]
        if sec["metrics"]:
            parts.append("<table><tr><th>metric</th><th>value</th><th>interval</th><th>note</th></tr>" + "".join(
                "<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in metric_rows(sec["metrics"]))
                + "</table>")
        parts += [_html_table(t, e) for t in tables if t["name"] != HEADLINE]
        parts += [_img(Path(run_dir) / f["path"], f["caption"]) for f in sec["figures"]]
        parts += [f"<p class='note'>{e(n)}</p>" for n in sec["notes"]]
        if sec.get("samples"):
            parts.append("<p class='meta'>per-sample records: " + ", ".join(f"<code>{e(p)}</code>" for p in sec["samples"])
                         + "</p>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
