"""Rebuild the WordNet task resources of the Zéroe section (pairs, multi-label, POS tagging), deterministically.

    uv run python tools/build_wordnet_tasks.py                       # everything, into the package
    uv run python tools/build_wordnet_tasks.py --out /tmp/wn-tasks   # elsewhere (e.g. to compare hashes)
    uv run python tools/build_wordnet_tasks.py --steps evaluate,manifest

Steps: ``data`` (the splits from /usr/share/wordnet, see ``robustsuite._wordnet_tasks`` for how labels are
derived), one step per model (``wordnet-pairs-roberta``, ``wordnet-multilabel-roberta``, ``wordnet-pos-roberta``;
tiny RoBERTa, tokenizer of builtin:wordnet-roberta), ``evaluate`` (re-measure each model from its saved weights
and print its test accuracy with the Clopper-Pearson interval), ``manifest`` (SHA-256 and size of every file,
recipes, accuracies). One intra-op thread and fixed seeds: a re-run on the same machine writes identical files.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import torch  # noqa: E402
from scipy.stats import binomtest  # noqa: E402

from robustsuite import _wordnet_tasks as wt  # noqa: E402
from robustsuite._io import sha256_file, write_json  # noqa: E402
from robustsuite._wordnet import DEBIAN_DIR  # noqa: E402

T0 = time.time()
MEASURES = {"pairs": "accuracy", "multilabel": "exact-match accuracy (8 sigmoid decisions)",
            "tagging": "token accuracy over tagged tokens"}


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def accuracy_record(correct: int, n: int) -> dict:
    ci = binomtest(correct, n).proportion_ci(0.95, method="exact")
    return {"correct": correct, "n": n, "accuracy": correct / n, "ci_low": ci.low, "ci_high": ci.high}


def evaluate(name: str, out: Path) -> dict:
    model = wt.load_task_model(name, out / "models")
    recipe = wt.TASK_RECIPES[name]
    rec = accuracy_record(*wt.correct_total(name, model, "test"))
    return {"name": name, "task": recipe.task, "dataset": wt.TASK_DATASETS[recipe.task],
            "measure": MEASURES[recipe.task], "recipe": wt.recipe_dict(name),
            "params": sum(p.numel() for p in model.model.parameters()), "test": rec}


def main(argv: list[str] | None = None) -> int:
    steps_all = ["data", *wt.TASK_RECIPES, "evaluate", "manifest"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=wt.RESOURCES)
    ap.add_argument("--wordnet", type=Path, default=DEBIAN_DIR, help="directory with WordNet 3.0 data.*/index.*")
    ap.add_argument("--steps", default=",".join(steps_all), help=f"comma-separated subset of {steps_all}")
    args = ap.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(steps) - set(steps_all))
    if unknown:
        ap.error(f"--steps: unknown {unknown}; choose from {steps_all}")
    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    if out.resolve() != wt.RESOURCES.resolve():
        wt.TASKS_FILE = out / wt.TASKS_FILE.name  # the models train on the splits written here
    records = {}
    for step in steps_all:
        if step not in steps:
            continue
        if step == "data":
            tasks = wt.build_tasks(args.wordnet)
            p = wt.write_tasks(tasks, out / wt.TASKS_FILE.name)
            wt._CACHE.clear()
            sizes = {t: {s: len(next(iter(tasks[t][s].values()))) for s in ("train", "val", "test")}
                     for t in ("pairs", "multilabel", "tagging")}
            log(f"data: wrote {p} ({p.stat().st_size:,} bytes); sizes {sizes}")
        elif step == "evaluate":
            for name in wt.TASK_RECIPES:
                if (out / "models" / name).is_dir():
                    records[name] = evaluate(name, out)
        elif step == "manifest":
            old = wt.manifest(out / "manifest.json")["models"] if (out / "manifest.json").is_file() else {}
            files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"
                           and not p.name.startswith("."))
            m = {"files": {p.relative_to(out).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                           for p in files},
                 "total_bytes": sum(p.stat().st_size for p in files),
                 "tokenizer": {"from": "builtin:wordnet-roberta",
                               "sha256": sha256_file(wt.TOKENIZER_DIR / "tokenizer.json")},
                 "models": {**old, **records}, "torch_version": torch.__version__}
            write_json(out / "manifest.json", m)
            for rel, info in m["files"].items():
                print(f"{info['sha256']}  {info['bytes']:>10,}  {rel}")
            print(f"total shipped: {m['total_bytes']:,} bytes")
        else:
            t = time.time()
            log(f"{step}: training, recipe {wt.recipe_dict(step)}")
            wrapper = wt.train_task(wt.TASK_RECIPES[step], log=log)
            wt.save_task_model(wrapper, out / "models" / step)
            records[step] = evaluate(step, out)
            log(f"{step}: trained in {time.time() - t:.0f}s")
    for name, rec in records.items():
        r = rec["test"]
        log(f"{name}: {rec['params']:,} params; test {rec['measure']} {r['accuracy']:.4f} ({r['correct']}/{r['n']}, "
            f"95% CI [{r['ci_low']:.4f}, {r['ci_high']:.4f}])")
    return 0


if __name__ == "__main__":
    sys.exit(main())
