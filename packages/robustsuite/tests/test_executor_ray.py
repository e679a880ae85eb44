"""Ray executor (issue 18, item 1): `run --executor ray` gives the local executor's report, a run resumes across
executors, resources are validated, and a missing Ray is named."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from _reports import CERTCAL_TINY, report_content  # noqa: E402

from robustsuite import run as run_mod  # noqa: E402
from robustsuite.cli import app  # noqa: E402
from robustsuite.errors import ConfigError  # noqa: E402
from robustsuite.run.executors import RayExecutor, compute_remote, make_executor  # noqa: E402
from robustsuite.run.lock import try_acquire  # noqa: E402
from robustsuite.run.resources import parse_memory, unit_resources  # noqa: E402

cli = CliRunner()

# the 8x8 digits with tiny budgets: an overview unit (bootstrap intervals) and a certcal unit (Monte-Carlo noise
# draws, ADMM, attacks), so that seeded randomness inside the units is compared too
CONFIG = """
[methods.overview]
model = "builtin:digits-cnn"
dataset = "builtin:digits"
config = {n_boot = 100}
""" + CERTCAL_TINY
LIMIT = "60"


def _config_file(tmp_path, text: str = CONFIG):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def _run(cfg, out, *extra):
    res = cli.invoke(app, ["run", str(cfg), "--out", str(out), "--limit", LIMIT, "--no-progress", *extra])
    assert res.exit_code == 0, res.output
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray with 2 CPUs for the module (the executors reuse a Ray this process is connected to).

    Its workers compute with this process's number of intra-op threads (they read OMP_NUM_THREADS when torch
    starts), so that the Ray and the local report can be compared bit for bit: another test module may have set
    this process's threads (torch.set_num_threads) to something other than the environment's OMP_NUM_THREADS.
    """
    pytest.importorskip("ray")
    import torch

    before = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(torch.get_num_threads())  # inherited by the raylet and its workers
    ex = RayExecutor(num_cpus=2, start_attempts=5)  # a loaded CI machine can miss Ray's startup window
    try:
        ex._connect()
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before
    import ray

    assert ray.cluster_resources().get("CPU") == 2
    yield ex
    ex.close()


# ---- without Ray --------------------------------------------------------------------------------------------

def test_missing_ray_is_named_with_the_option(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r"--executor ray needs Ray.*robustsuite\[ray\]"):
        make_executor("ray")
    out = tmp_path / "out"
    res = cli.invoke(app, ["run", str(_config_file(tmp_path)), "--out", str(out), "--executor", "ray"])
    assert res.exit_code == 2
    assert "--executor ray needs Ray" in " ".join(res.output.split())
    assert not (out / "units").exists()  # rejected before any work


def test_bad_executor_and_address_are_rejected_before_work(tmp_path):
    cfg = _config_file(tmp_path)
    for extra, msg in ((["--executor", "dask"], "--executor must be one of ['local', 'ray']"),
                       (["--address", "auto"], "--address needs --executor ray")):
        res = cli.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), *extra])
        assert res.exit_code == 2 and msg in " ".join(res.output.split()), res.output
    assert not (tmp_path / "o" / "units").exists()
    res = cli.invoke(app, ["demo", "--methods", "overview", "--out", str(tmp_path / "d"), "--executor", "dask"])
    assert res.exit_code == 2 and "--executor must be one of" in " ".join(res.output.split()), res.output
    assert not (tmp_path / "d" / "units").exists()


def test_unit_resources_defaults_overrides_and_errors():
    cfg = {"methods": {"overview": {}, "certcal": {"resources": {"num_cpus": 4, "memory": "2GiB"}}}}
    assert unit_resources(cfg, "overview") == {"num_cpus": 1, "num_gpus": 0}
    assert unit_resources(cfg, "certcal") == {"num_cpus": 4, "num_gpus": 0, "memory": 2 * 2**30}
    gpu = {"device": "cuda", "resources": {"num_cpus": 2}, "methods": {"overview": {"resources": {"num_gpus": 0.5}}}}
    assert unit_resources(gpu, "overview") == {"num_cpus": 2, "num_gpus": 0.5}
    assert unit_resources({"device": "cuda:1", "methods": {}}, "certcal")["num_gpus"] == 1
    assert parse_memory("500 MB") == 500 * 10**6 and parse_memory(1024) == 1024 and parse_memory("1.5KiB") == 1536
    for bad, msg in (({"resources": {"cpus": 1}}, r"resources: unknown keys \['cpus'\]"),
                     ({"resources": {"num_cpus": 0}}, r"resources.num_cpus must be a number > 0"),
                     ({"resources": {"num_gpus": -1}}, r"resources.num_gpus must be a number >= 0"),
                     ({"resources": {"num_cpus": True}}, r"resources.num_cpus"),
                     ({"resources": {"cpu_seconds": 0}}, r"resources.cpu_seconds must be a number > 0"),
                     ({"resources": {"memory": "4 parsecs"}}, r"resources.memory must be"),
                     ({"resources": 3}, r"resources must be a table"),
                     ({"methods": {"overview": {"resources": {"memory": 0}}}}, r"methods.overview.resources.memory")):
        with pytest.raises(ConfigError, match=msg):
            run_mod.plan({"methods": {"overview": {}}} | bad)


