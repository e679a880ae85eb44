"""The zeroe-perturb README's "demo's numbers with the package alone" snippet gives the runner's section.

The snippet is read from the README, its size line is swapped for small sizes (and another seed), it is run, and
its tables and headline numbers must equal those of ``robustsuite.runners.zeroe_perturb.run`` at the same
parameters: if the runner and the snippet ever compute a number differently, this fails.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from robustsuite import runners
from robustsuite.runners import zeroe_perturb as runner

README = Path(__file__).resolve().parents[2] / "zeroe-perturb" / "README.md"
HEADING = "### The demo's numbers with the package alone"
SIZES = "SEED, N_TEST, N_TASK, N_SEEDS = 0, 200, 200, 3"
GRID = "LEVELS, ATTACKS = [0.2, 0.5, 0.8], list(zp.ATTACKS)"


def _snippet() -> str:
    text = README.read_text(encoding="utf-8")
    assert HEADING in text, f"{README} lost its section {HEADING!r}"
    found = re.search(r"```python\n(.*?)```", text[text.index(HEADING):], re.S)
    assert found, f"no python block under {HEADING!r}"
    return found.group(1)


def test_snippet_states_the_demo_parameters():
    code = _snippet()
    assert SIZES in code and GRID in code
    d = runner.DEFAULTS
    assert (d["n_test"], d["n_task"], d["n_seeds"], d["levels"], d["attacks"]) == (200, 200, 3, [0.2, 0.5, 0.8], None)
    for key in ("model", "dataset", "pairs_model", "pairs_dataset", "multilabel_model", "multilabel_dataset",
                "tagging_model", "tagging_dataset"):
        assert f'"{d[key]}"' in code, key  # the snippet loads the runner's default models and data
    assert d["paper_task"] == "TC" and d["multilabel_metric"] == "auroc" and d["pairs_targets"] == ["hypothesis", "both"]
    assert (d["confidence"], d["n_boot"], d["metric"], d["split"]) == (0.95, 2000, "accuracy", "test")


def test_snippet_reproduces_the_runner_at_small_sizes(tmp_path):
    attacks = ["intrude", "segment", "visual", "truncate"]
    code = _snippet().replace(SIZES, "SEED, N_TEST, N_TASK, N_SEEDS = 1, 24, 16, 2")
    code = code.replace(GRID, f"LEVELS, ATTACKS = [0.2, 0.8], {attacks!r}")
    ns: dict = {"__name__": "readme_snippet"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, str(README), "exec"), ns)  # noqa: S102 (the project's own README)

    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=1)
    sec = runner.run(ctx, {**runner.DEFAULTS, "n_test": 24, "n_task": 16, "n_seeds": 2, "levels": [0.2, 0.8],
                           "attacks": attacks})
    tables = {t.name: t.rows for t in sec.tables}
    assert list(ns["tables"]) == list(tables) == ["levels", "ranking", "tasks", "task_summary"]
    for name, rows in tables.items():
        assert ns["tables"][name] == rows, name
    tc, first, m = ns["tc"], ns["runs"][0], sec.metrics
    _, slope, r = first.edit_distance_fit()
    assert (tc.clean_score, first.mean_relative(0.8), slope, r, tc.chance_relative) == (
        m["clean_score"], m["mean_relative_high"], m["edit_fit_slope"], m["edit_fit_pearson_r"], m["chance_relative"])
    assert (tc.agreement["tau"], tc.agreement["tau_ci_low"], tc.agreement["tau_ci_high"]) == (
        m["kendall_tau_paper"], m["kendall_tau_paper_ci_low"], m["kendall_tau_paper_ci_high"])
    assert [tc.n_above_chance(p) for p in (0.2, 0.8)] == [m["n_above_chance_p0.2"], m["n_above_chance_p0.8"]]
    for task, (_, sm) in ns["tasks"].items():
        key = task.replace(" (", "_").replace(")", "").replace("-", "")
        assert (sm.clean_score, *sm.mean_relative_high) == (
            m[f"{key}_clean_score"], m[f"{key}_mean_relative_high"], m[f"{key}_mean_relative_high_ci_low"],
            m[f"{key}_mean_relative_high_ci_high"]), task
