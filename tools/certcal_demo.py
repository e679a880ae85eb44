"""Run the certcal part of the umbrella demo alone on the runner's DEFAULTS and print its tables.

    OMP_NUM_THREADS=1 uv run python tools/certcal_demo.py   # ~1.5 min of CPU (see packages/certcal/README.md)
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import torch

from robustsuite.runners import RunContext
from robustsuite.runners import certcal as runner


def main() -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    ctx = RunContext(run_dir=Path(tempfile.mkdtemp()), method=runner.NAME, seed=0, device=torch.device("cpu"))
    sec = runner.run(ctx, dict(runner.DEFAULTS))
    print(f"wall {time.perf_counter() - t0:.1f} s, process CPU {time.process_time() - c0:.1f} s")
    print(sec.summary)
    for table in sec.tables:
        print(f"\n{table.name}: {table.columns}")
        for row in table.rows:
            print(row)


if __name__ == "__main__":
    main()
