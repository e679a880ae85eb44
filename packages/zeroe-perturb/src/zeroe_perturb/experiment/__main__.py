"""``python -m zeroe_perturb.experiment`` (or ``zeroe-perturb experiment``): the experiment offline on the
shipped WordNet glosses.

    python -m zeroe_perturb.experiment [--preset demo] [--seed 0] [--set classification.n=100] [--out DIR]

A word-level naive Bayes classifier (:class:`zeroe_perturb.glosses.WordNaiveBayes`) is fitted on the shipped
training glosses and attacked on the test glosses with the named preset (``--set path=value`` overrides a config
field, the value read as JSON). Prints the summary; ``--out DIR`` writes ``result.json`` and, with matplotlib,
the figures. Bad arguments exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None, *, prog: str = "python -m zeroe_perturb.experiment") -> int:
    """Run the experiment from command-line arguments (``argv``, default ``sys.argv[1:]``); the exit status."""
    from robustsuite_common.threads import use_threads

    use_threads()  # one intra-op thread unless ROBUSTSUITE_THREADS says otherwise: same numbers on any machine
    from robustsuite_common.config import ConfigError, override, parse_sets

    from ..glosses import WordNaiveBayes, load_glosses
    from . import PRESETS, Data, Models, figures, run

    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="demo")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="override a config field, e.g. --set seeds.n_seeds=1 (value read as JSON)")
    ap.add_argument("--out", type=Path, help="directory for result.json and the figures")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        cfg = override(PRESETS[args.preset], parse_sets(args.set, example="seeds.n_seeds=1"), seed=args.seed)
    except ConfigError as e:
        ap.error(str(e))
    train, test = load_glosses("train"), load_glosses("test")
    names = train.label_names
    assert names is not None  # the shipped glosses name their topics
    clf = WordNaiveBayes().fit(train.x, train.y, n_classes=len(names))
    cfg = override(cfg, {"defense.enabled": False, "pairs.enabled": False, "multilabel.enabled": False,
                         "tagging.enabled": False})  # the shipped data hold text classification only
    result = run(Models(classifier=clf, names={"classification": "WordNaiveBayes (shipped glosses)"}),
                 Data(classification=test, train=train), cfg, progress=not args.quiet)
    for w in result.warnings:
        print("WARNING:", w)
    print(result.summary)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        result.save(args.out / "result.json")
        try:
            figs = figures(result)
        except ImportError as e:  # matplotlib is an extra
            figs = []
            print(f"no figures: {e}")
        for f in figs:
            f.figure.savefig(args.out / f"{f.name}.png", dpi=110, bbox_inches="tight")
        print(f"wrote {args.out / 'result.json'}" + (f" and {len(figs)} figures" if figs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
