"""The ImportError every fix raises when the library it fixes is not installed."""

from __future__ import annotations


def missing(what: str, extra: str | None) -> ImportError:
    """``ImportError`` saying which extra installs ``what`` (``extra`` like ``"iortemp[textattack]"``)."""
    if extra:
        return ImportError(f"{what} support needs the optional extra: pip install '{extra}'")
    return ImportError(f"{what} is not installed: install the [textattack]/[robustbench] extra of the "
                       "robustsuite package you use")
