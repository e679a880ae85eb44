"""robustsuite umbrella: model and dataset loaders, embedded defaults, unified report and CLI."""

from importlib.metadata import version as _version

__version__ = _version("robustsuite")
__all__ = ["__version__"]
