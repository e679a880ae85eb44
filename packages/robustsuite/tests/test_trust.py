"""Regression tests for issue 12, items 1-4: results a user can trust on their own models and data."""

from __future__ import annotations

import csv
import json
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

# --- item 1: unit identity and work checkpoints -----------------------------------------------------


@pytest.fixture
def counting_overview(monkeypatch):
    """The overview runner replaced by one that checkpoints in ``ctx.work_dir()`` like the method runners."""
    calls = []

    def fake(ctx, params):
        cached = ctx.work_dir() / "result.json"
        if cached.is_file():
            value = json.loads(cached.read_text())["value"]
        else:
            n_bins = params["config"].get("n_bins")
            calls.append((params["model"], n_bins, ctx.seed))
            value = float(n_bins or 0) + ctx.seed + 100 * len(params["model"])
            cached.write_text(json.dumps({"value": value}))
        return Section("t", f"value {value}", metrics={"value": value})

    monkeypatch.setattr(runners.get("overview"), "run", fake)
    return calls


def _cfg(models, n_bins=15, seed=0):
    return {"seed": seed, "methods": {"overview": {"models": models, "dataset": "builtin:digits",
                                                   "config": {"n_bins": n_bins}}}}


def _values(report):
    return sorted(s["metrics"]["value"]["value"] for s in report["sections"].values())


def test_changed_parameter_is_recomputed_not_read_from_old_work(tmp_path, counting_overview):
    ckpt = str(uf.digits_cnn_checkpoint(tmp_path / "m.pt"))
    spec = f"torch:{ckpt}#digits-cnn"
    first = run_mod.execute(_cfg([spec], n_bins=15), tmp_path / "run", progress=False)
    second = run_mod.execute(_cfg([spec], n_bins=10), tmp_path / "run", progress=False)
    assert len(counting_overview) == 2
    assert _values(first) != _values(second)


def test_same_config_twice_is_fully_reused(tmp_path, counting_overview):
    ckpt = str(uf.digits_cnn_checkpoint(tmp_path / "m.pt"))
    cfg = _cfg([f"torch:{ckpt}#digits-cnn"])
    a = run_mod.execute(cfg, tmp_path / "run", progress=False)
    b = run_mod.execute(cfg, tmp_path / "run", progress=False)
    assert len(counting_overview) == 1 and _values(a) == _values(b)


def test_two_models_of_one_method_never_share_work(tmp_path, counting_overview):
    a = str(uf.digits_cnn_checkpoint(tmp_path / "a.pt", seed=1))
    b = str(uf.digits_cnn_checkpoint(tmp_path / "bb.pt", seed=2))
    report = run_mod.execute(_cfg([f"torch:{a}#digits-cnn", f"torch:{b}#digits-cnn"]), tmp_path / "run",
                             progress=False)
    assert len(counting_overview) == 2
    assert len(set(_values(report))) == 2


def test_seed_change_reuses_a_unit_that_does_not_depend_on_the_seed(tmp_path, counting_overview):
    """The overview is SEEDED = False: its identity holds no seed, so a new seed reuses it (a seeded unit's identity
    holds its seed: test_experiment_adapter)."""
    ckpt = str(uf.digits_cnn_checkpoint(tmp_path / "m.pt"))
    spec = f"torch:{ckpt}#digits-cnn"
    run_mod.execute(_cfg([spec], seed=0), tmp_path / "run", progress=False)
    report = run_mod.execute(_cfg([spec], seed=1), tmp_path / "run", progress=False)
    assert [c[2] for c in counting_overview] == [0]
    assert report["run"]["seed"] == 1


