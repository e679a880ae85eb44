"""The experiment contract every method package follows (issue 34), as three small helpers.

Every ``<pkg>.experiment`` (and ``certcal.overview``) holds the same files: ``config.py`` (``Config`` and its
``PRESETS``, at least ``demo``, ``paper`` and ``paper-cpu``, chosen by :func:`choose_preset`), ``inputs.py``
(``Models``, ``Data``), ``run.py`` (``run``), ``result.py`` (``Result`` with ``title`` and ``model_at_chance``),
``figures.py`` (``figures``) and ``paper.json`` (the paper's numbers, read by :func:`paper_values`). Public
functions take their data positionally and every hyper-parameter by keyword, in one vocabulary (``model``,
``eps``, ``n_classes``, ``seed`` / ``generator``, ``n_boot``, ``batch_size``, ``device``); :func:`renamed` keeps an
old keyword working for one release with a ``DeprecationWarning``.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any, TypeVar

C = TypeVar("C")
F = TypeVar("F", bound=Callable[..., Any])

REQUIRED_PRESETS = ("demo", "paper", "paper-cpu")


def choose_preset(presets: Mapping[str, C], name: str) -> C:
    """``presets[name]``; an unknown name is a ``ValueError`` that lists the known ones."""
    if not isinstance(name, str) or name not in presets:
        raise ValueError(f"preset must be one of {sorted(presets)}, got {name!r}")
    return presets[name]


@functools.cache
def _paper_json(package: str) -> str:
    return resources.files(package).joinpath("paper.json").read_text(encoding="utf-8")


def paper_values(package: str) -> dict[str, Any]:
    """The paper's reference values shipped as ``paper.json`` beside ``package`` (e.g. ``"certcal.experiment"``);
    a fresh dict on every call (the file is read once)."""
    return json.loads(_paper_json(package))


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Accept each old keyword (``@renamed(num_classes="n_classes")``) as its new name with a
    ``DeprecationWarning``; passing both is a ``TypeError``. The signature shows the new names only."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {old!r} and its new name {new!r}")
                    warnings.warn(f"{fn.__name__}({old}=...) is deprecated; use {new}=...", DeprecationWarning,
                                  stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return inner  # type: ignore[return-value]

    return wrap
