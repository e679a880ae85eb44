"""Issue 18, item 6: each compatibility fix for the third-party stack exists once, in robustsuite-common.

Before, the TextAttack offline fix lived in robustsuite, iortemp and zeroe-perturb, and the RobustBench
autoattack alias in robustsuite, uncspan and transduct-attack; they had to change together.
"""

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "packages" / "robustsuite-common" / "src" / "robustsuite_common"
SOURCES = sorted([*ROOT.glob("packages/*/src/**/*.py"), *ROOT.glob("tools/**/*.py")])

# what each fix writes: text that appears wherever a copy of it lives
MARKERS = {
    "TextAttack post-install marker": "post_install_check_3",
    "stopword corpus on nltk.data.path": "nltk.data.path.insert",
    "the project's stopword list": "mustn needn shan",
    "autoattack alias": 'sys.modules["autoattack"]',
    "autoattack submodule alias": 'sys.modules[f"autoattack.',
}
# functions that implement a fix (a package may re-export them, never define its own)
FIX_FUNCTIONS = {"alias_autoattack", "_alias_autoattack", "nltk_data_dir", "prepare_textattack"}


@pytest.mark.parametrize("what", list(MARKERS))
def test_each_fix_is_written_once(what):
    holders = [p.relative_to(ROOT).as_posix() for p in SOURCES if MARKERS[what] in p.read_text(encoding="utf-8")]
    assert len(holders) == 1 and Path(ROOT / holders[0]).parent == COMPAT, f"{what} found in {holders}"


def test_no_package_defines_its_own_fix_function():
    defined = []
    for p in SOURCES:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in FIX_FUNCTIONS:
                defined.append((node.name, p.relative_to(ROOT).as_posix()))
    assert defined and {Path(ROOT / f).parent for _, f in defined} == {COMPAT}, defined


def _uses_compat(pkg: Path) -> bool:
    return any(re.search(r"^\s*(from|import) robustsuite_common\b", p.read_text(encoding="utf-8"), re.M)
               for p in (pkg / "src").rglob("*.py"))


def test_packages_that_use_the_fixes_declare_robustsuite_common():
    users = [p for p in sorted((ROOT / "packages").iterdir()) if p.name != "robustsuite-common" and _uses_compat(p)]
    assert {p.name for p in users} >= {"robustsuite", "iortemp", "zeroe-perturb", "uncspan", "transduct-attack"}
    for pkg in users:
        project = tomllib.loads((pkg / "pyproject.toml").read_text())["project"]
        reqs = [*project.get("dependencies", [])]
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        assert any(re.match(r"robustsuite-common\b", r) for r in reqs), f"{pkg.name} does not declare robustsuite-common"


# --- issue 23 item 5: one copy of each interval, argument-check and RobustBench-loading helper ------------------

HELPERS = {  # what a copy is called, and the one copy's name in robustsuite_common
    "Clopper-Pearson interval": (re.compile(r"_?clopper_pearson\w*"), "proportion"),
    "bootstrap interval": (re.compile(r"_?\w*bootstrap\w*"), "bootstrap"),
    "check_choice": (re.compile(r"_?check_choice"), "check_choice"),
    "RobustBench loader": (re.compile(r"_?(load_robustbench\w*|robustbench_(checkpoint|timm)\w*)"),
                           "load_robustbench_model"),
    "optional import": (re.compile(r"_?optional_import"), "optional_import"),  # the umbrella had its own
}
def _copies(what: str) -> list[str]:
    """Where a function named like the helper is defined outside robustsuite_common without delegating to it (a
    spec adapter that calls robustsuite_common is not a copy), or RobustBench's own loader is called."""
    pattern, found = HELPERS[what][0], []
    for p in SOURCES:
        if p.is_relative_to(COMPAT):
            continue
        text = p.read_text(encoding="utf-8")
        rel = p.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and pattern.fullmatch(node.name)
                    and "robustsuite_common" not in ast.get_source_segment(text, node)):
                found.append(f"{rel}:{node.lineno} def {node.name}")
        if what == "RobustBench loader" and re.search(r"\butils\.load_model\(", text):
            found.append(f"{rel}: calls robustbench.utils.load_model")
    return found


