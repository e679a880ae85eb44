"""Integrations: TextAttack transformations and a Hugging Face ``datasets`` column mapper.

Both libraries are imported lazily inside the functions (extras ``textattack`` and ``datasets``).
"""

from __future__ import annotations

import random
from typing import Any

from ._api import ATTACKS, get_attacker
from .attackers import Attacker, Segment
from .protocol import check_p, item_seed

_TA_CLASS: list[type] = []


def _transformation_class() -> type:
    if _TA_CLASS:
        return _TA_CLASS[0]
    from ._textattack_compat import import_textattack

    import_textattack()
    from textattack.transformations import Transformation

    class ZeroeTransformation(Transformation):
        """A Zéroe attacker as a TextAttack word transformation.

        For each index TextAttack allows (after its constraints), up to ``n_candidates`` distinct
        perturbations of that word are proposed (segment: the word joined with its right
        neighbour).  Character-level probability ``phi`` as in §3.2.
        """

        def __init__(self, attacker: Attacker, *, phi: float, n_candidates: int, seed: int) -> None:
            self.attacker = attacker
            self.phi = phi
            self.n_candidates = n_candidates
            self.rng = random.Random(seed)

        @property
        def deterministic(self) -> bool:
            return False

        def _get_transformations(self, current_text, indices_to_modify):
            words = current_text.words
            out = []
            for i in sorted(indices_to_modify):
                w = words[i]
                if isinstance(self.attacker, Segment):
                    if i + 1 < len(words):
                        out.append(current_text.replace_word_at_index(i, w + words[i + 1])
                                   .delete_word_at_index(i + 1))
                    continue
                if not self.attacker.eligible(w):
                    continue
                seen = set()
                for _ in range(self.n_candidates * 3):
                    new = self.attacker.perturb_word(w, self.phi, self.rng)
                    if new != w and new not in seen:
                        seen.add(new)
                        out.append(current_text.replace_word_at_index(i, new))
                    if len(seen) >= self.n_candidates:
                        break
            return out

        def extra_repr_keys(self):
            return ["phi", "n_candidates"]

    _TA_CLASS.append(ZeroeTransformation)
    return ZeroeTransformation


def textattack_transformation(attack: str | Attacker, *, phi: float = 0.5, n_candidates: int = 1,
                              seed: int = 0) -> Any:
    """A ``textattack.transformations.Transformation`` applying ``attack`` to single words.

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
    """Perturb the text ``column`` of a Hugging Face ``datasets.Dataset`` with ``attack`` at level ``p``.

    Row ``i`` uses ``item_seed(seed, i)``, so the result does not depend on ``batch_size`` or
    ``num_proc`` and equals ``perturb_batch(dataset[column], attack, p, seed)``.  Writes into
    ``output_column`` (default: overwrite ``column``).
    """
    try:
        import datasets  # noqa: F401  (the extra must be installed to map a dataset)
    except ImportError as e:
        raise ImportError("map_dataset needs: pip install 'zeroe-perturb[datasets]'") from e
    names = getattr(dataset, "column_names", None)
    if names is None:
        raise TypeError("dataset must be a datasets.Dataset")
    if column not in names:
        raise ValueError(f"column must be one of {names}; got {column!r}")
    attacker = get_attacker(attack)
    p = check_p(p)
    out_col = output_column or column

    def fn(batch: dict[str, list], idx: list[int]) -> dict[str, list]:
        return {out_col: [attacker(t, p, seed=item_seed(seed, i)).perturbed for t, i in zip(batch[column], idx,
                                                                                           strict=True)]}

    return dataset.map(fn, batched=True, batch_size=batch_size, with_indices=True, num_proc=num_proc)
