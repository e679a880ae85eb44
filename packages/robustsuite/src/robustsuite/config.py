"""Each method's parameters for ``robustsuite methods --schema`` (a table of every field; ``--json`` prints each
runner's ``schema()``, the JSON Schema of a ``[methods.<name>]`` table). The fields, types, bounds and docs come
from the runners' typed configs (:mod:`robustsuite.run.adapter`); nothing here names a method's parameters.
"""

from __future__ import annotations


def schema_rows(method: str) -> list[dict]:
    """One row per parameter of ``method`` (``path``, ``type``, ``default``, ``unit``, ``bounds``, ``description``,
    ``paper``): the runner's input specs, ``preset`` and every field of its typed config (as ``config.<path>``)."""
    from . import runners

    got = runners.get(method).rows()
    preset = {"path": "preset", "type": "str", "default": "demo", "unit": "", "paper": "",
              "bounds": "one of " + ", ".join(got["presets"]), "description": "the named settings the config starts from"}
    return [*got["inputs"], preset, *({**r, "path": f"config.{r['path']}"} for r in got["config"])]
