"""``python -m iortemp.experiment``: the same command as ``iortemp experiment`` (:func:`iortemp.cli.main`)."""

from __future__ import annotations

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", *sys.argv[1:]]))