def test_costliest_units_start_first_and_cost_is_no_ray_resource():
    """``resources.cpu_seconds`` orders the units for --workers (longest first, ties in plan order; without it a
    unit weighs its shard count) and is never handed to Ray as a resource."""
    from robustsuite.run.config import RunConfig
    from robustsuite.run.units import costliest_first, unit_cost

    digits = {"model": "builtin:digits-cnn", "dataset": "builtin:digits"}
    cfg = RunConfig.parse({"methods": {
        "overview": {"targets": [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", "builtin:digits"]],
                     "resources": {"cpu_seconds": 5}},
        "certcal": {**digits, "noise_models": ["builtin:digits-cnn"], "resources": {"cpu_seconds": 80, "num_cpus": 1}},
        "uncspan": digits}})
    units = run_mod.plan(cfg)
    assert [u.method for u in units] == ["overview", "overview", "certcal", "uncspan"]
    assert [unit_cost(u, cfg) for u in units] == [5.0, 5.0, 80.0, 1.0]
    assert costliest_first(units, cfg) == [2, 0, 1, 3]
    plain = RunConfig.parse({"methods": {"overview": {}, "uncspan": digits}})
    planned = run_mod.plan(plain)
    assert costliest_first(planned, plain) == list(range(len(planned)))  # no hint: the plan's order
    assert cfg.resources("certcal")["cpu_seconds"] == 80


def test_resources_are_not_part_of_a_units_identity():
    base = {"methods": {"overview": {"config": {"n_boot": 100}}}}
    with_res = {"resources": {"num_cpus": 2}, "methods": {"overview": {"config": {"n_boot": 100}, "resources": {"num_gpus": 1}}}}
    assert [u.id for u in run_mod.plan(base)] == [u.id for u in run_mod.plan(with_res)]
    assert all("resources" not in u.params for u in run_mod.plan(with_res))


def test_worker_refuses_a_unit_it_would_compute_differently(tmp_path):
    """The Ray task recomputes the unit's identity on the worker (package versions, local file hashes) and fails
    the unit, naming what differs, instead of writing a result under an identity it does not have."""
    unit = run_mod.plan({"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits"}}})[0]
    planned = dict(unit.identity, versions={**unit.identity["versions"], "torch": "0.0.1"})
    forged = run_mod.Unit(unit.method, unit.model, unit.dataset, unit.params, unit.seed, planned)
    record, status = compute_remote(forged, str(tmp_path), "cpu", None, None, str(tmp_path), "t")
    assert status == "failed" and "versions" in record["error"] and "0.0.1" in record["error"]
    assert run_mod.failed_path(tmp_path, forged).is_file()
    assert not run_mod.unit_path(tmp_path, forged).exists()


def test_worker_reports_a_unit_locked_elsewhere(tmp_path):
    unit = run_mod.plan({"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits"}}})[0]
    with try_acquire(run_mod.lock_path(tmp_path, unit)):
        assert compute_remote(unit, str(tmp_path), "cpu", None, None, str(tmp_path), "t") == (None, "locked")
    assert not run_mod.unit_path(tmp_path, unit).exists()


# ---- with a local Ray (2 CPUs) ------------------------------------------------------------------------------

@pytest.mark.slow
def test_ray_report_is_the_local_report(tmp_path, local_ray):
    cfg = _config_file(tmp_path)
    local = _run(cfg, tmp_path / "local")
    remote = _run(cfg, tmp_path / "ray", "--executor", "ray")
    assert [u["status"] for u in remote["units"]] == ["done", "done"]
    assert report_content(remote) == report_content(local)
    # the unit files too (the same records, up to the measured seconds), and the same figures
    for u in local["units"]:
        a, b = (json.loads((tmp_path / d / "units" / f"{u['id']}.json").read_text()) for d in ("local", "ray"))
        a.pop("seconds"), b.pop("seconds")
        a.pop("digest"), b.pop("digest")  # a digest of the whole record, seconds included
        assert a == b
    figs = {d: sorted(p.relative_to(tmp_path / d).as_posix() for p in (tmp_path / d / "figures").rglob("*.png"))
            for d in ("local", "ray")}
    assert figs["local"] == figs["ray"] and figs["local"]


