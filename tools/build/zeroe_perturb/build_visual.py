"""Build the visual attack's nearest-neighbour table (Zéroe §3.3) from offline fonts.

    uv run python tools/build/zeroe_perturb/build_visual.py                      # DejaVu Sans (matplotlib)
    uv run python tools/build/zeroe_perturb/build_visual.py --font /usr/share/fonts/opentype/unifont/unifont.otf \
        --font DejaVuSans                                                  # several fonts, first wins

Steps:

1. collect the Basic Multilingual Plane code points each font maps (its cmap), dropping control,
   format, private-use, surrogate, unassigned, separator and combining-mark characters;
2. render each character with Pillow as a 24×24 greyscale image (centred with the font's middle
   anchor, so baselines stay comparable across glyphs);
3. drop glyphs that render blank (fewer than ``--min-ink`` dark pixels) or as the font's
   replacement box (pixel-identical to the glyph of a code point the font does not map); the
   LastResort font, which draws every character as a placeholder, is refused;
4. embed every glyph: a PCA of the pixels (``--dims`` components, numpy SVD; default), or with
   ``--embedding cae`` the bottleneck of a small convolutional autoencoder trained with torch on all
   kept glyphs (closer to the paper's VAE-GAN encoder; ``--epochs``, ``--seed``);
5. store, for every ASCII letter, digit and punctuation mark and the Latin-1 letters, its 20
   nearest neighbours (Euclidean in the embedding, itself excluded) in
   ``packages/zeroe-perturb/src/zeroe_perturb/data/visual_neighbours.json``.

Fonts: matplotlib ships DejaVu Sans (about 5,400 BMP code points; Bitstream Vera licence).  For
full BMP coverage install GNU Unifont (Debian: ``apt-get install fonts-unifont``; GPL-2+ with font
embedding exception / OFL-1.1) and pass its file with ``--font``.
"""

from __future__ import annotations

import argparse
import json
import os
import string
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "packages" / "zeroe-perturb" / "src" / "zeroe_perturb" / "data" / "visual_neighbours.json"
SKIP_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me", "Mc"}
SIZE = 24


def resolve_font(name: str) -> Path:
    import matplotlib

    p = Path(name)
    if p.is_file():
        return p
    cand = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / f"{name}.ttf"
    if cand.is_file():
        return cand
    raise FileNotFoundError(f"font not found: {name}")


def font_codepoints(path: Path) -> list[int]:
    from matplotlib.ft2font import FT2Font

    cmap = FT2Font(str(path)).get_charmap()
    return sorted(
        cp for cp, gid in cmap.items()
        if gid and cp <= 0xFFFF and unicodedata.category(chr(cp)) not in SKIP_CATEGORIES
    )


def render(ch: str, font) -> np.ndarray:
    from PIL import Image, ImageDraw

    img = Image.new("L", (SIZE, SIZE), 0)
    ImageDraw.Draw(img).text((SIZE / 2, SIZE / 2), ch, fill=255, font=font, anchor="mm")
    return np.asarray(img, dtype=np.uint8)


def train_cae(x: np.ndarray, *, dims: int, epochs: int, seed: int) -> tuple[np.ndarray, float]:
    """Train a small convolutional autoencoder on the 24x24 glyphs; return the bottleneck codes and
    the reconstruction R^2 (share of pixel variance explained)."""
    import torch
    from torch import nn

    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        enc = nn.Sequential(nn.Conv2d(1, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU(),
                            nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(), nn.Flatten(), nn.Linear(64 * 3 * 3, dims))
        dec = nn.Sequential(nn.Linear(dims, 64 * 3 * 3), nn.ReLU(), nn.Unflatten(1, (64, 3, 3)),
                            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(32, 16, 4, 2, 1),
                            nn.ReLU(), nn.ConvTranspose2d(16, 1, 4, 2, 1))
    xt = torch.tensor(x, dtype=torch.float32).reshape(-1, 1, SIZE, SIZE)
    opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=2e-3)
    for ep in range(epochs):
        perm = torch.randperm(len(xt), generator=g)
        total = 0.0
        for s in range(0, len(xt), 128):
            b = xt[perm[s : s + 128]]
            loss = nn.functional.binary_cross_entropy_with_logits(dec(enc(b)), b)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        if ep % 10 == 0 or ep == epochs - 1:
            print(f"  CAE epoch {ep}: BCE {total / len(xt):.4f}")
    with torch.no_grad():
        z = enc(xt)
        rec = torch.sigmoid(dec(z)).reshape(len(xt), -1).numpy()
    r2 = 1.0 - float(((rec - x) ** 2).sum() / ((x - x.mean(axis=0)) ** 2).sum())
    return z.numpy().astype(np.float64), r2


