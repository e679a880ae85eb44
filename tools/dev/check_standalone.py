"""Install each package alone into an empty virtual environment, import it, and optionally run its tests.

Usage:
    uv run python tools/dev/check_standalone.py [PACKAGE ...] [--tests]
    uv run python tools/dev/check_standalone.py [PACKAGE ...] --wheels [--dist DIR] [--torch SPECS]
        [--torch-with-vision SPECS] [--tests]

Without ``--wheels`` a package is installed from its source directory with ``uv pip`` (the quick check that
it declares everything it imports). With ``--wheels`` the packages are built first (``uv build
--all-packages``, or the wheels already in ``--dist``), and each package's wheel is installed with plain
``pip`` into an empty ``python -m venv`` environment: the sibling wheels it needs (``robustsuite-common``;
for ``robustsuite`` all five method packages) are named as files and ``--find-links DIR`` lets pip find them
when an extra asks for one, everything else comes from the package index. ``--torch SPECS`` installs torch
first (on this project's machines ``torch==2.13.0`` is the CPU wheel pip finds on local disk; any other
spec may pull a CUDA build of several GB) and keeps it with a pip constraint. A package whose install pulls
torchvision (``robustsuite[robustbench]``, so ``robustsuite``'s ``test`` extra) needs a torchvision built for
that very torch, which PyPI has for its own (CUDA) torch builds only: ``--torch-with-vision SPECS`` (e.g.
``"torch==2.14.1 torchvision==0.29.1"``, a pair that pip finds on this project's machines' local index) is
then used instead of ``--torch``; the script checks that ``import torchvision`` works in the environment and
says which option to use when it does not. The package is imported from the environment (its ``__file__``
must lie in that environment's site-packages, not in the source tree) and with ``--tests`` its tests run
there, with the test dependencies of its ``test`` extra. pip's resolve time is printed for each package.
"""

from __future__ import annotations

import argparse
import email
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"robustsuite-common": "robustsuite_common", "zeroe-perturb": "zeroe_perturb", "iortemp": "iortemp",
            "uncspan": "uncspan", "transduct-attack": "transduct_attack", "certcal": "certcal",
            "robustsuite": "robustsuite"}


def _extras(pkg: str) -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "packages" / pkg / "pyproject.toml").read_text())["project"].get(
        "optional-dependencies", {})


def _spec(pkg: str) -> str:
    path = str(ROOT / "packages" / pkg)
    return f"{path}[test]" if "test" in _extras(pkg) else path


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def build_wheels(dist: Path) -> dict[str, Path]:
    """``uv build --all-packages`` into ``dist`` unless it already holds one wheel per package."""
    if not all(_find_wheel(dist, p) for p in PACKAGES):
        dist.mkdir(parents=True, exist_ok=True)
        subprocess.run(["uv", "build", "--all-packages", "-q", "--out-dir", str(dist)], check=True, cwd=ROOT)
    return {p: _find_wheel(dist, p) for p in PACKAGES}


def _find_wheel(dist: Path, pkg: str) -> Path | None:
    found = sorted(dist.glob(f"{pkg.replace('-', '_')}-*.whl")) if dist.is_dir() else []
    return found[-1] if found else None


