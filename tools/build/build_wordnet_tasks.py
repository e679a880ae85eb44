"""Rebuild the WordNet task resources of the Zéroe section (pairs, multi-label, POS tagging), deterministically.

    uv run python tools/build/build_wordnet_tasks.py                       # everything, into the package
    uv run python tools/build/build_wordnet_tasks.py --out /tmp/wn-tasks   # elsewhere (e.g. to compare hashes)
    uv run python tools/build/build_wordnet_tasks.py --steps evaluate,manifest

Steps: ``data`` (the splits from /usr/share/wordnet, see ``_wordnet.py`` beside this script for how labels are
derived), one step per model (``wordnet-pairs-roberta``, ``wordnet-multilabel-roberta``, ``wordnet-pos-roberta``;
tiny RoBERTa, tokenizer of builtin:wordnet-roberta), ``evaluate`` (re-measure each model from its saved weights
and print its test accuracy with the Clopper-Pearson interval), ``manifest`` (SHA-256 and size of every file,
recipes, accuracies). One intra-op thread and fixed seeds: a re-run on the same machine writes identical files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import _recipes as R  # noqa: E402
import _train  # noqa: E402
import _wordnet as wn  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from scipy.stats import binomtest  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

from robustsuite._io import sha256_file, write_json  # noqa: E402
from robustsuite.data import wordnet  # noqa: E402
from robustsuite.zoo import shipped  # noqa: E402

T0 = time.time()
MEASURES = {"pairs": "accuracy", "multilabel": "exact-match accuracy (8 sigmoid decisions)",
            "tagging": "token accuracy over tagged tokens"}


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def accuracy_record(correct: int, n: int) -> dict:
    ci = binomtest(correct, n).proportion_ci(0.95, method="exact")
    return {"correct": correct, "n": n, "accuracy": correct / n, "ci_low": ci.low, "ci_high": ci.high}


def correct_total(task: str, wrapper, tasks_file: Path, split: str = "test") -> tuple[int, int]:
    """Correct / scored counts on a split: pairs: accuracy; multilabel: exact match (all 8 decisions sigmoid > 0.5
    right); tagging: token accuracy over the tagged tokens (tag >= 0)."""
    import numpy as np

    x, y, _ = wordnet.task_split(task, split, tasks_file)
    out = wrapper(x)
    if task == "pairs":
        return int((torch.as_tensor(out).argmax(1) == y).sum()), len(y)
    if task == "multilabel":
        return int(((torch.as_tensor(out) > 0).long() == y).all(1).sum()), len(y)
    right = total = 0
    for z, t, toks in zip(out, y, x, strict=True):
        t = t[:len(toks)].numpy()
        m = t >= 0
        right += int((np.asarray(z).argmax(1)[m] == t[m]).sum())
        total += int(m.sum())
    return right, total


def evaluate(name: str, out: Path, tasks_file: Path) -> dict:
    model = shipped.load(name, out / "models")
    recipe = R.TASK_RECIPES[name]
    rec = accuracy_record(*correct_total(recipe.task, model, tasks_file))
    return {"name": name, "task": recipe.task, "dataset": R.TASK_DATASETS[recipe.task],
            "measure": MEASURES[recipe.task], "recipe": R.recipe_dict(name),
            "params": sum(p.numel() for p in model.model.parameters()), "test": rec}


def main(argv: list[str] | None = None) -> int:
    steps_all = ["data", *R.TASK_RECIPES, "evaluate", "manifest"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=shipped.TASKS_DIR)
    ap.add_argument("--wordnet", type=Path, default=wn.DEBIAN_DIR, help="directory with WordNet 3.0 data.*/index.*")
    ap.add_argument("--steps", default=",".join(steps_all), help=f"comma-separated subset of {steps_all}")
    args = ap.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(steps) - set(steps_all))
    if unknown:
        ap.error(f"--steps: unknown {unknown}; choose from {steps_all}")
    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    tasks_file = out / wordnet.TASKS_FILE.name  # the models train on the splits written here
    records = {}
    for step in steps_all:
        if step not in steps:
            continue
        if step == "data":
            tasks = wn.build_tasks(args.wordnet)
            p = wn.write_xz(tasks, tasks_file)
            sizes = {t: {s: len(next(iter(tasks[t][s].values()))) for s in ("train", "val", "test")}
                     for t in ("pairs", "multilabel", "tagging")}
            log(f"data: wrote {p} ({p.stat().st_size:,} bytes); sizes {sizes}")
        elif step == "evaluate":
            for name in R.TASK_RECIPES:
                if (out / "models" / name).is_dir():
                    records[name] = evaluate(name, out, tasks_file)
        elif step == "manifest":
            old = json.loads((out / "manifest.json").read_text())["models"] if (out / "manifest.json").is_file() else {}
            files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"
                           and not p.name.startswith("."))
            m = {"files": {p.relative_to(out).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                           for p in files},
                 "total_bytes": sum(p.stat().st_size for p in files),
                 "tokenizer": {"from": "builtin:wordnet-roberta",
                               "sha256": sha256_file(shipped.MODELS_DIR / "wordnet-roberta" / "tokenizer.json")},
                 "models": {**old, **records}, "torch_version": torch.__version__}
            write_json(out / "manifest.json", m)
            for rel, info in m["files"].items():
                print(f"{info['sha256']}  {info['bytes']:>10,}  {rel}")
            print(f"total shipped: {m['total_bytes']:,} bytes")
        else:
            t = time.time()
            recipe = R.TASK_RECIPES[step]
            log(f"{step}: training, recipe {R.recipe_dict(step)}")
            x, y, _ = wordnet.task_split(recipe.task, "train", tasks_file)
            tokenizer = AutoTokenizer.from_pretrained(str(shipped.MODELS_DIR / "wordnet-roberta"), local_files_only=True)
            tokenizer.model_max_length = recipe.max_length
            init = load_file(str(shipped.MODELS_DIR / recipe.init_from / "model.safetensors")) if recipe.init_from else None
            wrapper = _train.train_task(recipe, tokenizer, x, y, wordnet.task_classes(recipe.task, tasks_file), init,
                                        log=log)
            (out / "models" / step).mkdir(parents=True, exist_ok=True)
            wrapper.model.save_pretrained(out / "models" / step, safe_serialization=True)
            records[step] = evaluate(step, out, tasks_file)
            log(f"{step}: trained in {time.time() - t:.0f}s")
    for name, rec in records.items():
        r = rec["test"]
        log(f"{name}: {rec['params']:,} params; test {rec['measure']} {r['accuracy']:.4f} ({r['correct']}/{r['n']}, "
            f"95% CI [{r['ci_low']:.4f}, {r['ci_high']:.4f}])")
    return 0


if __name__ == "__main__":
    sys.exit(main())
