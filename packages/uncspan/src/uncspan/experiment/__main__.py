"""``python -m uncspan.experiment``: the same command as ``uncspan experiment`` (one implementation,
:func:`uncspan.cli.main`)."""

import sys

from ..cli import main

if __name__ == "__main__":
    raise SystemExit(main(["experiment", *sys.argv[1:]]))
