"""zeroe_perturb.hf: Hugging Face models as the task contracts (pairs, multi-label, tagging), on tiny BERTs built
here with a WordPiece vocabulary in which some words are several sub-words (nothing downloaded)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from robustsuite_common.text import HFTextClassifier  # noqa: E402
from zeroe_perturb import evaluate_pairs, evaluate_tagging  # noqa: E402
from zeroe_perturb.hf import TASK_WRAPPERS, MultiLabelClassifier, PairClassifier, TokenTagger  # noqa: E402

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "harm", "##less", "##ly", "un", "##kind", ".", ","]
SENTENCES = [["The", "cat", "sat", "."], ["a", "harmlessly", "unkind", "dog"], ["h a r m", "less", "w@o@r@d"],
             ["the"] * 30, []]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    return transformers.BertTokenizerFast(vocab_file=str(path))


def tiny(cls, tok, num_labels):
    cfg = transformers.BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=64, num_labels=num_labels)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return cls(cfg).eval()


def test_tagger_reads_each_token_at_its_first_sub_word(tok):
    """Against the tokenizer's own word alignment (``is_split_into_words``, ``word_ids``): each token's row is the
    model's logits at the first sub-word of that token; tokens cut off by ``max_length`` get zero rows."""
    model = tiny(transformers.BertForTokenClassification, tok, 5)
    tagger = TokenTagger(model, tok, max_length=16, batch_size=2)
    out = tagger(SENTENCES)
    assert [o.shape for o in out] == [(len(s), 5) for s in SENTENCES]
    enc = tok(SENTENCES, is_split_into_words=True, padding=True, truncation=True, max_length=16, return_tensors="pt")
    with torch.no_grad():
        ref = model(**enc).logits.numpy()
    several = 0
    for i, sent in enumerate(SENTENCES):
        word_ids = enc.word_ids(i)
        for w in range(len(sent)):
            positions = [j for j, k in enumerate(word_ids) if k == w]
            several += len(positions) > 1
            expected = ref[i, positions[0]] if positions else np.zeros(5, np.float32)  # none: cut off
            np.testing.assert_allclose(out[i][w], expected, atol=1e-5, err_msg=f"sentence {i} token {w}")
    assert several >= 3  # harm|less|ly, un|kind, h a r m: first and last sub-word differ
    assert np.all(out[3][14:] == 0) and np.all(np.any(out[3][:14] != 0, axis=1))  # 14 = 16 - [CLS], [SEP]


def test_tagger_refuses_untokenised_input(tok):
    tagger = TokenTagger(tiny(transformers.BertForTokenClassification, tok, 3), tok)
    with pytest.raises(TypeError, match="token lists"):
        tagger(["not", "tokenised"])
    with pytest.raises(TypeError, match=r"sentences\[1\]"):
        tagger([["fine"], [1, 2]])


def test_pair_classifier_encodes_a_sentence_pair(tok):
    model = tiny(transformers.BertForSequenceClassification, tok, 3)
    pairs = [("the cat sat on the mat", "a cat sat"), ("a dog ran", "the unkind dog"), ("harmless", "the mat")]
    clf = PairClassifier(model, tok, batch_size=2)
    enc = clf.encode(pairs[:1])
    assert enc["token_type_ids"][0].tolist() == [0] * 8 + [1] * 4  # [CLS] premise [SEP] | hypothesis [SEP]
    with torch.no_grad():
        ref = model(**tok([a for a, _ in pairs], [b for _, b in pairs], padding=True, return_tensors="pt")).logits
    np.testing.assert_allclose(clf(pairs), ref.numpy(), atol=1e-5)
    assert clf([]).shape == (0, 3)
    with pytest.raises(TypeError, match="pairs"):
        clf(["the cat", "a dog"])


def test_multilabel_classifier_is_the_text_classifier_with_one_logit_per_label(tok):
    model = tiny(transformers.BertForSequenceClassification, tok, 4)
    texts = ["the cat sat", "a harmless dog ran"]
    ml = MultiLabelClassifier(model, tok)
    np.testing.assert_allclose(ml(texts), HFTextClassifier(model, tok)(texts), atol=0)
    assert ml(texts).shape == (2, 4)


def test_task_wrappers_serve_the_task_benchmarks(tok):
    """The wrappers satisfy the contracts ``evaluate_pairs`` and ``evaluate_tagging`` call them with."""
    assert TASK_WRAPPERS == {"pairs": PairClassifier, "multilabel": MultiLabelClassifier, "tagging": TokenTagger}
    assert all(issubclass(c, HFTextClassifier) for c in TASK_WRAPPERS.values())
    tagger = TokenTagger(tiny(transformers.BertForTokenClassification, tok, 3), tok)
    res = evaluate_tagging(tagger, SENTENCES[:3], [[0, 1, 2, 0], [0, 1, 2, 1], [1, 1, 1]], attacks=["visual"],
                           levels=[0.5], seed=0)
    assert 0 <= res.clean_score <= 1 and len(res.scores) == 1
    pairs = PairClassifier(tiny(transformers.BertForSequenceClassification, tok, 2), tok)
    res = evaluate_pairs(pairs, [("the cat sat", "a cat"), ("a dog ran", "the mat")], [1, 0], attacks=["intrude"],
                         levels=[0.5], seed=0)
    assert 0 <= res.clean_score <= 1 and len(res.scores) == 1
