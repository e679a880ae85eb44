"""Zéroe: ten low-level adversarial text attackers and their benchmark protocol (Eger & Benz)."""

from importlib.metadata import version as _version

__version__ = _version("zeroe-perturb")
__all__ = ["__version__"]
