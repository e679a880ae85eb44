"""A generated sentiment corpus and a tiny BERT + WordPiece tokenizer, for tests, the CLI demo and benchmarks.

Nothing is downloaded: the tokenizer vocabulary is learnt from the generated corpus and the model is a
randomly initialised 2-layer BERT (hidden size 32) trained in seconds with :func:`iortemp.train_classifier`.
"""

from __future__ import annotations

import numpy as np
import torch

NOUNS = "plot acting film music story cast script ending dialogue pacing scenery soundtrack".split()
STRONG_POS = "superb brilliant wonderful excellent masterful stunning".split()
MILD_POS = "nice pleasant decent fine solid good".split()
STRONG_NEG = "awful terrible dreadful horrible atrocious abysmal".split()
MILD_NEG = "dull bland weak flat tedious poor".split()
NEUTRAL = "ordinary typical standard usual average plain".split()
STRENGTH = {**{w: 2 for w in STRONG_POS}, **{w: 1 for w in MILD_POS}, **{w: -2 for w in STRONG_NEG},
            **{w: -1 for w in MILD_NEG}, **{w: 0 for w in NEUTRAL}}
# Substitution table for the offline word-level attack: each adjective may become any neutral or mild word.
SYNONYMS = {w: [c for c in NEUTRAL + MILD_POS + MILD_NEG if c != w] for w in STRENGTH}


def make_corpus(n: int, seed: int, noise: float = 0.05) -> tuple[list[str], np.ndarray]:
    """Sentences with four adjectives; label = sign of their summed strength (ties dropped), flipped with
    probability ``noise`` so that, like real data, the classes are not perfectly separable (a finite
    NLL-optimal temperature exists)."""
    rng = np.random.default_rng(seed)
    adjs = list(STRENGTH)
    texts, labels = [], []
    while len(texts) < n:
        nouns = rng.choice(NOUNS, size=4, replace=False)
        a = rng.choice(adjs, size=4)
        score = sum(STRENGTH[w] for w in a)
        if score == 0:
            continue
        texts.append(f"the {nouns[0]} was {a[0]} , the {nouns[1]} was {a[1]} , the {nouns[2]} felt {a[2]} "
                     f"and the {nouns[3]} seemed {a[3]}")
        labels.append(int(score > 0) ^ int(rng.random() < noise))
    return texts, np.array(labels, dtype=np.int64)


def build_tiny_bert(texts: list[str], seed: int = 0):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    # Deterministic WordPiece vocabulary learnt from the corpus: every word seen (sorted) plus single
    # characters and their ## continuations as fallback pieces. (The tokenizers WordPieceTrainer breaks
    # merge ties differently from run to run, which would make the tests non-deterministic.)
    pre = pre_tokenizers.BertPreTokenizer()
    norm = normalizers.BertNormalizer(lowercase=True)
    words = sorted({w for t in texts for w, _ in pre.pre_tokenize_str(norm.normalize_str(t))})
    chars = sorted(set("abcdefghijklmnopqrstuvwxyz0123456789',.-") | {c for w in words for c in w})
    learnt = sorted(set(words) | set(chars) | {"##" + c for c in chars})
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(specials + learnt)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")
    cfg = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, num_labels=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForSequenceClassification(cfg)
    return model, fast


def trained_toy_classifier(n_train: int = 800, epochs: int = 6, seed: int = 0):
    """(HFTextClassifier trained on the toy corpus, (train, val, test) splits). Trained on one intra-op thread
    whatever the caller's torch setting, so the README's numbers (and conclusions) do not depend on the machine's
    thread count."""
    from robustsuite_common.threads import limited_threads

    from .hf import HFTextClassifier
    from .training import TrainingConfig, train_classifier

    tr, va, te = make_corpus(n_train, seed), make_corpus(150, seed + 1), make_corpus(120, seed + 2)
    model, tok = build_tiny_bert(tr[0], seed=seed)
    cfg = TrainingConfig(lr=3e-3, batch_size=32, epochs=epochs, max_length=32)
    with limited_threads(1):
        train_classifier(model, tok, tr[0], tr[1], method="base", config=cfg, seed=seed)
    return HFTextClassifier(model, tok, max_length=32), (tr, va, te)
