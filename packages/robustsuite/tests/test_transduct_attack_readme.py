"""transduct-attack's README reproduces the runner with the package alone: its snippet ("The demo's numbers with
the package alone"), run with the runner's small test parameters (its top-level size variables replaced), gives
exactly the numbers of every table of the runner's section and the verdicts of its summary."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from robustsuite.runners import RunContext
from robustsuite.runners import transduct_attack as runner

README = Path(__file__).resolve().parents[2] / "transduct-attack" / "README.md"


def _tiny() -> dict:
    """The runner test's tiny budgets (8x8 digits, every table, DENT-AA off)."""
    spec = importlib.util.spec_from_file_location("_ta_runner_test", Path(__file__).with_name(
        "test_runner_transduct_attack.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.TINY


def _snippet() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("### The demo's numbers with the package alone", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _overrides(p: dict) -> dict:
    """The runner's parameters as the snippet's top-level variables (the mapping the runner makes)."""
    return {
        "DATA": p["dataset"], "MODEL": p["model"], "AT_MODEL": p["at_model"], "SEED": 0, "SEEDS": p["seeds"],
        "EPS": p["eps"], "TADV_EPS": p["tadv_eps"], "PGD_STEPS": p["pgd_steps"],
        "TRAIN": {"rmc": p["rmc_train"], "dann": p["dann_train"], "tadv": p["tadv_train"], "dent": p["dent_train"],
                  "urejectron": p["urej_train"]},
        "RMC": dict(n=p["rmc_points"], batch_size=p["rmc_batch"], k=p["rmc_k"], lr=p["rmc_lr"], epochs=p["rmc_epochs"],
                    patience=p["rmc_patience"], calibration_points=p["rmc_calibration_points"], T=p["T"]),
        "DANN": dict(n=p["dann_points"], epochs=p["dann_epochs"], lr=p["dann_lr"], alpha_max=p["dann_alpha_max"],
                     width=p["dann_width"], T=p["dann_T"]),
        "TADV": dict(n=p["tadv_points"], epochs=p["tadv_epochs"], adv_steps=p["tadv_adv_steps"],
                     hidden=p["tadv_hidden"], T=p["T"]),
        "DENT_BASE": dict(epochs=p["dent_base_epochs"], adv_steps=p["tadv_adv_steps"]),
        "DENT": dict(n=p["dent_points"], batch_size=p["dent_batch"], T=p["dent_T"],
                     n_untargeted=p["dent_solver_untargeted"], n_targeted=p["dent_solver_targeted"], aa_attacks=None,
                     aa_iterations=p["aa_iterations"], aa_restarts=p["aa_restarts"]),
        "UREJ": dict(n=p["urej_points"], epochs=p["urej_epochs"], T=p["urej_T"], tau=p["urej_tau"],
                     thresholds=p["urej_thresholds"]),
    }


def _substituted(overrides: dict) -> ast.Module:
    """The snippet with the overridden top-level variables' values replaced and its final print dropped."""
    tree = ast.parse(_snippet())
    seen = set()
    for i, node in enumerate(tree.body):  # replace the value of each overridden top-level assignment
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in overrides:
                seen.add(target.id)
                node.value = ast.parse(repr(overrides[target.id]), mode="eval").body
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):  # A, B = a, b
                for j, elt in enumerate(target.elts):
                    if isinstance(elt, ast.Name) and elt.id in overrides:
                        seen.add(elt.id)
                        node.value.elts[j] = ast.parse(repr(overrides[elt.id]), mode="eval").body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "print":
            tree.body[i] = ast.Pass()
    assert seen == set(overrides), set(overrides) - seen  # every size is a top-level variable of the snippet
    return tree


def _run_snippet(overrides: dict) -> dict:
    tree = _substituted(overrides)
    ns: dict = {"__name__": "readme_snippet"}
    exec(compile(ast.fix_missing_locations(tree), str(README), "exec"), ns)  # noqa: S102
    return ns


def test_readme_snippet_reproduces_the_runner(tmp_path):
    params = {**runner.DEFAULTS, **_tiny()}
    section = runner.run(RunContext(run_dir=tmp_path, method=runner.NAME, seed=0), params)
    ns = _run_snippet(_overrides(params))
    numbers, verdicts = ns["numbers"], ns["verdicts"]
    got = {t.name: t.rows for t in section.tables}
    numeric = {"rmc": slice(2, 5), "dann": slice(2, 5), "tadv": slice(2, 5), "dent": slice(2, 5),
               "rmc_seeds": slice(2, 9), "dent_adaptation": slice(0, None), "urejectron": slice(1, None)}
    expected = {"rmc": numbers["rmc std"] + numbers["rmc at"],
                "rmc_seeds": numbers["rmc_seeds std"] + numbers["rmc_seeds at"],
                **{k: numbers[k] for k in ("dann", "tadv", "dent", "dent_adaptation", "urejectron")}}
    assert set(got) == set(expected)
    for name, rows in got.items():
        assert [list(r[numeric[name]]) for r in rows] == [list(r) for r in expected[name]], name
    for key in ("rmc std", "rmc at", "dann", "tadv"):  # the summary's paired verdicts
        v = verdicts[key]
        assert (f" {v.accuracy:.2f} is {v.verdict} transfer PGD {v.reference_accuracy:.2f} (paired difference "
                f"{v.difference:+.2f}, 95% bootstrap [{v.ci_low:+.2f}, {v.ci_high:+.2f}])") in section.summary
    for key in ("rmc_seeds std", "rmc_seeds at"):
        v = verdicts[key]
        assert f"pooled {v.accuracy:.2f} vs clean {v.reference_accuracy:.2f} ({v.verdict} " in section.summary
    v = verdicts["urejectron"]
    assert f"{v.reference_accuracy:.2f} (transfer) vs {v.accuracy:.2f} (GMSA-AVG), {v.verdict}" in section.summary
    assert section.metrics[f"dent_{verdicts['dent'].replace('-', '_')}"] == min(
        section.metrics[f"dent_{a}"] for a in ("pgd", "fpa", "gmsa_avg", "gmsa_min"))
