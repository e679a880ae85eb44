"""Build the visual attack's neighbour table over the whole Basic Multilingual Plane from GNU Unifont.

    uv run python tools/build/zeroe_perturb/build_visual_unifont.py
    uv run python tools/build/zeroe_perturb/build_visual_unifont.py --font /path/to/unifont.otf --k 20

Zéroe §3.3 (after VIPER, Eger et al. 2019) renders every BMP character with Pillow and takes each
character's 20 nearest neighbours in a visual embedding; VIPER then replaces a character by one of them,
drawn in proportion to its similarity.  This script:

1. reads the code points GNU Unifont maps (Debian ``unifont``: ``/usr/share/fonts/opentype/unifont/
   unifont.otf``; about 57,000 BMP glyphs) from its cmap (fontTools);
2. renders each as a 16×16 greyscale bitmap with Pillow (Unifont's native pixel size; left/top aligned
   on the font's ascender line, so baselines agree);
3. blurs each bitmap with a 3×3 binomial kernel (tolerates one-pixel shifts) and L2-normalises it; the
   image similarity of two glyphs is the cosine of these vectors;
4. *sources* (characters the attacker replaces): letters and digits of the Latin, Greek and Cyrillic
   blocks and Latin Extended Additional (U+0000–U+052F, U+1E00–U+1FFF); *targets* (possible
   replacements): every printable BMP letter or digit Unifont draws (``str.isprintable`` and a word
   character, so a replacement never splits a word token), the source itself excluded;
5. stores each source's ``--k`` most similar targets with their similarities in
   ``packages/zeroe-perturb/src/zeroe_perturb/data/visual_neighbours_unifont.json``.

The shipped table is what the attacker reads at run time; this script (and the font) are only needed to
rebuild it.  Unifont: GPL-2+ with the font embedding exception / SIL OFL 1.1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "packages" / "zeroe-perturb" / "src" / "zeroe_perturb" / "data" / "visual_neighbours_unifont.json"
FONT_DIRS = [Path("/usr/share/fonts/opentype/unifont"), Path("/usr/share/fonts/truetype/unifont"), Path("/usr/share/fonts")]
WORD_RE = re.compile(r"[^\W_]")  # the package's word characters (zeroe_perturb._tokens.WORD_RE)
SIZE = 16
SOURCE_RANGES = [(0x30, 0x52F), (0x1E00, 0x1FFF)]


def find_unifont(explicit: str | None) -> Path:
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise SystemExit(f"font not found: {p}")
        return p
    for d in FONT_DIRS:
        for name in ("unifont.otf", "unifont.ttf"):
            hits = sorted(d.rglob(name)) if d.is_dir() else []
            if hits:
                return hits[0]
    raise SystemExit("GNU Unifont not found under /usr/share/fonts (Debian: apt-get install fonts-unifont); "
                     "pass --font")


def mapped_bmp(path: Path) -> list[int]:
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(path), lazy=True).getBestCmap()
    return sorted(cp for cp in cmap if cp <= 0xFFFF and not 0xD800 <= cp <= 0xDFFF)


def is_target(ch: str) -> bool:
    return ch.isprintable() and WORD_RE.fullmatch(ch) is not None and unicodedata.category(ch) not in ("Co", "Cn")


def is_source(ch: str) -> bool:
    cp = ord(ch)
    return any(a <= cp <= b for a, b in SOURCE_RANGES) and is_target(ch)


def render_all(chars: list[str], font) -> np.ndarray:
    from PIL import Image, ImageDraw

    out = np.zeros((len(chars), SIZE, SIZE), dtype=np.float32)
    img = Image.new("L", (SIZE, SIZE), 0)
    draw = ImageDraw.Draw(img)
    for i, ch in enumerate(chars):
        draw.rectangle((0, 0, SIZE, SIZE), fill=0)
        draw.text((0, 0), ch, fill=255, font=font, anchor="la")
        out[i] = np.asarray(img, dtype=np.float32) / 255.0
    return out


def blur_normalise(x: np.ndarray) -> np.ndarray:
    """3×3 binomial blur ([1, 2, 1] ⊗ [1, 2, 1] / 16, zero padding), flattened and L2-normalised."""
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    h = p[:, :, :-2] + 2 * p[:, :, 1:-1] + p[:, :, 2:]
    b = (h[:, :-2, :] + 2 * h[:, 1:-1, :] + h[:, 2:, :]) / 16.0
    v = b.reshape(len(x), -1)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def main() -> None:
    from PIL import ImageFont

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--font", help="Unifont .otf/.ttf (default: found under /usr/share/fonts)")
    ap.add_argument("--k", type=int, default=20, help="neighbours per character (paper: 20)")
    ap.add_argument("--min-ink", type=float, default=2.0, help="ink (sum of pixel values) below which a glyph is blank")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.time()
    path = find_unifont(args.font)
    font = ImageFont.truetype(str(path), SIZE)
    cps = mapped_bmp(path)
    targets = [chr(cp) for cp in cps if is_target(chr(cp))]
    img = render_all(targets, font)
    ink = img.reshape(len(img), -1).sum(axis=1)
    keep = ink >= args.min_ink
    targets = [c for c, k in zip(targets, keep, strict=True) if k]
    vec = blur_normalise(img[keep])
    print(f"{path.name}: {len(cps)} mapped BMP code points, {len(targets)} printable letter/digit glyphs "
          f"({int((~keep).sum())} blank dropped) in {time.time() - t0:.1f} s")
    index = {c: i for i, c in enumerate(targets)}
    sources = [c for c in targets if is_source(c)]
    table: dict[str, str] = {}
    sims: dict[str, list[float]] = {}
    for s in range(0, len(sources), 256):
        chunk = sources[s : s + 256]
        q = vec[[index[c] for c in chunk]]
        sim = q @ vec.T
        for r, c in enumerate(chunk):
            sim[r, index[c]] = -np.inf
        top = np.argpartition(-sim, args.k, axis=1)[:, : args.k]
        for r, c in enumerate(chunk):
            order = top[r][np.lexsort((top[r], -sim[r, top[r]]))]  # most similar first, ties by code point order
            table[c] = "".join(targets[j] for j in order)
            sims[c] = [round(float(sim[r, j]), 4) for j in order]
    payload = {
        "format": "zeroe-perturb visual neighbours v1",
        "fonts": [path.name],
        "canvas": SIZE,
        "font_size": SIZE,
        "embedding": "unifont16-blur3-cosine",
        "similarity": "cosine of 3x3-blurred 16x16 Unifont bitmaps",
        "n_glyphs": len(targets),
        "n_sources": len(sources),
        "source_ranges": [[a, b] for a, b in SOURCE_RANGES],
        "k": args.k,
        "neighbours": table,
        "similarities": sims,
    }
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True), encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB, {len(sources)} sources) in "
          f"{time.time() - t0:.1f} s; e.g. a -> {table.get('a')}  e -> {table.get('e')}")


if __name__ == "__main__":
    main()
