"""The input contract (issue 25, item 7): every public name of ``zeroe_perturb`` (and of its ``experiment``) that
takes a model or data gets the catalogue of bad inputs and must answer with a ``TypeError``/``ValueError`` naming
the argument, before any model call — or a correct result; a torch model comes back exactly as it came (mode,
buffers, ``requires_grad``); every model output form is accepted. A public name with no entry here fails
``test_every_public_name_is_in_the_catalogue``."""

from __future__ import annotations

import numpy as np
import pytest

import zeroe_perturb as zp
from robustsuite_common.experiment import Split
from robustsuite_common.testing import bad_texts
from zeroe_perturb import experiment as ex

TEXTS = ["the movie was wonderful", "the movie was boring", "a lovely film", "a dull plot"]
LABELS = np.array([1, 0, 1, 0])
PAIRS = [("a man plays a guitar", "a man plays"), ("a dog runs", "the ocean")] * 2
SENTS = [["The", "cat", "sat"], ["A", "dog", "ran"]]
TAGS = [[0, 1, 2], [0, 1, 2]]


class Counting:
    """A text model that counts its calls (the contract: bad input is refused before the first one)."""

    def __init__(self, fn=None):
        self.calls = 0
        self.fn = fn or (lambda batch: np.array([[0.0, 2.0] if "wonderful" in str(t) or "lovely" in str(t)
                                                 else [2.0, 0.0] for t in batch]))

    def __call__(self, batch):
        self.calls += 1
        return self.fn(batch)


def tagger_fn(sents):
    return [2.0 * np.eye(3)[[k % 3 for k in range(len(s))]] for s in sents]


BAD_LABELS = {"float": np.zeros(4, dtype=np.float32), "negative": np.full(4, -1), "wrong_length": np.zeros(5, int),
              "string": "1010"}

# name -> list of (case, call(model) -> None, expected exception, the argument named in the message)
CASES: dict[str, list] = {}


def case(name: str, label: str, call, exc, arg: str | None):
    CASES.setdefault(name, []).append((label, call, exc, arg))


for label, bad in bad_texts().items():
    expect = (None, None) if label == "empty" else (TypeError, "texts")
    case("perturb_batch", label, lambda m, b=bad: zp.perturb_batch(b, "truncate", 0.5, seed=0), *expect)
    expect = (ValueError, "texts") if label == "empty" else (TypeError, "texts")
    case("evaluate", label, lambda m, b=bad: zp.evaluate(m, b, LABELS, attacks=["truncate"], levels=[0.5]), *expect)
    case("evaluate_seeds", label, lambda m, b=bad: zp.evaluate_seeds(m, b, LABELS, seeds=[0]), *expect)
    case("noise_check", label, lambda m, b=bad: zp.noise_check(m, b, LABELS, attacks=["truncate"]), *expect)
    case("experiment.run", label, lambda m, b=bad: ex.run(
        ex.Models(classifier=m), ex.Data(classification=Split(b if b is not None else [], [] if b is None
                                                              else np.zeros(len(b), int))), ex.preset("demo")),
        TypeError if label in ("bare_string", "not_strings") else ValueError,
        "data.classification" if label != "empty" else "data.classification")
for label, bad in BAD_LABELS.items():
    case("evaluate", f"labels_{label}", lambda m, b=bad: zp.evaluate(m, TEXTS, b, attacks=["truncate"]),
         (TypeError, ValueError), "labels")
    case("noise_check", f"labels_{label}", lambda m, b=bad: zp.noise_check(m, TEXTS, b, attacks=["truncate"]),
         (TypeError, ValueError), "labels")
    if label != "wrong_length":  # chance_score has nothing to compare a length with
        case("chance_score", f"labels_{label}", lambda m, b=bad: zp.chance_score(b), (TypeError, ValueError),
             "labels")
    case("evaluate_pairs", f"labels_{label}", lambda m, b=bad: zp.evaluate_pairs(m, PAIRS, b),
         (TypeError, ValueError), "labels")
