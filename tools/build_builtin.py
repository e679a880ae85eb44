"""Rebuild every shipped artefact of robustsuite from the Debian data, deterministically.

    uv run python tools/build_builtin.py                        # everything, into the package resources
    uv run python tools/build_builtin.py --out /tmp/rebuild     # elsewhere (e.g. to compare hashes)
    uv run python tools/build_builtin.py --steps data,fashion-cnn,manifest

Steps (in this order by default): ``data`` (Fashion-MNIST subset + full index order from
/usr/share/datasets/fashion-mnist; WordNet topics from /usr/share/wordnet), one step per shipped model
(``fashion-cnn`` first: the AT, noise and open-set models fine-tune it), ``evaluate`` (re-measure every
model's record from its saved weights), ``manifest`` (SHA-256 and size of every file,
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
    _shipped.save_vision(model, models_dir / f"{name}.safetensors")
    return evaluate_vision(name, out, full, shipped)


PGD_EVAL = {"eps": 0.1, "steps": 10, "step_size": 0.025, "n": 1000}  # robust accuracy on the shipped test head


@torch.no_grad()
def _noisy_correct(model, x, y, sigma: float, seed: int = 0) -> int:
    gen = torch.Generator().manual_seed(seed)
    return _shipped.correct_count(model, x + sigma * torch.randn(x.shape, generator=gen), y)


def evaluate_vision(name: str, out: Path, full=None, shipped=None) -> dict:
    """The record of a trained vision model: clean accuracy on the shipped and the full test split; for the
    noise models also under the training noise (one fixed draw); for the standard and AT models PGD accuracy."""
    from robustsuite.models import pgd_linf

    recipe = _shipped.FASHION_RECIPES[name]
    full = full or fashion_splits(out, True, recipe.known)
    shipped = shipped or fashion_splits(out, False, recipe.known)
    model = _shipped.load_vision(name, out / "models")
    (xs, ys), (xf, yf) = shipped["test"], full["test"]
    record = {
        "name": name, "kind": "vision", "dataset": _shipped.SHIPPED_MODELS[name][1], "recipe": _shipped.recipe_dict(name),
        "params": sum(p.numel() for p in model.parameters()), "train_size": len(full["train"][1]),
        "test_shipped": accuracy_record(_shipped.correct_count(model, xs, ys), len(ys)),
        "test_full": accuracy_record(_shipped.correct_count(model, xf, yf), len(yf)),
    }
    if recipe.noise_sigma > 0:
        record["test_shipped_noisy"] = accuracy_record(_noisy_correct(model, xs, ys, recipe.noise_sigma), len(ys))
        record["test_full_noisy"] = accuracy_record(_noisy_correct(model, xf, yf, recipe.noise_sigma), len(yf))
    if name in ("fashion-cnn", "fashion-cnn-at"):
        n = PGD_EVAL["n"]
        x_adv = pgd_linf(model, xs[:n], ys[:n], eps=PGD_EVAL["eps"], steps=PGD_EVAL["steps"],
                         step_size=PGD_EVAL["step_size"], generator=torch.Generator().manual_seed(0))
        record["pgd_shipped"] = {**accuracy_record(_shipped.correct_count(model, x_adv, ys[:n]), n), **PGD_EVAL}
    return record


def evaluate(name: str, out: Path) -> dict:
    if _shipped.SHIPPED_MODELS[name][0] == "vision":
        return evaluate_vision(name, out)
    return evaluate_text(name, out)


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
    return evaluate_text(name, out)


def evaluate_text(name: str, out: Path) -> dict:
    topics = _wordnet.load_topics(out / _wordnet.TOPICS_FILE.name)
    reloaded = _shipped.load_text(name, out / "models")
    test_x, test_y = topics["test"]["text"], torch.tensor(topics["test"]["label"])
    rec = accuracy_record(_shipped.correct_count(reloaded, test_x, test_y, batch_size=256), len(test_y))
    return {"name": name, "kind": "text", "dataset": "wordnet-topics", "recipe": _shipped.recipe_dict(name),
            "params": sum(p.numel() for p in reloaded.model.parameters()), "train_size": len(topics["train"]["text"]),
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


def report(name: str, rec: dict, seconds: float | None = None) -> None:
    def one(r: dict) -> str:
        return f"{r['accuracy']:.4f} ({r['correct']}/{r['n']}, 95% CI [{r['ci_low']:.4f}, {r['ci_high']:.4f}])"

    parts = [f"{rec['params']:,} params", f"clean test accuracy on the shipped subset {one(rec['test_shipped'])}",
             f"on the full test split {one(rec['test_full'])}"]
    if "test_full_noisy" in rec:
        parts.append(f"under its training noise (full test) {one(rec['test_full_noisy'])}")
    if "pgd_shipped" in rec:
        parts.append(f"PGD-{rec['pgd_shipped']['steps']} eps {rec['pgd_shipped']['eps']} on the first "
                     f"{rec['pgd_shipped']['n']} shipped test images {one(rec['pgd_shipped'])}")
    if seconds is not None:
        parts.append(f"{seconds:.0f}s")
    log(f"{name}: " + "; ".join(parts))


def main(argv: list[str] | None = None) -> int:
    steps_all = ["data", *_shipped.SHIPPED_MODELS, "evaluate", "manifest"]
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
        elif step == "evaluate":  # re-measure every present model's record from its saved weights
            for name in _shipped.SHIPPED_MODELS:
                if (out / "models" / f"{name}.json").is_file():
                    rec = evaluate(name, out)
                    write_json(out / "models" / f"{name}.json", rec)
                    report(name, rec)
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
            report(step, rec, time.time() - t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
