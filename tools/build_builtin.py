"""Rebuild every shipped artefact of robustsuite from the Debian data, deterministically.

    uv run python tools/build_builtin.py                        # everything, into the package resources
    uv run python tools/build_builtin.py --out /tmp/rebuild     # elsewhere (e.g. to compare hashes)
    uv run python tools/build_builtin.py --steps data,fashion-cnn,manifest

Steps (in this order by default): ``data`` (Fashion-MNIST subset + full index order from
/usr/share/datasets/fashion-mnist; WordNet topics from /usr/share/wordnet), one step per shipped model
(``fashion-cnn`` first: the AT and noise models fine-tune it), ``manifest`` (SHA-256 and size of every file,
each model's recipe and test accuracy). Training runs on one thread with fixed seeds, so a re-run on the same
machine writes byte-identical files; each model's accuracy is printed and recorded in ``<name>.json``.
Steps of different models may run in parallel processes (each only reads what it depends on).
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

import torch  # noqa: E402
from scipy.stats import binomtest  # noqa: E402

from robustsuite import _fashion_mnist, _shipped, _wordnet  # noqa: E402
from robustsuite._io import sha256_file, write_json  # noqa: E402

T0 = time.time()


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def accuracy_record(correct: int, n: int) -> dict:
    ci = binomtest(correct, n).proportion_ci(0.95, method="exact")
    return {"correct": correct, "n": n, "accuracy": correct / n, "ci_low": ci.low, "ci_high": ci.high}


def fashion_splits(out: Path, full: bool, known: int = 10) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    arrays, source = _fashion_mnist.load_arrays(full=full, shipped_file=out / _fashion_mnist.SUBSET_FILE.name)
    log(f"data: {source}")
    splits = {}
    for name, (x, y) in arrays.items():
        keep = y < known
        splits[name] = (torch.from_numpy(x[keep].astype("float32") / 255.0).unsqueeze(1), torch.from_numpy(y[keep]))
    return splits


def build_data(out: Path) -> None:
    p = _fashion_mnist.build_subset(_fashion_mnist.DEBIAN_DIR, out / _fashion_mnist.SUBSET_FILE.name)
    log(f"data: wrote {p} ({p.stat().st_size:,} bytes)")
    p = _wordnet.build_topics(_wordnet.DEBIAN_DIR, out / _wordnet.TOPICS_FILE.name)
    log(f"data: wrote {p} ({p.stat().st_size:,} bytes)")


def build_vision(name: str, out: Path) -> dict:
    recipe = _shipped.FASHION_RECIPES[name]
    models_dir = out / "models"
    models_dir.mkdir(parents=True, exist_ok=True)
    full = fashion_splits(out, True, recipe.known)
    shipped = fashion_splits(out, False, recipe.known)
    init = None
    if recipe.init_from:
        init = _shipped.load_vision(recipe.init_from, models_dir).state_dict()
    x, y = full["train"]
    log(f"{name}: training on {len(y):,} images, recipe {_shipped.recipe_dict(name)}")
    model = _shipped.train_fashion(recipe, x, y, init_state=init, log=log)
    path = models_dir / f"{name}.safetensors"
    _shipped.save_vision(model, path)
    reloaded = _shipped.load_vision(name, models_dir)
    record = {
        "name": name, "kind": "vision", "dataset": _shipped.SHIPPED_MODELS[name][1], "recipe": _shipped.recipe_dict(name),
        "params": sum(p.numel() for p in reloaded.parameters()),
        "train_size": len(y),
        "test_shipped": accuracy_record(_shipped.correct_count(reloaded, *shipped["test"]), len(shipped["test"][1])),
        "test_full": accuracy_record(_shipped.correct_count(reloaded, *full["test"]), len(full["test"][1])),
    }
    return record


def build_text(name: str, out: Path) -> dict:
    recipe = _shipped.TEXT_RECIPES[name]
    topics = _wordnet.load_topics(out / _wordnet.TOPICS_FILE.name)
    texts, labels = topics["train"]["text"], torch.tensor(topics["train"]["label"])
    log(f"{name}: training on {len(texts):,} glosses, recipe {_shipped.recipe_dict(name)}")
    clf = _shipped.train_roberta(recipe, texts, labels, topics["classes"], log=log)
    target = out / "models" / name
    target.mkdir(parents=True, exist_ok=True)
    clf.model.save_pretrained(target, safe_serialization=True)
    clf.tokenizer.save_pretrained(target)
    reloaded = _shipped.load_text(name, out / "models")
    test_x, test_y = topics["test"]["text"], torch.tensor(topics["test"]["label"])
    rec = accuracy_record(_shipped.correct_count(reloaded, test_x, test_y, batch_size=256), len(test_y))
    return {"name": name, "kind": "text", "dataset": "wordnet-topics", "recipe": _shipped.recipe_dict(name),
            "params": sum(p.numel() for p in reloaded.model.parameters()), "train_size": len(texts),
            "vocab_size": len(reloaded.tokenizer), "test_shipped": rec, "test_full": rec}


def build_manifest(out: Path) -> dict:
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"
                   and not p.name.startswith(".") and p.suffix != ".pyc")
    models = {}
    for name in _shipped.SHIPPED_MODELS:
        rec = out / "models" / f"{name}.json"
        if rec.is_file():
            models[name] = json.loads(rec.read_text())
    manifest = {
        "files": {p.relative_to(out).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                  for p in files},
        "total_bytes": sum(p.stat().st_size for p in files),
        "models": models,
        "torch_version": torch.__version__,
    }
    write_json(out / "manifest.json", manifest)
    return manifest


def main(argv: list[str] | None = None) -> int:
    steps_all = ["data", *_shipped.SHIPPED_MODELS, "manifest"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=_shipped.RESOURCES, help="output directory (default: the package)")
    ap.add_argument("--steps", default=",".join(steps_all), help=f"comma-separated subset of {steps_all}")
    args = ap.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(steps) - set(steps_all))
    if unknown:
        ap.error(f"--steps: unknown {unknown}; choose from {steps_all}")
    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    for step in steps_all:
        if step not in steps:
            continue
        if step == "data":
            build_data(out)
        elif step == "manifest":
            m = build_manifest(out)
            for rel, info in m["files"].items():
                print(f"{info['sha256']}  {info['bytes']:>10,}  {rel}")
            print(f"total shipped: {m['total_bytes']:,} bytes")
        else:
            t = time.time()
            kind = _shipped.SHIPPED_MODELS[step][0]
            rec = build_vision(step, out) if kind == "vision" else build_text(step, out)
            write_json(out / "models" / f"{step}.json", rec)
            s, f = rec["test_shipped"], rec["test_full"]
            log(f"{step}: {rec['params']:,} params; test accuracy shipped subset {s['accuracy']:.4f} "
                f"({s['correct']}/{s['n']}, 95% CI [{s['ci_low']:.4f}, {s['ci_high']:.4f}]); full test "
                f"{f['accuracy']:.4f} ({f['correct']}/{f['n']}); {time.time() - t:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
