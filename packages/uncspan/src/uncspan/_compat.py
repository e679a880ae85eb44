"""uncspan's use of the shared RobustBench fix (:mod:`robustsuite_common`, the ``autoattack`` alias that
robustbench 1.1.1 needs): only the extra to name when RobustBench is missing."""

from __future__ import annotations

from types import ModuleType

from robustsuite_common import import_robustbench as _import_robustbench

__all__ = ["import_robustbench"]


def import_robustbench() -> ModuleType:
    """Import ``robustbench`` (with the autoattack alias); ImportError names the extra when missing."""
    return _import_robustbench(extra="uncspan[robustbench]")
