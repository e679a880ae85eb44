"""Scale on paper: per-unit throughput measured on this CPU, extrapolated to the paper-scale runs.

Measures, with one intra-op thread (one Ray worker with ``num_cpus=1``), in CPU seconds of this process (robust
to other jobs sharing the cores; best of ``--repeats``):

1. certcal certification on the shipped ``builtin:fashion-cnn-noise-0.25``: ``certcal.certify`` over Fashion-MNIST
   test images (n0 = 100 selection draws + ``--cert-n`` draws, sigma 0.25): images x noise draws per second, and
   its ratio to the bare forward passes of the same model (the floor);
2. uncspan MUS attacks on the shipped ``builtin:fashion-cnn-at``: ``uncspan.uncertainty_span`` with the paper's
   setting (over- and under-confidence PGD, Eq. 10/11, no restarts) and ``uncspan.rank_models`` with the
   package's defaults (strongest under-confidence setting, one restart, plus the misclassification PGD): images x
   attack steps per second, and the ratio to bare forward+backward passes;
3. CIFAR-10-sized architectures (3x32x32): torchvision's ResNet-18, and RobustBench's CIFAR ResNet-18 and
   WideResNet-28-10 (its architecture code, random weights): forward FLOPs per image
   (``torch.utils.flop_counter``), forward and forward+backward seconds per image, ratio to the Fashion models;
4. RobustBench's CIFAR-10 L-inf model zoo, read offline from the installed package: the number of models and the
   forward FLOPs of each (architectures built on the meta device, no weights).

Then estimates (printed with every input): certification of 500 CIFAR-10 images x (100 + 100,000) draws per sigma
with a CIFAR ResNet-18 base model (the paper used Cohen et al.'s ResNet-110, not timed here), and the MUS
leaderboard over every zoo model (8,000 images, 150 steps; paper protocol and package defaults; each model's
forward+backward time from its FLOPs at the measured WideResNet-28-10 rate). The work certify / the attacks do
around the model (noise, counting, projections) is measured on the Fashion models and scaled by the number of
input values (3x32x32 / 1x28x28). Costs are in CPU
core-hours, the CPU workers that finish each in an hour, and GPU workers under an ASSUMED GPU throughput
(``--gpu-tflops``, not measured: no GPU here).

    uv run python tools/bench/bench_scale.py                 # about 5-10 min on the shared 2-core machine
    uv run python tools/bench/bench_scale.py --json scale.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import warnings
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

CERT_IMAGES, CERT_N0, CERT_N = 500, 100, 100_000  # Cohen et al. / certcal paper (per sigma)
MUS_IMAGES, MUS_STEPS = 8_000, 150  # uncspan paper, Sect. V: 8,000 test images, 150 PGD steps
PAPER_ATTACKS = 2  # over-confidence (Eq. 10) + under-confidence (Eq. 11), one run each
HOUR = 3600.0


def cpu_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Best-of-``repeats`` CPU time of this process for ``fn()``."""
    best = math.inf
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def forward_flops(model: torch.nn.Module, shape: tuple[int, ...]) -> int:
    """Forward FLOPs of one input of ``shape`` (counted by torch.utils.flop_counter on the meta device)."""
    from torch.utils.flop_counter import FlopCounterMode

    meta = _to_meta(model)
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        meta(torch.empty(1, *shape, device="meta"))
    return int(fc.get_total_flops())


def _to_meta(model: torch.nn.Module) -> torch.nn.Module:
    import copy

    return copy.deepcopy(model).to("meta").eval()


def forward_time(model: torch.nn.Module, x: torch.Tensor, repeats: int) -> float:
    """CPU seconds per image of a plain forward pass at batch ``len(x)``."""
    with torch.no_grad():
        model(x[:2])  # warm-up
        return cpu_seconds(lambda: model(x), repeats) / len(x)


def forward_backward_time(model: torch.nn.Module, x: torch.Tensor, repeats: int) -> float:
    """CPU seconds per image of forward + backward to the input (one attack step's floor)."""

    def step() -> None:
        xa = x.clone().requires_grad_(True)
        loss = torch.nn.functional.log_softmax(model(xa), -1).logsumexp(-1).sum()
        torch.autograd.grad(loss, xa)

    step()
    return cpu_seconds(step, repeats) / len(x)


