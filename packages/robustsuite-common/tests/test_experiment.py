"""Results, tables, metrics, stores and splits: what every experiment module builds on."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from robustsuite_common.experiment import (
    JSON,
    NUMPY,
    TORCH,
    DirStore,
    ExperimentResult,
    MemoryStore,
    Metric,
    Split,
    Table,
    cached,
    chance_rate,
)
from robustsuite_common.intervals import IntervalError, proportion


def test_table_checks_every_interval_column():
    cols = ("model", "accuracy", "accuracy_ci_low", "accuracy_ci_high")
    Table("t", "ok", cols, ((("a", 0.5, 0.4, 0.6)),), bounds={"accuracy": (0, 1)})
    with pytest.raises(IntervalError, match="excludes"):
        Table("t", "bad", cols, (("a", 0.34, 0.39, 1.05),))
    with pytest.raises(IntervalError, match="range"):
        Table("t", "bad", cols, (("a", 0.3, -1.75, 0.5),), bounds={"accuracy": (-1, 1)})
    with pytest.raises(ValueError, match="row 0 has 2 cells"):
        Table("t", "bad", cols, (("a", 0.5),))
    with pytest.raises(ValueError, match="identifier"):
        Table("t t", "bad", cols, ())
    t = Table("t", "none cells skip", cols, (("a", None, None, None), ("b", np.float32(0.5), 0.25, 0.75)))
    assert t.rows[1][1] == 0.5 and isinstance(t.rows[1][1], float)
    assert Table.from_dict(t.to_dict()) == t
    assert t.column("model") == ["a", "b"] and t.records()[1]["accuracy"] == 0.5


def test_metric_and_result_round_trip():
    m = Metric.of(proportion(45, 100), "robust accuracy (AutoAttack)", "fraction")
    assert m.value == 0.45 and m.ci[0] < 0.45 < m.ci[1]
    with pytest.raises(IntervalError, match="differs"):
        Metric(0.5, "x", interval=proportion(45, 100))
    table = Table("t", "title", ("a", "b"), ((1, 2.5),))
    res = ExperimentResult("demo", {"n": 3}, {"t": table}, {"acc": m, "flag": Metric(True, "model at chance")},
                           "summary from numbers", records={"rows": [{"id": np.int64(3), "p": np.float32(0.5),
                                                                       "v": np.array([1, 2])}]},
                           notes=["n"], warnings=["w"])
    assert res.records["rows"][0] == {"id": 3, "p": 0.5, "v": [1, 2]}
    back = ExperimentResult.from_dict(res.to_dict())
    assert back == res and back.value("acc") == 0.45
    with pytest.raises(KeyError, match="no metric"):
        res.metric("nope")


def test_result_save_load(tmp_path):
    res = ExperimentResult("demo", {}, {}, {"x": Metric(1.5, "x", "s")}, "s")
    path = res.save(tmp_path / "r" / "result.json")
    assert ExperimentResult.load(path) == res


@pytest.mark.parametrize("store_kind", ["memory", "dir"])
def test_cached_computes_once_and_recomputes_a_corrupt_entry(tmp_path, store_kind):
    store = MemoryStore() if store_kind == "memory" else DirStore(tmp_path / "store")
    calls = []

    def compute():
        calls.append(1)
        return {"a": [1, 2]}

    assert cached(store, "k/1 weird key", compute) == {"a": [1, 2]}
    assert cached(store, "k/1 weird key", compute) == {"a": [1, 2]}
    assert len(calls) == 1
    store.put("k/1 weird key", b'{"a": [1,')  # truncated
    with pytest.warns(RuntimeWarning, match="could not be read"):
        assert cached(store, "k/1 weird key", compute) == {"a": [1, 2]}
    assert len(calls) == 2
    assert cached(None, "k", compute) and len(calls) == 3  # no store: nothing kept


def test_codecs_round_trip_tensors_and_arrays(tmp_path):
    store = DirStore(tmp_path)
    state = {"w": torch.arange(6.0).reshape(2, 3)}
    assert torch.equal(cached(store, "state", lambda: state, TORCH)["w"], state["w"])
    assert torch.equal(cached(store, "state", lambda: None, TORCH)["w"], state["w"])
    arrays = cached(store, "arr", lambda: {"a": np.arange(3)}, NUMPY)
    assert np.array_equal(cached(store, "arr", lambda: None, NUMPY)["a"], arrays["a"])
    assert JSON.decode(JSON.encode([1, "x"])) == [1, "x"]
    assert DirStore(tmp_path).path("a" * 300).name != "a" * 300  # long keys are hashed


def test_split_keeps_ids_and_label_names():
    s = Split(torch.zeros(5, 1, 2, 2), torch.tensor([0, 1, 1, 0, 1]), ids=("r10", "r11", "r12", "r13", "r14"),
              label_names=("neg", "pos"))
    sub = s.select([4, 1])
    assert sub.ids == ("r14", "r11") and sub.name_of(int(sub.y[0])) == "pos"
    texts = Split(["a", "b", "c"], [0, 1, 0])
    assert texts.head(2).x == ["a", "b"] and texts.head(2).ids == (0, 1) and texts.head(10).ids == (0, 1, 2)
    with pytest.raises(ValueError, match="one label per input"):
        Split(["a"], [0, 1])
    assert chance_rate([0, 1, 1, 1]) == 0.75


def test_headline_table_takes_intervals_triples_and_bare_numbers():
    from robustsuite_common.experiment import HEADLINE_COLUMNS, ci_of, headline
    from robustsuite_common.intervals import IntervalError, proportion

    t = headline("clean vs attacked", [("a", proportion(9, 10), (0.5, 0.2, 0.8), "pgd"), ("b", 0.9, 0.1, "x")])
    assert t.name == "headline" and t.columns == (*HEADLINE_COLUMNS, "attack") and t.units["clean"] == "fraction"
    a, b = t.records()
    assert (a["clean"], a["attacked"], a["attacked_ci_low"], a["attack"]) == (0.9, 0.5, 0.2, "pgd")
    assert a["clean_ci_low"] == proportion(9, 10).low and b["clean_ci_low"] is None
    assert ci_of(a, "attacked") == (0.5, 0.2, 0.8)
    with pytest.raises(IntervalError):  # an interval that excludes its estimate is refused, as in every table
        headline("t", [("a", (0.9, 0.95, 1.0), 0.5, "pgd")])
