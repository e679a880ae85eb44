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
BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5: pass\n"


def sample(source: str, tmp_path: Path, *, idle: float = 0.0) -> int:
    """Run ``source`` (it writes "ok" when it is ready, then sleeps), wait ``idle`` seconds, and return the sampler's
    first sample of that process, in CPU seconds."""
    tag = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-c", f"{source}\nimport sys, time\nsys.stdout.write('ok'); "
                             f"sys.stdout.flush(); time.sleep(30)  # {tag}"], stdout=subprocess.PIPE)
    out = tmp_path / f"{tag}.log"
    sampler = None
    try:
        assert proc.stdout is not None and proc.stdout.read(2) == b"ok"
        time.sleep(idle)
        sampler = subprocess.Popen(["bash", str(ROOT / "tools/dev/cpu_sampler.sh"), tag, str(out)])
        deadline = time.time() + 20
        while time.time() < deadline and not (out.is_file() and out.read_text().strip()):
            time.sleep(0.1)
        rows = [line.split() for line in out.read_text().splitlines()]
    finally:
        if sampler is not None:
            sampler.kill()
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    mine = [r for r in rows if int(r[1]) == proc.pid]
    assert len(mine) == 1 and mine[0][0].endswith("Z") and int(mine[0][2]) > 0
    return int(mine[0][3])


def test_a_sample_is_the_processes_cpu_seconds(tmp_path):
    """A process that burned about 1.5 CPU-s and then idles is sampled at its CPU time (user + system from
    /proc/PID/stat), not its wall time or zero."""
    assert 1 <= sample(BURN, tmp_path, idle=3.0) <= 3  # 1.5 CPU-s (and start-up), floored; the wall time is > 4.5 s


def test_a_reaped_childs_time_is_not_counted_again(tmp_path):
    """A parent that ran a 1.5 CPU-s child to completion is sampled at its own time only: the child was (or is)
    sampled itself, so counting /proc's children's fields would count its work twice."""
    parent = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {BURN!r}], check=True)"
    assert sample(parent, tmp_path) < 1  # the parent's own start-up only, not the child's 1.5 s
