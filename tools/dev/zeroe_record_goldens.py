"""Record the golden outputs of the ten attackers (fixed seeds and inputs) before an optimisation.

    uv run python tools/dev/zeroe_record_goldens.py   # writes packages/zeroe-perturb/tests/data/goldens.json

``tests/test_goldens.py`` checks that the current code reproduces every output and change report byte for
byte.  Resources are pinned (natural-noise on the shipped small lexicon file, visual on the shipped
``pca`` table) so that the goldens test the code, not a later change of a default resource.
"""

from __future__ import annotations

import json
from pathlib import Path

import zeroe_perturb as zp

OUT = Path(__file__).resolve().parents[2] / "packages" / "zeroe-perturb" / "tests" / "data" / "goldens.json"

TEXTS = [
    "Adversarial attacks are harmless.",
    "The movie was really great because the acting was wonderful, and the story never got boring!",
    "I think the film's ending - though weird - was beautifully shot; 10/10 would watch again.",
    "Ünïcödé wörds, ÇAPITALS and digits 12345 stay fine\tafter\nnewlines.",
    "a an the of to in is it",
    "",
    "Because people believe their government should accept responsibility for the economy.",
    "one two  three   four - five, six; seven. eight! nine? ten",
]
LEVELS = (0.2, 0.5, 0.8, 1.0)
SEEDS = (0, 1, 2)


def golden_attackers() -> dict[str, zp.Attacker]:
    """The attackers the goldens pin: defaults, with the two resources fixed explicitly."""
    out = {a: zp.get_attacker(a) for a in zp.ATTACKS}
    out["natural-noise"] = zp.NaturalNoise(lexicon=zp.load_default_lexicon())
    out["visual"] = zp.Visual(embedding="pca")
    return out


def record() -> dict:
    rows = []
    for name, att in golden_attackers().items():
        for t in TEXTS:
            for p in LEVELS:
                for s in SEEDS:
                    r = att(t, p, seed=zp.item_seed(len(rows), seed=s))
                    rows.append({"attack": name, "text": t, "p": p, "seed": s, "perturbed": r.perturbed,
                                 "attacked": list(r.attacked), "edit_distance": r.edit_distance})
    return {"format": "zeroe-perturb goldens v1", "rows": rows}


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record(), ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
