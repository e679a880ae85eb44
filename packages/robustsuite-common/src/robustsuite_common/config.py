"""Typed experiment configurations: frozen, nested dataclasses validated by pydantic.

A package writes its paper's hyper-parameters as groups, the way the paper groups them::

    from robustsuite_common.config import Float, Int, config, param

    @config
    class ACTConfig:
        \"\"\"Adversarial calibration training (paper §5, App. G).\"\"\"
        epochs: Int = param(10, ge=1, unit="epochs", doc="fine-tuning epochs", paper="App. I.3")
        lr_grid: tuple[Float, ...] = param((2e-4,), doc="weight learning rates selected from", unit="1")

    @config
    class Config:
        act: ACTConfig = param(ACTConfig(), doc="ACT (Table 2)")

Scalars are strict (``Int`` refuses ``True`` and ``"3"``; ``Float`` accepts integers but no strings, NaN or
infinity); lists from TOML/JSON become tuples, so a config is hashable and immutable. Building a config with a
bad value raises at once (pydantic's ``ValidationError``, a ``ValueError``); :func:`from_dict` turns that into
:class:`ConfigError` naming the dotted path and suggesting the closest key for a typo. Cross-field rules go in
a ``__post_init__`` that raises ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast, dataclass_transform

from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
)
from pydantic.dataclasses import dataclass as _pydantic_dataclass

__all__ = [
    "Int",
    "Float",
    "Bool",
    "Str",
    "ConfigError",
    "config",
    "param",
    "from_dict",
    "to_dict",
    "override",
    "nest",
    "parse_sets",
    "schema",
    "schema_rows",
    "config_hash",
]

Int = StrictInt
Float = StrictFloat  # accepts ints, refuses strings and bools
Bool = StrictBool
Str = StrictStr

T = TypeVar("T")

_PYDANTIC = ConfigDict(extra="forbid", allow_inf_nan=False, arbitrary_types_allowed=False)


class ConfigError(ValueError):
    """A configuration value that is unknown, of the wrong type or out of range (message names its path)."""


def param(default: Any = dataclasses.MISSING, *, doc: str, unit: str = "", paper: str = "",
          ge: float | None = None, gt: float | None = None, le: float | None = None, lt: float | None = None,
          min_length: int | None = None, allow_inf: bool = False) -> Any:
    """A documented config field: ``doc`` (what it is), ``unit`` (e.g. ``"epochs"``, ``"L∞ pixels in [0, 1]"``,
    ``"draws"``), ``paper`` (the section or table that fixes it), and bounds checked on construction.
    ``default`` may be a config group instance (it is immutable, so it is shared safely)."""
    extra = {"unit": unit, "paper": paper}
    kwargs: dict[str, Any] = {"description": doc, "json_schema_extra": extra}
    for key, value in (("ge", ge), ("gt", gt), ("le", le), ("lt", lt), ("min_length", min_length)):
        if value is not None:
            kwargs[key] = value
    if allow_inf:
        kwargs["allow_inf_nan"] = True
    if default is dataclasses.MISSING:
        return Field(**kwargs)
    if dataclasses.is_dataclass(default) and not isinstance(default, type):
        return Field(default_factory=lambda: default, **kwargs)
    return Field(default, **kwargs)


@dataclass_transform(frozen_default=True)  # type checkers see a frozen dataclass whose fields default to param(...)
def config(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen, validated config group (a pydantic dataclass; unknown keys refused)."""
    return cast("type[T]", _pydantic_dataclass(frozen=True, config=_PYDANTIC)(cls))


@functools.cache
def _adapter(cls: type) -> TypeAdapter:
    return TypeAdapter(cls)


def _group_type(cls: Any, name: str) -> Any:
    import typing

    return typing.get_type_hints(cls).get(name)


def _suggest(cls: type, loc: tuple) -> str:
    """The closest valid key for an unknown key at ``loc`` (walks the nested groups)."""
    current: Any = cls
    for part in loc[:-1]:
        current = _group_type(current, str(part)) if dataclasses.is_dataclass(current) else None
    if not dataclasses.is_dataclass(current):
        return ""
    valid = sorted(f.name for f in dataclasses.fields(current))
    close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
    return (f"; did you mean {close[0]!r}?" if close else "") + f" (valid keys: {valid})"


def _explain(cls: type, err: ValidationError, where: str) -> ConfigError:
    problems = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "(top level)"
        if e["type"] == "unexpected_keyword_argument":
            problems.append(f"unknown key {path!r}{_suggest(cls, e['loc'])}")
        else:
            got = e.get("input")
            shown = "" if isinstance(got, Mapping) or dataclasses.is_dataclass(got) else f" (got {got!r})"
            problems.append(f"{path}: {e['msg']}{shown}")
    return ConfigError(f"{where}: " + "; ".join(problems))


def from_dict(cls: type[T], data: Mapping[str, Any] | None = None, *, base: T | None = None,
              where: str = "config") -> T:
    """Build ``cls`` from a (nested) mapping, e.g. a TOML table. Keys left out keep ``base``'s values (a
    preset) or the defaults. Errors are :class:`ConfigError` naming ``where`` and each dotted path."""
    data = _renamed_keys(cls, dict(data or {}), where)
    merged = _deep_merge(to_dict(base) if base is not None else {}, data)
    try:
        return _adapter(cls).validate_python(merged)
    except ValidationError as err:
        raise _explain(cls, err, where) from None


