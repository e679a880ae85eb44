"""Sharded units (issue 18, item 1): a unit's data-parallel work (certcal's certification) split into shards that
run as separate tasks (Ray, `run-unit --shard K`) gives the same section as one process, for any shard count."""

from __future__ import annotations

import json
import types

import pytest
from typer.testing import CliRunner

from robustsuite import run as run_mod
from robustsuite.cli import app
from robustsuite.errors import ConfigError
from robustsuite.run.executors import RayExecutor

cli = CliRunner()

CONFIG = """
[methods.certcal]
model = "builtin:digits-cnn"
dataset = "builtin:digits"
noise_models = ["builtin:digits-cnn", "builtin:digits-cnn"]
[methods.certcal.config]
test_samples = 11
smoothing = {sigmas = [0.25, 0.5]}
calibration = {radii = [0.0, 0.25], n_boot = 20}
acce = {steps = 20}
ace = {steps = 1}
act = {enabled = false}
[methods.certcal.config.certify]
noise_stream = "per_input"
n0 = 20
n = 300
batch_size = 128
"""  # appended lines (shards = N) land in [methods.certcal.config.certify]
LIMIT = "60"


def _cfg(tmp_path, shards: int, extra: str = "", name: str = "c.toml"):
    path = tmp_path / name
    path.write_text(CONFIG + f"shards = {shards}\n" + extra)
    return path


def _sections(report: dict) -> dict:
    out = {}
    for key, s in json.loads(json.dumps(report["sections"])).items():
        s.pop("seconds", None)
        out[key] = s
    return out


def _run(cfg, out, *extra):
    res = cli.invoke(app, ["run", str(cfg), "--out", str(out), "--limit", LIMIT, "--no-progress", *extra])
    assert res.exit_code == 0, res.output
    return json.loads((out / "report.json").read_text())


def test_shards_leave_the_identity_alone_and_need_the_per_input_stream(tmp_path):
    one = run_mod.plan(run_mod.load_config(_cfg(tmp_path, 1)))
    three = run_mod.plan(run_mod.load_config(_cfg(tmp_path, 3)))
    assert [u.id for u in one] == [u.id for u in three]  # the result does not depend on the shard count
    assert [run_mod.shard_count(u) for u in three] == [3]
    batch = (tmp_path / "b.toml")
    batch.write_text(CONFIG.replace('noise_stream = "per_input"', 'noise_stream = "batch"') + "shards = 2\n")
    with pytest.raises(ConfigError, match=r"\[methods.certcal\].config: certify: .*shards = 2 needs noise_stream = 'per_input'"):
        run_mod.plan(run_mod.load_config(batch))
    with pytest.raises(ConfigError, match="shards"):
        run_mod.plan(run_mod.load_config(_cfg(tmp_path, 0)))


def test_shards_run_apart_give_the_one_process_section(tmp_path):
    """The batch-scheduler path: plan, each shard as its own `run-unit --shard K` process, then the unit."""
    whole = _run(_cfg(tmp_path, 1), tmp_path / "whole")
    cfg = _cfg(tmp_path, 3)
    out = tmp_path / "sharded"
    res = cli.invoke(app, ["plan", str(cfg), "--out", str(out), "--write", "--limit", LIMIT])
    assert res.exit_code == 0, res.output
    (uid,) = json.loads((out / "plan.json").read_text())["units"]
    assert json.loads((out / "plan.json").read_text())["shards"] == {uid: 3}
    for k in (2, 0, 1):  # any order
        res = cli.invoke(app, ["run-unit", str(out), uid, "--shard", str(k)])
        assert res.exit_code == 0 and f"shard {k}: done" in res.output, res.output
    shard_files = sorted(p.name for p in (out / "work").rglob("cert-*.shard-*.npz"))
    assert len(shard_files) == 6 and all("-of-3.npz" in f for f in shard_files)  # 2 sigmas x 3 shards
    res = cli.invoke(app, ["run-unit", str(out), uid])
    assert res.exit_code == 0, res.output
    res = cli.invoke(app, ["collect", str(out)])
    assert res.exit_code == 0, res.output
    sharded = json.loads((out / "report.json").read_text())
    assert _sections(sharded) == _sections(whole)
    # a local run with shards = 2 computes its shards itself: the same section again
    assert _sections(_run(_cfg(tmp_path, 2, name="two.toml"), tmp_path / "two")) == _sections(whole)
    res = cli.invoke(app, ["run-unit", str(out), uid, "--shard", "0"])
    assert res.exit_code == 0 and "already finished" in res.output


