"""Make RobustBench importable from PyPI.

robustbench 1.1.1 runs ``from autoattack import AutoAttack`` in its ``__init__``; the original
``autoattack`` module is not published on PyPI, and robustbench's dependency ``pyautoattack`` installs the
same code under the name ``pyautoattack``. The fix aliases the module names in ``sys.modules``, only when
no real ``autoattack`` module is importable.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from .extras import _missing_extra

_SUBMODULES = ("state", "autopgd_base", "fab_pt", "square", "other_utils", "checks")


def alias_autoattack() -> None:
    """Make ``import autoattack`` (and its submodules) resolve to ``pyautoattack``; no-op if a real one exists.

    ``ImportError`` from ``import pyautoattack`` when neither is installed.
    """
    if "autoattack" in sys.modules:  # already imported, aliased, or deliberately blocked (None)
        return
    try:
        importlib.import_module("autoattack")
        return
    except ImportError:
        pass
    pyaa = importlib.import_module("pyautoattack")
    sys.modules["autoattack"] = pyaa
    for sub in _SUBMODULES:
        try:
            sys.modules[f"autoattack.{sub}"] = importlib.import_module(f"pyautoattack.{sub}")
        except ImportError:  # pragma: no cover - depends on pyautoattack's layout
            pass


def import_robustbench(*, extra: str | None = None) -> ModuleType:
    """``robustbench`` with the autoattack alias in place; ``ImportError`` naming ``extra`` (default:
    robustsuite-common's own ``robustbench`` extra) when robustbench, or the autoattack it imports, is missing."""
    try:
        alias_autoattack()
        return importlib.import_module("robustbench")
    except ImportError as err:  # one try for both: the alias (pyautoattack) and robustbench are one extra
        raise _missing_extra(err.name or "robustbench", extra=extra or "robustsuite-common[robustbench]",
                             feature="RobustBench support") from err
