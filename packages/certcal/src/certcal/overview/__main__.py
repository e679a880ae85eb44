"""``python -m certcal.overview``: the same command as ``certcal overview`` (:mod:`certcal.cli`)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    from ..cli import add_overview_arguments
    from ..cli import main as cli_main

    parser = add_overview_arguments(argparse.ArgumentParser(
        prog="python -m certcal.overview", description="A model's calibration-and-robustness overview "
        "(certcal.overview) of a small CNN on scikit-learn's digits, offline (needs certcal[demo]); the same as "
        "`certcal overview`."))
    return cli_main(argv, parser=parser)


if __name__ == "__main__":
    raise SystemExit(main())
