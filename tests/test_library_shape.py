"""Issue 34: one library shape across the method packages, held by tests that each fail on a planted violation.

- the experiment contract: the same files and names in every ``<pkg>.experiment`` and in ``certcal.overview``,
  one CLI route (``<pkg> experiment --preset P``, ``python -m <pkg>.experiment`` the same);
- public functions take data positionally and every hyper-parameter by keyword, in one vocabulary;
- no source file over 450 lines, no function over 100;
- ``py.typed`` in every package and basedpyright (basic mode) clean on its sources.

Each check is parametrised by package, so ``pytest tests/test_library_shape.py -k certcal`` checks one.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robustsuite_common.contract import REQUIRED_PRESETS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {  # import name -> distribution folder
    "robustsuite_common": "robustsuite-common", "zeroe_perturb": "zeroe-perturb", "iortemp": "iortemp",
    "uncspan": "uncspan", "transduct_attack": "transduct-attack", "certcal": "certcal", "robustsuite": "robustsuite",
}
METHODS = ["zeroe_perturb", "iortemp", "uncspan", "transduct_attack", "certcal"]
EXPERIMENTS = [f"{p}.experiment" for p in METHODS] + ["certcal.overview"]
SCRIPTS = {"zeroe_perturb": "zeroe-perturb", "iortemp": "iortemp", "uncspan": "uncspan",
           "transduct_attack": "transduct-attack", "certcal": "certcal"}
CONTRACT_FILES = ("config.py", "inputs.py", "run.py", "result.py", "figures.py", "paper.json")
MAX_FILE_LINES, MAX_FUNCTION_LINES = 450, 100

# hyper-parameters: never positional in a public function
HYPER = {
    "eps", "epsilon", "sigma", "sigmas", "alpha", "n", "n0", "n_boot", "n_resamples", "batch_size", "batch", "seed",
    "steps", "n_steps", "iterations", "lr", "epochs", "temperature", "n_bins", "bins", "radius", "radii", "norm",
    "level", "beta", "confidence", "device", "rng", "generator", "n_classes", "num_classes", "k", "step_size",
    "n_samples", "max_iter", "tol", "threshold", "momentum", "weight_decay", "n_queries", "restarts", "progress",
}
# one vocabulary: the old name -> the name every package uses (docs/ARCHITECTURE.md, "Vocabulary")
RENAMED = {"num_classes": "n_classes", "epsilon": "eps", "victim": "model", "classifier": "model",
           "n_resamples": "n_boot", "rng": "generator"}


def _src(pkg: str) -> Path:
    return ROOT / "packages" / PACKAGES[pkg] / "src" / pkg


# --------------------------------------------------------------------------------------------- the contract


def contract_problems(module_name: str) -> list[str]:
    """What ``module_name`` (an experiment package) lacks of the contract."""
    mod = importlib.import_module(module_name)
    folder = Path(mod.__file__).parent
    problems = [f"no {f}" for f in CONTRACT_FILES if not (folder / f).is_file()]
    for name in ("Config", "PRESETS", "preset", "Models", "Data", "run", "Result", "figures", "paper_values"):
        if not hasattr(mod, name):
            problems.append(f"no {module_name}.{name}")
    if problems:
        return problems
    missing = set(REQUIRED_PRESETS) - set(mod.PRESETS)
    if missing:
        problems.append(f"presets {sorted(missing)} missing")
    for name in mod.PRESETS:
        if not isinstance(mod.preset(name), mod.Config):
            problems.append(f"preset({name!r}) is not a Config")
    try:
        mod.preset("no-such-preset")
        problems.append("preset('no-such-preset') raised nothing")
    except ValueError:
        pass
    for attr in ("title", "model_at_chance"):
        if not hasattr(mod.Result, attr):
            problems.append(f"Result has no {attr}")
    values = mod.paper_values()
    if not isinstance(values, dict) or not values:
        problems.append("paper_values() is not a non-empty dict")
    if values != json.loads((folder / "paper.json").read_text(encoding="utf-8")):
        problems.append("paper_values() is not paper.json")
    return problems


@pytest.mark.parametrize("module_name", EXPERIMENTS)
def test_experiment_contract(module_name):
    assert contract_problems(module_name) == []


def test_contract_check_fails_on_a_planted_violation(tmp_path, monkeypatch):
    pkg = tmp_path / "planted_pkg" / "experiment"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    for f in CONTRACT_FILES[:-1]:
        (pkg / f).write_text("")
    (pkg / "__init__.py").write_text("Config = PRESETS = preset = Models = Data = run = Result = figures = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = contract_problems("planted_pkg.experiment")
    assert problems == ["no paper.json"] or "no planted_pkg.experiment.paper_values" in problems


def _help(argv: list[str]) -> str:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


@pytest.mark.parametrize("pkg", METHODS)
def test_one_cli_route(pkg):
    script = Path(sys.executable).parent / SCRIPTS[pkg]
    assert "--preset" in _help([str(script), "experiment", "--help"])
    assert "--preset" in _help([sys.executable, "-m", f"{pkg}.experiment", "--help"])


def test_overview_cli_route():
    assert "--preset" in _help([sys.executable, "-m", "certcal.overview", "--help"])


def test_experiment_is_an_attribute_of_its_package():
    code = "; ".join(f"import {p}; {p}.experiment.run" for p in METHODS) + "; import certcal; certcal.overview.run"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


# --------------------------------------------------------------------------------- keyword-only, vocabulary


def signature_problems(obj, where: str) -> list[str]:
    """Positional hyper-parameters (a default, or a hyper-parameter's name) and old names in ``obj``'s signature."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    problems = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and (
                p.default is not p.empty or p.name in HYPER):
            problems.append(f"{where}: {p.name!r} is positional (make it keyword-only)")
        if p.name in RENAMED:
            problems.append(f"{where}: {p.name!r} is called {RENAMED[p.name]!r} in this project")
    return problems