@pytest.mark.slow
def test_a_run_resumes_across_executors(tmp_path, local_ray):
    """Units computed by Ray are reused by a local run and vice versa; each unit is computed once."""
    cfg = run_mod.load_config(_config_file(tmp_path)) | {"limit": int(LIMIT)}
    out = tmp_path / "run"
    seen: dict[str, list[str]] = {}

    def execute(config, executor):
        seen.clear()
        with executor:
            return run_mod.execute(config, out, progress=False, executor=executor,
                                   on_unit=lambda u, s: seen.setdefault(s, []).append(u.id) if s != "start" else None)

    one, two = run_mod.plan(cfg), run_mod.plan(cfg | {"seeds": 2})
    execute(cfg, make_executor("ray"))  # seed 0 on Ray
    assert sorted(seen["done"]) == sorted(u.id for u in one)
    execute(cfg | {"seeds": 2}, make_executor("local"))  # seed 1 here, seed 0 reused from Ray
    assert sorted(seen["skip"]) == sorted(u.id for u in one)
    assert sorted(seen["done"]) == sorted(u.id for u in two if u.seed == 1)
    report = execute(cfg | {"seeds": 2}, make_executor("ray"))  # everything reused: no task submitted
    assert set(seen) == {"skip"} and sorted(seen["skip"]) == sorted(u.id for u in two)
    assert [u["status"] for u in report["units"]] == ["done"] * len(two)  # the overview once (seed-independent), certcal per seed


@pytest.mark.slow
def test_infeasible_resources_are_rejected_before_submission(tmp_path, local_ray):
    cfg = _config_file(tmp_path, CONFIG + "[resources]\nnum_cpus = 3\n")
    res = cli.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--executor", "ray", "--no-progress"])
    assert res.exit_code == 2
    assert "resources.num_cpus = 3" in " ".join(res.output.split()) and "2" in res.output
    assert not list((tmp_path / "o" / "units").glob("*.json"))


@pytest.mark.slow
def test_ray_runs_shards_as_tasks_and_matches_one_local_process(tmp_path, local_ray):
    """certcal with shards = 3 on Ray (each sigma's certification in three tasks, then the unit merging them)
    gives the section of a local run with one shard."""
    sharded = CONFIG.replace('n = 100\n', 'n = 300\nnoise_stream = "per_input"\n')
    one = _run(_config_file(tmp_path, sharded + "shards = 1\n"), tmp_path / "local")
    three = _run(_config_file(tmp_path, sharded + "shards = 3\n"), tmp_path / "ray", "--executor", "ray")
    assert [u["status"] for u in three["units"]] == ["done", "done"]
    assert len(list((tmp_path / "ray" / "work").rglob("cert-*.shard-*-of-3.npz"))) == 3  # one sigma x 3 shards
    assert report_content(three)["sections"] == report_content(one)["sections"]


def test_workers_take_the_costliest_unit_first_shards_before_their_merge_and_no_more_than_n_at_once(tmp_path,
                                                                                                  monkeypatch):
    """--workers hands tasks to the pool one per idle worker, in costliest_first order; a sharded unit's shards go
    before the task that merges them, which goes next once they are done; a unit is reported started once. (The
    pool is replaced by one that records the submissions and the tasks in flight, so nothing is computed.)"""
    import concurrent.futures
    import tomllib
    from concurrent.futures import Future

    from robustsuite.run.config import RunConfig
    from robustsuite.run.executors import ProcessExecutor

    cfg = RunConfig.parse(tomllib.loads(CERTCAL_TINY + "shards = 2\nnoise_stream = \"per_input\"\n[methods.certcal.resources]\ncpu_seconds = 80\n" + """
[methods.overview]
targets = [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", "builtin:digits"]]
resources = { cpu_seconds = 5 }
[methods.uncspan]
model = "builtin:digits-cnn"
dataset = "builtin:digits"
resources = { cpu_seconds = 20 }
"""))
    jobs = run_mod.plan(cfg)
    order, in_flight, widest = [], [], [0]

    class Pool:  # tasks stay in flight until the executor waits; then the oldest one finishes
        def submit(self, fn, job, *args):
            f: Future = Future()
            order.append(job)
            in_flight.append((f, job))
            widest[0] = max(widest[0], len(in_flight))
            return f

    def wait(futures, return_when):
        f, job = in_flight.pop(0)
        f.set_result("done" if "--shard" in job else ({"id": job}, "done"))
        return {f}, set(futures) - {f}

    monkeypatch.setattr(concurrent.futures, "wait", wait)

    executor = ProcessExecutor.__new__(ProcessExecutor)
    executor._workers, executor._pool = 2, Pool()
    started = []
    out = list(executor.compute(jobs, tmp_path, config=cfg, device="cpu", progress=False, cache={},
                                on_start=lambda u: started.append(u.id)))
    ids = {u.method: u.id for u in jobs}
    overview = [u.id for u in jobs if u.method == "overview"]
    # shard 0 ends first and frees a worker for uncspan; once shard 1 ends too, the merge goes before the overview
    assert order == [f"{ids['certcal']} --shard 0", f"{ids['certcal']} --shard 1", ids["uncspan"], ids["certcal"],
                     *overview]
    assert started == [ids["certcal"], ids["uncspan"], *overview]
    assert sorted(k for k, _, _ in out) == list(range(len(jobs))) and widest[0] == 2
