"""Imports of optional integrations: a missing one is an ImportError naming the extra that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType


def optional_import(module: str, extra: str, feature: str) -> ModuleType:
    """``module`` imported, or ``ImportError("<feature> needs the optional extra: pip install 'robustsuite[<extra>]'")``."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{feature} needs the optional extra: pip install 'robustsuite[{extra}]' "
                          f"(module {module!r} is not installed)") from err