def test_changed_checkpoint_content_is_recomputed_and_identity_recorded(tmp_path, counting_overview):
    ckpt = tmp_path / "m.pt"
    uf.digits_cnn_checkpoint(ckpt, seed=1)
    cfg = _cfg([f"torch:{ckpt}#digits-cnn"])
    run_mod.execute(cfg, tmp_path / "run", progress=False)
    uf.digits_cnn_checkpoint(ckpt, seed=2)  # same path, new weights
    run_mod.execute(cfg, tmp_path / "run", progress=False)
    assert len(counting_overview) == 2
    unit_files = sorted((tmp_path / "run" / "units").glob("*.json"))
    assert len(unit_files) == 2
    ident = json.loads(unit_files[0].read_text())["unit"]["identity"]
    assert {"method", "params", "seed", "local_files", "versions"} <= set(ident)
    config = ident["params"]["config"]
    assert config["n_bins"] == 15 and "split" in config  # every parameter after defaults
    assert str(ckpt) in json.dumps(ident["local_files"])
    assert "robustsuite" in ident["versions"] and "certcal" in ident["versions"]


def test_unrelated_changes_keep_the_identity(tmp_path):
    cfg = _cfg(["builtin:digits-cnn"])
    a = run_mod.plan(cfg)[0].id
    b = run_mod.plan(cfg | {"device": "cpu"})[0].id
    assert a == b


# --- item 2: label mapping ---------------------------------------------------------------------------


