"""Each method's parameters for the command line: ``robustsuite methods --schema`` (a table of every field) and
``--schema --json`` (the JSON Schema of a ``[methods.<name>]`` table). The fields, types, bounds and docs come from
the runners' typed configs (:mod:`robustsuite.run.adapter`); nothing here names a method's parameters.
"""

from __future__ import annotations


def schema(method: str) -> dict:
    """The JSON Schema of ``[methods.<method>]``: its input specs and typed config (``additionalProperties``
    false: an unknown key is an error)."""
    from . import runners

    return runners.get(method).schema()


def schema_rows(method: str) -> list[dict]:
    """One row per parameter of ``method`` (``path``, ``type``, ``default``, ``unit``, ``bounds``, ``description``,
    ``paper``): the runner's input specs, ``preset`` and every field of its typed config (as ``config.<path>``)."""
    from . import runners

    got = runners.get(method).rows()
    preset = {"path": "preset", "type": "str", "default": "demo", "unit": "", "paper": "",
              "bounds": "one of " + ", ".join(got["presets"]), "description": "the named settings the config starts from"}
    return [*got["inputs"], preset, *({**r, "path": f"config.{r['path']}"} for r in got["config"])]


def validate_method_params(method: str, params: dict) -> None:
    """Raise :class:`~robustsuite.errors.ConfigError` for unknown keys (closest valid key suggested), wrong types or
    values out of range in ``[methods.<method>]``, before any work."""
    from . import runners

    runners.get(method).check_params(params)