def _renamed_keys(cls: Any, data: dict[str, Any], where: str) -> dict[str, Any]:
    """``data`` with each old key of a group that declares ``RENAMED = {"old": "new"}`` (a field renamed to the
    project's vocabulary) under its new name and a ``DeprecationWarning``, in every nested group; both is an error."""
    import warnings

    if not dataclasses.is_dataclass(cls):
        return data
    for old, new in getattr(cls, "RENAMED", {}).items():
        if old in data:
            if new in data:
                raise ConfigError(f"{where}: {old!r} is the old name of {new!r}; give only {new!r}")
            warnings.warn(f"{where}: {old!r} is deprecated; use {new!r}", DeprecationWarning, stacklevel=4)
            data[new] = data.pop(old)
    for name, value in data.items():
        if isinstance(value, Mapping):
            data[name] = _renamed_keys(_group_type(cls, name), dict(value), f"{where}.{name}")
    return data


def to_dict(cfg: Any) -> dict[str, Any]:
    """The config as a JSON-safe nested dict (tuples become lists)."""
    if not dataclasses.is_dataclass(cfg):
        raise TypeError(f"expected a config dataclass, got {type(cfg).__name__}")
    return _adapter(type(cfg)).dump_python(cfg, mode="json")


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def nest(dotted: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"act.epochs": 3}`` as ``{"act": {"epochs": 3}}``, merged into a copy of ``base`` (``base`` itself is not
    changed); a key whose path runs through a value that is not a table is a :class:`ConfigError`."""
    out = dict(base or {})
    for key, value in dotted.items():
        *parents, leaf = key.split(".")
        target = out
        for p in parents:
            node = target.get(p, {})
            if not isinstance(node, Mapping):
                raise ConfigError(f"{key}: {p!r} is not a table")
            target[p] = dict(node)  # a copy: base itself is not changed
            target = target[p]
        if isinstance(value, Mapping) and isinstance(target.get(leaf), Mapping):
            value = _deep_merge(target[leaf], value)
        target[leaf] = value
    return out


def parse_sets(items: Iterable[str], *, example: str = "section.field=1") -> dict[str, Any]:
    """Command-line ``--set KEY=VALUE`` overrides as ``{dotted key: value}``. A value is read as JSON
    (``0.5``, ``true``, ``[0, 0.1]``, ``"text"``), else as a TOML value (``'text'``, ``{ n = 3 }``), else kept as
    the bare word it is (``attack.optimizer=apgd``); an item without ``=`` or key is a :class:`ConfigError`."""
    import tomllib

    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set takes KEY=VALUE (e.g. {example}), got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            try:
                value = tomllib.loads(f"v = {raw}")["v"]
            except tomllib.TOMLDecodeError:
                value = raw
        out[key.strip()] = value
    return out


def override(cfg: T, changes: Mapping[str, Any] | None = None, **dotted: Any) -> T:
    """A copy of ``cfg`` with ``changes`` (nested mapping) and ``dotted`` keys (``act__epochs=3`` or, via the
    mapping, ``{"act.epochs": 3}``) applied, validated again."""
    changes = {**dict(changes or {}), **{k.replace("__", "."): v for k, v in dotted.items()}}
    return from_dict(type(cfg), nest(changes), base=cfg)


def schema(cls: type) -> dict[str, Any]:
    """JSON Schema of a config class (descriptions, units, paper references and bounds included)."""
    return _adapter(cls).json_schema()


def schema_rows(cls: type, prefix: str = "") -> list[dict[str, Any]]:
    """One row per leaf field: ``path``, ``type``, ``default``, ``description``, ``unit``, ``paper`` and
    ``bounds`` (e.g. ``">= 1"``), for ``--schema`` listings and README tables."""
    import typing

    hints = typing.get_type_hints(cls)
    defaults = to_dict(cls())
    rows: list[dict[str, Any]] = []
    for f in dataclasses.fields(cls):
        typ = hints[f.name]
        path = f"{prefix}{f.name}"
        if isinstance(typ, type) and dataclasses.is_dataclass(typ):
            rows.extend(schema_rows(typ, prefix=path + "."))
            continue
        field_info = getattr(cls, "__pydantic_fields__", {}).get(f.name)
        extra = (field_info.json_schema_extra or {}) if field_info is not None else {}
        bounds = []
        for m in (field_info.metadata if field_info is not None else []):
            for attr, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"), ("min_length", "len >=")):
                if getattr(m, attr, None) is not None:
                    bounds.append(f"{word} {getattr(m, attr)}")
        rows.append({"path": path, "type": _type_name(typ), "default": defaults.get(f.name),
                     "description": (field_info.description if field_info is not None else "") or "",
                     "unit": extra.get("unit", ""), "paper": extra.get("paper", ""), "bounds": ", ".join(bounds)})
    return rows


def _type_name(typ: Any) -> str:
    name = getattr(typ, "__name__", None)
    text = str(typ) if name is None or getattr(typ, "__args__", None) else name
    for a, b in (("typing.", ""), ("pydantic.types.", ""), ("Annotated[", ""), ("StrictInt", "int"),
                 ("StrictFloat", "float"), ("StrictBool", "bool"), ("StrictStr", "str"), (", Strict(strict=True)]", ""),
                 ("<class '", ""), ("'>", "")):
        text = text.replace(a, b)
    return text


def config_hash(*parts: Any, length: int = 12) -> str:
    """A short, stable hash of configs (via :func:`to_dict`) and plain JSON-able values: the key under which
    an experiment checkpoints work that depends on exactly these inputs."""
    def norm(p: Any) -> Any:
        return to_dict(p) if dataclasses.is_dataclass(p) and not isinstance(p, type) else p

    blob = json.dumps([norm(p) for p in parts], sort_keys=True, default=str, allow_nan=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]
