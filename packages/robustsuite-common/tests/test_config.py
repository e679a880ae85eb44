"""Typed experiment configs: strict types, bounds, nesting, unknown keys with suggestions, schema rows."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest

from robustsuite_common.config import (
    ConfigError,
    Float,
    Int,
    Str,
    config,
    config_hash,
    from_dict,
    override,
    param,
    schema,
    schema_rows,
    to_dict,
)


@config
class Inner:
    """A group (paper §5)."""

    epochs: Int = param(3, ge=1, unit="epochs", doc="fine-tuning epochs", paper="§5")
    lr_grid: tuple[Float, ...] = param((1e-3, 2e-3), doc="learning rates", unit="1", min_length=1)
    bound: Literal["cdf", "standard"] = param("cdf", doc="confidence certificate")
    temperature: Float = param(1.0, gt=0, allow_inf=False, doc="softmax temperature", unit="1")

    RENAMED = {"n_epochs": "epochs"}  # an old field name, accepted one release with a DeprecationWarning


@config
class Outer:
    inner: Inner = param(Inner(), doc="the group")
    n: Int = param(5, ge=1, doc="test points", unit="points")
    name: Str = param("x", doc="a name")

    def __post_init__(self) -> None:
        if self.n > 1000 and self.inner.epochs > 100:
            raise ValueError("n and inner.epochs cannot both be large")


def test_from_dict_nests_converts_lists_and_keeps_defaults():
    cfg = from_dict(Outer, {"inner": {"epochs": 4, "lr_grid": [1, 2]}, "n": 7})
    assert cfg.inner == Inner(epochs=4, lr_grid=(1.0, 2.0))
    assert cfg.n == 7 and cfg.name == "x"
    assert to_dict(cfg) == {"inner": {"epochs": 4, "lr_grid": [1.0, 2.0], "bound": "cdf", "temperature": 1.0},
                            "n": 7, "name": "x"}
    assert from_dict(Outer, to_dict(cfg)) == cfg
    hash(cfg)  # frozen and hashable
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.n = 3


@pytest.mark.parametrize("data, message", [
    ({"n": "3"}, "n: Input should be a valid integer"),
    ({"n": True}, "n: Input should be a valid integer"),
    ({"n": 3.5}, "n: Input should be a valid integer"),
    ({"n": 0}, "n: Input should be greater than or equal to 1"),
    ({"inner": {"epochs": 0}}, "inner.epochs"),
    ({"inner": {"lr_grid": []}}, "inner.lr_grid"),
    ({"inner": {"lr_grid": ["1e-3"]}}, "inner.lr_grid.0"),
    ({"inner": {"temperature": float("nan")}}, "inner.temperature"),
    ({"inner": {"temperature": -2}}, "inner.temperature"),
    ({"inner": {"bound": "cdff"}}, "inner.bound"),
    ({"inner": {"epoch": 3}}, "unknown key 'inner.epoch'; did you mean 'epochs'"),
    ({"nn": 3}, "unknown key 'nn'; did you mean 'n'"),
    ({"n": 2000, "inner": {"epochs": 200}}, "cannot both be large"),
])
def test_bad_values_name_their_path(data, message):
    with pytest.raises(ConfigError, match="my.section") as err:
        from_dict(Outer, data, where="my.section")
    assert message in str(err.value)


def test_override_and_preset_base():
    base = Outer(n=10)
    assert override(base, {"inner.epochs": 9}).inner.epochs == 9
    assert override(base, inner__epochs=8, n=3) == Outer(inner=Inner(epochs=8), n=3)
    assert from_dict(Outer, {"name": "y"}, base=base).n == 10
    with pytest.raises(ConfigError, match="inner.epochs"):
        override(base, {"inner.epochs": -1})


def test_schema_rows_list_every_leaf_with_its_documentation():
    rows = {r["path"]: r for r in schema_rows(Outer)}
    assert list(rows) == ["inner.epochs", "inner.lr_grid", "inner.bound", "inner.temperature", "n", "name"]
    assert rows["inner.epochs"]["unit"] == "epochs" and rows["inner.epochs"]["paper"] == "§5"
    assert rows["inner.epochs"]["bounds"] == ">= 1" and rows["inner.epochs"]["default"] == 3
    assert rows["inner.temperature"]["bounds"] == "> 0"
    assert rows["n"]["description"] == "test points" and rows["n"]["type"] == "int"
    assert schema(Outer)["additionalProperties"] is False


def test_config_hash_is_stable_and_sensitive():
    a, b = Outer(), Outer(n=6)
    assert config_hash(a) == config_hash(Outer()) and len(config_hash(a)) == 12
    assert config_hash(a) != config_hash(b) and config_hash(a, 1) != config_hash(a, 2)


def test_parse_sets_reads_json_then_toml_then_the_bare_word():
    from robustsuite_common.config import parse_sets

    got = parse_sets(["a.n=3", "a.eps=[0, 0.1]", "flag=false", "name=\"x y\"", "opt=apgd", "q='single'",
                      "t={ k = 1 }", "empty="])
    assert got == {"a.n": 3, "a.eps": [0, 0.1], "flag": False, "name": "x y", "opt": "apgd", "q": "single",
                   "t": {"k": 1}, "empty": ""}
    assert type(got["a.n"]) is int and got["flag"] is False
    for bad in ("nonsense", "=3"):
        with pytest.raises(ConfigError, match="KEY=VALUE"):
            parse_sets([bad])


def test_nest_merges_into_a_copy_of_the_base():
    from robustsuite_common.config import nest

    base = {"m": {"c": {"x": 1, "y": 2}}, "seed": 0}
    got = nest({"m.c.y": 5, "m.d": [1], "seed": 3, "m.c": {"z": 0}}, base=base)
    assert got == {"m": {"c": {"x": 1, "y": 5, "z": 0}, "d": [1]}, "seed": 3}
    assert base == {"m": {"c": {"x": 1, "y": 2}}, "seed": 0}  # not changed
    with pytest.raises(ConfigError, match="'seed' is not a table"):
        nest({"seed.x": 1}, base=base)


def test_a_renamed_field_keeps_working_with_a_warning_in_nested_groups_and_overrides():
    """Issue 34: a field renamed to the vocabulary (a group's ``RENAMED``) is still read under its old name, with a
    DeprecationWarning naming both, in a nested group, through ``override`` too; old and new together is refused."""
    with pytest.warns(DeprecationWarning, match=r"config.inner: 'n_epochs' is deprecated; use 'epochs'"):
        assert from_dict(Outer, {"inner": {"n_epochs": 7}}).inner.epochs == 7
    with pytest.warns(DeprecationWarning, match="n_epochs"):
        assert override(Outer(), {"inner.n_epochs": 9}).inner.epochs == 9
    with pytest.raises(ConfigError, match=r"'n_epochs' is the old name of 'epochs'; give only 'epochs'"):
        from_dict(Outer, {"inner": {"n_epochs": 7, "epochs": 8}})
    assert "RENAMED" not in {f.name for f in dataclasses.fields(Inner)}  # not a field of the config
    assert "n_epochs" not in to_dict(from_dict(Outer, {"inner": {"epochs": 2}}))["inner"]
