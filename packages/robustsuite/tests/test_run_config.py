"""Issue 34 item 7: the run config is parsed once at the door into a frozen, typed RunConfig (TOML, --set and the CLI's
options merged and validated in one place); plan, execute and the executors take that object."""

from __future__ import annotations

import dataclasses

import pytest

from robustsuite import run as run_mod
from robustsuite.errors import ConfigError
from robustsuite.run import RunConfig, run_config


def test_the_door_merges_sets_and_options_into_one_frozen_typed_object():
    cfg = run_config({"methods": {"overview": {}}}, sets=["seed=3"], seeds=2, limit=5, log_samples="jsonl")
    assert isinstance(cfg, RunConfig)
    assert (cfg.seed, cfg.seeds, cfg.limit, cfg.log_format, cfg.device) == (3, 2, 5, "jsonl", "cpu")
    assert cfg.raw == {"methods": {"overview": {}}, "seed": 3, "seeds": 2, "limit": 5, "log_samples": "jsonl"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.seed = 1  # type: ignore[misc]
    assert RunConfig.parse(cfg) is cfg  # parsed once: a RunConfig passes through
    (method,) = cfg.methods
    assert method.name == "overview" and method.deterministic and method.targets
    assert method.resources == {"num_cpus": 1, "num_gpus": 0}
    assert run_config({"methods": {"overview": {}}}, log_samples=None).log_format is None


@pytest.mark.parametrize(("config", "message"), [
    ({"method": {}}, "unknown top-level config keys ['method']"),
    ({"methods": {}}, "config needs a [methods.<name>] table"),
    ({"methods": {"overveiw": {}}}, "did you mean 'overview'?"),
    ({"methods": {"overview": {"modle": "builtin:digits-cnn"}}}, "did you mean 'model'?"),
    ({"methods": {"overview": {}}, "seeds": 0}, "seeds"),
    ({"methods": {"overview": {}}, "resources": {"num_cpus": 0}}, "resources.num_cpus must be a number > 0"),
    ({"methods": {"overview": {}}, "log_samples": "csv"}, "log_samples must be one of"),
    ({"methods": {"overview": {}}, "device": "tpu"}, "device must be 'cpu', 'cuda', 'cuda:N' or 'auto'"),
])
def test_a_bad_config_fails_at_the_door_naming_the_key(config, message):
    with pytest.raises(ConfigError) as e:
        RunConfig.parse(config)
    assert message in str(e.value)
    with pytest.raises(ConfigError):  # plan takes the object; a dict is parsed first, with the same message
        run_mod.plan(config)
