"""``robustsuite audit``: the run config that puts every lens that applies to a model on it, as ordinary units.

The lenses are data: ``benchmarks/audit/vision.toml`` (the overview with the indicators, the temperature illusion,
uncertainty and calibration under attack), ``adaptive.toml`` (added with ``--adaptive``: DENT over the model under
the transductive threat models) and ``text.toml`` (validity and Zéroe noise), filled in with the user's model, data
and budget. The verdict itself is assembled with the report (:mod:`robustsuite.report.verdicts`).
"""

from __future__ import annotations

import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["TEMPLATES", "audit_config", "parse_eps"]

TEMPLATES = Path(__file__).parent / "benchmarks" / "audit"


def parse_eps(text: str | float) -> float:
    """ε as a number or a fraction (``0.031``, ``8/255``); ``ConfigError`` naming ``--eps`` otherwise."""
    try:
        value = float(Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        raise ConfigError(f"--eps must be a number or a fraction like 8/255, got {text!r}") from None
    if not value > 0:
        raise ConfigError(f"--eps must be > 0 (a budget in [0, 1] pixel space), got {text!r}")
    return value


def _fill(node: Any, values: dict[str, Any]) -> Any:
    """The template with its placeholders replaced: a string that is exactly ``{name}`` takes the value itself (a
    number stays a number), other strings and keys are formatted."""
    if isinstance(node, dict):
        return {k.format(**values): _fill(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, values) for v in node]
    if isinstance(node, str):
        whole = node[1:-1] if node.startswith("{") and node.endswith("}") else None
        return values[whole] if whole in values else node.format(**values)
    return node


def audit_config(model: str, data: str, *, eps: float | None, norm: str = "Linf", limit: int | None = 1000,
                 claim: float | None = None, adaptive: bool = False, seed: int = 0, device: str = "cpu") -> dict:
    """The run config of ``robustsuite audit MODEL DATA`` (the templates filled in); ``limit``: first N samples of
    every split (``None``: all). Bad options are a ``ConfigError`` naming them, before any work."""
    from .zoo import modality

    kind = modality(model)
    if norm not in ("Linf", "L2"):
        raise ConfigError(f"--norm must be Linf or L2, got {norm!r}")
    if kind == "vision" and eps is None:
        raise ConfigError("--eps is required for an image model (the budget in [0, 1] pixel space, e.g. 8/255)")
    if kind == "vision" and norm == "Linf" and eps is not None and eps > 1:
        raise ConfigError(f"--eps must be <= 1 for the L∞ norm on images in [0, 1], got {eps}")
    if claim is not None and not 0 <= claim <= 1:
        raise ConfigError(f"--claim must be a robust accuracy in [0, 1], got {claim}")
    if adaptive and (kind != "vision" or norm != "Linf"):
        raise ConfigError("--adaptive plays the transductive games on an image model in L∞ only")
    values = {"model": model, "data": data, "eps": eps, "norm": norm, "norm_lower": norm.lower(),
              "claim": float(claim or 0.0)}
    methods: dict[str, Any] = {}
    for name in ("text",) if kind == "text" else ("vision", "adaptive") if adaptive else ("vision",):
        methods |= _fill(tomllib.loads((TEMPLATES / f"{name}.toml").read_text(encoding="utf-8")), values)["methods"]
    config: dict[str, Any] = {"seed": seed, "device": device, "methods": methods}
    if limit:
        config["limit"] = int(limit)
    return config
