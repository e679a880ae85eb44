"""Run the certcal part of the umbrella demo alone (certcal.experiment, preset "demo", the shipped models and
data) and print its timing, summary and tables.

    OMP_NUM_THREADS=1 uv run python tools/certcal_demo.py            # ~1.5-2.5 min of CPU
    OMP_NUM_THREADS=1 uv run python tools/certcal_demo.py --preset paper-cpu --limit 40 --set act.epochs=1
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from certcal import experiment
from robustsuite.loaders import load_dataset, load_model
from robustsuite_common.config import override


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="demo", choices=sorted(experiment.PRESETS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="first N train/test images only")
    ap.add_argument("--set", action="append", default=[], metavar="DOTTED=JSON", help="config override")
    args = ap.parse_args()
    import json

    cfg = override(experiment.preset(args.preset), {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)},
                   seed=args.seed)
    ds = load_dataset("builtin:fashion-mnist")
    train, test = (replace(s, label_names=tuple(ds.classes)) for s in (ds.train, ds.test))
    if args.limit:
        train, test = train.head(args.limit), test.head(args.limit)
    noise = {s: load_model(f"builtin:fashion-cnn-noise-{s:g}") for s in cfg.smoothing.sigmas if s in (0.25, 0.5)}
    t0, c0 = time.perf_counter(), time.process_time()
    res = experiment.run(experiment.Models(base=load_model("builtin:fashion-cnn"), noise=noise),
                         experiment.Data(train=train, test=test), cfg, progress=False)
    print(f"wall {time.perf_counter() - t0:.1f} s, process CPU {time.process_time() - c0:.1f} s")
    print(res.summary)
    for w in res.warnings:
        print("WARNING:", w)
    for table in res.tables.values():
        print(f"\n{table.name}: {table.title}\n{list(table.columns)}")
        for row in table.rows:
            print(list(row))


if __name__ == "__main__":
    main()
