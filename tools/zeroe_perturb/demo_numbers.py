"""Print the Zéroe runner's demo numbers (its DEFAULTS: builtin:wordnet-roberta on builtin:wordnet-topics).

    uv run python tools/zeroe_perturb/demo_numbers.py [RUN_DIR]

Runs ``robustsuite.runners.zeroe_perturb.run`` with seed 0 and per-sample logging (JSONL) into RUN_DIR
(default: a fresh temporary directory) and prints the summary, metrics, the s*(p) / ranking tables and, as Markdown, the tables of the other task
types (pairs, multi-label, POS tagging). Offline.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

from robustsuite import runners
from robustsuite.runners import zeroe_perturb as runner

t0, c0 = time.time(), time.process_time()
run_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="zeroe-demo-"))
ctx = runners.RunContext(run_dir=run_dir, method=runner.NAME, seed=0, log_format="jsonl")
sec = runner.run(ctx, dict(runner.DEFAULTS))
print(f"wall {time.time() - t0:.0f} s, CPU (this process) {time.process_time() - c0:.0f} s")
print(sec.summary)
print(json.dumps(sec.metrics, indent=0))
for t in sec.tables[:2]:
    print(t.columns)
    for r in t.rows:
        print(r)


def markdown(table, columns=None):
    """A table as Markdown, ``x [lo, hi]`` for the ``_ci_low`` / ``_ci_high`` column triples."""
    cols = [c for c in table.columns if not c.endswith(("_ci_low", "_ci_high"))]
    idx = {c: k for k, c in enumerate(table.columns)}
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in table.rows:
        cells = []
        for c in cols:
            v = r[idx[c]]
            if f"{c}_ci_low" in idx:
                v = f"{v:.3f} [{r[idx[c + '_ci_low']]:.3f}, {r[idx[c + '_ci_high']]:.3f}]"
            elif isinstance(v, float):
                v = f"{v:.3f}"
            cells.append(str(v))
        print("| " + " | ".join(cells) + " |")


for t in sec.tables:
    if t.name in ("task_summary", "tasks"):
        print(f"\n{t.name}: {t.title}")
        markdown(t)
print("per-sample rows:", [str(run_dir / s) for s in ctx.samples])
