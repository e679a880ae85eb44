"""Mutation check of certcal's maths: inject each listed bug into a temporary copy of the package, run the
relevant tests against the copy, and report whether a test caught it (failed) or it survived.

    uv run python tools/certcal_mutation_check.py            # all mutations (a few minutes on 2 cores)
    uv run python tools/certcal_mutation_check.py --only cp_two_sided

The copy is imported through PYTHONPATH, which precedes the workspace's editable install; every run first
checks that the copy (not the worktree) is what the tests import, and a baseline run on the unmutated copy
must pass. Exit status 1 if any mutation survives.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "packages" / "certcal"


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    file: str  # relative to src/certcal
    old: str
    new: str
    tests: tuple[str, ...]  # test files (relative to tests/) to run


MUTATIONS = (
    Mutation("cbs_swap_bounds", "CBS: swap lower and upper confidence bounds", "cce.py",
             "c * (1.0 - lo) ** 2 + (1.0 - c) * up**2", "c * (1.0 - up) ** 2 + (1.0 - c) * lo**2",
             ("test_maths.py", "test_cce.py")),
    Mutation("standard_no_shift", "Standard bound: drop the Phi shift by r / sigma", "confidence.py",
             "shift = (r / sigma)[None, :]", "shift = 0.0 * (r / sigma)[None, :]",
             ("test_maths.py", "test_smoothing.py")),
    Mutation("bins_off_by_one", "bin edges off by one bin", "metrics.py",
             'np.searchsorted(edges, z, side="left") - 1', 'np.searchsorted(edges, z, side="left")',
             ("test_maths.py", "test_metrics.py", "test_cce.py")),
    Mutation("signs_min", "exact CCE: minimum instead of maximum over sign patterns", "_cce_exact.py",
             "choice = pair.argmax(axis=1)", "choice = pair.argmin(axis=1)",
             ("test_maths.py", "test_cce.py")),
    Mutation("cp_two_sided", "two-sided instead of one-sided Clopper-Pearson bound", "smoothing.py",
             "out = beta.ppf(alpha, k, trials - k + 1)", "out = beta.ppf(alpha / 2, k, trials - k + 1)",
             ("test_maths.py", "test_smoothing.py")),
    Mutation("cdf_no_dkw", "CDF bound: drop the DKW epsilon", "confidence.py",
             "p_lo = np.clip(ge / n - e, 0.0, 1.0)\n        p_hi = np.clip(gt / n + e, 0.0, 1.0)",
             "p_lo = np.clip(ge / n, 0.0, 1.0)\n        p_hi = np.clip(gt / n, 0.0, 1.0)",
             ("test_maths.py", "test_defects.py", "test_smoothing.py")),
)


def run_tests(copy: Path, tests: tuple[str, ...]) -> tuple[bool, str]:
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    probe = subprocess.run([sys.executable, "-c", "import certcal; print(certcal.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    if not probe.startswith(str(copy)):
        raise RuntimeError(f"the tests would import {probe}, not the mutated copy under {copy}")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header",
           *[str(copy / "tests" / t) for t in tests]]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=copy)
    last = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or [""]
    failed = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED")]
    return proc.returncode == 0, (failed[0] if failed else last[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", choices=[m.name for m in MUTATIONS])
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    args = ap.parse_args()
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    survived = 0
    with tempfile.TemporaryDirectory(prefix="certcal-mut-") as tmp:
        base = Path(tmp) / "certcal"
        shutil.copytree(PKG, base, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        if not args.no_baseline:
            files = tuple(sorted({t for m in chosen for t in m.tests}))
            ok, line = run_tests(base, files)
            print(f"baseline (unmutated, {', '.join(files)}): {'pass' if ok else 'FAIL'}  {line}")
            if not ok:
                return 2
        for m in chosen:
            copy = Path(tmp) / f"mut-{m.name}"
            shutil.copytree(base, copy)
            target = copy / "src" / "certcal" / m.file
            text = target.read_text()
            if text.count(m.old) != 1:
                raise RuntimeError(f"mutation {m.name}: expected one occurrence of {m.old!r} in {m.file}")
            target.write_text(text.replace(m.old, m.new))
            ok, line = run_tests(copy, m.tests)
            survived += ok
            print(f"{m.name:18s} {'SURVIVED' if ok else 'caught  '}  {m.what}  [{line.replace('FAILED ', '')}]")
            shutil.rmtree(copy)
    print(f"{len(chosen) - survived} of {len(chosen)} mutations caught")
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
