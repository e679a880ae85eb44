"""Issue 12 item 10: the snippet "The demo's numbers with the package alone" in packages/uncspan/README.md makes the
runner's calls. Its constants are the runner's DEFAULTS, and at small sizes (its top-level size variables
overridden) it reproduces the runner's section exactly: every table row and the metrics it computes."""

import ast
import re
from pathlib import Path

import pytest

from robustsuite.runners import RunContext
from robustsuite.runners import uncspan as runner

README = Path(__file__).resolve().parents[2] / "uncspan" / "README.md"
HEADING = "### The demo's numbers with the package alone"
# snippet variable -> runner parameter
PARAMS = {"N": "n", "SWEEP_N": "sweep_n", "N_OUTLIERS": "n_outliers", "STEPS": "steps", "SWEEP_STEPS": "sweep_steps",
          "N_BOOT": "n_boot", "AUROC_N_BOOT": "auroc_n_boot", "N_BINS": "n_bins", "EPS": "eps",
          "SWEEP_EPS": "sweep_eps", "OSR_EPS": "osr_eps"}
SMALL = {"N": 24, "SWEEP_N": 12, "N_OUTLIERS": 16, "STEPS": 3, "SWEEP_STEPS": 2, "N_BOOT": 200, "AUROC_N_BOOT": 150,
         "SWEEP_EPS": [0.0, 0.1], "OSR_EPS": [0.0, 0.1]}


def snippet() -> str:
    text = README.read_text(encoding="utf-8")
    assert HEADING in text, f"{README} lost its section {HEADING!r}"
    match = re.search(r"```python\n(.*?)```", text.split(HEADING, 1)[1], re.S)
    assert match, "no python block under the heading"
    return match.group(1)


def constants(code: str) -> dict:
    """The snippet's top-level assignments of literals (``A, B = 1, 2`` included)."""
    out = {}
    for node in ast.parse(code).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(target, ast.Name):
                out[target.id] = value
            elif isinstance(target, ast.Tuple):
                out.update(zip((t.id for t in target.elts), value, strict=True))
    return out


def test_snippet_constants_are_the_runner_defaults():
    c, d = constants(snippet()), runner.DEFAULTS
    assert {k: c[k] for k in PARAMS} == {k: d[v] for k, v in PARAMS.items()}
    assert c["attack"] == {k: d[k] for k in ("norm", "optimizer", "restarts", "under_objective")}
    assert c["models"] == {d["model"]: d["model_adversarially_trained"],
                           **{e["spec"]: e["adversarially_trained"] for e in d["compare"]}}
    code = snippet()
    for spec in (d["dataset"], d["osr_dataset"], *d["osr_models"]):
        assert f'"{spec}"' in code
    assert d["ood_dataset"] == "extras:ood" and d["open_set_classes"] == []  # what the snippet loads


def test_snippet_reproduces_the_runner_at_small_sizes(tmp_path):
    code = snippet()
    lines = code.splitlines()
    last = max(i for i, line in enumerate(lines)
               if re.match(r"^[A-Z_][A-Z_0-9, ]* = ", line) and set(re.findall(r"[A-Z_][A-Z_0-9]*", line.split("=")[0])) & set(SMALL))
    small = "\n".join(f"{k} = {v!r}" for k, v in SMALL.items())
    ns: dict = {}
    exec("\n".join([*lines[: last + 1], small, *lines[last + 1:]]), ns)  # noqa: S102 - the README's own code

    params = {**runner.DEFAULTS, **{PARAMS[k]: v for k, v in SMALL.items()}}
    sec = runner.run(RunContext(run_dir=tmp_path, method=runner.NAME, seed=0), params)
    span, sece, sweep, ood = sec.tables
    assert span.columns == ns["board"].columns
    assert ns["span_table"] == span.rows
    assert ns["sece_table"] == sece.rows
    assert ns["sweep_table"] == sweep.rows
    assert ns["ood_table"] == ood.rows
    m = sec.metrics
    for model, w in ns["widening"].items():
        s = runner._slug(model)
        assert (w.under.mean, w.under.ci_low, w.under.ci_high) == (
            m[f"{s}_under_widening"], m[f"{s}_under_widening_ci_low"], m[f"{s}_under_widening_ci_high"])
        assert (w.over.mean, w.over.ci_low, w.over.ci_high) == (
            m[f"{s}_over_widening"], m[f"{s}_over_widening_ci_low"], m[f"{s}_over_widening_ci_high"])
    (c,) = ns["effect"].comparisons
    key = f"mus_diff_{runner._slug(c.adversarially_trained)}_minus_{runner._slug(c.standard)}"
    assert (c.difference.mean, c.difference.ci_low, c.difference.ci_high) == (
        m[key], m[f"{key}_ci_low"], m[f"{key}_ci_high"])
    assert ns["effect"].shrinks_span == m["adv_trained_smaller_mus"]
    for kind, falls in ns["auroc_falls"].items():
        assert falls == m[f"fashion_osr_cnn_{kind}_auroc_falls"]


@pytest.mark.parametrize("name", sorted(SMALL))
def test_size_variables_are_top_level_assignments(name):
    """The README keeps the sizes as top-level variables the test above overrides (a rename fails here)."""
    assert name in constants(snippet())
