"""Measured perturbation rates of the ten attackers (README table "Measured rates").

    uv run python tools/zeroe_perturb/measure_rates.py            # 1,000 WordNet noun glosses
    uv run python tools/zeroe_perturb/measure_rates.py --markdown

Corpus: the first ``--n`` noun glosses of Debian's WordNet 3.0 (``/usr/share/wordnet/data.noun``; real
English text), or, when WordNet is not installed, the synthetic sentences of the throughput bench.
For each attacker and p, every text is perturbed with ``perturb_batch(texts, attack, p, seed=0)`` and
the input and output are diffed (the attacker's own report is not used):

* ``words``: share of word tokens changed (for segment: words that lost the space before them), with
  its 95 % Clopper-Pearson interval;
* ``of changeable``: the same share among the words the attacker can change (``Attacker.eligible``);
* ``chars/word``: characters changed per changed word (Levenshtein distance, rapidfuzz).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from rapidfuzz.distance import Levenshtein
from scipy import stats

import zeroe_perturb as zp
from zeroe_perturb._tokens import split_words

WORDNET = Path("/usr/share/wordnet/data.noun")


def wordnet_glosses(n: int) -> list[str]:
    out = []
    with WORDNET.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(" ") or "|" not in line:
                continue
            gloss = line.split("|", 1)[1].strip()
            gloss = re.split(r';\s*"', gloss)[0].strip()  # drop the example sentences
            if len(gloss.split()) >= 4:
                out.append(gloss)
            if len(out) >= n:
                break
    return out


def corpus(n: int) -> tuple[list[str], str]:
    if WORDNET.is_file():
        return wordnet_glosses(n), f"{n} WordNet 3.0 noun glosses"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from bench_zeroe_perturb import corpus as synthetic

    return synthetic(n), f"{n} synthetic bench sentences (WordNet not installed)"


def measure(texts: list[str], attack: str, p: float) -> dict:
    att = zp.get_attacker(attack)
    outs = zp.perturb_batch(texts, attack, p, seed=0)
    n_words = n_changed = n_changeable = 0
    chars = 0
    for t, o in zip(texts, outs, strict=True):
        gaps, words = split_words(t)
        n_words += len(words)
        if attack == "segment":
            n_changeable += sum(1 for g in gaps[1:-1] if zp.Segment.joinable_gap(g))
            n_changed += sum(1 for g in gaps[1:-1] if zp.Segment.joinable_gap(g)) - (
                sum(1 for g in split_words(o)[0][1:-1] if zp.Segment.joinable_gap(g)))
            chars += len(t) - len(o)
            continue
        n_changeable += sum(att.eligible(w) for w in words)
        # diff the whitespace-separated tokens (intrude may insert a space: compare by position in the text)
        ta, tb = t.split(" "), o.split(" ")
        if len(ta) == len(tb):
            for a, b in zip(ta, tb, strict=True):
                if a != b:
                    n_changed += 1
                    chars += Levenshtein.distance(a, b)
        else:  # intrude inserted spaces: fall back to the token-aligned report fields
            r = att(t, p, seed=zp.item_seed(texts.index(t), seed=0))
            n_changed += r.n_attacked
            chars += r.edit_distance
    ci = stats.binomtest(n_changed, n_words).proportion_ci(0.95)
    return {"words": n_changed / n_words, "lo": ci.low, "hi": ci.high,
            "of_changeable": n_changed / max(n_changeable, 1), "chars_per_word": chars / max(n_changed, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--levels", type=float, nargs="+", default=[0.2, 0.5, 0.8])
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--lexicon-coverage", action="store_true",
                    help="only print the share of word tokens natural-noise can change, per lexicon")
    args = ap.parse_args()
    texts, what = corpus(args.n)
    print(f"corpus: {what}\n")
    if args.lexicon_coverage:
        words = [w for t in texts for w in split_words(t)[1]]
        for src in ("codespell", "shipped"):
            att = zp.NaturalNoise(source=src)
            share = sum(att.eligible(w) for w in words) / len(words)
            print(f"{src:<10} {len(att.lexicon):6d} words in the lexicon; {share:.3f} of {len(words)} tokens changeable")
        return
    if args.markdown:
        print("| attacker | p | words changed [95 % CI] | of changeable words | chars changed per changed word |")
        print("|---|---|---|---|---|")
    for attack in zp.ATTACKS:
        for p in args.levels:
            m = measure(texts, attack, p)
            if args.markdown:
                print(f"| `{attack}` | {p:g} | {m['words']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}] | "
                      f"{m['of_changeable']:.3f} | {m['chars_per_word']:.2f} |")
            else:
                print(f"{attack:<14} p={p:<4g} words {m['words']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]  "
                      f"of changeable {m['of_changeable']:.3f}  chars/word {m['chars_per_word']:.2f}")


if __name__ == "__main__":
    main()
