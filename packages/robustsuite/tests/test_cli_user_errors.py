"""The CLI on a user's mistakes (issue 36): exit 2 with one line naming the input, never a traceback; internal
errors one line (exit 1) and their traceback only with --verbose."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import _userfix as uf  # noqa: E402

from robustsuite.cli import app  # noqa: E402

cli = CliRunner()


def _one_line_error(res, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    text = " ".join(res.output.split())  # rich wraps long lines
    assert text.startswith("error:"), res.output
    for n in needles:
        assert n in text, res.output


def _config(tmp_path: Path, body: str) -> Path:
    cfg = tmp_path / "c.toml"
    cfg.write_text(body)
    return cfg


def test_unknown_method_gets_a_did_you_mean(tmp_path):
    cfg = _config(tmp_path, '[methods.uncspam]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    _one_line_error(cli.invoke(app, ["plan", str(cfg)]), "unknown method 'uncspam'", "did you mean 'uncspan'?")


def test_the_same_target_twice_is_refused(tmp_path):
    cfg = _config(tmp_path, '[methods.overview]\ntargets = [["builtin:digits-cnn", "builtin:digits"], '
                            '["builtin:digits-cnn", "builtin:digits"]]\n')
    _one_line_error(cli.invoke(app, ["plan", str(cfg)]), "listed twice")


def test_cuda_without_cuda_is_refused_by_plan_as_by_run(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    cfg = _config(tmp_path, 'device = "cuda"\n[methods.overview]\nmodel = "builtin:digits-cnn"\n'
                            'dataset = "builtin:digits"\n')
    _one_line_error(cli.invoke(app, ["plan", str(cfg)]), "device 'cuda'", "CUDA is not available")


def test_missing_model_file_is_reported_before_any_dataset_loads(tmp_path, monkeypatch):
    from robustsuite.run import units

    def no_loading(*a, **k):
        raise AssertionError("a dataset was loaded before the missing model file was reported")

    monkeypatch.setattr(units, "data_identity", no_loading)
    cfg = _config(tmp_path, '[methods.overview]\nmodel = "torch:absent.pt#digits-cnn"\ndataset = "builtin:digits"\n')
    _one_line_error(cli.invoke(app, ["plan", str(cfg)]), "absent.pt does not exist")


def test_relative_paths_resolve_against_the_config_file(tmp_path, monkeypatch):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    uf.digits_cnn_checkpoint(conf_dir / "m.pt")
    cfg = _config(conf_dir, '[methods.overview]\nmodel = "torch:m.pt#digits-cnn"\ndataset = "builtin:digits"\n')
    monkeypatch.chdir(tmp_path)  # not the config's folder
    res = cli.invoke(app, ["plan", str(cfg)])
    assert res.exit_code == 0, res.output
    assert "1 to run" in res.output


@pytest.mark.parametrize("where", ["under_a_file", "unwritable"])
def test_out_that_cannot_be_a_run_directory_is_one_line(tmp_path, where):
    import os

    cfg = _config(tmp_path, '[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    if where == "under_a_file":
        (tmp_path / "afile").write_text("x")
        out = tmp_path / "afile" / "run"
        needle = "is a file, not a directory"
    else:
        if os.geteuid() == 0:
            pytest.skip("root can write anywhere")
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        out = locked / "run"
        needle = "is not writable"
    _one_line_error(cli.invoke(app, ["run", str(cfg), "--out", str(out), "--no-progress", "--limit", "20"]),
                    f"--out {out}", needle)


def test_a_non_utf8_config_is_one_line(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_bytes('# caf\xe9\n[methods.overview]\nmodel = "builtin:digits-cnn"\n'.encode("latin-1"))
    _one_line_error(cli.invoke(app, ["plan", str(cfg)]), "not UTF-8")


def test_internal_errors_are_one_line_without_verbose_and_a_traceback_with_it(tmp_path, monkeypatch):
    from robustsuite import run as run_mod

    def boom(*a, **k):
        raise RuntimeError("an internal bug")

    monkeypatch.setattr(run_mod, "plan", boom)
    cfg = _config(tmp_path, '[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    res = cli.invoke(app, ["plan", str(cfg)])
    assert res.exit_code == 1 and "internal error: RuntimeError: an internal bug" in res.output
    assert "--verbose" in res.output and res.exception is None or isinstance(res.exception, SystemExit)
    res = cli.invoke(app, ["--verbose", "plan", str(cfg)])
    assert isinstance(res.exception, RuntimeError)  # typer's runner keeps it: the traceback is printed


def test_report_of_an_old_schema_it_cannot_read_names_the_version(tmp_path):
    import json

    (tmp_path / "report.json").write_text(json.dumps({
        "schema_version": "1.0", "run": {"versions": {"robustsuite": "0.1.0"}},
        "sections": {"certcal": {"title": "x", "metrics": [0.1, 0.2]}}}))
    _one_line_error(cli.invoke(app, ["report", str(tmp_path)]), "report schema '1.0'",
                    f"robustsuite collect {tmp_path}")


def test_uncspan_refuses_a_three_class_model_for_autoattack_with_a_setting_the_config_can_express():
    from robustsuite import ConfigError, runners

    uncspan = runners.get("uncspan")
    with pytest.raises(ConfigError, match=r"has 3 classes.*robust_attack = \"pgd\""):
        uncspan.check_classes({"model": "torch:m.pt"}, 3)
    uncspan.check_classes({"model": "torch:m.pt", "config": {"leaderboard": {"robust_attack": "pgd"}}}, 3)
    uncspan.check_classes({"model": "torch:m.pt"}, 10)


def test_plan_runs_each_methods_class_count_check(tmp_path, monkeypatch):
    from robustsuite import ConfigError, runners

    seen = []

    def refuse(params, k):
        seen.append(k)
        raise ConfigError(f"[methods.overview] needs more than {k} classes")

    monkeypatch.setattr(runners.get("overview"), "check_classes", refuse)
    cfg = _config(tmp_path, '[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    _one_line_error(cli.invoke(app, ["plan", str(cfg)]), "needs more than 10 classes")
    assert seen == [10]
