"""Uncertainty span under over- and under-confidence attacks: MUS, MSUS, s-ECE, OOD/open-set under attack."""

from importlib.metadata import version as _version

__version__ = _version("uncspan")
__all__ = ["__version__"]