for text_case, bad in (("none", None), ("number", 3), ("list", ["a"])):
    case("perturb", text_case, lambda m, b=bad: zp.perturb(b, "truncate", 0.5), TypeError, "text")
    case("Attacker", text_case, lambda m, b=bad: zp.Truncate()(b, 0.5), TypeError, "text")
case("noise_check", "model_not_callable", lambda m: zp.noise_check("roberta", TEXTS, LABELS), TypeError, "model")
case("noise_check", "good", lambda m: zp.noise_check(m, TEXTS, LABELS, attacks=["truncate"], n_boot=100), None,
     None)
case("evaluate_pairs", "bare_string", lambda m: zp.evaluate_pairs(m, "premise", LABELS[:1]), TypeError, "pairs")
case("evaluate_pairs", "not_pairs", lambda m: zp.evaluate_pairs(m, ["a", "b"], LABELS[:2]), TypeError, "pairs")
case("evaluate_pairs", "empty", lambda m: zp.evaluate_pairs(m, [], []), ValueError, "pairs")
case("evaluate_tagging", "bare_string", lambda m: zp.evaluate_tagging(tagger_fn, "The cat", [[0]]), TypeError,
     "sentences")
case("evaluate_tagging", "sentence_is_a_string", lambda m: zp.evaluate_tagging(tagger_fn, ["The cat"], [[0]]),
     TypeError, "sentences")
case("evaluate_tagging", "tags_wrong_length", lambda m: zp.evaluate_tagging(tagger_fn, SENTS, [[0, 1], [0]]),
     ValueError, "tags")
case("evaluate_tagging", "float_tags", lambda m: zp.evaluate_tagging(tagger_fn, SENTS, [[0.5, 1, 2], [0, 1, 2]]),
     TypeError, "tags")
case("attack_sentences", "bare_string", lambda m: zp.attack_sentences("The cat", "truncate", 0.5, seed=0),
     TypeError, "sentences")
case("attack_sentences", "not_tokens", lambda m: zp.attack_sentences([[1, 2]], "truncate", 0.5, seed=0),
     TypeError, "sentences")
case("tagging_chance_score", "number", lambda m: zp.tagging_chance_score(5), TypeError, "tags")
case("tagging_chance_score", "string", lambda m: zp.tagging_chance_score("NOUN"), TypeError, "tags")
case("kendall_tau_vs_paper", "dict", lambda m: zp.kendall_tau_vs_paper({"scores": []}), TypeError, "result")
case("ranking_table", "dict", lambda m: zp.ranking_table({"scores": []}), TypeError, "result")
case("BenchmarkResult", "missing_keys", lambda m: zp.BenchmarkResult.from_dict({"metric": "accuracy"}), KeyError,
     None)
case("levenshtein", "none", lambda m: zp.levenshtein(None, "a"), TypeError, "a")
case("levenshtein", "number", lambda m: zp.levenshtein("a", 3), TypeError, "b")
case("phonetic_similarity", "bare_string", lambda m: zp.phonetic_similarity("KAET", ["K"]), TypeError, "pron_a")
case("PhoneticRespeller", "number", lambda m: zp.PhoneticRespeller().respellings(3), TypeError, "word")
case("parse_lexicon", "bare_string", lambda m: zp.parse_lexicon("movie moive\nthe teh"), TypeError, "lines")
case("parse_codespell", "bare_string", lambda m: zp.parse_codespell("teh->the"), TypeError, "lines")
case("experiment.run", "models_not_models", lambda m: ex.run({"classifier": m}, ex.Data(), ex.preset("demo")),
     TypeError, "models")
case("experiment.run", "data_not_data", lambda m: ex.run(ex.Models(classifier=m), {"classification": TEXTS},
                                                         ex.preset("demo")), TypeError, "data")
case("experiment.run", "split_not_split", lambda m: ex.run(ex.Models(classifier=m), ex.Data(classification=TEXTS),
                                                           ex.preset("demo")), TypeError, "data.classification")
