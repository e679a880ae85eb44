"""Threat models for transductive defenses (RMC, DENT, DANN, TADV, URejectron) and the FPA/GMSA attacks."""

from importlib.metadata import version as _version

__version__ = _version("transduct-attack")
__all__ = ["__version__"]
