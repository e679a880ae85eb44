"""Throughput of the Zéroe attackers vs nlpaug's closest character augmenters and a naive per-word loop.

    uv run python tools/bench/bench_zeroe_perturb.py              # 1,000 sentences (about a minute)
    uv run python tools/bench/bench_zeroe_perturb.py --paper-size # 10,000 sentences (SNLI test size)
    uv run python tools/bench/bench_zeroe_perturb.py --compare /tmp/zeroe-old/packages/zeroe-perturb/src --all

For each pairing the same corpus is perturbed at word probability p (= character probability φ) by
zeroe-perturb (§3.1 protocol + change report), by the nlpaug augmenter (``aug_word_p = aug_char_p = p``)
and by a naive Python loop over ``text.split()`` doing the same edit, once with one shared RNG (``naive``) and
once seeded per text like zeroe's batch form (``naive/s``: same per-item reproducibility); the figures are sentences per
second (best of 3 runs, process CPU time) and the ratios zeroe / nlpaug and zeroe / naive, all measured
in this run on this machine.  ``--compare SRC`` first times another version of zeroe-perturb (e.g. the
pre-optimisation commit) against this one in alternating subprocesses and prints the speed-ups, then the
table above, all in the same run.
Pairings: keyboard-typo ↔ nlpaug KeyboardAug; inner-shuffle ↔ RandomCharAug(swap); intrude ↔
RandomCharAug(insert); truncate ↔ RandomCharAug(delete).  nlpaug (root dev group) is optional.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import zeroe_perturb as zp
from zeroe_perturb.keyboard import QWERTY_NEIGHBOURS

SUBJ = ["the movie", "this film", "the acting", "the story", "the ending", "the soundtrack", "the service"]
ADJ = ["wonderful", "terrible", "surprisingly clever", "painfully boring", "beautifully shot", "forgettable"]
TAIL = ["and i would watch it again", "but the pacing dragged in the middle", "although the cast tried hard",
        "which nobody expected", "despite the enormous budget"]


def corpus(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJ).capitalize()} was {rng.choice(ADJ)}, {rng.choice(TAIL)}." for _ in range(n)]


# -- the naive per-word loops (same edits, no protocol bookkeeping, no report) -------------------------
def naive_keyboard(text: str, p: float, rng: random.Random) -> str:
    out = []
    for w in text.split(" "):
        if rng.random() < p:
            w = "".join(rng.choice(QWERTY_NEIGHBOURS[c.lower()]) if c.lower() in QWERTY_NEIGHBOURS
                        and rng.random() < p else c for c in w)
        out.append(w)
    return " ".join(out)


def naive_inner_shuffle(text: str, p: float, rng: random.Random) -> str:
    out = []
    for w in text.split(" "):
        if len(w) > 3 and rng.random() < p:
            mid = list(w[1:-1])
            rng.shuffle(mid)
            w = w[0] + "".join(mid) + w[-1]
        out.append(w)
    return " ".join(out)


def naive_intrude(text: str, p: float, rng: random.Random) -> str:
    out = []
    for w in text.split(" "):
        if len(w) >= 3 and rng.random() < p:
            s = rng.choice(zp.INTRUDE_SYMBOLS)
            w = w[0] + "".join((s + c) if rng.random() < p else c for c in w[1:])
        out.append(w)
    return " ".join(out)


def naive_truncate(text: str, p: float, rng: random.Random) -> str:
    return " ".join(w[:-1] if len(w) >= 3 and rng.random() < p else w for w in text.split(" "))


NAIVE = {"keyboard-typo": naive_keyboard, "inner-shuffle": naive_inner_shuffle, "intrude": naive_intrude,
         "truncate": naive_truncate}


def nlpaug_for(attack: str, p: float):
    try:
        import nlpaug.augmenter.char as nac
    except ImportError:
        return None, "nlpaug not installed"
    common = dict(aug_word_p=p, aug_char_p=p, aug_word_max=10**6, aug_char_max=10**6)
    if attack == "keyboard-typo":
        return nac.KeyboardAug(include_special_char=False, include_numeric=False, **common), "KeyboardAug"
    action = {"inner-shuffle": "swap", "intrude": "insert", "truncate": "delete"}[attack]
    return nac.RandomCharAug(action=action, **common), f"RandomCharAug({action})"


def bench_attackers() -> dict[str, zp.Attacker]:
    """The attackers timed: defaults, with natural-noise on the shipped lexicon and visual on the ``pca``
    table, so that two versions of the package are timed on the same resources."""
    out = {a: zp.get_attacker(a) for a in zp.ATTACKS}
    out["natural-noise"] = zp.NaturalNoise(lexicon=zp.load_default_lexicon())
    out["visual"] = zp.Visual(embedding="pca")
    return out


def timed(fn, repeat: int = 3) -> float:
    """Best of ``repeat`` runs, in CPU seconds of this process (``time.process_time``: less sensitive
    than wall time to other jobs on a shared machine)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def throughput_all(texts: list[str], p: float) -> dict[str, float]:
    """Sentences per second of every attacker (``bench_attackers``), best of 3 CPU-time runs."""
    out = {}
    for attack, att in bench_attackers().items():
        zp.perturb("warm up the resources", att, 0.5, seed=0)
        out[attack] = len(texts) / timed(lambda a=att: zp.perturb_batch(texts, a, p, seed=0, report=True))
    return out


