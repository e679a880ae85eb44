"""Print the Zéroe runner's demo numbers (its DEFAULTS: builtin:wordnet-roberta on builtin:wordnet-topics).

    uv run python tools/zeroe_perturb/demo_numbers.py [RUN_DIR]

Runs ``robustsuite.runners.zeroe_perturb.run`` with seed 0 and per-sample logging (JSONL) into RUN_DIR
(default: a fresh temporary directory) and prints the summary, metrics and the s*(p) / ranking tables. Offline.
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
print("per-sample rows:", [str(run_dir / s) for s in ctx.samples])