def _requires(wheel: Path) -> list[str]:
    """``Requires-Dist`` lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(zf.read(meta)).get_all("Requires-Dist") or []


def _walk(pkg: str, wheels: dict[str, Path], extras: tuple[str, ...] = ()) -> tuple[list[str], set[str]]:
    """The workspace packages that ``pkg[extras]`` needs (itself first), following core requirements and the
    named extras through the sibling wheels (a package's extra naming the package itself, as
    ``robustsuite[test]`` names ``robustsuite[all]``, included), and the other distributions they name."""
    order: list[str] = []
    external: set[str] = set()
    seen: set[tuple[str, str | None]] = set()
    todo = [(pkg, None)] + [(pkg, e) for e in extras]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        if name not in order:
            order.append(name)
        for req in _requires(wheels[name]):
            dep, _, marker = req.partition(";")
            m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(\[([^\]]*)\])?", dep)
            dname = _norm(m.group(1))
            extra_m = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
            if (extra_m.group(1) if extra_m else None) != extra:
                continue
            if dname in PACKAGES:
                todo.append((dname, None))
                todo += [(dname, e.strip()) for e in (m.group(3) or "").split(",") if e.strip()]
            else:
                external.add(dname)
    return order, external


def sibling_closure(pkg: str, wheels: dict[str, Path], extras: tuple[str, ...] = ()) -> list[str]:
    """The workspace packages ``pkg`` needs (itself first), following core requirements and the named extras."""
    return _walk(pkg, wheels, extras)[0]


# distributions that install torchvision: it is named directly, or by RobustBench (``robustbench`` requires it)
TORCHVISION_PULLERS = {"torchvision", "robustbench"}


def needs_torchvision(pkg: str, wheels: dict[str, Path], extras: tuple[str, ...] = ()) -> bool:
    """Whether installing ``pkg[extras]`` installs torchvision (``robustsuite[robustbench]``, and so
    ``robustsuite[all]`` and ``robustsuite[test]``; ``uncspan[robustbench]``, ``transduct-attack[robustbench]``)."""
    return bool(_walk(pkg, wheels, extras)[1] & TORCHVISION_PULLERS)


def _pip(py: Path, *args: str, report: Path | None = None, constraint: Path | None = None) -> float:
    cmd = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args]
    if constraint is not None:  # keep the torch installed first: a later pip call may not swap it for another build
        cmd += ["--constraint", str(constraint)]
    if report is not None:
        cmd += ["--report", str(report)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - t0


def _site_size(venv: Path, exclude_torch: bool = False) -> int:
    site = next((venv / "lib").glob("python3*/site-packages"))
    skip = ("torch", "torchgen", "functorch", "nvidia", "triton", "cuda") if exclude_torch else ()
    return sum(f.stat().st_size for f in site.rglob("*") if f.is_file() and not f.is_symlink()
               and f.relative_to(site).parts[0].split("-")[0] not in skip)


def _import_time(py: Path, module: str, cwd: Path, repeat: int = 5) -> float:
    """Median wall time of ``python -c "import module"`` in fresh interpreters (after one warm-up run that
    writes the bytecode caches, as a user's first import does)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([str(py), "-c", f"import {module}"], check=True, cwd=cwd, env=env)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([str(py), "-c", f"import {module}"], check=True, cwd=cwd, env=env)
        times.append(time.perf_counter() - t0)
    return round(sorted(times)[repeat // 2], 2)


def _needs_torch(pkg: str, wheels: dict[str, Path], extras: tuple[str, ...]) -> bool:
    """Whether installing ``pkg[extras]`` may ask for torch: a core requirement of the wheels it needs, or any
    extra at all (the test extras pull TextAttack/transformers/RobustBench), except for the dependency-free
    ``robustsuite-common``."""
    if extras:
        return pkg != "robustsuite-common"
    return any(re.match(r"\s*torch\b", req) and "extra ==" not in req
               for name in sibling_closure(pkg, wheels) for req in _requires(wheels[name]))


def torch_specs(pkg: str, wheels: dict[str, Path], run_tests: bool, torch: list[str],
                torch_with_vision: list[str]) -> list[str]:
    """The torch requirements for ``pkg``: ``torch_with_vision`` where its install pulls torchvision (with its
    ``test`` extra when the tests run) and such a pair is given, else ``torch``."""
    if torch_with_vision and needs_torchvision(pkg, wheels, ("test",) if run_tests else ()):
        return torch_with_vision
    return torch


def _check_torchvision(py: Path, cwd: Path, specs: list[str]) -> None:
    """Raise a RuntimeError unless torch and torchvision import together (a torchvision built for another torch
    fails at import: ``operator torchvision::nms does not exist``)."""
    code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torchvision') is None else 2)"
    if subprocess.run([str(py), "-c", code], cwd=cwd).returncode == 0:
        return
    proc = subprocess.run([str(py), "-c", "import torch, torchvision"], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"torchvision does not import beside the installed torch (torch requirements "
                           f"{specs or 'none'}): {last}; pass a matching pair, e.g. "
                           f"--torch-with-vision 'torch==2.14.1 torchvision==0.29.1'")


def check_wheel(pkg: str, wheels: dict[str, Path], dist: Path, *, run_tests: bool, torch: list[str],
                keep: Path | None, pytest_args: list[str], torch_with_vision: list[str] | tuple[str, ...] = ()) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"standalone-{pkg}-", dir=keep))
    try:
        venv = tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = venv / "bin" / "python"
        out: dict = {"package": pkg}
        empty = _site_size(venv)  # pip and setuptools of the new venv
        pin = None
        specs = torch_specs(pkg, wheels, run_tests, list(torch), list(torch_with_vision))
        # torch first (and kept by a constraint on every later pip call); a torchvision of the pair is only
        # pinned, and installed where a requirement asks for it
        first = [r for r in specs if not re.match(r"\s*torchvision\b", r)]
        if specs:
            out["torch"] = specs
            pin = tmp / "torch-constraint.txt"
            pin.write_text("\n".join(specs) + "\n")
        # 1. the wheel alone (no extras): what a user gets from `pip install <pkg>`; measured
        needed = sibling_closure(pkg, wheels)
        targets = [str(wheels[pkg])] + [str(wheels[s]) for s in needed if s != pkg]
        if first and _needs_torch(pkg, wheels, ()):
            out["torch_install_s"] = round(_pip(py, "--no-compile", *first), 1)  # .pyc written on first import
        out["pip_install_s"] = round(_pip(py, "--find-links", str(dist), *targets, report=tmp / "report.json",
                                         constraint=pin), 1)
        out["installed_distributions"] = len(json.loads((tmp / "report.json").read_text())["install"])
        code = (f"import {PACKAGES[pkg]} as m, sys; print(m.__version__); print(m.__file__); "
                f"print(any(p.startswith(str({str(ROOT)!r})) for p in sys.path))")
        lines = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True,
                               cwd=tmp).stdout.split("\n")
        if not Path(lines[1]).resolve().is_relative_to(venv.resolve()) or lines[2] == "True":
            raise RuntimeError(f"{pkg} was imported from {lines[1]}, not from the wheel installed in {venv}")
        out["version"] = lines[0]
        out["siblings"] = [s for s in needed if s != pkg]
        # installed size: what the install added to the empty venv's site-packages
        out["installed_mb"] = round((_site_size(venv) - empty) / 2**20, 1)
        out["installed_mb_without_torch"] = round((_site_size(venv, exclude_torch=True) - empty) / 2**20, 1)
        out["import_s_median_of_5"] = _import_time(py, PACKAGES[pkg], tmp)
        out["python_startup_s_median_of_5"] = _import_time(py, "sys", tmp)
        print(f"{pkg}: wheel installed with pip in {out['pip_install_s']} s and imported from the venv "
              f"(version {out['version']}, with {out['siblings'] or 'no siblings'}); installed "
              f"{out['installed_mb']} MB ({out['installed_mb_without_torch']} MB without torch); "
              f"python -c 'import {PACKAGES[pkg]}' {out['import_s_median_of_5']} s "
              f"(python -c 'import sys' {out['python_startup_s_median_of_5']} s)", flush=True)
        # 2. its test extra and the test runner, then its tests
        if run_tests:
            extra = [f"{wheels[pkg]}[test]"] if "test" in _extras(pkg) else []
            more = [str(wheels[s]) for s in sibling_closure(pkg, wheels, ("test",)) if s != pkg]
            if first and "torch_install_s" not in out and _needs_torch(pkg, wheels, ("test",)):
                out["torch_install_s"] = round(_pip(py, "--no-compile", *first), 1)  # .pyc written on first import
            out["pip_install_test_s"] = round(_pip(py, "--find-links", str(dist), *extra, *more, "pytest>=8",
                                                   "hypothesis>=6.100", "pytest-timeout>=2.3",
                                                   constraint=pin), 1)
        _check_torchvision(py, tmp, specs)
        if run_tests:
            out.update(_run_tests(pkg, py, tmp, pytest_args))
        return out
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