def _public_callables(module_name: str):
    mod = importlib.import_module(module_name)
    top = module_name.split(".")[0]
    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name, None)
        if obj is None or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if not getattr(obj, "__module__", "").startswith(top):
            continue  # a re-export of another library
        if inspect.isclass(obj) and (dataclasses.is_dataclass(obj) or issubclass(obj, BaseException)
                                     or obj.__init__ is object.__init__ or "Protocol" in str(obj.__mro__)):
            continue  # records, configs and errors hold data; their fields are their arguments
        yield f"{module_name}.{name}", obj


def _api_modules(pkg: str) -> list[str]:
    mods = [pkg]
    if pkg in METHODS:
        mods.append(f"{pkg}.experiment")
    if pkg == "certcal":
        mods.append("certcal.overview")
    return mods


@pytest.mark.parametrize("pkg", [p for p in PACKAGES if p != "robustsuite"])
def test_hyper_parameters_are_keyword_only_in_one_vocabulary(pkg):
    problems = [p for m in _api_modules(pkg) for where, obj in _public_callables(m)
                for p in signature_problems(obj, where)]
    assert problems == [], "\n".join(problems)


def test_signature_check_fails_on_planted_violations():
    def positional_default(x, steps=10): ...
    def positional_hyper(model, x, sigma): ...
    def old_name(x, *, num_classes): ...
    def fine(model, x, y, *, eps=0.1, n_boot=1000, seed=0): ...

    assert signature_problems(positional_default, "f") and signature_problems(positional_hyper, "f")
    assert signature_problems(old_name, "f") and signature_problems(fine, "f") == []


# ------------------------------------------------------------------------------------------------- sizes


def size_problems(path: Path, text: str) -> list[str]:
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    problems = [f"{path}: {lines} lines (> {MAX_FILE_LINES})"] if lines > MAX_FILE_LINES else []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = node.end_lineno - first + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{path}:{node.lineno} {node.name}() {length} lines (> {MAX_FUNCTION_LINES})")
    return problems


@pytest.mark.parametrize("pkg", list(PACKAGES))
def test_no_oversized_file_or_function(pkg):
    problems = [p for f in sorted(_src(pkg).rglob("*.py"))
                for p in size_problems(f.relative_to(ROOT), f.read_text(encoding="utf-8"))]
    assert problems == [], "\n".join(problems)


def test_size_check_fails_on_planted_violations():
    long_function = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    long_file = "x = 1\n" * (MAX_FILE_LINES + 1)
    assert size_problems(Path("a.py"), long_function) and size_problems(Path("b.py"), long_file)
    assert size_problems(Path("c.py"), "def f():\n    return 1\n") == []


# ------------------------------------------------------------------------------------------------- typed


@pytest.mark.parametrize("pkg", list(PACKAGES))
def test_package_ships_py_typed(pkg):
    assert (_src(pkg) / "py.typed").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("pkg", list(PACKAGES))
def test_basedpyright_basic_is_clean(pkg):
    exe = Path(sys.executable).parent / "basedpyright"
    res = subprocess.run([str(exe), "--pythonpath", sys.executable, "--outputjson", str(_src(pkg))],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    report = json.loads(res.stdout)
    errors = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [], f"{len(errors)} errors:\n" + "\n".join(errors[:40])
