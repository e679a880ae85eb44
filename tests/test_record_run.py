"""tools/dev/record_run.py, which turns a finished run into a benchmark record (files copied, meta.json written)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]



def _run(tmp_path: Path, log: str) -> Path:
    run = tmp_path / "run"
    (run / "units").mkdir(parents=True)
    (run / "report.json").write_text(json.dumps({"run": {"created": "2026-01-01T00:00:00+00:00",
                                                         "finished": "2026-01-01T01:00:00+00:00"}}))
    (run / "report.md").write_text("# report\n")
    (run / "cpu.log").write_text(log)
    (run / "units" / "u1.json").write_text("{}")
    return run


HEAD = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(not HEAD, reason="not a git checkout")
def test_meta_sums_the_cpu_log_and_names_the_commit(dev_tool, tmp_path):
    tool = dev_tool("record_run")
    run = _run(tmp_path, "unitA 3000.5 599.5 3700.0 rc=0\nunitB --shard 3 1800 0 1900 rc=0\n\n")
    dest = tmp_path / "docs" / "rec"
    meta = tool.record(run, dest, name="paper-cpu", command="uv run robustsuite run paper-cpu --out RUN_DIR",
                       commit=HEAD[:7], budget=2.0)
    assert meta["cpu_hours_logged"] == pytest.approx((3000.5 + 599.5 + 1800) / 3600, abs=1e-4)  # 1.5
    assert meta["code_commit"] == HEAD and meta["started"] == "2026-01-01T00:00:00+00:00"
    assert meta["benchmark"] == "packages/robustsuite/src/robustsuite/benchmarks/paper-cpu.toml"
    assert json.loads((dest / "meta.json").read_text()) == meta
    assert (dest / "report.md").read_text() == "# report\n" and (dest / "units" / "u1.json").is_file()
    assert not list(dest.glob(".*tmp"))  # written through temporary names, none left behind


@pytest.mark.parametrize("log, changes, match", [
    ("u 1 1 1 rc=0\n", {"budget": 0.0001}, "--budget"),
    ("u one 1 1 rc=0\n", {}, "cpu.log line 1"),
    ("u 1 1 1\n", {}, "cpu.log line 1"),
    ("u 1 1 1 rc=0\n", {"commit": "not-a-commit"}, "--commit"),
])
def test_bad_inputs_are_refused_before_anything_is_written(dev_tool, tmp_path, log, changes, match):
    tool = dev_tool("record_run")
    run = _run(tmp_path, log)
    dest = tmp_path / "rec"
    kw = {"name": "demo", "command": "c", "commit": HEAD or "HEAD", **changes}
    with pytest.raises(tool.RecordError, match=match):
        tool.record(run, dest, **kw)
    assert not dest.exists()


def test_an_unfinished_run_is_refused(dev_tool, tmp_path):
    tool = dev_tool("record_run")
    run = _run(tmp_path, "")
    (run / "report.json").unlink()
    with pytest.raises(tool.RecordError, match="not finished"):
        tool.record(run, tmp_path / "rec", name="demo", command="c", commit="HEAD")
    assert tool.main([str(run), str(tmp_path / "rec"), "--name", "demo", "--command", "c", "--commit", "HEAD"]) == 2


@pytest.mark.skipif(not HEAD, reason="not a git checkout")
def test_sampled_cpu_time_counts_each_process_once_at_its_last_sample(dev_tool, tmp_path):
    """cpu_sampler.sh logs: a process is (PID, start time), counted at its largest sample; a reused PID with another
    start time is another process; two files (two sessions) add up; work before sampling is added as stated."""
    tool = dev_tool("record_run")
    run = _run(tmp_path, "u 1800 0 1900 rc=0\n")  # the log: 0.5 CPU-h
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("T 10 500 600\nT 11 501 7\nT 10 500 1800\n\n")  # pid 10: 600 then 1800 s; pid 11: 7 s
    b.write_text("T 10 900 3600\n")  # pid 10 reused later: another process, 3600 s
    meta = tool.record(run, tmp_path / "rec", name="demo", command="c", commit=HEAD, samples=[a, b],
                       unsampled_hours=0.25)
    assert meta["cpu_hours_sampled"] == pytest.approx((1800 + 7 + 3600) / 3600, abs=1e-3)
    assert meta["cpu_hours_unsampled"] == 0.25 and meta["cpu_hours_logged"] == 0.5
    assert meta["cpu_hours"] == pytest.approx(meta["cpu_hours_sampled"] + 0.25, abs=1e-3)
    with pytest.raises(tool.RecordError, match="--budget 1: the run took 0.50 in cpu.log, 1.75 in all"):
        tool.record(run, tmp_path / "rec4", name="demo", command="c", commit=HEAD, samples=[a, b],
                    unsampled_hours=0.25, budget=1.0)  # the log is within 1 CPU-hour, the whole is not
    with pytest.raises(tool.RecordError, match="--samples .*missing.log: cannot be read"):
        tool.record(run, tmp_path / "rec5", name="demo", command="c", commit=HEAD,
                    samples=[a, tmp_path / "missing.log"])
    b.write_text("T 10 900\n")
    with pytest.raises(tool.RecordError, match="b.log line 1"):
        tool.record(run, tmp_path / "rec2", name="demo", command="c", commit=HEAD, samples=[a, b])
    with pytest.raises(tool.RecordError, match="--unsampled-hours"):
        tool.record(run, tmp_path / "rec3", name="demo", command="c", commit=HEAD, unsampled_hours=1.0)
    assert not any((tmp_path / f"rec{k}").exists() for k in (2, 3, 4, 5))
