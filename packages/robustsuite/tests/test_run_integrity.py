"""Runs that cannot mix or misreport (issue 24 items 2, 6-11 and 14): unit identities include the data loaded,
unit records are checked against their identity, `collect` never downgrades a finished report, bad specs, labels
and model outputs stop a run before any unit starts (exit status 2), deterministic units run once, and
`--verbose` says what each unit does."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import _userfix as uf  # noqa: E402

from robustsuite import ConfigError, Section, runners  # noqa: E402
from robustsuite import run as run_mod  # noqa: E402
from robustsuite.cli import app  # noqa: E402
from robustsuite.data import fashion  # noqa: E402

cli = CliRunner()


def _text(res) -> str:
    return " ".join(res.output.split())  # rich wraps long lines


@pytest.fixture
def counting(monkeypatch):
    """The overview runner replaced by a fast one that counts its computations."""
    calls = []

    def fake(ctx, params):
        calls.append((params["model"], ctx.seed))
        return Section("t", f"model {params['model']}", metrics={"n": len(calls)})

    monkeypatch.setattr(runners.get("overview"), "run", fake)
    return calls


CFG = {"methods": {"overview": {"models": ["builtin:digits-cnn", "builtin:digits-cnn-at"], "dataset": "builtin:digits",
                               "config": {"robust_accuracy": "never"}}}}  # run mechanics here; AutoAttack: test_runner_overview


# --- item 6: a unit's identity includes the data source and a content hash of what was loaded -----------------

def test_identity_holds_the_data_source_and_a_hash_of_what_was_loaded(monkeypatch, tmp_path):
    cfg = {"methods": {"overview": {"model": "builtin:fashion-cnn", "dataset": "builtin:fashion-mnist"}}}
    monkeypatch.setattr(fashion, "DEBIAN_DIR", tmp_path / "absent")
    monkeypatch.delenv("ROBUSTSUITE_DATA", raising=False)
    (subset,) = run_mod.plan(cfg)
    data = subset.identity["data"]["builtin:fashion-mnist"]
    assert "shipped" in data["source"] and len(data["sha256"]) == 64
    # another copy of "the same" dataset: the full set (a fake IDX directory holding the official files' head)
    full = tmp_path / "idx"
    full.mkdir()
    if fashion._has_idx(Path("/usr/share/datasets/fashion-mnist")):
        for p in Path("/usr/share/datasets/fashion-mnist").iterdir():
            (full / p.name).symlink_to(p)
        monkeypatch.setenv("ROBUSTSUITE_DATA", str(full))
        (whole,) = run_mod.plan(cfg)
        assert whole.identity["data"]["builtin:fashion-mnist"]["sha256"] != data["sha256"]
        assert whole.id != subset.id and "full Fashion-MNIST" in whole.identity["data"]["builtin:fashion-mnist"]["source"]


def test_a_changed_user_dataset_changes_the_unit(tmp_path):
    path = tmp_path / "d.npz"
    x = np.random.default_rng(0).integers(0, 256, (40, 8, 8)).astype(np.uint8)
    np.savez(path, x=x, y=np.arange(40) % 10)
    cfg = {"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": f"npz:{path}"}}}
    (a,) = run_mod.plan(cfg)
    np.savez(path, x=255 - x, y=np.arange(40) % 10)
    (b,) = run_mod.plan(cfg)
    assert a.id != b.id and a.identity["data"] != b.identity["data"]


# --- item 7: unit records are checked against their identity on load ------------------------------------------

def test_overwritten_truncated_or_corrupt_records_are_recomputed_with_a_warning(tmp_path, counting, caplog):
    run_mod.execute(CFG, tmp_path, progress=False)
    a, b = run_mod.plan(CFG)
    assert len(counting) == 2
    run_mod.unit_path(tmp_path, a).write_text(run_mod.unit_path(tmp_path, b).read_text())  # b's record in a's file
    with caplog.at_level(logging.WARNING, logger="robustsuite"):
        report = run_mod.execute(CFG, tmp_path, progress=False)
    assert [c[0] for c in counting[2:]] == ["builtin:digits-cnn"]  # a recomputed, b reused
    assert str(run_mod.unit_path(tmp_path, a)) in caplog.text and b.id in caplog.text
    assert [u["model"] for u in report["units"]] == ["builtin:digits-cnn", "builtin:digits-cnn-at"]
    text = run_mod.unit_path(tmp_path, b).read_text()
    for broken in (text[: len(text) // 2], "", '{"unit": 3}', "[]"):
        run_mod.unit_path(tmp_path, b).write_text(broken)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="robustsuite"):
            run_mod.execute(CFG, tmp_path, progress=False)
        assert counting[-1][0] == "builtin:digits-cnn-at" and str(run_mod.unit_path(tmp_path, b)) in caplog.text
    n = len(counting)
    run_mod.failed_path(tmp_path, a).write_text("{not json")  # a stray failure record is ignored, never raised
    run_mod.execute(CFG, tmp_path, progress=False)
    assert len(counting) == n


# --- item 8: collect never downgrades a finished report; report on an older schema says what to do -----------

def test_collect_never_turns_a_finished_report_into_pending_units(tmp_path, counting, monkeypatch):
    from robustsuite.run import provenance

    run_mod.execute(CFG, tmp_path, progress=False)
    before = (tmp_path / "report.json").read_text()
    real = provenance.version
    monkeypatch.setattr(provenance, "version", lambda p: "9.9-upgraded" if p == "torch" else real(p))
    res = cli.invoke(app, ["collect", str(tmp_path)])
    assert res.exit_code == 2 and "9.9-upgraded" in _text(res) and "versions" in _text(res), res.output
    assert (tmp_path / "report.json").read_text() == before  # left as it was
    monkeypatch.setattr(provenance, "version", real)
    assert cli.invoke(app, ["collect", str(tmp_path)]).exit_code == 0


def test_report_on_an_older_schema_migrates_or_says_what_to_run(tmp_path, counting, monkeypatch):
    from robustsuite import report as rep

    run_mod.execute(CFG, tmp_path, progress=False)
    old = json.loads((tmp_path / "report.json").read_text())
    old["schema_version"] = "0.9"
    (tmp_path / "report.json").write_text(json.dumps(old))
    res = cli.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert "'0.9'" in _text(res) and "robustsuite run CONFIG" in _text(res)
    old["schema_version"] = rep.SCHEMA_VERSION  # the current schema re-renders (1.x migration: test_report)
    (tmp_path / "report.json").write_text(json.dumps(old))
    (tmp_path / "report.md").unlink()
    res = cli.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 0 and (tmp_path / "report.md").is_file(), res.output
    (tmp_path / "report.json").write_text('{"schema_version": ')
    res = cli.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "not valid JSON" in _text(res) and isinstance(res.exception, SystemExit)


# --- items 9-11: specs, labels and model outputs checked at plan time, exit 2, before any unit ---------------

def _plan(tmp_path, table: dict, *extra: str):
    import tomllib  # noqa: F401  (the file is TOML)

    lines = [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    cfg = tmp_path / "c.toml"
    cfg.write_text("[methods.overview]\n" + "\n".join(lines) + "\n")
    return cli.invoke(app, ["plan", str(cfg), *extra])


def test_missing_files_and_paths_are_found_by_plan_and_by_run_before_any_unit(tmp_path, counting):
    for table, needle in (({"model": "builtin:digits-cnn", "dataset": f"csv:{tmp_path}/nope.csv"}, "nope.csv"),
                          ({"model": f"torch:{tmp_path}/nope.pt#digits-cnn", "dataset": "builtin:digits"}, "nope.pt"),
                          ({"model": f"hf:{tmp_path}/no-model", "dataset": "builtin:digits"}, "no-model")):
        res = _plan(tmp_path, table)
        assert res.exit_code == 2 and needle in _text(res), res.output
        res = cli.invoke(app, ["run", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out"), "--no-progress"])
        assert res.exit_code == 2 and needle in _text(res) and not (tmp_path / "out").exists()
    assert counting == []
    # a model the method loads besides the unit's own (certcal's noise models): its path is checked too
    cfg = tmp_path / "cert.toml"
    cfg.write_text(f'[methods.certcal]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n'
                   f'noise_models = ["builtin:digits-cnn", "torch:{tmp_path}/noise.pt#digits-cnn"]\n')
    res = cli.invoke(app, ["plan", str(cfg)])
    assert res.exit_code == 2 and "noise.pt" in _text(res) and "does not exist" in _text(res), res.output


def test_labels_beyond_the_models_classes_are_refused_at_plan_time(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x=np.zeros((60, 8, 8), np.uint8), y=np.arange(60) % 12)  # 12 classes for a 10-output model
    res = _plan(tmp_path, {"model": "builtin:digits-cnn", "dataset": f"npz:{path}"})
    assert res.exit_code == 2 and "class index 11" in _text(res) and "10 classes" in _text(res)


def test_a_bad_experiment_setting_is_refused_by_the_cli_with_exit_2(tmp_path, monkeypatch):
    """The adapter validates a declarative runner's typed config at plan time (an unknown Zéroe attacker, an
    iortemp temperature <= 0 are such settings once the packages' configs land); here the toy experiment's
    ``attack.eps`` must be > 0."""
    from test_experiment_adapter import CALLS, install_toy

    install_toy(monkeypatch)
    cfg = tmp_path / "c.toml"
    cfg.write_text("[methods.toy]\nconfig = { attack = { eps = 0.0 } }\n")
    res = cli.invoke(app, ["plan", str(cfg)])
    assert res.exit_code == 2 and "attack.eps" in _text(res), res.output
    res = cli.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and not (tmp_path / "o").exists() and CALLS == []


@pytest.fixture(scope="module")
def named_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("named")
    return uf.bert_dir(root / "model", {0: "zebra", 1: "apple"}, sample_texts=uf.texts(20, seed=1))


def test_explicit_labels_contradicting_the_models_id2label_are_refused_showing_both(tmp_path, named_model):
    rows = "\n".join(f"{t},{'zebra' if i % 2 else 'apple'}" for i, t in enumerate(uf.texts(20, seed=2)))
    (tmp_path / "d.csv").write_text("text,label\n" + rows + "\n")
    table = {"model": f"hf:{named_model}", "dataset": f"csv:{tmp_path / 'd.csv'}"}
    res = _plan(tmp_path, table | {"labels": ["apple", "zebra"]})
    assert res.exit_code == 2 and "['apple', 'zebra']" in _text(res) and "['zebra', 'apple']" in _text(res)
    assert _plan(tmp_path, table | {"labels": ["zebra", "apple"]}).exit_code == 0  # agreeing labels are fine
    assert _plan(tmp_path, table).exit_code == 0


def test_a_model_that_outputs_probabilities_is_refused_unless_declared(tmp_path):
    from robustsuite.zoo.nets import DigitsCNN

    base = DigitsCNN().eval()
    torch.jit.save(torch.jit.script(torch.nn.Sequential(base, torch.nn.Softmax(dim=1))), tmp_path / "p.pt")
    res = _plan(tmp_path, {"model": f"torch:{tmp_path / 'p.pt'}", "dataset": "builtin:digits"})
    assert res.exit_code == 2 and "outputs probabilities" in _text(res)
    assert "?outputs=probabilities" in "".join(res.output.split())  # the fix, spelt out
    res = _plan(tmp_path, {"model": f"torch:{tmp_path / 'p.pt'}?outputs=probabilities", "dataset": "builtin:digits"})
    assert res.exit_code == 0, res.output


# --- item 2: units that do not depend on the seed run once ---------------------------------------------------

def test_a_deterministic_runner_is_computed_once_for_all_seeds(tmp_path, counting, monkeypatch):
    assert runners.get("overview").SEEDED is False  # certcal.overview does not depend on the seed
    cfg = {"seeds": 3, "methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits"}}}
    (unit,) = run_mod.plan(cfg)
    assert unit.deterministic and "--det--" in unit.id and unit.identity["seed"] is None
    assert len(run_mod.plan({**cfg, "methods": {"overview": {**cfg["methods"]["overview"]}}})) == 1
    report = run_mod.execute(cfg, tmp_path, progress=False)
    assert len(counting) == 1 and report["units"][0]["status"] == "done"
    (sec,) = report["sections"].values()
    assert any("Deterministic" in n for n in sec["notes"])
    record = json.loads(run_mod.unit_path(tmp_path, unit).read_text())
    assert record["unit"]["deterministic"] is True
    run_mod.execute(cfg | {"seed": 5}, tmp_path, progress=False)  # another base seed: the same unit, reused
    assert len(counting) == 1


# --- item 14: --verbose says what each unit is doing ---------------------------------------------------------

def test_verbose_logs_each_unit_to_stderr(tmp_path, counting):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    res = cli.invoke(app, ["--verbose", "run", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 0, res.output
    (unit,) = run_mod.plan(run_mod.load_config(cfg))
    assert f"unit {unit.id}: computing overview" in res.output and f"unit {unit.id}: done" in res.output
    quiet = cli.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"])
    assert quiet.exit_code == 0 and "computing" not in quiet.output
    with pytest.raises(ConfigError):
        run_mod.plan({"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits"}},
                      "seeds": 0})
