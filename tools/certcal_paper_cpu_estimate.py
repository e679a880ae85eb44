"""Estimate the CPU time of certcal's ``paper-cpu`` preset from small timed runs of its parts (the preset itself is
not run: issue 26 item 4 asks for the estimate first).

    OMP_NUM_THREADS=1 uv run python tools/certcal_paper_cpu_estimate.py

Each part is timed on the shipped Fashion-MNIST models (process CPU time, one thread) at a reduced size, turned into
a rate, and multiplied by the preset's counts: certification (noise-model forward passes), β-ACE (forward +
backward passes), the fine-tunes of ACT (per image and epoch, per method), and the certified-calibration
statistics (BCa bootstrap of the exact CCE). Prints each part's rate, count and estimate.
"""

from __future__ import annotations

import time

import torch

import certcal
from certcal import experiment
from robustsuite.loaders import load_dataset, load_model


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main() -> None:
    torch.set_num_threads(1)
    cfg = experiment.preset("paper-cpu")
    ds = load_dataset("builtin:fashion-mnist")
    noise = load_model("builtin:fashion-cnn-noise-0.25")
    base = load_model("builtin:fashion-cnn")
    x, y = ds.test.x[:20], ds.test.y[:20]
    c, a, cal = cfg.certify, cfg.act, cfg.calibration
    rows = []

    # warm-up (first-call costs: thread pools, allocator, lazy initialisation), not timed
    certcal.certify(noise, x[:2], 0.25, n0=10, n=100, batch_size=c.batch_size, seed=0)
    certcal.adversarial_calibration_training(noise, ds.train.x[:64], ds.train.y[:64], method="smoothadv",
                                             epochs=1, batch_size=32, num_noise=2, attack_steps=1, warmup_epochs=0)

    # 1. certification: forward passes of noisy images
    n_small = 1000
    t, cert = cpu(lambda: certcal.certify(noise, x, 0.25, n0=c.n0, n=n_small, batch_size=c.batch_size, seed=0,
                                          return_scores=True, stream=c.noise_stream))
    per_image = t / (x.shape[0] * (c.n0 + n_small))
    n_models = len(cfg.smoothing.sigmas) + (1 + (len(a.methods) - 1) * max(1, len(a.lr_grid))) * max(1, len(a.seeds))
    count = n_models * cfg.test_samples * (c.n0 + c.n)
    rows.append(("certification", f"{per_image * 1e6:.1f} µs per noisy image", f"{count:,} noisy images "
                 f"({n_models} models x {cfg.test_samples} inputs x {c.n0 + c.n} draws)", per_image * count))

    # 2. beta-ACE: forward + backward per image and step
    t, _ = cpu(lambda: certcal.BetaACE(steps=5)(base, x, y, 0.1))
    per = t / (x.shape[0] * (5 + 2))
    count = len(cfg.ace.norms) * len(cfg.ace.configurations) * cfg.test_samples * (cfg.ace.steps + 2)
    rows.append(("β-ACE", f"{per * 1e6:.0f} µs per image-step", f"{count:,} image-steps", per * count))

    # 3. ACT fine-tunes: per image and epoch, per method (start: SmoothAdv epochs on the same data)
    xtr, ytr = ds.train.x[:256], ds.train.y[:256]
    for method in ("smoothadv", "brier_act", "acce_act"):
        t, _ = cpu(lambda m=method: certcal.adversarial_calibration_training(
            noise, xtr, ytr, method=m, sigma=a.sigma, epsilon=a.epsilon, epochs=1, batch_size=a.batch_size,
            num_noise=a.num_noise, attack_steps=a.attack_steps, warmup_epochs=0, seed=0))
        per = t / xtr.shape[0]
        fits = max(1, len(a.lr_grid)) * max(1, len(a.seeds))
        epochs = a.epochs * fits + (a.start_epochs if method == "smoothadv" and a.start == "smoothadv" else 0)
        count = a.train_samples * epochs
        rows.append((f"ACT fine-tune {method}", f"{per * 1e3:.2f} ms per image-epoch",
                     f"{count:,} image-epochs ({epochs} epochs x {a.train_samples} images)", per * count))

    # 4. certified calibration statistics: one BCa bootstrap of the exact CCE (n_boot resamples + jackknife)
    b = certcal.confidence_bounds(cert.scores, 0.25, 0.25)
    corr = (cert.prediction == y.numpy()).astype(float)
    t, _ = cpu(lambda: certcal.certified_calibration_error(b.lower, b.upper, corr, 15))
    per_call = t
    n_boot = cal.n_boot
    calls_per_interval = n_boot + cfg.test_samples
    n_intervals = (len(cfg.smoothing.sigmas) * len(cal.radii) * 2 + n_models * len(cal.radii))
    count = n_intervals * calls_per_interval
    rows.append(("CCE bootstrap (BCa)", f"{per_call * 1e3:.2f} ms per exact CCE (20 inputs; grows with N)",
                 f"~{count:,} CCE solves", per_call * count * cfg.test_samples / 20))

    total = sum(r[3] for r in rows)
    print(f"paper-cpu estimate (process CPU, one thread; {torch.__version__}):")
    print("| part | measured rate | count | estimated CPU |\n| --- | --- | --- | --- |")
    for name, rate, count, est in rows:
        print(f"| {name} | {rate} | {count} | {est / 3600:.2f} h |")
    print(f"| total | | | {total / 3600:.2f} h |")


if __name__ == "__main__":
    main()
