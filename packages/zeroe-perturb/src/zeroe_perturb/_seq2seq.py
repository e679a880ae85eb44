"""Numpy inference for the small attentional GRU seq2seq models of the phonetic attack (§3.3).

The models (grapheme→phoneme and phoneme→grapheme) are trained offline with torch by
``tools/build/zeroe_perturb/build_phonetic.py`` and shipped as ``.npz`` weight files; inference here is
pure numpy so the package core needs no torch.  The architecture (kept identical in the build
script) is:

- encoder: symbol embedding → one bidirectional GRU layer (torch ``nn.GRU`` gate layout r, z, n);
- decoder: ``GRUCell`` whose input is ``[embedding(previous symbol); previous context]``,
  initial state ``tanh(W_init [h_fwd_last; h_bwd_first] + b_init)``;
- attention: dot product between the decoder state and ``enc_out @ W_att`` (Luong "general");
- output: ``W_out [h; context] + b_out``.

Symbol id 0 is padding, 1 is start-of-sequence, 2 is end-of-sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

PAD, BOS, EOS = 0, 1, 2


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _gru(x: np.ndarray, h: np.ndarray, w_ih, w_hh, b_ih, b_hh) -> np.ndarray:
    """One GRU step for a batch, torch gate order (r, z, n)."""
    gi = x @ w_ih.T + b_ih
    gh = h @ w_hh.T + b_hh
    hd = h.shape[1]
    r = _sigmoid(gi[:, :hd] + gh[:, :hd])
    z = _sigmoid(gi[:, hd : 2 * hd] + gh[:, hd : 2 * hd])
    n = np.tanh(gi[:, 2 * hd :] + r * gh[:, 2 * hd :])
    return (1.0 - z) * n + z * h


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    y = x - m
    return y - np.log(np.exp(y).sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class Seq2Seq:
    """A trained attentional GRU encoder-decoder with its two symbol vocabularies."""

    src_vocab: tuple[str, ...]
    tgt_vocab: tuple[str, ...]
    params: dict[str, np.ndarray]

    @classmethod
    def load(cls, path: str | Path) -> Seq2Seq:
        """Load weights written by the build script (``np.savez_compressed``; no pickles)."""
        with np.load(path, allow_pickle=False) as z:
            params = {k: z[k].astype(np.float32) for k in z.files if not k.startswith("vocab_")}
            src = tuple(str(s) for s in z["vocab_src"])
            tgt = tuple(str(s) for s in z["vocab_tgt"])
        return cls(src, tgt, params)

    # -- encoding -------------------------------------------------------------------------
    def _src_ids(self, seqs: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        index = {s: i for i, s in enumerate(self.src_vocab)}
        t = max(1, max(len(s) for s in seqs))
        ids = np.zeros((len(seqs), t), dtype=np.int64)
        mask = np.zeros((len(seqs), t), dtype=bool)
        for b, seq in enumerate(seqs):
            for j, sym in enumerate(seq):
                ids[b, j] = index.get(sym, PAD)
                mask[b, j] = True
        return ids, mask

    def _encode(self, seqs: list[list[str]]):
        p = self.params
        ids, mask = self._src_ids(seqs)
        emb = p["src_emb"][ids]  # (B, T, E)
        bsz, t, _ = emb.shape
        hdim = p["enc_f_w_hh"].shape[1]
        hf = np.zeros((bsz, hdim), np.float32)
        hb = np.zeros((bsz, hdim), np.float32)
        out_f = np.zeros((bsz, t, hdim), np.float32)
        out_b = np.zeros((bsz, t, hdim), np.float32)
        for j in range(t):
            m = mask[:, j : j + 1]
            new = _gru(emb[:, j], hf, p["enc_f_w_ih"], p["enc_f_w_hh"], p["enc_f_b_ih"], p["enc_f_b_hh"])
            hf = np.where(m, new, hf)
            out_f[:, j] = hf
        for j in range(t - 1, -1, -1):
            m = mask[:, j : j + 1]
            new = _gru(emb[:, j], hb, p["enc_b_w_ih"], p["enc_b_w_hh"], p["enc_b_b_ih"], p["enc_b_b_hh"])
            hb = np.where(m, new, hb)  # padded tail positions keep the zero state
            out_b[:, j] = hb
        enc = np.concatenate([out_f, out_b], axis=-1)  # (B, T, 2H)
        h0 = np.tanh(np.concatenate([hf, hb], axis=-1) @ p["init_w"].T + p["init_b"])
        keys = enc @ p["att_w"].T  # (B, T, Hd)
        return enc, keys, mask, h0

    def _step(self, y_prev, ctx, h, enc, keys, mask):
        p = self.params
        x = np.concatenate([p["tgt_emb"][y_prev], ctx], axis=-1)
        h = _gru(x, h, p["dec_w_ih"], p["dec_w_hh"], p["dec_b_ih"], p["dec_b_hh"])
        scores = np.einsum("btd,bd->bt", keys, h)
        scores = np.where(mask, scores, -1e9)
        a = np.exp(scores - scores.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        ctx = np.einsum("bt,btd->bd", a, enc)
        logits = np.concatenate([h, ctx], axis=-1) @ p["out_w"].T + p["out_b"]
        return _log_softmax(logits), ctx, h

    # -- decoding -------------------------------------------------------------------------
    def greedy(self, seqs: list[list[str]], *, max_len: int = 32) -> list[list[str]]:
        """Greedy decoding of a batch of symbol sequences."""
        if not seqs:
            return []
        enc, keys, mask, h = self._encode(seqs)
        bsz = len(seqs)
        ctx = np.zeros((bsz, enc.shape[2]), np.float32)
        y = np.full(bsz, BOS, dtype=np.int64)
        done = np.zeros(bsz, dtype=bool)
        out: list[list[str]] = [[] for _ in range(bsz)]
        for _ in range(max_len):
            logp, ctx, h = self._step(y, ctx, h, enc, keys, mask)
            logp[:, PAD] = -np.inf
            logp[:, BOS] = -np.inf
            y = logp.argmax(axis=1)
            for b in np.flatnonzero(~done):
                if y[b] == EOS:
                    done[b] = True
                else:
                    out[b].append(self.tgt_vocab[y[b]])
            if done.all():
                break
        return out

    def beam(self, seqs: list[list[str]], *, width: int = 5, max_len: int = 32) -> list[list[tuple[list[str], float]]]:
        """Beam search; returns for each input the finished hypotheses (symbols, log-prob), best first."""
        if not seqs:
            return []
        enc, keys, mask, h = self._encode(seqs)
        bsz, k = len(seqs), width
        # expand every input to k beams; only beam 0 is live at the start
        rep = np.repeat(np.arange(bsz), k)
        enc, keys, mask, h = enc[rep], keys[rep], mask[rep], h[rep]
        ctx = np.zeros((bsz * k, enc.shape[2]), np.float32)
        y = np.full(bsz * k, BOS, dtype=np.int64)
        score = np.tile(np.r_[0.0, np.full(k - 1, -np.inf)], bsz)
        hist = np.zeros((bsz * k, 0), dtype=np.int64)
        finished: list[list[tuple[list[str], float]]] = [[] for _ in range(bsz)]
        v = len(self.tgt_vocab)
        for _ in range(max_len):
            logp, ctx, h = self._step(y, ctx, h, enc, keys, mask)
            logp[:, PAD] = -np.inf
            logp[:, BOS] = -np.inf
            cand = (score[:, None] + logp).reshape(bsz, k * v)
            top = np.argpartition(-cand, k, axis=1)[:, : 2 * k] if k * v > 2 * k else np.tile(np.arange(k * v), (bsz, 1))
            top_scores = np.take_along_axis(cand, top, axis=1)
            order = np.argsort(-top_scores, axis=1, kind="stable")
            top = np.take_along_axis(top, order, axis=1)
            new_src = np.zeros(bsz * k, dtype=np.int64)
            new_y = np.full(bsz * k, EOS, dtype=np.int64)
            new_score = np.full(bsz * k, -np.inf)
            for b in range(bsz):
                filled = 0
                for flat in top[b]:
                    s = cand[b, flat]
                    if not np.isfinite(s):
                        break
                    beam_i, sym = divmod(int(flat), v)
                    src_row = b * k + beam_i
                    if sym == EOS:
                        if len(finished[b]) < k:
                            toks = [self.tgt_vocab[t] for t in hist[src_row]]
                            finished[b].append((toks, float(s)))
                        continue
                    if filled < k:
                        new_src[b * k + filled] = src_row
                        new_y[b * k + filled] = sym
                        new_score[b * k + filled] = s
                        filled += 1
                    if filled == k:
                        break
                # an input is done once k hypotheses finished and no live beam can beat the worst one
                if len(finished[b]) >= k and (not filled or new_score[b * k] < min(f[1] for f in finished[b])):
                    new_score[b * k : (b + 1) * k] = -np.inf
            ctx, h, y, score = ctx[new_src], h[new_src], new_y, new_score
            hist = np.concatenate([hist[new_src], new_y[:, None]], axis=1)
            if not np.isfinite(score).any():
                break
        for b in range(bsz):  # nothing finished within max_len: the live beams are the (truncated) answers
            if not finished[b]:
                finished[b] = [([self.tgt_vocab[t] for t in hist[r]], float(score[r]))
                               for r in range(b * k, (b + 1) * k) if np.isfinite(score[r])]
        return [sorted(f, key=lambda t: -t[1]) for f in finished]
