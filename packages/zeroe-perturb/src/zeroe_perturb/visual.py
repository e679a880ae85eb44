"""Visual nearest-neighbour table for the visual attacker (§3.3).

Default table ``"unifont"`` (built by ``tools/build/zeroe_perturb/build_visual_unifont.py``): every printable
letter and digit of the Basic Multilingual Plane that GNU Unifont draws (about 49,700 glyphs) is rendered
as a 16×16 bitmap; each Latin/Greek/Cyrillic letter or digit (1,501 sources) keeps its 20 most similar
glyphs by image similarity (cosine of the blurred bitmaps) with the similarities, which the attacker uses
as VIPER's sampling weights.  The older tables below (156 sources, DejaVu Sans only) stay selectable.

The table is built offline by ``tools/build/zeroe_perturb/build_visual.py``: every BMP character a font
maps is rendered with Pillow at 24×24, blank and replacement-box glyphs are dropped, the glyphs are
embedded (PCA of the pixels; the paper used a VAE-GAN encoder) and the 20 nearest neighbours of
each ASCII letter, digit, punctuation mark and Latin-1 letter are stored.

Two older tables ship: ``"pca"`` (64-component PCA of the pixels — neighbours are mostly the
same letter with diacritics and cross-script homoglyphs) and ``"cae"`` (64-dimensional bottleneck of
a convolutional autoencoder, closer to the paper's learned VAE-GAN embedding — more abstract shape
neighbours).
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


EMBEDDINGS: dict[str, str] = {"unifont": "data/visual_neighbours_unifont.json", "pca": "data/visual_neighbours.json",
                              "cae": "data/visual_neighbours_cae.json"}


def _check_embedding(embedding: str) -> str:
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {', '.join(EMBEDDINGS)}; got {embedding!r}")
    return EMBEDDINGS[embedding]


def _read(path: str | os.PathLike | None, embedding: str) -> dict[str, Any]:
    """The JSON payload of the table at ``path``, or of the shipped ``embedding`` table when ``path`` is None."""
    if path is None:
        return json.loads(resources.files("zeroe_perturb").joinpath(_check_embedding(embedding)).read_text("utf-8"))
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"visual neighbour file not found: {p}")
    return json.loads(p.read_text(encoding="utf-8"))


@lru_cache(maxsize=3)
def load_table_metadata(embedding: str = "unifont") -> dict[str, Any]:
    """Provenance of a shipped table (fonts, glyph counts, embedding) without the neighbours."""
    return {k: v for k, v in _read(None, embedding).items() if k not in ("neighbours", "distances", "similarities")}


def load_neighbours(*, path: str | os.PathLike | None = None,
                    embedding: str = "unifont") -> dict[str, tuple[str, ...]]:
    """Character -> its visual nearest neighbours, nearest first: the shipped ``embedding`` table
    (``"unifont"``, ``"pca"`` or ``"cae"``) unless a JSON file written by a build script is given as ``path``."""
    if path is None:
        return dict(_shipped_neighbours(embedding))
    return _parse(_read(path, embedding))


@lru_cache(maxsize=3)
def _shipped_neighbours(embedding: str) -> dict[str, tuple[str, ...]]:
    return _parse(_read(None, embedding))


def load_neighbour_weights(path: str | os.PathLike | None = None, *,
                           embedding: str = "unifont") -> dict[str, tuple[float, ...]]:
    """Character -> the similarity of each of its neighbours (same order as :func:`load_neighbours`),
    used as VIPER's sampling weights; empty when the table stores none (neighbours drawn uniformly)."""
    if path is None:
        return dict(_shipped_weights(embedding))
    return _parse_weights(_read(path, embedding))


def _parse_weights(payload: dict[str, Any]) -> dict[str, tuple[float, ...]]:
    table = payload.get("similarities")
    if not isinstance(table, dict):
        return {}
    return {str(c): tuple(float(x) for x in v) for c, v in table.items()}


@lru_cache(maxsize=3)
def _shipped_weights(embedding: str) -> dict[str, tuple[float, ...]]:
    return _parse_weights(_read(None, embedding))