case("experiment.run", "float_labels", lambda m: ex.run(ex.Models(classifier=m), ex.Data(
    classification=Split(TEXTS, np.full(4, 0.5))), ex.preset("demo")), TypeError, "data.classification.y")
case("experiment.run", "config_not_config", lambda m: ex.run(ex.Models(classifier=m), ex.Data(
    classification=Split(TEXTS, LABELS)), {"seed": 0}), TypeError, "config")
case("experiment.figures", "dict", lambda m: ex.figures({"tables": {}}), TypeError, "result")
case("experiment.Data", "via_run", lambda m: ex.run(ex.Models(tagger=m), ex.Data(tagging=Split(["The cat"], [[0]])),
                                                    ex.preset("demo")), TypeError, "sentences")
case("experiment.Models", "not_callable", lambda m: ex.run(ex.Models(classifier=3), ex.Data(
    classification=Split(TEXTS, LABELS)), ex.preset("demo")), TypeError, "models.classifier")

# public names that take neither a model nor data, with the reason
EXEMPT = {
    "ATTACKS": "constant", "LEVELS": "constant", "INTRUDE_SYMBOLS": "constant", "PAPER_TABLE5": "constant (data)",
    "TAGGING_ATTACKS": "constant", "__version__": "constant", "experiment": "module: its names are listed below",
    "hf": "module of Hugging Face wrappers (torch models): their refusals are tested in test_hf",
    "Perturbation": "a report returned by the attackers", "get_attacker": "takes an attacker name",
    "item_seed": "takes two integers", "target_count": "takes a word count and p",
    "select_tokens": "takes a word count, p, a Random and a predicate",
    "load_codespell_lexicon": "reads codespell's installed file", "load_default_lexicon": "reads a shipped file",
    "load_natural_lexicon": "reads a shipped or installed file (source: a choice)",
    "load_lexicon": "takes file paths", "load_neighbours": "takes a file path or a shipped table's name",
    "experiment.EXECUTION_FIELDS": "constant", "experiment.PRESETS": "constant", "experiment.preset": "takes a name",
    "experiment.paper_reference": "takes nothing (deprecated name of paper_values)",
    "experiment.paper_values": "takes nothing", "experiment.Result": "returned by run (from_dict: a saved result)",
    **{f"experiment.{c}": "a typed config group, validated on construction (test_experiment)" for c in (
        "Config", "AttackConfig", "SeedsConfig", "ClassificationConfig", "PairsConfig", "MultilabelConfig",
        "TaggingConfig", "HeadlineConfig", "DefenseConfig", "AuditConfig")},
}
ATTACKER_CLASSES = ("Disemvowel", "FullShuffle", "InnerShuffle", "Intrude", "KeyboardTypo", "NaturalNoise",
                    "Phonetic", "Segment", "Truncate", "Visual")
for cls in ATTACKER_CLASSES:
    for text_case, bad in (("none", None), ("list", ["a"])):
        case(cls, text_case, lambda m, c=cls, b=bad: getattr(zp, c)()(b, 0.5, seed=0), TypeError, "text")


def public_names() -> list[str]:
    return sorted(zp.__all__) + [f"experiment.{n}" for n in sorted(ex.__all__)]


def test_every_public_name_is_in_the_catalogue():
    missing = [n for n in public_names() if n not in CASES and n not in EXEMPT]
    assert not missing, f"public names without a contract entry (add bad-input cases or an exemption): {missing}"
    stale = [n for n in [*CASES, *EXEMPT] if n not in public_names()]
    assert not stale, f"catalogue entries for names that are not public: {stale}"


@pytest.mark.parametrize("name, label, call, exc, arg", [(n, *c) for n, cs in CASES.items() for c in cs],
                         ids=[f"{n}-{c[0]}" for n, cs in CASES.items() for c in cs])
