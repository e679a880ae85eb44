"""``python -m transduct_attack.experiment``: the same command as ``transduct-attack experiment``."""

import sys

from ..cli import main

if __name__ == "__main__":
    sys.exit(main(["experiment", *sys.argv[1:]]))