def main() -> None:
    from PIL import ImageFont

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--font", action="append", help="font file or matplotlib font name (repeatable)")
    ap.add_argument("--size", type=int, default=18, help="font size in points for the 24x24 canvas")
    ap.add_argument("--dims", type=int, default=64, help="PCA dimensions")
    ap.add_argument("--k", type=int, default=20, help="neighbours per character (paper: 20)")
    ap.add_argument("--min-ink", type=int, default=4, help="pixels > 64 below which a glyph counts as blank")
    ap.add_argument("--embedding", choices=["pca", "cae"], default="pca")
    ap.add_argument("--epochs", type=int, default=30, help="CAE training epochs")
    ap.add_argument("--seed", type=int, default=0, help="CAE initialisation / shuffling seed")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    fonts = [resolve_font(f) for f in (args.font or ["DejaVuSans"])]

    chars: list[str] = []
    images: list[np.ndarray] = []
    seen: set[str] = set()
    stats = {}
    for path in fonts:
        if "lastresort" in path.name.lower():
            raise SystemExit("refusing the LastResort font: it draws placeholders, not glyphs")
        font = ImageFont.truetype(str(path), args.size)
        cps = font_codepoints(path)
        box = render("\U000f0000", font)  # private-use plane 15: unmapped -> the font's .notdef box
        kept = blank = boxed = 0
        for cp in cps:
            ch = chr(cp)
            if ch in seen:
                continue
            img = render(ch, font)
            if int((img > 64).sum()) < args.min_ink:
                blank += 1
                continue
            if np.array_equal(img, box):
                boxed += 1
                continue
            seen.add(ch)
            chars.append(ch)
            images.append(img)
            kept += 1
        stats[path.name] = {"mapped_bmp": len(cps), "kept": kept, "blank": blank, "replacement_box": boxed}
        print(f"{path.name}: {len(cps)} BMP code points, kept {kept}, blank {blank}, box {boxed}")

    x = np.stack(images).reshape(len(images), -1).astype(np.float64) / 255.0
    if args.embedding == "pca":
        mean = x.mean(axis=0)
        _, s, vt = np.linalg.svd(x - mean, full_matrices=False)
        emb = (x - mean) @ vt[: args.dims].T
        explained = float((s[: args.dims] ** 2).sum() / (s**2).sum())
        print(f"PCA {args.dims} dims explain {explained:.3f} of the pixel variance over {len(chars)} glyphs")
    else:
        emb, explained = train_cae(x, dims=args.dims, epochs=args.epochs, seed=args.seed)
        print(f"CAE {args.dims} dims: reconstruction R^2 {explained:.3f} over {len(chars)} glyphs")

    index = {c: i for i, c in enumerate(chars)}
    queries = [c for c in string.ascii_letters + string.digits + string.punctuation if c in index]
    queries += [chr(cp) for cp in range(0xC0, 0x100) if chr(cp).isalpha() and chr(cp) in index]
    sq = (emb**2).sum(axis=1)
    table: dict[str, str] = {}
    dists: dict[str, list[float]] = {}
    for q in queries:
        d = sq + sq[index[q]] - 2 * emb @ emb[index[q]]
        d[index[q]] = np.inf
        nn = np.argsort(d, kind="stable")[: args.k]
        table[q] = "".join(chars[i] for i in nn)
        dists[q] = [round(float(np.sqrt(max(d[i], 0.0))), 4) for i in nn]
    payload = {
        "format": "zeroe-perturb visual neighbours v1",
        "fonts": [p.name for p in fonts],
        "font_stats": stats,
        "canvas": SIZE,
        "font_size": args.size,
        "embedding": f"{args.embedding}{args.dims}",
        "explained_variance": round(explained, 4),
        "n_glyphs": len(chars),
        "k": args.k,
        "neighbours": table,
        "distances": dists,
    }
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=0, sort_keys=True), encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB); e.g. a -> {table.get('a')}")


if __name__ == "__main__":
    main()
