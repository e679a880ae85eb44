"""Kept so ``robustsuite.samples`` still imports: per-sample records live in :mod:`robustsuite.report.samples`
(delete this module once ``runners/__init__.py``, ``run.py`` and ``__init__.py`` import from there)."""

from .report.samples import FORMATS, read_samples, to_columns, write_samples

__all__ = ["FORMATS", "read_samples", "to_columns", "write_samples"]
