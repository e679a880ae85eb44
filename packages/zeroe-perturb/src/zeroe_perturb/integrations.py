"""Integrations: TextAttack transformations and a Hugging Face ``datasets`` column mapper.

Both libraries are imported lazily inside the functions (extras ``textattack`` and ``datasets``).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

from robustsuite_common.extras import optional_import

from ._api import ATTACKS, get_attacker
from .attackers import Attacker, Segment
from .protocol import check_p, item_seed

_TA_CLASS: list[type] = []


def _gap_after(current_text: Any, i: int) -> str | None:
    """The text between word ``i`` and word ``i + 1`` of a TextAttack ``AttackedText`` (None if last)."""
    words = current_text.words
    if i + 1 >= len(words):
        return None
    start = current_text._text_index_of_word_index(i) + len(words[i])
    end = current_text._text_index_of_word_index(i + 1)
    return current_text.text[start:end]


def _transformation_class() -> type:
    if _TA_CLASS:
        return _TA_CLASS[0]
    from ._textattack_compat import import_textattack

    import_textattack()
    from textattack.transformations import WordSwap

    class ZeroeWordSwap(WordSwap):
        """A Zéroe attacker as a TextAttack ``WordSwap``, so TextAttack's search methods
        (``GreedyWordSwapWIR``, beam search, …) and word-swap constraints (``StopwordModification``,
        ``RepeatModification``, …) apply.

        ``_get_replacement_words`` proposes up to ``n_candidates`` distinct perturbations of one
        word (character-level probability ``phi`` as in §3.2).  *segment* is a word swap plus a
        deletion: word ``i`` becomes ``word_i + word_{i+1}`` and word ``i + 1`` is deleted, only when
        the two are separated by whitespace alone, so punctuation never moves.
        """

        def __init__(self, attacker: Attacker, *, phi: float, n_candidates: int, seed: int) -> None:
            super().__init__()
            self.attacker = attacker
            self.phi = phi
            self.n_candidates = n_candidates
            self.rng = random.Random(seed)

        @property
        def deterministic(self) -> bool:
            return False

        def _get_replacement_words(self, word: str) -> list[str]:
            if isinstance(self.attacker, Segment) or not self.attacker.eligible(word):
                return []
            seen: list[str] = []
            for _ in range(self.n_candidates * 3):
                new = self.attacker.perturb_word(word, self.phi, self.rng)
                if new != word and new not in seen:
                    seen.append(new)
                if len(seen) >= self.n_candidates:
                    break
            return seen

        def _get_transformations(self, current_text, indices_to_modify):
            if not isinstance(self.attacker, Segment):
                return super()._get_transformations(current_text, indices_to_modify)
            words = current_text.words
            out = []
            for i in sorted(indices_to_modify):
                gap = _gap_after(current_text, i)
                if gap is None or not Segment.joinable_gap(gap):
                    continue  # only whitespace between the two words may disappear
                new_words = list(words)
                new_words[i] = words[i] + words[i + 1]
                new_words[i + 1] = ""
                new = current_text.generate_new_attacked_text(new_words)
                # TextAttack keeps the whitespace before a deleted word (e.g. a trailing space when the
                # last word is deleted); the joined text is exactly the old one without that gap
                start = current_text._text_index_of_word_index(i) + len(words[i])
                joined = current_text.text[:start] + current_text.text[start + len(gap):]
                if new.text != joined and len(current_text._text_input) == 1:
                    key = next(iter(current_text._text_input))
                    new = type(current_text)(OrderedDict([(key, joined)]), attack_attrs=new.attack_attrs)
                out.append(new)
            return out

        def extra_repr_keys(self):
            return ["phi", "n_candidates"]

    _TA_CLASS.append(ZeroeWordSwap)
    return ZeroeWordSwap


def import_textattack():
    """``textattack``, imported offline (a project-written stopword list stands in for NLTK's download; cache under
    ``$ZEROE_PERTURB_CACHE``, default ``~/.cache/zeroe_perturb``); ``ImportError`` naming the extra
    ``zeroe-perturb[textattack]`` when it is missing. Import TextAttack's submodules after calling it."""
    from ._textattack_compat import import_textattack as _import

    return _import()


def textattack_transformation(attack: str | Attacker, *, phi: float = 0.5, n_candidates: int = 1,
                              seed: int = 0) -> Any:
    """A ``textattack.transformations.WordSwap`` applying ``attack`` to single words.

    Compose it with TextAttack constraints and search methods (e.g. ``GreedyWordSwapWIR``), or
    with ``textattack.augmentation.Augmenter(transformation=..., pct_words_to_swap=p)`` for the
    §3.1-style augmentation.  Imports TextAttack offline (extra ``zeroe-perturb[textattack]``).
    """
    attacker = get_attacker(attack)
    phi = check_p(phi, "phi")
    if not isinstance(n_candidates, int) or n_candidates < 1:
        raise ValueError(f"n_candidates must be a positive int, got {n_candidates!r}")
    return _transformation_class()(attacker, phi=phi, n_candidates=n_candidates, seed=int(seed))


def textattack_transformations(**kwargs: Any) -> dict[str, Any]:
    """One TextAttack transformation per attacker of :data:`ATTACKS`."""
    return {a: textattack_transformation(a, **kwargs) for a in ATTACKS}


def map_dataset(dataset: Any, column: str, attack: str | Attacker, p: float, *, seed: int = 0,
                output_column: str | None = None, batch_size: int = 1000, num_proc: int | None = None) -> Any:
    """Perturb the text ``column`` of a Hugging Face ``datasets.Dataset`` or ``IterableDataset`` with
    ``attack`` at level ``p`` (a ``DatasetDict`` is rejected: map each split).

    Row ``i`` uses ``item_seed(i, seed=seed)``, so the result does not depend on ``batch_size`` or
    ``num_proc`` and equals ``perturb_batch(dataset[column], attack, p, seed=seed)``.  Writes into
    ``output_column`` (default: overwrite ``column``).
    """
    datasets = optional_import("datasets", extra="zeroe-perturb[datasets]", feature="map_dataset")
    if isinstance(dataset, datasets.DatasetDict | datasets.IterableDatasetDict):
        raise TypeError(f"dataset must be a datasets.Dataset or IterableDataset, got a {type(dataset).__name__} "
                        f"with splits {list(dataset)}: map one split, e.g. dataset['{next(iter(dataset), 'train')}']")
    if not isinstance(dataset, datasets.Dataset | datasets.IterableDataset):
        raise TypeError(f"dataset must be a datasets.Dataset or IterableDataset, got {type(dataset).__name__}")
    names = dataset.column_names
    if names is not None and column not in names:
        raise ValueError(f"column must be one of {names}; got {column!r}")
    attacker = get_attacker(attack)
    p = check_p(p)
    out_col = output_column or column

    def fn(batch: dict[str, list], idx: list[int]) -> dict[str, list]:
        return {out_col: [attacker(t, p, seed=item_seed(i, seed=seed)).perturbed
                          for t, i in zip(batch[column], idx, strict=True)]}

    if isinstance(dataset, datasets.IterableDataset):
        # streamed: rows are perturbed lazily as they are iterated (row i still uses item_seed(i, seed=seed))
        if num_proc is not None:
            raise ValueError("num_proc is not supported for an IterableDataset")
        return dataset.map(fn, batched=True, batch_size=batch_size, with_indices=True)
    return dataset.map(fn, batched=True, batch_size=batch_size, with_indices=True, num_proc=num_proc)
