"""Issue 34: the experiment's inputs fill label names themselves, Result says whether a static model is at chance,
and the paper's values are paper.json."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources
from types import SimpleNamespace

import torch

from robustsuite_common.experiment import Metric, Split
from transduct_attack import experiment as E


def _split(n: int = 4, names=None) -> Split:
    return Split(torch.zeros(n, 1, 8, 8), torch.arange(n) % 2, label_names=names)


def test_data_from_a_dataset_names_the_labels_it_does_not_name_already():
    ds = SimpleNamespace(train=_split(), test=_split(names=("a", "b")), classes=["zero", "one"])
    data = E.Data.from_dataset(ds, name="toy")
    assert data.name == "toy" and data.train.label_names == ("zero", "one") and data.test.label_names == ("a", "b")
    bare = E.Data.from_dataset(SimpleNamespace(train=_split(), test=_split()))
    assert bare.train.label_names is None and bare.name == ""


def test_result_says_whether_a_static_model_is_at_chance():
    def result(flag: bool) -> E.Result:
        return E.Result(experiment="transduct_attack", config={}, tables={}, summary="s",
                        metrics={"rmc_std_static_at_chance": Metric(flag, "at chance", ""),
                                 "rmc_std_none": Metric(0.5, "accuracy", "fraction")})

    assert result(True).model_at_chance and not result(False).model_at_chance
    assert E.Result.title == E.TITLE and not replace(result(True), metrics={}).model_at_chance


def test_paper_values_are_paper_json():
    text = resources.files("transduct_attack.experiment").joinpath("paper.json").read_text(encoding="utf-8")
    assert E.paper_values() == json.loads(text) and E.paper_values()["rmc"]["standard"]["fpa"] == 0.006
