"""tools/dev/cpu_sampler.sh: a long run's CPU seconds per process, sampled from /proc (issue 35's accounting)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs Linux /proc")


def test_a_sample_is_the_processes_cpu_seconds(tmp_path):
    """A process that burned about 1.5 CPU-s and then sleeps is sampled at its CPU time (user + system from
    /proc/PID/stat), not its wall time or zero."""
    tag = uuid.uuid4().hex
    burn = ("import time, sys\nt = time.process_time()\nwhile time.process_time() - t < 1.5: pass\n"
            f"sys.stdout.write('ok'); sys.stdout.flush(); time.sleep(30)  # {tag}")
    proc = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE)
    out = tmp_path / "samples.log"
    sampler = None
    try:
        assert proc.stdout is not None and proc.stdout.read(2) == b"ok"
        time.sleep(1.0)  # idle: wall time grows, CPU time does not
        sampler = subprocess.Popen(["bash", str(ROOT / "tools/dev/cpu_sampler.sh"), tag, str(out)])
        deadline = time.time() + 20
        while time.time() < deadline and not (out.is_file() and out.read_text().strip()):
            time.sleep(0.1)
        rows = [line.split() for line in out.read_text().splitlines()]
    finally:
        if sampler is not None:
            sampler.kill()
        proc.kill()
    mine = [r for r in rows if int(r[1]) == proc.pid]
    assert len(mine) == 1 and mine[0][0].endswith("Z") and int(mine[0][2]) > 0
    assert 1 <= int(mine[0][3]) <= 2  # 1.5 CPU-s, floored to whole seconds; the 1 s of sleep is not counted
