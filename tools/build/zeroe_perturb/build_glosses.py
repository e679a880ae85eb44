"""Build zeroe-perturb's shipped demo texts: a small balanced subset of WordNet 3.0 noun glosses with their topic.

    uv run python tools/build/zeroe_perturb/build_glosses.py [--check]

Reads robustsuite's shipped ``resources/wordnet_topics.json.xz`` (itself rebuilt from Debian's WordNet by
``tools/build/build_builtin.py``), keeps the first 150 training and 40 test glosses of each of the 8 topics in file order,
and writes ``packages/zeroe-perturb/src/zeroe_perturb/data/wordnet_glosses.json.xz`` (xz, fixed settings: the same
input gives the same bytes) with WordNet's licence beside it. ``--check`` rebuilds in memory and compares.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "packages/robustsuite/src/robustsuite/resources/wordnet_topics.json.xz"
LICENCE = ROOT / "packages/robustsuite/src/robustsuite/resources/LICENSE-WordNet"
OUT = ROOT / "packages/zeroe-perturb/src/zeroe_perturb/data/wordnet_glosses.json.xz"
OUT_LICENCE = OUT.with_name("LICENSE-WordNet.txt")
PER_CLASS = {"train": 150, "test": 40}


def build() -> bytes:
    src = json.loads(lzma.decompress(SOURCE.read_bytes()).decode("utf-8"))
    out = {"classes": src["classes"], "source": "WordNet 3.0 noun glosses (a balanced subset of robustsuite's "
                                                  "builtin:wordnet-topics), topic = the synset's lexicographer file"}
    for split, k in PER_CLASS.items():
        texts, labels, rows = [], [], []
        seen = [0] * len(src["classes"])
        for i, (t, y) in enumerate(zip(src[split]["text"], src[split]["label"], strict=True)):
            if seen[y] < k:
                seen[y] += 1
                texts.append(t)
                labels.append(y)
                rows.append(i)
        out[split] = {"text": texts, "label": labels, "row": rows}
    blob = json.dumps(out, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return lzma.compress(blob, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)


def licence_text() -> str:
    """robustsuite's WordNet licence file with its first lines (which name robustsuite's files) replaced."""
    body = LICENCE.read_text(encoding="utf-8").split("\n\n", 1)[1]
    return ("WordNet 3.0 noun glosses are shipped here as wordnet_glosses.json.xz (a subset of data.noun). WordNet\n"
            "licence (https://wordnet.princeton.edu/license-and-commercial-use), as printed at the top of WordNet\n"
            "3.0's data files:\n\n" + body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the shipped file instead of writing it")
    args = ap.parse_args()
    data = build()
    licence = licence_text()
    if args.check:
        same = OUT.read_bytes() == data and OUT_LICENCE.read_text(encoding="utf-8") == licence
        print("identical" if same else "DIFFERENT")
        return 0 if same else 1
    OUT.write_bytes(data)
    OUT_LICENCE.write_text(licence, encoding="utf-8")
    print(f"wrote {OUT} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
