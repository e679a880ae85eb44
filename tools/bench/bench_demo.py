"""Time a cold demo (issue 37): the whole `robustsuite run demo` in a fresh run directory, once on the machine as it
is ("quiet") and once with one other CPU-bound process running beside it ("busy"), and print busy/quiet.

The issue's targets: quiet ≤ 5 min wall on 2 cores, busy/quiet ≤ 2.5. Each run is a subprocess (`python -m
robustsuite.cli run BENCHMARK --out <fresh dir> --no-progress`), so its CPU seconds are its own (children's
rusage); the per-unit seconds come from its report.json. The load average before each run is recorded: a
"quiet" run on a machine others are using is not quiet, and the record says so (``--note``). The default
benchmark is timed as `robustsuite demo` (one worker process per core); others as `robustsuite run NAME`.

The environment is timed as installed: on a machine that sets PYTHONDONTWRITEBYTECODE, byte-compile it once first
(`uv sync --compile-bytecode`, what pip does at install), or every worker process recompiles torch and transformers;
the record says whether the environment was compiled (``machine.bytecode``).

    uv run python tools/bench/bench_demo.py --json docs/benchmarks/demo/bench_demo.json --note "..."
    uv run python tools/bench/bench_demo.py --benchmark demo-full --only quiet
    uv run python tools/bench/bench_demo.py --methods uncspan,certcal   # a subset of the demo's sections
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUIET_TARGET_S, RATIO_TARGET = 300.0, 2.5


def _burner() -> subprocess.Popen:
    """One other CPU-bound process: a pure-Python busy loop (one core)."""
    return subprocess.Popen([sys.executable, "-c", "while True:\n    pass"])


def _bytecode() -> str:
    """Whether torch's modules were byte-compiled (at install or by an earlier import), and whether Python may write
    bytecode here."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    cached = spec is not None and spec.cached is not None and Path(spec.cached).is_file()
    writes = "PYTHONDONTWRITEBYTECODE set" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "Python writes bytecode"
    return f"{'compiled' if cached else 'not compiled'} ({writes})"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_once(benchmark: str, methods: str | None, extra: list[str], busy: bool, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        out = Path(tmp) / "run"
        if methods:
            argv = [sys.executable, "-m", "robustsuite.cli", "demo", "--methods", methods]
        elif benchmark == "demo":  # the newcomer's command: `robustsuite demo` (its default workers)
            argv = [sys.executable, "-m", "robustsuite.cli", "demo"]
        else:
            argv = [sys.executable, "-m", "robustsuite.cli", "run", benchmark]
        argv += ["--out", str(out), "--no-progress", *extra]
        burner = _burner() if busy else None
        try:
            load = os.getloadavg()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            res = subprocess.run(argv, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            if burner is not None:
                burner.kill()
                burner.wait()
        if res.returncode != 0:
            sys.stderr.write(res.stderr)
            raise SystemExit(f"the run failed (exit {res.returncode})")
        report = json.loads((out / "report.json").read_text())
        if keep is not None:  # the run directory itself, e.g. to record the demo's report
            shutil.copytree(out, keep, dirs_exist_ok=True)
    units = {u["id"]: round(u["seconds"], 1) for u in report["units"]}
    return {"wall_s": round(wall, 1), "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime
                                                      - before.ru_stime, 1),
            "load_average_before": [round(x, 2) for x in load], "unit_seconds": units,
            "command": " ".join(["robustsuite", *argv[3:]]).replace(str(out), "<fresh dir>")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", default="demo", help="shipped benchmark name or TOML file (default demo)")
    ap.add_argument("--methods", default=None, help="time `robustsuite demo --methods M` (a subset) instead")
    ap.add_argument("--only", choices=("quiet", "busy"), default=None, help="one of the two runs")
    ap.add_argument("--json", type=Path, default=None, help="write the record here")
    ap.add_argument("--note", default="", help="what else ran on the machine (recorded as is)")
    ap.add_argument("--keep", type=Path, default=None, help="copy the quiet run's directory here (its report.json)")
    ap.add_argument("extra", nargs="*", help="more options for the run (after --), e.g. -- --workers 2")
    a = ap.parse_args()
    modes = [a.only] if a.only else ["quiet", "busy"]
    timings = {m: run_once(a.benchmark, a.methods, a.extra, busy=m == "busy", keep=a.keep if m == "quiet" else None)
               for m in modes}
    record = {
        "what": "cold run (fresh run directory) of " + (f"`robustsuite demo --methods {a.methods}`" if a.methods
                                                        else f"the `{a.benchmark}` benchmark"),
        "command": shlex.join(["uv", "run", "python", "tools/bench/bench_demo.py", *sys.argv[1:]]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "threads": os.environ.get("ROBUSTSUITE_THREADS", "1 (default)"), "note": a.note,
                    "bytecode": _bytecode()},
        "commit": _git("rev-parse", "HEAD"), "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "timings": timings,
        "targets": {"quiet_wall_s_max": QUIET_TARGET_S, "busy_over_quiet_max": RATIO_TARGET},
    }
    if "quiet" in timings and "busy" in timings:
        record["busy_over_quiet"] = round(timings["busy"]["wall_s"] / timings["quiet"]["wall_s"], 2)
    for m, t in timings.items():
        print(f"{m}: {t['wall_s']:.0f} s wall, {t['cpu_s']:.0f} CPU-s (load average before: "
              f"{t['load_average_before'][0]:.1f})")
    if "busy_over_quiet" in record:
        print(f"busy/quiet: {record['busy_over_quiet']:.2f} (target ≤ {RATIO_TARGET})")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