def test_bad_input_is_refused_naming_the_argument_before_any_model_call(name, label, call, exc, arg):
    model = Counting()
    if exc is None:  # a correct result
        call(model)
        return
    with pytest.raises(exc) as err:
        call(model)
    if arg is not None:
        assert arg in str(err.value), (name, label, str(err.value))
    assert model.calls == 0, f"{name} called the model before refusing {label}"


@pytest.fixture()
def torch_model():
    """A torch text classifier in train mode with BatchNorm (its running statistics would move in train mode)."""
    torch = pytest.importorskip("torch")

    class BagOfChars(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.emb = torch.nn.EmbeddingBag(64, 8)
            self.norm = torch.nn.BatchNorm1d(8)
            self.out = torch.nn.Linear(8, 2)

        def forward(self, texts):
            ids = [torch.tensor([ord(c) % 64 for c in t] or [0]) for t in texts]
            offsets = torch.tensor([0] + [len(i) for i in ids[:-1]]).cumsum(0)
            return self.out(self.norm(self.emb(torch.cat(ids), offsets)))

    return BagOfChars().train()


def test_a_torch_model_comes_back_as_it_came(torch_model):
    from robustsuite_common.testing import snapshot

    before = snapshot(torch_model)
    a = zp.evaluate(torch_model, TEXTS * 3, np.tile(LABELS, 3), attacks=["truncate", "visual"], levels=[0.5])
    before.assert_same(torch_model)
    assert torch_model.training
    b = zp.evaluate(torch_model, TEXTS * 3, np.tile(LABELS, 3), attacks=["truncate", "visual"], levels=[0.5])
    assert a == b  # eval mode inside: BatchNorm uses its running statistics, so the same numbers twice
    res = ex.run(ex.Models(classifier=torch_model), ex.Data(classification=Split(TEXTS * 3, np.tile(LABELS, 3))),
                 ex.preset("demo"), progress=False)
    before.assert_same(torch_model)
    assert res.value("clean_score") == a.clean_score


@pytest.mark.parametrize("form", ["tensor", "tuple", "dict", "model_output"])
def test_every_output_form_is_accepted(torch_model, form):
    from robustsuite_common.testing import output_forms

    wrapped = next(f for f in output_forms() if f.name == form).wrap(torch_model)
    plain = zp.evaluate(torch_model, TEXTS, LABELS, attacks=["truncate"], levels=[0.5])
    assert zp.evaluate(wrapped, TEXTS, LABELS, attacks=["truncate"], levels=[0.5]) == plain
    assert zp.evaluate_seeds(wrapped, TEXTS, LABELS, seeds=[0], attacks=["truncate"], levels=[0.5]) == [plain]
    pairs = zp.evaluate_pairs(lambda prs: wrapped([h for _, h in prs]), PAIRS, [1, 0, 1, 0], attacks=["truncate"],
                              levels=[0.5])
    assert pairs.clean_score == zp.evaluate_pairs(lambda prs: torch_model([h for _, h in prs]), PAIRS, [1, 0, 1, 0],
                                                  attacks=["truncate"], levels=[0.5]).clean_score
    res = ex.run(ex.Models(classifier=wrapped), ex.Data(classification=Split(TEXTS * 3, np.tile(LABELS, 3))),
                 ex.preset("demo"), progress=False)
    assert res.value("clean_score") == zp.evaluate(torch_model, TEXTS * 3, np.tile(LABELS, 3),
                                                   attacks=["truncate"], levels=[0.5]).clean_score


def test_probabilities_are_refused_unless_declared():
    probs = Counting(lambda batch: np.array([[0.2, 0.8] if "wonderful" in t else [0.7, 0.3] for t in batch]))
    with pytest.raises(ValueError, match="look like probabilities"):
        zp.evaluate(probs, TEXTS, LABELS, attacks=["truncate"], levels=[0.5])
    res = zp.evaluate(probs, TEXTS, LABELS, attacks=["truncate"], levels=[0.5], outputs="probabilities")
    assert res.clean_score == 0.75
