"""The section titles the runners write down (so `robustsuite methods` lists them without importing torch) are the
experiments' own."""

import importlib

import pytest

from robustsuite import runners


@pytest.mark.parametrize("name", ["iortemp", "zeroe_perturb", "transduct_attack", "uncspan"])
def test_runner_title_is_the_experiments(name):
    module = importlib.import_module(f"robustsuite.runners.{name}")
    experiment = importlib.import_module(f"{name}.experiment")
    title = getattr(experiment, "TITLE", None) or experiment.Result.title
    assert isinstance(title, str) and module.TITLE == title
    assert runners.available()[name].TITLE == module.TITLE
