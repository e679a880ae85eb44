"""Compare certcal.experiment with the umbrella runner it replaced: same shipped models, data and seed; every
metric of the old section checked against the new result (point estimates and interval bounds separately).

    OMP_NUM_THREADS=1 uv run python tools/certcal_compare_old_runner.py --size small --seed 3   # ~1 min of CPU
    OMP_NUM_THREADS=1 uv run python tools/certcal_compare_old_runner.py --size demo --seed 0    # ~3 min of CPU

The old runner and the old ``certcal`` package are taken from ``--commit`` (default 080c8cc, the last commit
before the redesign) with ``git show`` into a temporary directory and run in a subprocess that imports that
``certcal`` first; everything else (loaders, shipped data and weights) is this checkout's.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_OLD = {"max_samples": 24, "n": 100, "n_boot": 10, "admm_steps": 20, "ace_steps": 2, "act_train_samples": 32,
             "act_max_samples": 16, "radii": [0.0, 0.25]}
SMALL_NEW = {"test_samples": 24, "certify.n": 100, "calibration.n_boot": 10, "acce.steps": 20, "ace.steps": 2,
             "act.train_samples": 32, "act.test_samples": 16, "calibration.radii": [0.0, 0.25]}

OLD = r'''
import importlib.util, json, sys, tempfile
from pathlib import Path
root, out, seed, small = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
sys.path.insert(0, root)
import certcal
assert certcal.__file__.startswith(root), certcal.__file__
import torch
import robustsuite.runners as rr
spec = importlib.util.spec_from_file_location("robustsuite.runners._old_certcal", root + "/old_runner.py")
runner = importlib.util.module_from_spec(spec); sys.modules[spec.name] = runner; spec.loader.exec_module(runner)
params = {**runner.DEFAULTS, **small}
ctx = rr.RunContext(run_dir=Path(tempfile.mkdtemp()), method="certcal", seed=seed, device=torch.device("cpu"))
sec = runner.run(ctx, params)
json.dump({"metrics": sec.metrics, "tables": {t.name: {"columns": t.columns, "rows": t.rows} for t in sec.tables},
           "summary": sec.summary}, open(out, "w"), default=str)
'''


def run_old(commit: str, seed: int, small: dict, out: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit, "packages/certcal/src/certcal"],
                               cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
        for f in files:
            dest = root / "certcal" / Path(f).relative_to("packages/certcal/src/certcal")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(subprocess.run(["git", "show", f"{commit}:{f}"], cwd=ROOT, check=True,
                                            capture_output=True).stdout)
        (root / "old_runner.py").write_bytes(subprocess.run(
            ["git", "show", f"{commit}:packages/robustsuite/src/robustsuite/runners/certcal.py"], cwd=ROOT, check=True,
            capture_output=True).stdout)
        subprocess.run([sys.executable, "-c", OLD, str(root), str(out), str(seed), json.dumps(small)], check=True,
                       cwd=tmp)
    return json.loads(out.read_text())


def run_new(seed: int, small: dict) -> dict:
    from dataclasses import replace

    from certcal import experiment
    from robustsuite.loaders import load_dataset, load_model
    from robustsuite_common.config import override

    cfg = override(experiment.preset("demo"), small, seed=seed)
    ds = load_dataset("builtin:fashion-mnist")
    train, test = (replace(s, label_names=tuple(ds.classes)) for s in (ds.train, ds.test))
    models = experiment.Models(base=load_model("builtin:fashion-cnn"), noise={
        s: load_model(f"builtin:fashion-cnn-noise-{s:g}") for s in cfg.smoothing.sigmas})
    res = experiment.run(models, experiment.Data(train=train, test=test), cfg, progress=False)
    out = {}
    for k, m in res.metrics.items():
        out[k] = m.value
        if m.interval is not None:
            out[k + "_ci_low"], out[k + "_ci_high"] = m.interval.ci
    return {"metrics": out, "summary": res.summary,
            "tables": {n: {"columns": list(t.columns), "rows": [list(r) for r in t.rows]} for n, t in res.tables.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=["small", "demo"], default="small")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--commit", default="080c8cc")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = run_old(args.commit, args.seed, SMALL_OLD if args.size == "small" else {}, Path(tmp) / "old.json")
    new = run_new(args.seed, SMALL_NEW if args.size == "small" else {})
    same, moved, absent = [], [], []
    for k, v in old["metrics"].items():
        if k not in new["metrics"]:
            absent.append(k)
            continue
        w = new["metrics"][k]
        equal = v == w or (isinstance(v, float) and isinstance(w, float) and math.isnan(v) and math.isnan(w))
        (same if equal else moved).append((k, v, w))
    points = [m for m in moved if not m[0].endswith(("_ci_low", "_ci_high"))]
    print(f"old section: {len(old['metrics'])} metrics; identical {len(same)}, different {len(moved)} "
          f"(point estimates {len(points)}, interval bounds {len(moved) - len(points)}), absent {len(absent)}")
    for k, v, w in moved:
        print(f"  {k}: {v} -> {w}")
    if absent:
        print("  absent (old value): " + ", ".join(f"{k} ({old['metrics'][k]})" for k in absent))
    for name, t in old["tables"].items():
        nt = new["tables"].get(name)
        if nt is None:
            print(f"table {name}: missing")
            continue
        cols = [c for c in t["columns"] if c in nt["columns"]]
        diff = sum(1 for r, nr in zip(t["rows"], nt["rows"], strict=True) for c, v in zip(t["columns"], r, strict=True)
                   if c in cols and c != "method" and dict(zip(nt["columns"], nr, strict=True))[c] != v)
        print(f"table {name}: {len(t['rows'])} rows, {len(cols)}/{len(t['columns'])} old columns kept, {diff} cells differ")
    print("old summary:", old["summary"])
    print("new summary:", new["summary"])
    return 1 if points else 0


if __name__ == "__main__":
    raise SystemExit(main())
