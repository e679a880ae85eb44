"""Typed method configuration: one pydantic model per method, generated from the runner's ``DEFAULTS``.

Types come from the default values (``int``, ``float`` — which also accepts integers —, ``bool``, ``str``,
lists typed by their elements, tables); unknown keys are rejected with the closest valid key suggested. A
runner may add bounds with ``BOUNDS = {"key": {"ge": 0, "le": 1}}`` (pydantic ``Field`` constraints). The
models follow whatever ``DEFAULTS`` the runners define: nothing here names a method's parameters.
"""

from __future__ import annotations

import difflib
import functools
from typing import Any

from .errors import ConfigError

# keys every method accepts besides its DEFAULTS (the unit's targets)
TARGET_FIELDS = {"model": str, "dataset": str, "models": list[str], "targets": list[list[str]], "labels": list[str]}


def _type_of(value: Any) -> Any:
    from pydantic import StrictBool, StrictStr

    if isinstance(value, bool):
        return StrictBool
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    if isinstance(value, str):
        return StrictStr
    if isinstance(value, list | tuple):
        kinds = {_type_of(v) for v in value}
        if len(kinds) == 1:
            return list[kinds.pop()]
        if kinds <= {int, float}:
            return list[float]
        return list[Any]
    if isinstance(value, dict):
        kinds = {_type_of(v) for v in value.values()}
        inner = kinds.pop() if len(kinds) == 1 else (float if kinds <= {int, float} and kinds else Any)
        return dict[str, inner]
    return Any


@functools.cache
def method_model(method: str):
    """The pydantic model of ``method``'s parameters (``extra="forbid"``)."""
    from pydantic import ConfigDict, Field, create_model

    from . import runners

    mod = runners.get(method)
    bounds = getattr(mod, "BOUNDS", {})
    fields: dict[str, Any] = {}
    for key, default in mod.DEFAULTS.items():
        if key in TARGET_FIELDS:
            continue
        fields[key] = (_type_of(default), Field(default=default, **bounds.get(key, {})))
    for key, typ in TARGET_FIELDS.items():
        fields[key] = (typ | None, None)
    name = "".join(p.capitalize() for p in method.split("_")) + "Params"
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)


def schema(method: str) -> dict:
    """``method``'s parameters: for a declarative runner, its input specs, presets and each config field with
    description, unit, paper reference and bounds; otherwise the JSON Schema of its flat parameters."""
    from . import runners

    mod = runners.get(method)
    if hasattr(mod, "schema"):
        return mod.schema()
    return method_model(method).model_json_schema()


_BOUNDS = (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"),
           ("minLength", "len >="), ("pattern", "matches"))


def schema_rows(method: str) -> list[dict]:
    """One row per parameter of ``method`` (``path``, ``type``, ``default``, ``unit``, ``bounds``, ``description``,
    ``paper``) for ``robustsuite methods --schema``: a declarative runner's input specs, ``preset`` and every field
    of its typed config (as ``config.<path>``); a flat runner's keys with the types and bounds of its schema."""
    from . import runners

    mod = runners.get(method)
    if hasattr(mod, "rows"):
        got = mod.rows()
        preset = {"path": "preset", "type": "str", "default": "demo", "unit": "", "paper": "",
                  "bounds": "one of " + ", ".join(got["presets"]), "description": "the named settings the config "
                  "starts from"}
        return [*got["inputs"], preset, *({**r, "path": f"config.{r['path']}"} for r in got["config"])]
    got = schema(method)
    rows = []
    for key, p in got["properties"].items():
        alts = p.get("anyOf", [p])
        types = [a.get("type", "any") + (f"[{a['items'].get('type', 'any')}]" if "items" in a else "") for a in alts
                 if a.get("type") != "null"]
        bounds = [f"{word} {a[k]}" for a in alts for k, word in _BOUNDS if k in a]
        rows.append({"path": key, "type": " | ".join(types) or "any", "default": p.get("default"), "unit": "",
                     "paper": "", "bounds": ", ".join(bounds), "description": p.get("description", "")})
    return rows


def validate_method_params(method: str, params: dict) -> None:
    """Raise :class:`ConfigError` for unknown keys (closest valid key suggested), wrong types or values out of
    range in ``[methods.<method>]``, before any work."""
    from pydantic import ValidationError

    model = method_model(method)
    valid = sorted(model.model_fields)
    for key in params:
        if key not in model.model_fields:
            close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"[methods.{method}]: unknown key {key!r}{hint} (valid keys: {valid})")
    try:
        model.model_validate(params)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']} (got {err.get('input')!r})"
                             for err in e.errors())
        raise ConfigError(f"[methods.{method}]: {problems}") from None
