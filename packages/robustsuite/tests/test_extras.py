"""Issue 18, item 4: TextAttack, RobustBench/torchvision, datasets and pyarrow are extras of the umbrella;
a missing one is an ImportError naming the extra."""

import subprocess
import sys

import pytest

from robustsuite.loaders import load_dataset
from robustsuite.report.samples import write_samples


def test_hf_dataset_spec_without_datasets_names_the_datasets_extra(monkeypatch, tmp_path):
    # the umbrella's optional imports go through robustsuite_common.extras.optional_import (tested there)
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ImportError, match=r"^Hugging Face datasets \(hf-disk:, hf-datasets:\) needs the optional "
                                          r"extra: pip install 'robustsuite\[datasets\]'"):
        load_dataset(f"hf-disk:{tmp_path}")


def test_parquet_log_without_pyarrow_names_the_parquet_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    rows = [{"id": 0, "label": 1, "prediction": 1, "confidence": 0.9}]
    with pytest.raises(ImportError, match=r"pip install 'robustsuite\[parquet\]'"):
        write_samples(tmp_path / "s", rows, "parquet")
    assert not list(tmp_path.iterdir())  # nothing half-written
    assert write_samples(tmp_path / "s", rows, "jsonl").is_file()  # the core format needs no extra


def test_import_robustsuite_loads_no_extra():
    code = ("import sys, robustsuite; print([m for m in ('textattack', 'robustbench', 'datasets', 'pyarrow', "
            "'flair', 'torchvision', 'cvxpy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
