"""The iortemp README's "same numbers with the package alone" snippet gives the runner's tables.

The snippet is read from the README, its size line is swapped for small sizes, it is run, and its rows, formatted
by the runner's own table builders, must equal the runner's ``ior_table`` / ``ior_verdict`` tables and its vision
verdicts at the same parameters.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from robustsuite.runners import RunContext
from robustsuite.runners import iortemp as runner

README = Path(__file__).resolve().parents[2] / "iortemp" / "README.md"
HEADING = "**The same numbers with the package alone**"
SIZES = "N_TEST, N_VAL, SEEDS, N_VISION = 40, 40, [0, 1, 2], 200"


def _snippet() -> str:
    text = README.read_text(encoding="utf-8")
    assert HEADING in text, f"{README} lost its paragraph {HEADING!r}"
    found = re.search(r"```python\n(.*?)```", text[text.index(HEADING):], re.S)
    assert found, f"no python block after {HEADING!r}"
    return found.group(1)


def test_snippet_states_the_demo_parameters():
    code, d = _snippet(), runner.DEFAULTS
    assert SIZES in code
    assert (d["n_test"], d["n_val"], d["seeds"], d["vision_seeds"], d["vision_n"]) == (40, 40, [0, 1, 2], [0, 1, 2], 200)
    assert (d["attacks"], d["opt_attack"], d["max_evaluations"]) == (["deepwordbug", "pwws"], "deepwordbug", 5)
    assert d["design_temperatures"] == {"down_conf": 2e6, "up_conf": 0.005} and '{"down_conf": 2e6, "up_conf": 0.005}' in code
    assert (d["vision_eps"], d["vision_steps"], d["threshold"]) == (0.1, 10, 0.05)
    assert "PGDLinf(eps=0.1, steps=10)" in code and "max_evaluations=5" in code
    for spec in (d["model"], d["dataset"], d["vision_model"], d["vision_dataset"]):
        assert f'"{spec}"' in code, spec


def test_snippet_reproduces_the_runner_at_small_sizes(tmp_path):
    import importlib.util

    if importlib.util.find_spec("textattack") is None:  # not importorskip: iortemp's offline NLTK setup must run first
        pytest.skip("textattack not installed")
    code = _snippet().replace(SIZES, "N_TEST, N_VAL, SEEDS, N_VISION = 6, 6, [0, 1], 24")
    ns: dict = {"__name__": "readme_snippet"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, str(README), "exec"), ns)  # noqa: S102 (the project's own README)

    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    sec = runner.run(ctx, {**runner.DEFAULTS, "n_test": 6, "n_val": 6, "seeds": [0, 1], "vision_seeds": [0, 1],
                           "vision_n": 24, "sweep_temperatures": [1.0]})
    tables = {t.name: t for t in sec.tables}
    attacks = list(ns["attacks"])
    assert sec.metrics["attacks_run"] == ",".join(attacks)
    mine = runner._ior_table("ior_table", "", [dict(r) for r in ns["rows"]], attacks, ("system", ""))
    assert mine.rows == tables["ior_table"].rows
    text = ns["text"]
    verdicts = {(k, a): text.verdict(k, a, 0.05) for k in ns["systems"] for a in attacks}
    assert runner._verdict_table("ior_verdict", "", verdicts).rows == tables["ior_verdict"].rows
    vis = ns["vis"]
    for k in ("base", "down_conf", "up_conf"):
        v = vis.verdict(k, "pgd", 0.05)
        assert (v["illusion"], v["resolved"]) == (sec.metrics[f"vision_ior_{k}"], sec.metrics[f"vision_ior_resolved_{k}"])
    got = [r[: len(tables["vision_ior"].columns) - 3] for r in tables["vision_ior"].rows]
    want = []
    for k in ("base", "down_conf", "up_conf"):
        by = {r["mode"]: r for r in vis.rows if r["system"] == k}
        want.append([runner._pct(by["plain"]["clean_accuracy"])]
                    + [runner._pct(by[m]["adversarial_accuracy"]["pgd"]) for m in ("plain", "cal", "opt")])
    cols = tables["vision_ior"].columns
    assert [[r[1]] + [r[cols.index(m)] for m in ("plain PGD", "cal", "opt")] for r in got] == want