def test_run_unit_rejects_a_shard_out_of_range(tmp_path):
    out = tmp_path / "p"
    assert cli.invoke(app, ["plan", str(_cfg(tmp_path, 2)), "--out", str(out), "--write"]).exit_code == 0
    (uid,) = json.loads((out / "plan.json").read_text())["units"]
    res = cli.invoke(app, ["run-unit", str(out), uid, "--shard", "2"])
    assert res.exit_code == 2 and "shard must be an integer in [0, 2)" in " ".join(res.output.split())
    assert not (out / "work").exists()
    # a unit without shards (one shard, or a method that does not split) says so instead of failing inside
    one = tmp_path / "one"
    assert cli.invoke(app, ["plan", str(_cfg(tmp_path, 1)), "--out", str(one), "--write"]).exit_code == 0
    (uid,) = json.loads((one / "plan.json").read_text())["units"]
    res = cli.invoke(app, ["run-unit", str(one), uid, "--shard", "0"])
    assert res.exit_code == 2 and "has no shards" in " ".join(res.output.split()) and "shards = 1" in res.output
    overview = tmp_path / "ov.toml"
    overview.write_text('[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\n')
    assert cli.invoke(app, ["plan", str(overview), "--out", str(tmp_path / "ov"), "--write"]).exit_code == 0
    (uid,) = json.loads((tmp_path / "ov" / "plan.json").read_text())["units"]
    res = cli.invoke(app, ["run-unit", str(tmp_path / "ov"), uid, "--shard", "0"])
    assert res.exit_code == 2 and "does not split its work" in " ".join(res.output.split())


class _Ref:
    def __init__(self, value):
        self.value = value


class _FakeRay:
    """Enough of Ray's API to watch what the executor submits; tasks run at once, in submission order."""

    exceptions = types.SimpleNamespace(RayError=RuntimeError)

    def __init__(self):
        self.submitted: list[tuple[str, dict, list]] = []

    def is_initialized(self):
        return True

    def remote(self, fn):
        fake = self

        class Task:
            def options(self, *, name, **resources):
                def call(*args):
                    fake.submitted.append((name, resources, [a for a in args if isinstance(a, _Ref)]))
                    return _Ref(fn(*(a.value if isinstance(a, _Ref) else a for a in args)))
                return types.SimpleNamespace(remote=call)
        return Task()

    def wait(self, pending, num_returns=1):
        return pending[:num_returns], pending[num_returns:]

    def get(self, ref):
        return ref.value


def test_ray_executor_submits_each_shard_as_a_task_the_unit_waits_for(tmp_path):
    config = run_mod.load_config(_cfg(tmp_path, 3, '[methods.certcal.resources]\nnum_cpus = 2\n')) | {"limit": 60}
    ex = object.__new__(RayExecutor)
    ex._ray, ex.address, ex.num_cpus, ex._started = _FakeRay(), "fake", None, True
    record = run_mod.execute(config, tmp_path / "out", progress=False, executor=ex)
    names = [n for n, _, _ in ex._ray.submitted]
    (uid,) = [u["id"] for u in record["units"]]
    assert names == [f"robustsuite:{uid}:shard-{k}-of-3" for k in range(3)] + [f"robustsuite:{uid}"]
    assert all(res == {"num_cpus": 2, "num_gpus": 0} for _, res, _ in ex._ray.submitted)
    shard_refs = [r for _, _, refs in ex._ray.submitted[:3] for r in refs]
    assert not shard_refs and len(ex._ray.submitted[3][2]) == 3  # the unit's task takes the three shards' refs
    assert [r.value for r in ex._ray.submitted[3][2]] == ["done"] * 3
    whole = _run(_cfg(tmp_path, 1, name="one.toml"), tmp_path / "whole")
    assert _sections(record) == _sections(whole)
