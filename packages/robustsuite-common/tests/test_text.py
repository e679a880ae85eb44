"""robustsuite_common.text.HFTextClassifier on tiny transformers models built here (nothing downloaded)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from robustsuite_common.testing import bad_texts, snapshot  # noqa: E402
from robustsuite_common.text import HFTextClassifier, TextClassifier  # noqa: E402

WORDS = ["good", "bad", "great", "awful", "film", "plot", "very", "not", "harm", "##less"]
TEXTS = ["good film", "a very very bad plot , not great", "harmless", "awful"]


def tiny_bert(tmp_path, *, model_max_length=300, positions=64, id2label=None, seed=0):
    """A 1-layer BERT classifier (hidden size 16) and a WordPiece tokenizer over ``WORDS``."""
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tok = transformers.BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt"), model_max_length=model_max_length)
    id2label = id2label or {0: "negative", 1: "positive", 2: "neutral"}
    cfg = transformers.BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=positions,
                                  num_labels=len(id2label), id2label=id2label)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.BertForSequenceClassification(cfg).eval()
    return model, tok


def test_roberta_style_models_lose_the_positions_before_their_first(tmp_path):
    """RoBERTa numbers positions from ``pad_token_id + 1``: a table of 20 with padding index 0 holds 19 tokens, so a
    long text with a larger ``max_length`` is cut at 19 instead of running past the table (an IndexError before)."""
    _, tok = tiny_bert(tmp_path)
    cfg = transformers.RobertaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=20, pad_token_id=0, num_labels=2)
    model = transformers.RobertaForSequenceClassification(cfg).eval()
    clf = HFTextClassifier(model, tok, max_length=128)
    assert clf.max_length == 19
    assert clf([" ".join(WORDS * 5)]).shape == (1, 2)


def test_logits_are_the_models_own_in_any_batch_size(tmp_path):
    model, tok = tiny_bert(tmp_path)
    clf = HFTextClassifier(model, tok, batch_size=3)
    out = clf(TEXTS)
    with torch.no_grad():
        ref = model(**tok(TEXTS, padding=True, return_tensors="pt")).logits.numpy()
    assert out.dtype == np.float32 and out.shape == (4, 3)
    np.testing.assert_allclose(out, ref, atol=1e-5)
    np.testing.assert_allclose(np.concatenate([clf([t]) for t in TEXTS]), out, atol=1e-5)  # padding changes nothing
    assert clf([]).shape == (0, 3) and clf.num_classes == 3 and clf.device == torch.device("cpu")
    assert TextClassifier is HFTextClassifier and clf.to("cpu") is clf


def test_max_length_follows_the_tokenizer_and_the_position_table(tmp_path):
    model, tok = tiny_bert(tmp_path, model_max_length=40)
    assert HFTextClassifier(model, tok).max_length == 40  # the tokenizer's limit
    assert HFTextClassifier(model, tok, max_length=20).max_length == 20
    assert HFTextClassifier(model, tok, max_length=1000).max_length == 64  # never past the position table
    model, tok = tiny_bert(tmp_path, model_max_length=int(1e30), positions=1024)  # "unset" tokenizer limit
    assert HFTextClassifier(model, tok).max_length == 512
    assert HFTextClassifier(model, tok, max_length_cap=100).max_length == 100
    clf = HFTextClassifier(model, tok, max_length=5)
    np.testing.assert_allclose(clf(["good film very very bad plot"]), clf(["good film very"]), atol=1e-6)  # truncated
    with pytest.raises(ValueError, match="max_length"):
        HFTextClassifier(model, tok, max_length=0)
    with pytest.raises(TypeError, match="max_length"):
        HFTextClassifier(model, tok, max_length=12.5)
    with pytest.raises(ValueError, match="batch_size"):
        HFTextClassifier(model, tok, batch_size=0)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        HFTextClassifier(lambda texts: texts, tok)


@pytest.mark.parametrize("case", sorted(bad_texts()))
def test_bad_texts_are_refused_naming_the_argument(tmp_path, case):
    clf = HFTextClassifier(*tiny_bert(tmp_path))
    if case == "empty":
        assert clf(bad_texts()[case]).shape == (0, 3)
        return
    with pytest.raises(TypeError, match="texts"):
        clf(bad_texts()[case])


def test_labels_come_from_id2label_unless_placeholders(tmp_path):
    assert HFTextClassifier(*tiny_bert(tmp_path)).labels == ["negative", "positive", "neutral"]
    placeholders = {0: "LABEL_0", 1: "LABEL_1"}
    assert HFTextClassifier(*tiny_bert(tmp_path, id2label=placeholders)).labels is None


def test_the_callers_model_comes_back_as_it_was(tmp_path):
    model, tok = tiny_bert(tmp_path)
    clf = HFTextClassifier(model, tok)
    ref = clf(TEXTS)
    model.train()  # dropout on: the wrapper still scores in eval mode, and gives train mode back
    before = snapshot(model)
    np.testing.assert_allclose(clf(TEXTS), ref, atol=1e-6)
    clf.get_grad("good film")
    before.assert_same(model)
    assert model.training and all(p.grad is None for p in model.parameters())


def test_only_the_inputs_forward_takes_are_passed(tmp_path):
    """DistilBERT takes no ``token_type_ids``, which a BERT tokenizer emits."""
    _, tok = tiny_bert(tmp_path)
    cfg = transformers.DistilBertConfig(vocab_size=len(tok), dim=16, n_layers=1, n_heads=2, hidden_dim=32,
                                        max_position_embeddings=64, num_labels=2)
    model = transformers.DistilBertForSequenceClassification(cfg).eval()
    assert "token_type_ids" in tok(["good"])
    clf = HFTextClassifier(model, tok)
    assert "token_type_ids" not in clf.encode(["good"])
    assert clf(TEXTS).shape == (4, 2)


def test_a_tokenizer_without_pad_token_pads_with_eos():
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["<eos>", "<unk>", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>", unk_token="<unk>")
    cfg = transformers.GPT2Config(vocab_size=len(vocab), n_embd=16, n_layer=1, n_head=2, n_positions=32,
                                  num_labels=2, eos_token_id=0, bos_token_id=0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = transformers.GPT2ForSequenceClassification(cfg).eval()
    assert tok.pad_token is None and model.config.pad_token_id is None
    clf = HFTextClassifier(model, tok)
    assert tok.pad_token == "<eos>" and model.config.pad_token_id == 0 and clf.max_length == 32
    np.testing.assert_allclose(clf(TEXTS), np.concatenate([clf([t]) for t in TEXTS]), atol=1e-5)
    tk2 = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    with pytest.raises(ValueError, match="pad token"):
        HFTextClassifier(model, transformers.PreTrainedTokenizerFast(tokenizer_object=tk2, unk_token="<unk>"))


def test_get_grad_is_the_gradient_at_the_word_embeddings(tmp_path):
    """TextAttack's ``ModelWrapper.get_grad``: checked against autograd on the embedding output directly."""
    model, tok = tiny_bert(tmp_path)
    grad = HFTextClassifier(model, tok).get_grad("good film")
    enc = tok(["good film"], return_tensors="pt")
    assert grad["ids"] == enc["input_ids"][0].tolist()
    emb = model.bert.embeddings.word_embeddings(enc["input_ids"]).detach().requires_grad_(True)
    logits = model(inputs_embeds=emb, attention_mask=enc["attention_mask"],
                   token_type_ids=enc["token_type_ids"]).logits
    (ref,) = torch.autograd.grad(torch.nn.functional.cross_entropy(logits, logits.argmax(-1)), emb)
    assert grad["gradient"].shape == (len(grad["ids"]), 16)
    np.testing.assert_allclose(grad["gradient"], ref[0].numpy(), atol=1e-6)
    assert np.abs(grad["gradient"]).sum() > 0


def test_importing_it_loads_neither_torch_nor_transformers():
    code = ("import sys, robustsuite_common, robustsuite_common.text, robustsuite_common.models; "
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_a_text_with_a_lone_surrogate_is_refused_naming_it(tmp_path):
    """Issue 36: a lone surrogate (a bad decode upstream) crashed the tokenizer; it is refused by name, before the
    model runs, and the other texts still score."""
    clf = HFTextClassifier(*tiny_bert(tmp_path))
    with pytest.raises(ValueError, match=r"^texts\[1\] is not valid Unicode text: a lone surrogate"):
        clf(["good film", "bad \udc80 plot"])
    assert clf(["good film", "bad plot"]).shape == (2, 3)
