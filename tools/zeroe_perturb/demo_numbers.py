"""Print the Zéroe section of robustsuite's demo as Markdown: the runner's demo inputs (``builtin:wordnet-roberta``
on ``builtin:wordnet-topics`` and the three WordNet task models) through ``zeroe_perturb.experiment.run`` with the
``demo`` preset, seed 0.

    uv run python tools/zeroe_perturb/demo_numbers.py [RUN_DIR] [--set path=value ...]

RUN_DIR (default: a fresh temporary directory) keeps the checkpoints (a rerun resumes), ``result.json``, the
per-sample records as JSONL and the figures. Offline.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

from robustsuite import runners
from robustsuite_common.config import override, parse_sets
from robustsuite_common.experiment import DirStore
from zeroe_perturb import experiment

args, sets = sys.argv[1:], []
while "--set" in args:
    i = args.index("--set")
    sets.append(args[i + 1])
    del args[i:i + 2]
changes = parse_sets(sets)
run_dir = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="zeroe-demo-"))
run_dir.mkdir(parents=True, exist_ok=True)
t0, c0 = time.time(), time.process_time()
runner = runners.get("zeroe_perturb")
specs, cfg = runner.resolve({})
cfg = override(cfg, changes) if changes else cfg
ctx = runners.RunContext(run_dir=run_dir, method="zeroe_perturb", seed=cfg.seed)
models, data = runner.module.inputs(ctx, specs, cfg)
res = experiment.run(models, data, cfg, store=DirStore(run_dir / "store"), progress=True)
print(f"wall {time.time() - t0:.0f} s, CPU (this process) {time.process_time() - c0:.0f} s")
res.save(run_dir / "result.json")
for name, rows in res.records.items():
    with open(run_dir / f"{name}.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
try:
    for fig in experiment.figures(res):
        fig.figure.savefig(run_dir / f"{fig.name}.png", dpi=110, bbox_inches="tight")
except ImportError:
    pass
for w in res.warnings:
    print("WARNING:", w)
print(res.summary)
for key, m in res.metrics.items():
    ci = "" if m.interval is None else f" [{m.ci[0]:.3f}, {m.ci[1]:.3f}]"
    print(f"{key}: {m.value!r}{ci}" + (f"  ({m.note})" if m.note else ""))


def cell(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def markdown(table, columns=None, digits=3):
    """A table as Markdown, ``x [lo, hi]`` for the ``_ci_low`` / ``_ci_high`` column triples."""
    cols = [c for c in (columns or table.columns) if not c.endswith(("_ci_low", "_ci_high"))]
    idx = {c: k for k, c in enumerate(table.columns)}
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in table.rows:
        cells = []
        for c in cols:
            v = r[idx[c]]
            if f"{c}_ci_low" in idx and r[idx[c + "_ci_low"]] is not None:
                v = f"{cell(v, digits)} [{cell(r[idx[c + '_ci_low']], digits)}, {cell(r[idx[c + '_ci_high']], digits)}]"
            cells.append(cell(v, digits))
        print("| " + " | ".join(cells) + " |")


for t in res.tables.values():
    print(f"\n{t.name}: {t.title}\n")
    markdown(t)
print("\nrun directory:", run_dir)
