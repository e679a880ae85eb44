"""Visual nearest-neighbour table for the visual attacker (§3.3).

The table is built offline by ``tools/zeroe_perturb/build_visual.py``: every BMP character a font
maps is rendered with Pillow at 24×24, blank and replacement-box glyphs are dropped, the glyphs are
embedded (PCA of the pixels; the paper used a VAE-GAN encoder) and the 20 nearest neighbours of
each ASCII letter, digit, punctuation mark and Latin-1 letter are stored.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any


def _parse(payload: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    table = payload.get("neighbours")
    if not isinstance(table, dict):
        raise ValueError("visual neighbour file lacks a 'neighbours' mapping")
    return {str(c): tuple(str(v)) for c, v in table.items()}


@lru_cache(maxsize=1)
def load_table_metadata() -> dict[str, Any]:
    """Provenance of the shipped table (fonts, glyph counts, embedding) without the neighbours."""
    payload = json.loads(resources.files("zeroe_perturb").joinpath("data/visual_neighbours.json").read_text("utf-8"))
    return {k: v for k, v in payload.items() if k not in ("neighbours", "distances")}


def load_neighbours(path: str | os.PathLike | None = None) -> dict[str, tuple[str, ...]]:
    """Character -> its visual nearest neighbours, nearest first (shipped table unless ``path``)."""
    if path is None:
        return dict(_default_neighbours())
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"visual neighbour file not found: {p}")
    return _parse(json.loads(p.read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def _default_neighbours() -> dict[str, tuple[str, ...]]:
    text = resources.files("zeroe_perturb").joinpath("data/visual_neighbours.json").read_text("utf-8")
    return _parse(json.loads(text))
