"""Record a finished run as a benchmark record under ``docs/`` (the demo, ``paper-cpu``): copy its ``report.json``,
``report.md``, ``cpu.log``, ``plan.json`` and unit records, and write ``meta.json`` — the name, the benchmark file,
the command, the machine, the code commit that computed the run, the CPU-hours summed from ``cpu.log`` and the
start and end times from the report — which ``tools/dev/readme_numbers.py`` cites under every generated table.

    uv run python tools/dev/record_run.py RUN_DIR docs/benchmarks/paper-cpu --name paper-cpu \\
        --command "uv run robustsuite run paper-cpu --out RUN_DIR --workers 2 --no-progress" --commit dee21d2 \\
        --budget 16

``cpu.log`` gets a task's CPU time only when the task finishes; a run that spans sessions loses the work of tasks
killed at a session's end from it. ``--samples FILE`` (``tools/dev/cpu_sampler.sh`` logs, repeatable) and
``--unsampled-hours H`` (CPU-hours spent before sampling began, as the note states) give the run's whole CPU time:
``meta.json`` then holds both figures (``cpu_hours`` the whole, ``cpu_hours_logged`` the log's).

A run without ``report.json`` (not finished), a ``cpu.log`` or samples line that cannot be read, or a commit git does
not know is refused before anything is written; ``--budget H`` refuses a run that took more than H CPU-hours (its
``cpu.log``, or the whole when ``--samples`` are given).
Every file is written to a temporary name and renamed into place.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "packages/robustsuite/src/robustsuite/benchmarks"
COPIED = ("report.json", "report.md", "cpu.log", "plan.json")


class RecordError(ValueError):
    """A run that cannot be recorded (named input, why)."""


def cpu_hours(log: Path) -> float:
    """User + system CPU-hours of every task in a run's ``cpu.log`` (``JOB USER SYSTEM WALL rc=N`` lines)."""
    total = 0.0
    for k, line in enumerate(log.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            if len(parts) < 5 or not parts[-1].startswith("rc="):
                raise ValueError
            total += float(parts[-4]) + float(parts[-3])
        except ValueError:
            raise RecordError(f"cpu.log line {k} is not 'JOB USER SYSTEM WALL rc=N': {line!r}") from None
    return total / 3600


def sampled_cpu_hours(paths: list[Path]) -> float:
    """CPU-hours in ``cpu_sampler.sh`` logs (``TIME PID STARTTIME SECONDS`` lines): each process's, told apart by
    (PID, start time), largest sample, summed. A process's CPU time only grows, so its last sample is its largest."""
    last: dict[tuple[str, str], int] = {}
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise RecordError(f"--samples {path}: cannot be read ({e.strerror or e})") from None
        for k, line in enumerate(lines, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4 or not (parts[1].isdigit() and parts[2].isdigit() and parts[3].isdigit()):
                raise RecordError(f"{path} line {k} is not 'TIME PID STARTTIME SECONDS': {line!r}")
            key = (parts[1], parts[2])
            last[key] = max(last.get(key, 0), int(parts[3]))
    return sum(last.values()) / 3600


def _machine(workers: int) -> dict:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else \
        platform.processor()
    try:
        torch = version("torch")
    except PackageNotFoundError:
        torch = None
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30 if hasattr(os, "sysconf") else None
    gpu = None
    if shutil.which("nvidia-smi"):  # the first GPU's name, without importing torch
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True)
        gpu = (out.stdout.strip().splitlines() or [None])[0] if out.returncode == 0 else None
    return {"cpus": os.cpu_count(), "cpu": model, "memory_gib": None if memory is None else round(memory),
            "gpu": gpu, "python": platform.python_version(), "torch": torch,
            "threads_per_process": int(os.environ.get("ROBUSTSUITE_THREADS", "1")), "workers": workers}


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def record(run_dir: Path, dest: Path, *, name: str, command: str, commit: str, workers: int = 2,
           budget: float | None = None, note: str = "", samples: list[Path] | None = None,
           unsampled_hours: float = 0.0) -> dict:
    """Copy the run's files into ``dest`` and write its ``meta.json``; returns the meta."""
    run_dir, dest = Path(run_dir), Path(dest)
    report_path = run_dir / "report.json"
    if not report_path.is_file():
        raise RecordError(f"run_dir {run_dir} has no report.json: the run has not finished")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    log = run_dir / "cpu.log"
    logged = cpu_hours(log) if log.is_file() else None
    if unsampled_hours < 0 or (unsampled_hours and not samples):
        raise RecordError(f"--unsampled-hours {unsampled_hours:g}: needs --samples and must be >= 0")
    sampled = sampled_cpu_hours(samples) if samples else None
    whole = None if sampled is None else sampled + unsampled_hours
    total = None if logged is None else max(logged, whole or 0.0)  # what the budget holds and meta's cpu_hours
    if budget is not None and (total is None or total > budget):
        spent = "nothing" if logged is None else f"{logged:.2f} in cpu.log" + (
            "" if whole is None else f", {whole:.2f} in all (samples + unsampled)")
        raise RecordError(f"--budget {budget:g}: the run took {spent} CPU-hours")
    full = subprocess.run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True,
                          text=True)
    if full.returncode != 0:
        raise RecordError(f"--commit {commit!r} is not a commit of this repository")
    benchmark = BENCHMARKS / f"{name}.toml"
    meta = {"name": name, "benchmark": str(benchmark.relative_to(ROOT)) if benchmark.is_file() else None,
            "command": command, "machine": _machine(workers), "code_commit": full.stdout.strip(),
            "cpu_hours": None if total is None else round(total, 3),
            "cpu_hours_logged": None if logged is None else round(logged, 4), "cpu_log": "cpu.log" if logged else None,
            **({} if sampled is None else {"cpu_hours_sampled": round(sampled, 3),
                                         "cpu_hours_unsampled": round(unsampled_hours, 3)}),
            "cpu_note": note or "cpu.log: each unit's and shard's user + system seconds in its worker process",
            "report": "report.json", "started": report.get("run", {}).get("created"),
            "finished": report.get("run", {}).get("finished")}
    dest.mkdir(parents=True, exist_ok=True)
    for f in COPIED:
        if (run_dir / f).is_file():
            _write(dest / f, (run_dir / f).read_text(encoding="utf-8"))
    if (run_dir / "units").is_dir():
        units = dest / "units"
        tmp = dest / ".units.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for f in sorted((run_dir / "units").glob("*.json")):
            shutil.copy2(f, tmp / f.name)
        shutil.rmtree(units, ignore_errors=True)
        os.replace(tmp, units)
    _write(dest / "meta.json", json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("dest", type=Path, help="the record's folder, e.g. docs/benchmarks/paper-cpu")
    ap.add_argument("--name", required=True, help="the benchmark's name (demo, paper-cpu)")
    ap.add_argument("--command", required=True, help="the command that ran it, with RUN_DIR for the folder")
    ap.add_argument("--commit", required=True, help="the commit whose code computed the run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", type=float, default=None,
                    help="refuse a run above this many CPU-hours (cpu.log, or the whole with --samples)")
    ap.add_argument("--note", default="", help="how the CPU time was measured (meta.json cpu_note)")
    ap.add_argument("--samples", type=Path, action="append", default=None,
                    help="a cpu_sampler.sh log of the run's processes (repeatable): the whole CPU time")
    ap.add_argument("--unsampled-hours", type=float, default=0.0,
                    help="CPU-hours spent before sampling began (say how they were estimated in --note)")
    a = ap.parse_args(argv)
    try:
        meta = record(a.run_dir, a.dest, name=a.name, command=a.command, commit=a.commit, workers=a.workers,
                      budget=a.budget, note=a.note, samples=a.samples, unsampled_hours=a.unsampled_hours)
    except RecordError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"recorded {a.run_dir} in {a.dest}: {meta['cpu_hours']} CPU-hours at {meta['code_commit'][:7]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
