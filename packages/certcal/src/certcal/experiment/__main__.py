"""``python -m certcal.experiment``: the same command as ``certcal experiment`` (:mod:`certcal.cli`)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    from ..cli import add_experiment_arguments
    from ..cli import main as cli_main

    parser = add_experiment_arguments(argparse.ArgumentParser(
        prog="python -m certcal.experiment", description="The paper's experiment (certcal.experiment) on "
        "scikit-learn's digits, offline (needs certcal[demo]); the same as `certcal experiment`."))
    return cli_main(argv, parser=parser)


if __name__ == "__main__":
    raise SystemExit(main())
