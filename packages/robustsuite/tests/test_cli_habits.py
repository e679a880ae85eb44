"""CLI habits, typed configuration and per-sample logs (issue 12, items 6, 8, 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import _userfix as uf  # noqa: E402

from robustsuite import ConfigError, read_samples, runners  # noqa: E402
from robustsuite import run as run_mod  # noqa: E402
from robustsuite.cli import app, apply_overrides  # noqa: E402

cli = CliRunner()


HEAVY_FOR_HELP = ("torch", "numpy", "scipy", "rich", "pygments", "markdown_it", "transformers", "sklearn", "pandas",
                  "pyarrow", "zeroe_perturb", "iortemp", "uncspan", "transduct_attack", "certcal",
                  "robustsuite.runners", "robustsuite.run", "robustsuite.loaders", "robustsuite.zoo", "robustsuite.data",
                  "robustsuite.config")


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["demo", "--help"], ["methods", "--help"]])
def test_help_imports_no_heavy_module(argv):
    """Issue 12 item 8: `robustsuite --help` (and each command's --help) must answer fast, so it imports neither
    torch/numpy/rich nor any method package, runner or loader: a property checked on sys.modules in a fresh
    interpreter through the console script's `app`. The top-level help does not import pydantic either; a
    command's help does, because typer 0.29 builds its parameter converters with pydantic (typer's own code)."""
    heavy = HEAVY_FOR_HELP + (("pydantic",) if argv == ["--help"] else ())
    code = ("import sys; from robustsuite.cli import app\n"
            f"try:\n    app({argv!r})\nexcept SystemExit:\n    pass\n"
            f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in {heavy!r})\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert "Usage:" in out and "HEAVY []" in out, out


def test_version():
    from importlib.metadata import version

    res = cli.invoke(app, ["--version"])
    assert res.exit_code == 0 and version("robustsuite") in res.output


def test_set_overrides_parse_toml_values():
    cfg = apply_overrides({"methods": {"overview": {}}},
                          ["methods.overview.config.n_bins=10", "seed=3", "methods.overview.config.split=val",
                           "labels=['a','b']"])
    assert cfg == {"seed": 3, "labels": ["a", "b"], "methods": {"overview": {"config": {"n_bins": 10, "split": "val"}}}}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        apply_overrides({}, ["nonsense"])


def test_typed_config_rejects_unknown_keys_wrong_types_and_ranges():
    with pytest.raises(ConfigError, match="did you mean 'n_bins'"):
        runners.get("overview").check_params({"config": {"n_bin": 3}})
    with pytest.raises(ConfigError, match="n_bins"):
        runners.get("overview").check_params({"config": {"n_bins": "many"}})
    with pytest.raises(ConfigError, match="n_bins"):
        runners.get("overview").check_params({"config": {"n_bins": 0}})  # bounds: ge 1
    runners.get("overview").check_params({"config": {"n_bins": 10, "split": "val"}})
    # every runner gets a schema generated from its DEFAULTS; a float default accepts an integer
    for name, mod in runners.available().items():
        floats = {k: int(v) for k, v in mod.DEFAULTS.items() if isinstance(v, float) and float(v).is_integer()}
        runners.get(name).check_params(floats)
        for k, v in mod.DEFAULTS.items():
            if isinstance(v, bool):
                with pytest.raises(ConfigError, match=k):
                    runners.get(name).check_params({k: "yes please"})


def test_methods_schema_is_a_readable_table_and_json_schema_for_every_method():
    import jsonschema

    res = cli.invoke(app, ["methods", "--schema"])
    assert res.exit_code == 0, res.output
    for name in runners.available():
        assert f"[methods.{name}]" in res.output
    row = next(line for line in res.output.splitlines() if "│ config.n_bins" in line)
    assert "int" in row and ">= 1" in row and "15" in row
    res = cli.invoke(app, ["methods", "--schema", "--json"])
    assert res.exit_code == 0, res.output
    schemas = json.loads(res.output)
    assert set(schemas) == set(runners.available())
    for name, sch in schemas.items():
        jsonschema.Draft202012Validator.check_schema(sch)
        assert sch["additionalProperties"] is False
        assert set(runners.get(name).DEFAULTS) <= set(sch["properties"])
    assert schemas["overview"]["properties"]["config"]["properties"]["n_bins"]["type"] == "integer"


def test_plan_lists_units_and_cache_state_without_running(tmp_path, monkeypatch):
    ckpt = uf.digits_cnn_checkpoint(tmp_path / "m.pt")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[methods.overview]\nmodel = "torch:{ckpt}#digits-cnn"\ndataset = "builtin:digits"\n')
    res = cli.invoke(app, ["plan", str(cfg), "--out", str(tmp_path / "run"), "--seeds", "2"])
    assert res.exit_code == 0, res.output
    # the overview does not depend on the seed (SEEDED = False): one unit however many seeds
    assert "0 cached, 1 to run" in res.output and not (tmp_path / "run").exists()
    res = cli.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "run"), "--no-progress", "--limit", "30"])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["sections"]["overview"]["metrics"]["num_samples"]["value"] == 30
    res = cli.invoke(app, ["plan", str(cfg), "--out", str(tmp_path / "run"), "--seeds", "2", "--limit", "30"])
    assert "1 cached, 0 to run" in res.output
    res = cli.invoke(app, ["plan", str(cfg), "--out", str(tmp_path / "run"), "--set", "methods.overview.config.n_bin=3"])
    assert res.exit_code == 2 and "n_bins" in res.output


def test_log_samples_writes_rows_that_reproduce_the_metrics(tmp_path):
    ckpt = uf.digits_cnn_checkpoint(tmp_path / "m.pt")
    cfg = {"log_samples": "jsonl", "limit": 50,
           "methods": {"overview": {"model": f"torch:{ckpt}#digits-cnn", "dataset": "builtin:digits"}}}
    report = run_mod.execute(cfg, tmp_path / "run", progress=False)
    sec = report["sections"]["overview"]
    (path,) = sec["samples"]
    rows = read_samples(tmp_path / "run" / path)
    assert len(rows) == 50 and set(rows[0]) == {"id", "input", "label", "prediction", "confidence", "correct", "robust"}
    assert sum(r["correct"] for r in rows) / 50 == pytest.approx(sec["metrics"]["accuracy"]["value"])
    assert sum(r["confidence"] for r in rows) / 50 == pytest.approx(sec["metrics"]["mean_confidence"]["value"])
    # a cached unit without a sample file is recomputed when samples are asked for
    cfg2 = cfg | {"log_samples": "parquet"}
    report = run_mod.execute(cfg2, tmp_path / "run2", progress=False)
    report_again = run_mod.execute(cfg2 | {"log_samples": None}, tmp_path / "run2", progress=False)
    assert report["units"][0]["id"] == report_again["units"][0]["id"]
    assert report["sections"]["overview"]["samples"][0].endswith(".parquet")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_several_named_sample_files_with_array_columns(fmt, tmp_path):
    """Issue 12 item 6, the generic machinery the method runners use: several per-sample files per unit
    (``name=``), columns given as lists, numpy arrays (1-D and 2-D: one list per row), tensors and row dicts;
    ragged list columns, strings and missing values; non-finite floats are kept in Parquet and written as null in
    JSON lines (JSON has no NaN); every file is listed once in the context, in the order first written."""
    import numpy as np
    import torch

    ctx = runners.RunContext(run_dir=tmp_path, method="m", log_format=fmt, unit_id="m-unit")
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    p1 = ctx.log_samples({"id": np.arange(2), "label": torch.tensor([0, 2]), "probs": probs,
                          "radius": np.array([0.5, np.nan]), "inf": [float("inf"), 1.0],
                          "tokens": [["a", "b"], ["c"]], "perturbed_text": ["x y", "z"]}, name="clean")
    p2 = ctx.log_samples([{"id": 0, "adv_prediction": 1}, {"id": 1, "adv_prediction": None}], name="attack eps=0.1")
    ctx.log_samples({"id": [0, 1], "prediction": [0, 2]}, name="clean")  # rewriting a file lists it once
    assert ctx.samples == [p.relative_to(tmp_path).as_posix() for p in (p1, p2)]
    assert p1.name == f"m-unit--clean.{fmt}" and p2.parent == p1.parent and p1 != p2
    rows = read_samples(p1)
    assert [r["prediction"] for r in rows] == [0, 2]
    first = ctx.log_samples({"id": np.arange(2), "label": torch.tensor([0, 2]), "probs": probs,
                             "radius": np.array([0.5, np.nan]), "inf": [float("inf"), 1.0],
                             "tokens": [["a", "b"], ["c"]], "perturbed_text": ["x y", "z"]}, name="clean")
    rows = read_samples(first)
    assert [r["probs"] for r in rows] == probs.tolist() and [r["label"] for r in rows] == [0, 2]
    assert [r["tokens"] for r in rows] == [["a", "b"], ["c"]] and rows[1]["perturbed_text"] == "z"
    assert rows[0]["radius"] == 0.5
    if fmt == "parquet":
        assert np.isnan(rows[1]["radius"]) and rows[0]["inf"] == float("inf")
    else:
        assert rows[1]["radius"] is None and rows[0]["inf"] is None
    assert [r["adv_prediction"] for r in read_samples(p2)] == [1, None]
    with pytest.raises(ValueError, match="differ in length"):
        ctx.log_samples({"id": [0, 1], "label": [0]}, name="bad")


README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_documents_every_flag_spec_and_output():
    """The package README names every flag of every command (typer's own parameter list, so a new flag fails this
    test until it is documented), every model and dataset spec form with its query keys, and every file a run
    directory holds."""
    import re

    import typer.main

    from robustsuite.loaders import DATASET_SPECS, MODEL_SPECS

    text = README.read_text(encoding="utf-8")
    group = typer.main.get_command(app)
    missing = []
    for name, command in group.commands.items():
        if f"`{name}" not in text:
            missing.append(name)
        for param in command.params:
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("-") and not re.search(rf"`{re.escape(opt)}(?![\w-])", text):
                    missing.append(f"{name} {opt}")
    for spec in (*MODEL_SPECS, *DATASET_SPECS):
        head = re.split(r"[<\[]", spec.spec)[0]
        lines = [line for line in text.splitlines() if f"`{head}" in line]
        if not lines:
            missing.append(spec.spec)
        for key in re.findall(r"[?&|](\w+)=", spec.spec):
            if not any(f"{key}=" in line for line in lines):
                missing.append(f"{spec.spec}: {key}=")
    for path in ("run.json", "units/<unit>.json", "units/<unit>.failed.json", "units/<unit>.lock", "work/<unit>/",
                 run_mod.PLAN_FILE, "plan/<unit>.json", "samples/<unit>.parquet", "samples/<unit>--<name>",
                 "figures/<method>/", "report.json", "report.md", "report.html"):
        if f"`{path}" not in text:
            missing.append(path)
    assert not missing, f"README.md does not document: {missing}"


def test_cached_unit_is_recomputed_for_another_sample_format(tmp_path):
    """A unit finished with `--log-samples jsonl` and asked again with parquet writes the parquet file (it used to
    be reused with only its JSON lines file)."""
    cfg = {"log_samples": "jsonl", "limit": 30,
           "methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits",
                                    "config": {"n_boot": 100}}}}
    first = run_mod.execute(cfg, tmp_path / "run", progress=False)
    again = run_mod.execute(cfg | {"log_samples": "parquet"}, tmp_path / "run", progress=False)
    (path,) = again["sections"]["overview"]["samples"]
    assert path.endswith(".parquet") and (tmp_path / "run" / path).is_file()
    assert first["units"][0]["id"] == again["units"][0]["id"]
    assert len(read_samples(tmp_path / "run" / path)) == 30