def zoo_flops() -> tuple[dict[str, int], dict[str, str]]:
    """Forward FLOPs per image of every RobustBench CIFAR-10 L-inf model (meta device), and those that cannot be
    built there with the reason."""
    import contextlib
    import io

    from robustsuite_common import import_robustbench

    import_robustbench(extra="uncspan[robustbench]")
    from robustbench.model_zoo import model_dicts
    from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel
    from torch.utils.flop_counter import FlopCounterMode

    flops, failed = {}, {}
    for name, entry in model_dicts[BenchmarkDataset.cifar_10][ThreatModel.Linf].items():
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), torch.device("meta"):
                warnings.simplefilter("ignore")
                model = entry["model"]().eval()
                with FlopCounterMode(display=False) as fc, torch.no_grad():
                    model(torch.empty(1, 3, 32, 32))
            flops[name] = int(fc.get_total_flops())
        except Exception as e:  # custom layers that need real tensors, missing timm configs, CUDA-only code
            failed[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    return flops, failed


def cifar_models() -> dict[str, torch.nn.Module]:
    from robustsuite_common import import_robustbench

    import_robustbench(extra="uncspan[robustbench]")
    from robustbench.model_zoo.architectures.resnet import ResNet18
    from robustbench.model_zoo.architectures.wide_resnet import WideResNet

    out = {}
    try:
        import torchvision

        out["torchvision ResNet-18"] = torchvision.models.resnet18(num_classes=10)
    except ImportError:
        pass
    torch.manual_seed(0)
    out["RobustBench CIFAR ResNet-18"] = ResNet18()
    out["RobustBench WideResNet-28-10"] = WideResNet(depth=28, widen_factor=10)
    return {k: m.eval() for k, m in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cert-images", type=int, default=16)
    ap.add_argument("--cert-n", type=int, default=2000, help="certification draws per image (after n0 = 100)")
    ap.add_argument("--cert-batch", type=int, default=450, help="draws per forward (the certcal runner's default)")
    ap.add_argument("--mus-images", type=int, default=64)
    ap.add_argument("--mus-steps", type=int, default=20)
    ap.add_argument("--cifar-batch", type=int, default=8, help="images per timed CIFAR-sized forward")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpu-tflops", type=float, default=50.0,
                    help="ASSUMED sustained GPU throughput on these convolutions (TFLOP/s); not measured")
    ap.add_argument("--no-zoo", action="store_true", help="skip the zoo FLOP count (about 1.5 min)")
    ap.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import certcal
    import uncspan
    from robustsuite.loaders import load_dataset, load_model

    out: dict = {"threads": torch.get_num_threads(), "load_average_start": os.getloadavg()[0]}
    ds = load_dataset("builtin:fashion-mnist")
    x_all, y_all = ds.test.x, ds.test.y

    # 1. certification throughput (certcal.certify) and its floor
    noise = load_model("builtin:fashion-cnn-noise-0.25").eval()
    xc = x_all[: args.cert_images]
    draws = args.cert_images * (CERT_N0 + args.cert_n)
    cert_s = cpu_seconds(lambda: certcal.certify(noise, xc, sigma=0.25, n0=CERT_N0, n=args.cert_n,
                                                 batch_size=args.cert_batch, seed=0), args.repeats)
    fwd_fashion = forward_time(noise, x_all[: args.cert_batch], args.repeats)
    out["certify"] = {"images": args.cert_images, "draws_per_image": CERT_N0 + args.cert_n, "cpu_s": cert_s,
                      "draws_per_s": draws / cert_s, "forward_s_per_image": fwd_fashion,
                      "ratio_to_forward_floor": cert_s / (draws * fwd_fashion),
                      "flops_per_image": forward_flops(noise, tuple(xc.shape[1:]))}

    # 2. MUS attack throughput (uncspan) and its floor
    at = load_model("builtin:fashion-cnn-at").eval()
    xm, ym = x_all[: args.mus_images], y_all[: args.mus_images]
    span_s = cpu_seconds(lambda: uncspan.uncertainty_span(at, xm, eps=0.1, norm="Linf", steps=args.mus_steps, seed=0,
                                                          restarts=0,
                                                          under_objective="cross_entropy", batch_size=256),
                         args.repeats)
    # attack="pgd": the floor below counts PGD passes (rank_models' default robust accuracy is AutoAttack)
    rank_cfg = uncspan.RankConfig(eps=0.1, steps=args.mus_steps, seed=0, attack="pgd")
    rank_s = cpu_seconds(lambda: uncspan.rank_models({"at": at}, xm, ym, config=rank_cfg),
                         args.repeats)
    fb_fashion = forward_backward_time(at, xm, args.repeats)
    steps_paper = args.mus_images * args.mus_steps * PAPER_ATTACKS
    out["mus"] = {"images": args.mus_images, "steps": args.mus_steps, "paper_cpu_s": span_s,
                  "paper_image_steps_per_s": steps_paper / span_s,
                  "paper_ratio_to_fwd_bwd_floor": span_s / (steps_paper * fb_fashion),
                  "defaults_cpu_s": rank_s,
                  "defaults_cost_in_paper_attack_runs": rank_s / span_s * PAPER_ATTACKS,
                  "fwd_bwd_s_per_image": fb_fashion, "flops_per_image": forward_flops(at, tuple(xm.shape[1:]))}

    # 3. CIFAR-sized architectures
    xcifar = torch.rand(args.cifar_batch, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    archs = {}
    for name, model in cifar_models().items():
        f = forward_time(model, xcifar, args.repeats)
        fb = forward_backward_time(model, xcifar, args.repeats)
        flops = forward_flops(model, (3, 32, 32))
        archs[name] = {"flops_per_image": flops, "forward_s_per_image": f, "fwd_bwd_s_per_image": fb,
                       "forward_gflops_per_s": flops / f / 1e9,
                       "forward_ratio_to_fashion_noise_cnn": f / fwd_fashion,
                       "fwd_bwd_ratio_to_fashion_cnn_at": fb / fb_fashion}
    out["cifar"] = archs

    # 4. the zoo
    if not args.no_zoo:
        flops, failed = zoo_flops()
        out["zoo"] = {"models": len(flops) + len(failed), "flops_counted": len(flops), "failed": failed,
                      "flops": flops}

    # ---- estimates ----------------------------------------------------------------------------------------
    cert_arch = archs["RobustBench CIFAR ResNet-18"]
    wrn = archs["RobustBench WideResNet-28-10"]
    # a GPU's speedup over one core of this CPU, from the assumed GPU rate and the measured WRN forward rate
    gpu_speedup = args.gpu_tflops * 1e12 / (wrn["flops_per_image"] / wrn["forward_s_per_image"])
    # per draw / attack step: the model's pass, plus what certify / the attack add around it (noise, counting,
    # projection), measured on the Fashion models and scaled by the number of input values (3x32x32 / 1x28x28)
    pixels = 3 * 32 * 32 / xc[0].numel()
    cert_extra = max(cert_s / draws - fwd_fashion, 0.0) * pixels
    mus_extra = max(span_s / steps_paper - fb_fashion, 0.0) * pixels
    cert_core_s = CERT_IMAGES * (CERT_N0 + CERT_N) * (cert_arch["forward_s_per_image"] + cert_extra)
    est = {"gpu_tflops_assumed": args.gpu_tflops, "gpu_speedup_over_one_core": gpu_speedup,
           "certify_extra_s_per_cifar_draw": cert_extra, "mus_extra_s_per_cifar_image_step": mus_extra,
           "certification_per_sigma": {"core_hours": cert_core_s / HOUR,
                                       "cpu_workers_for_1h": math.ceil(cert_core_s / HOUR),
                                       "gpu_hours": cert_core_s / gpu_speedup / HOUR,
                                       "gpu_workers_for_1h": math.ceil(cert_core_s / gpu_speedup / HOUR)}}
    if "zoo" in out:
        counted = sorted(out["zoo"]["flops"].values())
        median = counted[len(counted) // 2]
        per_model_flops = list(counted) + [median] * len(out["zoo"]["failed"])
        s_per_flop = wrn["fwd_bwd_s_per_image"] / wrn["flops_per_image"]  # fwd+bwd CPU s per forward FLOP
        lb = {}
        for setting, runs in (("paper", PAPER_ATTACKS), ("defaults", out["mus"]["defaults_cost_in_paper_attack_runs"])):
            per_model = [MUS_IMAGES * MUS_STEPS * runs * (f * s_per_flop + mus_extra) for f in per_model_flops]
            total = sum(per_model)
            lb[setting] = {"attack_runs_per_image": runs, "core_hours": total / HOUR,
                           "largest_model_core_hours": max(per_model) / HOUR,
                           "cpu_workers_for_1h": math.ceil(total / HOUR),
                           "image_shards_of_largest_model_for_1h": math.ceil(max(per_model) / HOUR),
                           "gpu_hours": total / gpu_speedup / HOUR,
                           "gpu_workers_for_1h": math.ceil(total / gpu_speedup / HOUR),
                           "largest_model_gpu_hours": max(per_model) / gpu_speedup / HOUR,
                           "image_shards_of_largest_model_for_1h_gpu": math.ceil(max(per_model) / gpu_speedup / HOUR)}
        est["mus_leaderboard"] = lb | {"models": len(per_model_flops), "median_gflops": median / 1e9,
                                       "max_gflops": counted[-1] / 1e9, "min_gflops": counted[0] / 1e9}
    out["estimates"] = est
    out["load_average_end"] = os.getloadavg()[0]
    _print(out, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


def _print(o: dict, args) -> None:
    c, m = o["certify"], o["mus"]
    print(f"bench_scale: 1 thread, CPU seconds of this process, best of {args.repeats}; load average "
          f"{o['load_average_start']:.1f} -> {o['load_average_end']:.1f}")
    print(f"certcal.certify, fashion-cnn-noise-0.25, {c['images']} images x {c['draws_per_image']} draws "
          f"(batch {args.cert_batch}): {c['cpu_s']:.2f} s = {c['draws_per_s']:,.0f} image-draws/s; "
          f"{c['ratio_to_forward_floor']:.2f}x the bare forward passes ({c['flops_per_image'] / 1e6:.2f} MFLOP/image)")
    print(f"uncspan MUS, fashion-cnn-at, {m['images']} images x {m['steps']} steps: paper setting (2 attacks) "
          f"{m['paper_cpu_s']:.2f} s = {m['paper_image_steps_per_s']:,.0f} image-steps/s, "
          f"{m['paper_ratio_to_fwd_bwd_floor']:.2f}x the bare forward+backward passes; package defaults "
          f"(rank_models) {m['defaults_cpu_s']:.2f} s = {m['defaults_cost_in_paper_attack_runs']:.1f} attack runs")
    print("CIFAR-10-sized (3x32x32) architectures, random weights, batch", args.cifar_batch)
    for name, a in o["cifar"].items():
        print(f"  {name:30s} {a['flops_per_image'] / 1e9:7.2f} GFLOP/image  forward {a['forward_s_per_image'] * 1e3:8.1f} "
              f"ms/image ({a['forward_gflops_per_s']:.1f} GFLOP/s, {a['forward_ratio_to_fashion_noise_cnn']:,.0f}x "
              f"fashion-cnn-noise)  fwd+bwd {a['fwd_bwd_s_per_image'] * 1e3:8.1f} ms/image "
              f"({a['fwd_bwd_ratio_to_fashion_cnn_at']:,.0f}x fashion-cnn-at)")
    e = o["estimates"]
    if "zoo" in o:
        z, lbm = o["zoo"], e["mus_leaderboard"]
        print(f"RobustBench CIFAR-10 Linf zoo: {z['models']} models; forward FLOPs counted for {z['flops_counted']} "
              f"({lbm['min_gflops']:.2f} .. {lbm['max_gflops']:.2f} GFLOP/image, median {lbm['median_gflops']:.2f}); "
              f"not buildable on the meta device (counted at the median): {', '.join(z['failed']) or 'none'}")
    ce = e["certification_per_sigma"]
    print(f"around the model, per CIFAR-sized draw / attack step (Fashion overhead x {3 * 32 * 32 / 784:.1f} input "
          f"values): certify {e['certify_extra_s_per_cifar_draw'] * 1e3:.3f} ms, MUS attack "
          f"{e['mus_extra_s_per_cifar_image_step'] * 1e3:.3f} ms")
    print(f"GPU: ASSUMED {e['gpu_tflops_assumed']:.0f} TFLOP/s sustained = {e['gpu_speedup_over_one_core']:,.0f}x "
          "one core here (measured WRN-28-10 forward rate)")
    print(f"ESTIMATE certification, 500 CIFAR-10 images x (100 + 100,000) draws per sigma, CIFAR ResNet-18: "
          f"{ce['core_hours']:,.1f} core-hours -> {ce['cpu_workers_for_1h']} CPU workers for 1 h; "
          f"{ce['gpu_hours']:.2f} GPU-hours -> {ce['gpu_workers_for_1h']} GPU worker(s); the {CERT_IMAGES} images are "
          f"one certcal unit, so more than one worker needs image shards")
    if "mus_leaderboard" in e:
        for setting in ("paper", "defaults"):
            s = e["mus_leaderboard"][setting]
            print(f"ESTIMATE MUS leaderboard, {e['mus_leaderboard']['models']} models x 8,000 images x 150 steps, "
                  f"{setting} ({s['attack_runs_per_image']:.1f} attack runs): {s['core_hours']:,.0f} core-hours "
                  f"(largest model {s['largest_model_core_hours']:,.0f}) -> {s['cpu_workers_for_1h']:,} CPU workers "
                  f"for 1 h with the largest model in {s['image_shards_of_largest_model_for_1h']} image shards; "
                  f"{s['gpu_hours']:.1f} GPU-hours (largest model {s['largest_model_gpu_hours']:.2f}) -> "
                  f"{s['gpu_workers_for_1h']} GPU workers, the largest model in "
                  f"{s['image_shards_of_largest_model_for_1h_gpu']} image shards")


if __name__ == "__main__":
    main()
