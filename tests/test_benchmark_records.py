"""Recorded benchmarks are data: each docs/benchmarks/<name>/ (and docs/demo/) holds meta.json beside its report,
naming the command, the machine, the code commit and the CPU time, and agreeing with the report and cpu.log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p for p in (ROOT / "docs/benchmarks").iterdir() if p.is_dir())
RECORDS = [ROOT / "docs/demo", *(p for p in FOLDERS if (p / "meta.json").is_file())]  # runs with a report
BENCHES = [f for p in FOLDERS if not (p / "meta.json").is_file() for f in sorted(p.glob("*.json"))]  # timings


@pytest.mark.parametrize("folder", RECORDS, ids=lambda p: p.name)
def test_a_record_names_command_machine_commit_and_cpu_time(folder):
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    report = json.loads((folder / meta["report"]).read_text(encoding="utf-8"))
    assert meta["name"] == folder.name and meta["command"].strip()
    assert {"cpus", "cpu", "memory_gib", "gpu", "torch"} <= meta["machine"].keys()
    assert meta["code_commit"] == report["run"]["user_git"]["commit"]
    assert meta["machine"]["torch"] == report["run"]["versions"]["torch"]
    assert (ROOT / meta["benchmark"]).is_file()
    if meta["cpu_log"]:  # the logged CPU time is the sum of user + system seconds of every process in the log
        rows = [line.split() for line in (folder / meta["cpu_log"]).read_text().splitlines()]
        logged = sum(float(f[-4]) + float(f[-3]) for f in rows if f and f[-1].startswith("rc="))
        assert abs(logged / 3600 - meta["cpu_hours_logged"]) < 0.01
        assert meta["cpu_hours"] >= meta["cpu_hours_logged"]
    else:
        assert meta["cpu_hours"] is None and meta["cpu_note"]


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_timing_record_names_what_command_commit_and_machine(path):
    """A folder of timings (tools/bench/ output) holds no report: each file says what it measured, the command, the
    code commit and the machine (with its load: timings of a busy machine are not a quiet machine's)."""
    rec = json.loads(path.read_text(encoding="utf-8"))
    assert rec["what"].strip() and rec["command"].strip() and rec["machine"] and rec["date"]
    assert rec.get("commit") is None or len(rec["commit"]) >= 7
