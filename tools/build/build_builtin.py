"""Rebuild every shipped artefact of robustsuite's ``resources/``, deterministically.

    uv run python tools/build/build_builtin.py                        # everything, into the package resources
    uv run python tools/build/build_builtin.py --out /tmp/rebuild     # elsewhere (e.g. to compare hashes)
    uv run python tools/build/build_builtin.py --steps data,fashion-cnn,manifest

Steps (in this order by default): ``data`` (Fashion-MNIST subset + full index order from
/usr/share/datasets/fashion-mnist; WordNet topics from /usr/share/wordnet; the generated sentiment corpora), one
step per shipped model (``fashion-cnn`` first: the AT, noise and open-set models fine-tune it; the 8×8-digits CNNs
on scikit-learn's digits; ``text-tiny`` on the shipped corpus), ``evaluate`` (re-measure every model's record from
its saved weights), ``manifest`` (SHA-256 and size of every file, each model's recipe and test accuracy). Training
runs on one thread with fixed seeds, so a re-run on the same machine writes byte-identical files; each model's
accuracy is printed and recorded in ``<name>.json``. Steps of different models may run in parallel processes
(each only reads what it depends on). The WordNet task models: ``build_wordnet_tasks.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import _data  # noqa: E402
import _recipes as R  # noqa: E402
import _train  # noqa: E402
import _wordnet  # noqa: E402
import torch  # noqa: E402
from scipy.stats import binomtest  # noqa: E402

from robustsuite._io import sha256_file, write_json  # noqa: E402
from robustsuite.data import builtin, fashion  # noqa: E402
from robustsuite.data.dataset import read_json_xz  # noqa: E402
from robustsuite.zoo import shipped  # noqa: E402

T0 = time.time()
TOPICS, CORPORA = "wordnet_topics.json.xz", "sentiment_corpora.json.xz"


def log(msg: str) -> None:
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def accuracy_record(correct: int, n: int) -> dict:
    ci = binomtest(correct, n).proportion_ci(0.95, method="exact")
    return {"correct": correct, "n": n, "accuracy": correct / n, "ci_low": ci.low, "ci_high": ci.high}


def fashion_splits(out: Path, full: bool, known: int = 10) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    arrays, source = fashion.load_arrays(full=full, shipped_file=out / fashion.SUBSET_FILE.name)
    log(f"data: {source}")
    splits = {}
    for name, (x, y, _) in arrays.items():
        keep = y < known
        splits[name] = (torch.from_numpy(x[keep].astype("float32") / 255.0).unsqueeze(1), torch.from_numpy(y[keep]))
    return splits


def build_data(out: Path) -> None:
    for p in (_data.build_subset(fashion.DEBIAN_DIR, out / fashion.SUBSET_FILE.name),
              _wordnet.write_xz(_wordnet.build_topics(_wordnet.DEBIAN_DIR), out / TOPICS),
              _wordnet.write_xz(_data.corpora(), out / CORPORA)):
        log(f"data: wrote {p} ({p.stat().st_size:,} bytes)")


def _small_dataset(name: str, out: Path):
    """A builtin dataset the small models train on (the corpora from ``out``, the digits from scikit-learn)."""
    if name.startswith("sentiment"):
        kind = "sentiment" if name == "sentiment-mini" else "emotion"
        c = read_json_xz(out / CORPORA)[kind]
        return builtin.from_arrays(f"builtin:{name}", "text", c["classes"], c["text"], c["label"])
    return builtin.BUILTIN_DATASETS[name][0]()


def build_model(name: str, out: Path) -> dict:
    models_dir = out / "models"
    models_dir.mkdir(parents=True, exist_ok=True)
    recipe = R.ALL[name]
    log(f"{name}: training, recipe {R.recipe_dict(name)}")
    if name in R.FASHION_RECIPES:
        x, y = fashion_splits(out, True, recipe.known)["train"]
        init = shipped.load_vision(recipe.init_from, models_dir).state_dict() if recipe.init_from else None
        _train.save_vision(_train.train_fashion(recipe, x, y, init_state=init, log=log),
                           models_dir / f"{name}.safetensors", "fashion-cnn")
    elif name in R.DIGITS_RECIPES:
        _train.save_vision(_train.train_digits(recipe, builtin.BUILTIN_DATASETS[recipe.dataset][0](), log=log),
                           models_dir / f"{name}.safetensors", "digits-cnn")
    else:
        if name in R.TEXT_RECIPES:
            t = read_json_xz(out / TOPICS)
            texts, labels, classes = t["train"]["text"], torch.tensor(t["train"]["label"]), t["classes"]
            clf = _train.train_roberta(recipe, texts, labels, classes, log=log)
        else:
            ds = _small_dataset(recipe.dataset, out)
            clf = _train.train_text_tiny(recipe, list(ds.train.x), ds.train.y, ds.classes, log=log)
        (models_dir / name).mkdir(parents=True, exist_ok=True)
        clf.model.save_pretrained(models_dir / name, safe_serialization=True)
        clf.tokenizer.save_pretrained(models_dir / name)
    return evaluate(name, out)


PGD_EVAL = {"eps": 0.1, "steps": 10, "step_size": 0.025, "n": 1000}  # robust accuracy on the shipped test head


@torch.no_grad()
def _noisy_correct(model, x, y, sigma: float, seed: int = 0) -> int:
    gen = torch.Generator().manual_seed(seed)
    return _train.correct_count(model, x + sigma * torch.randn(x.shape, generator=gen), y)


def evaluate(name: str, out: Path) -> dict:
    """The record of a trained model: clean accuracy on the shipped (and the full) test split; for the noise models
    also under the training noise (one fixed draw); for the standard and AT Fashion models PGD accuracy."""
    recipe = R.ALL[name]
    model = shipped.load(name, out / "models")
    record = {"name": name, "kind": shipped.SHIPPED[name][0], "dataset": shipped.SHIPPED[name][1],
              "recipe": R.recipe_dict(name)}
    if name in R.FASHION_RECIPES:
        full, ship = fashion_splits(out, True, recipe.known), fashion_splits(out, False, recipe.known)
        (xs, ys), (xf, yf) = ship["test"], full["test"]
        record |= {"params": sum(p.numel() for p in model.parameters()), "train_size": len(full["train"][1]),
                   "test_shipped": accuracy_record(_train.correct_count(model, xs, ys), len(ys)),
                   "test_full": accuracy_record(_train.correct_count(model, xf, yf), len(yf))}
        if recipe.noise_sigma > 0:
            record["test_shipped_noisy"] = accuracy_record(_noisy_correct(model, xs, ys, recipe.noise_sigma), len(ys))
            record["test_full_noisy"] = accuracy_record(_noisy_correct(model, xf, yf, recipe.noise_sigma), len(yf))
        if name in ("fashion-cnn", "fashion-cnn-at") or recipe.eps > 0:
            n = PGD_EVAL["n"]
            x_adv = _train.pgd_linf(model, xs[:n], ys[:n], eps=PGD_EVAL["eps"], steps=PGD_EVAL["steps"],
                                    step_size=PGD_EVAL["step_size"], generator=torch.Generator().manual_seed(0))
            record["pgd_shipped"] = {**accuracy_record(_train.correct_count(model, x_adv, ys[:n]), n), **PGD_EVAL}
        return record
    if name in R.TEXT_RECIPES:
        t = read_json_xz(out / TOPICS)
        x, y, n_train = t["test"]["text"], torch.tensor(t["test"]["label"]), len(t["train"]["text"])
        net = model.model
    else:
        ds = _small_dataset(recipe.dataset, out)
        x, y, n_train = (ds.test.x if isinstance(ds.test.x, torch.Tensor) else list(ds.test.x)), ds.test.y, len(ds.train)
        net = model if isinstance(model, torch.nn.Module) else model.model
    rec = accuracy_record(_train.correct_count(model, x, y, batch_size=256), len(y))
    record |= {"params": sum(p.numel() for p in net.parameters()), "train_size": n_train}
    if hasattr(model, "tokenizer"):
        record["vocab_size"] = len(model.tokenizer)
    return record | {"test_shipped": rec, "test_full": rec}


def build_manifest(out: Path) -> dict:
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.name != "manifest.json"
                   and not p.name.startswith(".") and p.suffix != ".pyc")
    models = {}
    for name in (*R.FASHION_RECIPES, *R.TEXT_RECIPES, *R.DIGITS_RECIPES, *R.TINY_RECIPES):
        rec = out / "models" / f"{name}.json"
        if rec.is_file():
            models[name] = read_json(rec)
    manifest = {
        "files": {p.relative_to(out).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                  for p in files},
        "total_bytes": sum(p.stat().st_size for p in files),
        "models": models,
        "torch_version": torch.__version__,
    }
    write_json(out / "manifest.json", manifest)
    return manifest


def read_json(path: Path) -> dict:
    import json

    return json.loads(path.read_text(encoding="utf-8"))


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
    names = [*R.FASHION_RECIPES, *R.TEXT_RECIPES, *R.DIGITS_RECIPES, *R.TINY_RECIPES]
    steps_all = ["data", *names, "evaluate", "manifest"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=shipped.RESOURCES, help="output directory (default: the package)")
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
            for name in names:
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
            rec = build_model(step, out)
            write_json(out / "models" / f"{step}.json", rec)
            report(step, rec, time.time() - t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
