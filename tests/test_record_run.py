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
