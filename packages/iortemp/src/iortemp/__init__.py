"""Extreme confidence and the illusion of robustness: temperature wrappers, calibration, Brent-optimised temperatures, DDi-AT."""

from importlib.metadata import version as _version

__version__ = _version("iortemp")
__all__ = ["__version__"]
