"""Spec strings (``<scheme>:<value>[?key=value&...]``): their parts, their options and the listing rows of
``robustsuite models`` / ``robustsuite datasets``. Shared by :mod:`robustsuite.zoo` and :mod:`robustsuite.data`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl


@dataclass(frozen=True)
class SpecInfo:
    spec: str
    kind: str
    description: str


def split_spec(spec: str, error: type[ValueError], known: Sequence[SpecInfo]) -> tuple[str, str]:
    """``(scheme, value)`` of ``spec``, else ``error`` listing the schemes of ``known``."""
    if not isinstance(spec, str) or ":" not in spec:
        schemes = sorted({s.spec.split(":")[0] for s in known if not s.spec.startswith("<")})
        raise error(f"spec {spec!r} must look like '<scheme>:<value>' with scheme one of {schemes}")
    scheme, _, value = spec.partition(":")
    if not value:
        raise error(f"spec {spec!r} has an empty value after '{scheme}:'")
    return scheme, value


def parse_options(value: str, allowed: Sequence[str], where: str, error: type[ValueError]) -> tuple[str, dict[str, str]]:
    """Split ``PATH?key=value&...`` into the path and its options; an unknown key is ``error`` naming the allowed."""
    path, sep, query = value.partition("?")
    opts = dict(parse_qsl(query, keep_blank_values=True)) if sep else {}
    bad = sorted(set(opts) - set(allowed))
    if bad:
        raise error(f"{where}: unknown option(s) {bad} in {value!r}; allowed: {sorted(allowed)}")
    return path, opts
