"""Optional dependencies: import one where it is needed, or raise an ImportError naming the extra that installs it.

Every package imports its optional integrations (matplotlib, cvxpy, scikit-learn, TextAttack, ...) inside the
function that needs them, through :func:`optional_import`, so ``import <package>`` stays light and a user
without the extra reads the one command that fixes it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["optional_import"]


def optional_import(module: str, *, extra: str, feature: str) -> ModuleType:
    """``module`` imported (a dotted name gives the submodule, like ``import a.b``), or an ``ImportError``
    ``"<feature> needs the optional extra: pip install '<extra>' (module '<module>' is not installed)"``
    raised from the original error.

    ``extra`` is the full requirement to install (``"certcal[plot]"``); ``feature`` is what needs it, in the
    user's words (``"plotting"``, ``"method='milp'"``). Call it inside the function that uses the module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise _missing_extra(module, extra=extra, feature=feature) from err


def _missing_extra(module: str, *, extra: str, feature: str) -> ImportError:
    """The error :func:`optional_import` raises; for robustsuite_common's own imports that are more than one
    module (``import_robustbench`` installs an alias first). Raise it ``from`` the original error."""
    return ImportError(f"{feature} needs the optional extra: pip install '{extra}' "
                       f"(module {module!r} is not installed)")
