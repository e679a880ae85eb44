import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def dev_tool():
    """Load a script of tools/dev/ as a module: ``dev_tool("record_run")``."""
    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "dev" / f"{name}.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    return load
