"""Certified calibration under adversarial attacks: smoothing certificates, certified Brier score, certified calibration error, ACT."""

from importlib.metadata import version as _version

__version__ = _version("certcal")
__all__ = ["__version__"]