def _write_csv(path: Path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def reversed_label_model(tmp_path_factory):
    """An HF model with labels {0: 'zebra', 1: 'apple'} (not alphabetical) and a CSV it labels 100 % right."""
    from robustsuite import load_model

    root = tmp_path_factory.mktemp("rev")
    sample = uf.texts(40, seed=3)
    d = uf.bert_dir(root / "model", {0: "zebra", 1: "apple"}, sample_texts=sample)
    pred = load_model(f"hf:{d}")(sample).argmax(1)
    assert 0 < pred.sum() < len(pred)  # both classes predicted
    names = {0: "zebra", 1: "apple"}
    path = _write_csv(root / "data.csv", [[t, names[int(p)]] for t, p in zip(sample, pred, strict=True)])
    return d, path


def test_reversed_label_order_model_scores_its_real_accuracy(tmp_path, reversed_label_model):
    d, path = reversed_label_model
    cfg = {"methods": {"overview": {"model": f"hf:{d}", "dataset": f"csv:{path}"}}}
    report = run_mod.execute(cfg, tmp_path / "run", progress=False)
    (sec,) = report["sections"].values()
    assert sec["metrics"]["accuracy"]["value"] == 1.0


def test_unknown_dataset_label_is_a_clear_error_before_any_unit_runs(tmp_path, reversed_label_model):
    d, _ = reversed_label_model
    path = _write_csv(tmp_path / "d.csv", [["good film", "zebra"], ["bad film", "mango"]] * 10)
    cfg = {"methods": {"overview": {"model": f"hf:{d}", "dataset": f"csv:{path}"}}}
    with pytest.raises(ValueError, match="mango") as err:
        run_mod.execute(cfg, tmp_path / "run", progress=False)
    assert "zebra" in str(err.value) and "apple" in str(err.value) and not (tmp_path / "run").exists()


def test_explicit_labels_map_string_labels_for_unnamed_models(tmp_path):
    ckpt = uf.digits_cnn_checkpoint(tmp_path / "m.pt", num_classes=2)
    from robustsuite.runners import RunContext

    rows = [["x", "b"], ["y", "a"]] * 10
    path = _write_csv(tmp_path / "d.csv", rows)
    ctx = RunContext(run_dir=tmp_path, method="overview", model_spec=f"torch:{ckpt}#digits-cnn", labels=["b", "a"])
    ds = ctx.dataset(f"csv:{path}")
    assert ds.classes == ("b", "a")
    assert {(t, int(y)) for t, y in zip(ds.test.x, ds.test.y, strict=True)} <= {("x", 0), ("y", 1)}
    ctx2 = RunContext(run_dir=tmp_path, method="overview", model_spec=f"torch:{ckpt}#digits-cnn")
    with pytest.raises(ValueError, match="labels"):
        ctx2.dataset(f"csv:{path}")  # names but nothing to map them through: never guessed


# --- item 3: model specs ------------------------------------------------------------------------------


def test_torch_spec_with_path_and_arch_renders_a_report(tmp_path):
    ckpt = uf.digits_cnn_checkpoint(tmp_path / "my models" / "cnn.v1.pt")
    cfg = {"methods": {"overview": {"model": f"torch:{ckpt}#digits-cnn", "dataset": "builtin:digits"}}}
    report = run_mod.execute(cfg, tmp_path / "run", progress=False)
    assert [u["status"] for u in report["units"]] == ["done"], report["units"]
    (sec,) = report["sections"].values()
    fig = tmp_path / "run" / sec["figures"][0]["path"]
    assert fig.is_file() and fig.parent.parent == tmp_path / "run" / "figures"
    assert "report.html" in {p.name for p in (tmp_path / "run").iterdir()}


def test_num_classes_from_the_checkpoint_not_a_layer_name(tmp_path):
    import torchvision

    from robustsuite import load_model

    net = torchvision.models.mobilenet_v3_small(num_classes=5)  # classifier is 'classifier.3', no fc/head
    torch.save(net.state_dict(), tmp_path / "m.pt")
    model = load_model(f"torch:{tmp_path / 'm.pt'}#torchvision.mobilenet_v3_small")
    assert model(torch.rand(2, 3, 32, 32)).shape == (2, 5)


def test_hf_max_length_follows_the_tokenizer_and_can_be_overridden(tmp_path):
    from robustsuite import load_model

    d = uf.bert_dir(tmp_path / "m", {0: "a", 1: "b"}, model_max_length=300)
    assert load_model(f"hf:{d}").max_length == 300
    assert load_model(f"hf:{d}?max_length=40").max_length == 40
    d2 = uf.bert_dir(tmp_path / "m2", {0: "a", 1: "b"}, model_max_length=int(1e30))  # "unset" sentinel
    assert load_model(f"hf:{d2}").max_length == 512  # capped


def test_tokenizer_without_pad_token_falls_back_to_eos(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2ForSequenceClassification, PreTrainedTokenizerFast

    from robustsuite import load_model

    vocab = {w: i for i, w in enumerate(["<eos>", "<unk>", *uf.WORDS])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", unk_token="<unk>", model_max_length=64)
    assert tok.pad_token is None
    cfg = GPT2Config(vocab_size=len(vocab), n_embd=16, n_layer=1, n_head=2, n_positions=64, num_labels=3,
                     eos_token_id=0, bos_token_id=0)
    torch.manual_seed(0)
    GPT2ForSequenceClassification(cfg).save_pretrained(tmp_path / "gpt")
    tok.save_pretrained(tmp_path / "gpt")
    clf = load_model(f"hf:{tmp_path / 'gpt'}")
    batch = clf(["good film", "a very very bad poor movie plot"])
    one = np.concatenate([clf(["good film"]), clf(["a very very bad poor movie plot"])])
    assert batch.shape == (2, 3)
    np.testing.assert_allclose(batch, one, atol=1e-5)  # padding does not change the logits


def test_user_runs_never_load_unnamed_builtin_models(tmp_path, monkeypatch):
    from robustsuite.zoo import shipped

    trained = []
    monkeypatch.setattr(shipped, "load", lambda name, *a, **kw: trained.append(name))

    def needs_second_model(ctx, params):
        ctx.model("builtin:digits-cnn-at")
        return Section("t", "s")

    monkeypatch.setattr(runners.get("overview"), "run", needs_second_model)
    ckpt = uf.digits_cnn_checkpoint(tmp_path / "m.pt")
    cfg = {"methods": {"overview": {"model": f"torch:{ckpt}#digits-cnn", "dataset": "builtin:digits"}}}
    report = run_mod.execute(cfg, tmp_path / "run", progress=False)
    assert trained == []
    (unit,) = report["units"]
    assert unit["status"] == "failed" and "builtin:digits-cnn-at" in unit["error"]


# --- item 4: report honesty ------------------------------------------------------------------------


def test_failed_unit_appears_everywhere_with_its_escaped_message(tmp_path, monkeypatch):
    def boom(ctx, params):
        raise RuntimeError("shape [3, 8] <b>not</b> [1, 8]")

    monkeypatch.setattr(runners.get("overview"), "run", boom)
    cfg = tmp_path / "c.toml"
    cfg.write_text('[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"])
    assert res.exit_code == 1
    assert "[3, 8]" in res.output  # rich markup did not swallow it
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["units"][0]["status"] == "failed" and "[3, 8]" in report["units"][0]["error"]
    html = (tmp_path / "run" / "report.html").read_text()
    assert "shape [3, 8] &lt;b&gt;not&lt;/b&gt; [1, 8]" in html and "<b>not</b>" not in html
    assert "failed" in html
    md = (tmp_path / "run" / "report.md").read_text()
    assert "[3, 8]" in md and "failed" in md


def _lock_above(*starts: Path) -> str | None:
    """SHA-256 of the first ``uv.lock`` in ``starts`` or their parents, searched in that order."""
    import hashlib

    for start in starts:
        for d in (start, *start.parents):
            if (d / "uv.lock").is_file():
                return hashlib.sha256((d / "uv.lock").read_bytes()).hexdigest()
    return None


def test_provenance_names_packages_lock_and_only_the_users_git(tmp_path, monkeypatch, counting_overview):
    """The lock is the one beside robustsuite's sources (a workspace checkout), else the one above the working
    directory (the user's project); installed from a wheel outside any project there is none."""
    import robustsuite

    src = Path(robustsuite.__file__).resolve().parent
    monkeypatch.chdir(tmp_path)  # not inside any git repository
    report = run_mod.execute(_cfg(["builtin:digits-cnn"]), tmp_path / "run", progress=False)
    run = report["run"]
    for pkg in ("robustsuite", "zeroe-perturb", "iortemp", "uncspan", "transduct-attack", "certcal"):
        assert run["versions"][pkg]
    assert run["uv_lock_sha256"] == _lock_above(src, tmp_path)
    assert run["uv_lock_sha256"] is None or len(run["uv_lock_sha256"]) == 64
    assert run.get("git") is None and run["user_git"] is None
    import subprocess

    repo = tmp_path / "mine"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=repo, check=True)
    (repo / "uv.lock").write_text("version = 1\n# the user's project lock\n")
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")  # below the user's project root: its lock is found upwards
    report = run_mod.execute(_cfg(["builtin:digits-cnn"]), tmp_path / "run", progress=False)
    assert len(report["run"]["user_git"]["commit"]) == 40
    expected = _lock_above(src, repo)
    assert expected is not None and report["run"]["uv_lock_sha256"] == expected
    assert "your" in (tmp_path / "run" / "report.md").read_text().lower()


def test_config_errors_are_not_masked(tmp_path):
    with pytest.raises(ConfigError):
        run_mod.plan({"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits",
                                               "n_bin": 3}}})


def test_local_paths_behind_every_spec_form_are_found(tmp_path, monkeypatch):
    from robustsuite.loaders import local_path

    ckpt = uf.digits_cnn_checkpoint(tmp_path / "a #b.pt")
    assert local_path(f"torch:{ckpt}#digits-cnn") == ckpt
    assert local_path(f"torch:{ckpt}") == ckpt
    (tmp_path / "d.csv").write_text("text,label\n")
    assert local_path(f"csv:{tmp_path / 'd.csv'}?text=t") == tmp_path / "d.csv"
    monkeypatch.setenv("ROBUSTBENCH_MODEL_DIR", str(tmp_path / "rb"))
    (tmp_path / "rb" / "cifar10" / "Linf").mkdir(parents=True)
    (tmp_path / "rb" / "cifar10" / "Linf" / "Standard.pt").write_bytes(b"x")
    assert local_path("robustbench:cifar10/Linf/Standard") == tmp_path / "rb" / "cifar10" / "Linf" / "Standard.pt"
    assert local_path("builtin:digits-cnn") is None and local_path("hf:some/hub-name") is None