@pytest.mark.parametrize("what", list(HELPERS))
def test_no_new_copy_of_a_shared_helper(what):
    """No package, the umbrella included, defines its own copy; robustsuite_common defines the one copy once."""
    stray = _copies(what)
    assert not stray, f"{what} defined outside robustsuite_common: {stray}"
    common = [p for p in SOURCES if p.is_relative_to(COMPAT)]
    defined = [n.name for p in common for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(n, ast.FunctionDef) and n.name == HELPERS[what][1]]
    assert defined == [HELPERS[what][1]], f"robustsuite_common must define {HELPERS[what][1]} once: {defined}"


def test_one_hugging_face_text_classifier():
    """Issue 23: the wrapper of a Hugging Face sequence classifier as the text-classifier contract is
    robustsuite_common.text.HFTextClassifier; iortemp re-exports it, zeroe-perturb's task wrappers subclass it, the
    umbrella loads into it. A class elsewhere that calls its own ``self.tokenizer(...)`` is another copy (iortemp,
    zeroe-perturb's defense and the umbrella each had one)."""
    copies = []
    for p in SOURCES:
        if p.is_relative_to(COMPAT):
            continue
        text = p.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and "self.tokenizer(" in ast.get_source_segment(text, node):
                copies.append(f"{p.relative_to(ROOT).as_posix()}:{node.lineno} class {node.name}")
    assert not copies, f"text-classifier wrappers outside robustsuite_common: {copies}"


def test_one_command_line_override_parser():
    """``--set KEY=VALUE`` is read by robustsuite_common.config.parse_sets in every CLI (the umbrella and four
    package CLIs each parsed it themselves); a ``partition("=")`` on a command-line item elsewhere is a copy."""
    copies = [p.relative_to(ROOT).as_posix() for p in SOURCES if not p.is_relative_to(COMPAT)
              and re.search(r"--set", p.read_text(encoding="utf-8"))
              and re.search(r"\.partition\(\"=\"\)", p.read_text(encoding="utf-8"))]
    assert not copies, f"--set parsed outside robustsuite_common.config.parse_sets: {copies}"


# --- issue 23: one optional-import helper ------------------------------------------------------------------------

# hand-written ImportErrors that tell the user to pip install something no robustsuite extra installs
NOT_AN_EXTRA = {
    ("packages/iortemp/src/iortemp/attacks/recipes.py", "_use_constraint"):
        "tensorflow + tensorflow_hub for TextAttack's Universal Sentence Encoder: no package's extra installs them",
}


def _install_hints() -> list[tuple[str, str, int]]:
    """(file, enclosing function, line) of each ``raise ImportError(...)`` / ``ModuleNotFoundError(...)`` outside
    robustsuite_common whose message text contains ``pip install``."""
    found = []

    class Raises(ast.NodeVisitor):
        def __init__(self, rel: str) -> None:
            self.rel, self.stack = rel, ["<module>"]

        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
            self.stack.append(node.name)
            self.generic_visit(node)
            self.stack.pop()

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Raise(self, node: ast.Raise) -> None:
            exc = node.exc
            if (isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name)
                    and exc.func.id in ("ImportError", "ModuleNotFoundError")):
                text = "".join(c.value for c in ast.walk(exc) if isinstance(c, ast.Constant) and isinstance(c.value, str))
                if "pip install" in text:
                    found.append((self.rel, self.stack[-1], node.lineno))
            self.generic_visit(node)

    for p in SOURCES:
        if not p.is_relative_to(COMPAT):
            Raises(p.relative_to(ROOT).as_posix()).visit(ast.parse(p.read_text(encoding="utf-8")))
    return found


def test_no_hand_written_install_hint():
    """A missing optional dependency is reported by robustsuite_common.extras.optional_import ("<feature> needs the
    optional extra: pip install '<extra>' ..."); about twenty hand-written ``try: import ... except ImportError:
    raise ImportError("... pip install ...")`` in five packages and the umbrella's own helper came before."""
    hints = _install_hints()
    stray = [f"{f}:{line} in {fn}" for f, fn, line in hints if (f, fn) not in NOT_AN_EXTRA]
    assert not stray, f"ImportError naming what to pip install, outside robustsuite_common.extras: {stray}"
    stale = set(NOT_AN_EXTRA) - {(f, fn) for f, fn, _ in hints}
    assert not stale, f"exemptions that no longer match a raise: {stale}"
