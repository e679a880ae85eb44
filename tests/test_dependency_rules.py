"""ARCHITECTURE.md's dependency rules, checked on the source.

- no method package imports another method package or robustsuite;
- a module imported at the top level of a package module is one of its core dependencies (so
  ``pip install packages/<pkg>`` alone is enough to import it);
- a module imported lazily (inside a function) is a core dependency or in one of its extras.
"""

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"zeroe-perturb": "zeroe_perturb", "iortemp": "iortemp", "uncspan": "uncspan",
            "transduct-attack": "transduct_attack", "certcal": "certcal", "robustsuite": "robustsuite"}
# support packages: no method code, any package may depend on them (docs/ARCHITECTURE.md)
SUPPORT = {"robustsuite-common": "robustsuite_common"}
# import name -> distribution name, where they differ
DIST = {"sklearn": "scikit-learn", "PIL": "pillow", "autoattack": "pyautoattack", "yaml": "pyyaml",
        "filelock": "filelock", "codespell_lib": "codespell"}
# modules that arrive with a declared dependency (not distributions of their own)
PROVIDED_BY = {"filelock": {"transformers", "torch"}, "torchvision": {"robustbench"}, "huggingface_hub": {"transformers"},
               "safetensors": {"transformers"}}


def _requirement_names(reqs):
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].strip().lower() for r in reqs}


def _declared(pkg):
    project = tomllib.loads((ROOT / "packages" / pkg / "pyproject.toml").read_text())["project"]
    core = _requirement_names(project.get("dependencies", []))
    extras = set()
    for reqs in project.get("optional-dependencies", {}).values():
        extras |= _requirement_names(reqs)
    return core, extras


def _imports(pkg, mod):
    """(module, lineno, top_level) for every absolute import in the package's source."""
    out = []
    for path in (ROOT / "packages" / pkg / "src" / mod).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            is_top = id(node) in top or any(id(node) in {id(c) for c in ast.walk(t)} for t in tree.body
                                             if isinstance(t, ast.If | ast.Try))
            for name in names:
                out.append((name.split(".")[0], f"{path.relative_to(ROOT)}:{node.lineno}", is_top))
    return out


def _dist(name):
    return DIST.get(name, name).lower().replace("_", "-")


@pytest.mark.parametrize("pkg", [p for p in PACKAGES if p != "robustsuite"])
def test_method_packages_do_not_import_each_other(pkg):
    forbidden = set(PACKAGES.values()) - {PACKAGES[pkg]}
    bad = [(n, where) for n, where, _ in _imports(pkg, PACKAGES[pkg]) if n in forbidden]
    assert not bad, f"{pkg} imports other robustsuite packages: {bad}"


def test_support_packages_import_no_robustsuite_package_and_stay_light():
    """robustsuite-common holds no method code and depends only on numpy, scipy and pydantic (no torch: a
    package that passes tensors depends on torch itself)."""
    for pkg, mod in SUPPORT.items():
        bad = [(n, where) for n, where, _ in _imports(pkg, mod) if n in set(PACKAGES.values())]
        assert not bad, f"{pkg} imports robustsuite packages: {bad}"
        core, _ = _declared(pkg)
        assert core <= {"numpy", "scipy", "pydantic"}, f"{pkg} must stay light, declares {core}"


@pytest.mark.parametrize("pkg", [*PACKAGES, *SUPPORT])
def test_imports_are_declared(pkg):
    core, extras = _declared(pkg)
    stdlib = set(sys.stdlib_module_names)
    own = {PACKAGES.get(pkg) or SUPPORT[pkg]}
    problems = []
    for name, where, top in _imports(pkg, PACKAGES.get(pkg) or SUPPORT[pkg]):
        if name in stdlib or name in own or name == "__future__":
            continue
        dist = _dist(name)
        if dist in core or (PROVIDED_BY.get(name, set()) & core):
            continue
        if not top and (dist in extras or (PROVIDED_BY.get(name, set()) & (core | extras))):
            continue
        problems.append(f"{where}: {name} ({'top-level' if top else 'lazy'}) is not declared")
    assert not problems, "\n".join(problems)