def _run_tests(pkg: str, py: Path, cwd: Path, pytest_args: list[str]) -> dict:
    junit = cwd / "junit.xml"
    env = {**os.environ, "PYTHONPATH": "", "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    # the tests come from the repository; the package under test comes from the venv (importlib mode never
    # puts the source tree on sys.path); the repository's pytest settings (markers, importlib mode) apply
    proc = subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                           "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
                           *pytest_args, str(ROOT / "packages" / pkg / "tests")], cwd=cwd, env=env)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if junit.exists():
        text = junit.read_text()
        for key in counts:
            m = re.search(rf'<testsuite [^>]*\b{key}="(\d+)"', text)
            counts[key] = int(m.group(1)) if m else 0
    status = "pass" if proc.returncode == 0 else "FAIL"
    print(f"{pkg}: tests {status} in the standalone environment: {counts}", flush=True)
    return {"tests_status": status, **counts}


def check_source(pkg: str, run_tests: bool) -> None:
    with tempfile.TemporaryDirectory(prefix=f"standalone-{pkg}-") as tmp:
        venv = Path(tmp) / "venv"
        py = venv / "bin" / "python"
        subprocess.run(["uv", "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        targets = [_spec(pkg)]
        if pkg == "robustsuite":
            targets += [str(ROOT / "packages" / p) for p in PACKAGES if p != "robustsuite"]
        elif pkg != "robustsuite-common":
            targets += [str(ROOT / "packages" / "robustsuite-common")]
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
    ap.add_argument("--wheels", action="store_true", help="build wheels and install them with plain pip")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="wheel directory (built if incomplete)")
    ap.add_argument("--torch", type=shlex.split, default=[],
                    help="pip requirement(s) installed first and kept, e.g. torch==2.13.0")
    ap.add_argument("--torch-with-vision", type=shlex.split, default=[],
                    help="used instead of --torch for a package whose install pulls torchvision: a pair that "
                         "imports together, e.g. 'torch==2.14.1 torchvision==0.29.1'")
    ap.add_argument("--keep", type=Path, default=None, help="keep the environments under this directory")
    ap.add_argument("--pytest-args", default="", help='extra pytest arguments, e.g. "-m \'not slow\'"')
    ap.add_argument("--json", type=Path, default=None, help="write the per-package results here")
    args = ap.parse_args()
    for pkg in args.packages:
        if pkg not in PACKAGES:
            ap.error(f"unknown package {pkg!r}; choose from {list(PACKAGES)}")
    if not args.wheels:
        for pkg in args.packages:
            check_source(pkg, args.tests)
        return 0
    wheels = build_wheels(args.dist.resolve())
    results, failed = [], []
    for pkg in args.packages:
        try:
            results.append(check_wheel(pkg, wheels, args.dist.resolve(), run_tests=args.tests, torch=args.torch,
                                       torch_with_vision=args.torch_with_vision,
                                       keep=args.keep, pytest_args=shlex.split(args.pytest_args)))
            if results[-1].get("tests_status") == "FAIL":
                failed.append(pkg)
        except (subprocess.CalledProcessError, RuntimeError) as err:
            print(f"{pkg}: FAILED: {err}", flush=True)
            results.append({"package": pkg, "error": str(err)})
            failed.append(pkg)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