def compare(other_src: str, n: int, p: float, rounds: int) -> None:
    """Speed-up of this checkout over another one (e.g. the pre-optimisation commit): both are timed in
    subprocesses, alternating ``rounds`` times, and each keeps its best round."""
    here = str(Path(zp.__file__).resolve().parents[1])
    best: dict[str, dict[str, float]] = {"other": {}, "this": {}}
    for _ in range(rounds):
        for key, src in (("other", other_src), ("this", here)):
            env = {**os.environ, "PYTHONPATH": src}
            res = subprocess.run([sys.executable, __file__, "--n", str(n), "--p", str(p), "--json"], env=env,
                                 check=True, capture_output=True, text=True)
            for a, v in json.loads(res.stdout.strip().splitlines()[-1]).items():
                best[key][a] = max(best[key].get(a, 0.0), v)
    print(f"{n} sentences, p = {p}; sentences per second, best of {rounds} alternating rounds\n"
          f"other: {other_src}\nthis:  {here}\n")
    print(f"{'attacker':<14} {'other':>9} {'this':>9} {'speed-up':>9}")
    for a in best["this"]:
        print(f"{a:<14} {best['other'][a]:9.0f} {best['this'][a]:9.0f} {best['this'][a] / best['other'][a]:8.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="sentences (default 1000)")
    ap.add_argument("--paper-size", action="store_true", help="10,000 sentences (the SNLI test set size)")
    ap.add_argument("--p", type=float, default=0.5)
    ap.add_argument("--all", action="store_true", help="also time the six attackers without an nlpaug pairing")
    ap.add_argument("--compare", metavar="SRC", help="time this checkout against another zeroe-perturb src dir")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds for --compare")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = 10_000 if args.paper_size else args.n
    if args.compare:  # the speed-up over the other checkout, then (same run) the table against nlpaug and loops
        compare(args.compare, n, args.p, args.rounds)
        print()
    texts = corpus(n)
    if args.json:
        print(json.dumps(throughput_all(texts, args.p)))
        return
    print(f"{n} sentences, p = phi = {args.p}; sentences per second (higher is better)\n")
    head = (f"{'attacker':<14} {'zeroe':>9} {'naive':>9} {'naive/s':>9} {'nlpaug':>9}  {'zeroe/naive':>11} "
            f"{'zeroe/naive/s':>13} {'zeroe/nlpaug':>12}  nlpaug")
    print(head)
    print("-" * len(head))
    attackers = bench_attackers()
    for attack, naive in NAIVE.items():
        zp.perturb("warm up the resources", attackers[attack], 0.5, seed=0)
        t_z = timed(lambda a=attackers[attack]: zp.perturb_batch(texts, a, args.p, seed=0, report=True))
        t_n = timed(lambda f=naive: [f(t, args.p, r) for r in [random.Random(0)] for t in texts])
        t_s = timed(lambda f=naive: [f(t, args.p, random.Random(zp.item_seed(i, seed=0))) for i, t in enumerate(texts)])
        aug, name = nlpaug_for(attack, args.p)
        if aug is not None:
            def run_nlpaug(a=aug):
                random.seed(0)  # nlpaug draws from the global RNG (benchmark script, not library code)
                a.augment(texts)

            t_a = timed(run_nlpaug)
            nl, ratio = f"{n / t_a:9.0f}", f"{t_a / t_z:12.2f}"
        else:
            nl, ratio = f"{'-':>9}", f"{'-':>12}"
        print(f"{attack:<14} {n / t_z:9.0f} {n / t_n:9.0f} {n / t_s:9.0f} {nl}  {t_n / t_z:11.2f} {t_s / t_z:13.2f} "
              f"{ratio}  {name}")
    if args.all:
        print()
        for attack in zp.ATTACKS:
            if attack in NAIVE:
                continue
            zp.perturb("warm up the resources", attackers[attack], 0.5, seed=0)
            t_z = timed(lambda a=attackers[attack]: zp.perturb_batch(texts, a, args.p, seed=0, report=True))
            print(f"{attack:<14} {n / t_z:9.0f}")
    print(f"\nzeroe-perturb imported from {zp.__file__}")


if __name__ == "__main__":
    main()
