"""Install each package alone into an empty virtual environment, import it, and optionally run its tests.

Usage: uv run python tools/check_standalone.py [PACKAGE ...] [--tests]

A method package is installed by itself (``uv pip install packages/<pkg>[test]``): that proves it declares
everything it imports. ``robustsuite`` needs its five siblings, which are not on PyPI, so they are named
on the same command line. ``--tests`` also runs the package's own tests with that interpreter.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"zeroe-perturb": "zeroe_perturb", "iortemp": "iortemp", "uncspan": "uncspan",
            "transduct-attack": "transduct_attack", "certcal": "certcal", "robustsuite": "robustsuite"}


def _spec(pkg: str) -> str:
    extras = tomllib.loads((ROOT / "packages" / pkg / "pyproject.toml").read_text())["project"].get(
        "optional-dependencies", {})
    path = str(ROOT / "packages" / pkg)
    return f"{path}[test]" if "test" in extras else path


def check(pkg: str, run_tests: bool) -> None:
    with tempfile.TemporaryDirectory(prefix=f"standalone-{pkg}-") as tmp:
        venv = Path(tmp) / "venv"
        py = venv / "bin" / "python"
        subprocess.run(["uv", "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        targets = [_spec(pkg)]
        if pkg == "robustsuite":
            targets += [str(ROOT / "packages" / p) for p in PACKAGES if p != "robustsuite"]
        if run_tests:
            targets += ["pytest", "hypothesis"]
        subprocess.run(["uv", "pip", "install", "-q", "--python", str(py), *targets], check=True)
        out = subprocess.run([str(py), "-c", f"import {PACKAGES[pkg]} as m; print(m.__version__)"], check=True,
                             capture_output=True, text=True).stdout.strip()
        print(f"{pkg}: installed alone and imported (version {out})", flush=True)
        if run_tests:
            subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            str(ROOT / "packages" / pkg / "tests")], check=True, cwd=tmp)
            print(f"{pkg}: tests pass in the standalone environment", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("packages", nargs="*", default=list(PACKAGES))
    ap.add_argument("--tests", action="store_true", help="also run each package's tests there")
    args = ap.parse_args()
    for pkg in args.packages:
        if pkg not in PACKAGES:
            ap.error(f"unknown package {pkg!r}; choose from {list(PACKAGES)}")
        check(pkg, args.tests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
