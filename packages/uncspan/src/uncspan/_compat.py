"""Lazy import of RobustBench (optional extra ``uncspan[robustbench]``).

robustbench 1.1.1 does ``from autoattack import AutoAttack`` at import time, while its PyPI dependency
installs that code as ``pyautoattack``; we alias the module names before importing (only when no real
``autoattack`` is importable).
"""

from __future__ import annotations

import importlib
import sys


def _alias_autoattack() -> None:
    if "autoattack" in sys.modules:
        return
    try:
        importlib.import_module("autoattack")
        return
    except ImportError:
        pass
    pyaa = importlib.import_module("pyautoattack")
    sys.modules["autoattack"] = pyaa
    for sub in ("state", "autopgd_base", "fab_pt", "square", "other_utils", "checks"):
        try:
            sys.modules[f"autoattack.{sub}"] = importlib.import_module(f"pyautoattack.{sub}")
        except ImportError:  # pragma: no cover - depends on pyautoattack's layout
            pass


def import_robustbench():
    """Import ``robustbench`` (with the autoattack alias); ImportError names the extra when missing."""
    try:
        _alias_autoattack()
        return importlib.import_module("robustbench")
    except ImportError as err:
        raise ImportError(
            "RobustBench support needs the optional extra: pip install 'uncspan[robustbench]'"
        ) from err
