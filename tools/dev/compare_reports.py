"""Compare the numbers of two run reports section by section: how many differ, are missing or are new.

Used to check that a refactoring computes the same results: recompute a recorded run's units from its own
checkpoints with the new code (``robustsuite run CONFIG --out COPY_OF_RUN_DIR --recompute UNIT ...``) and compare
the new report with the old one. Times (any key containing ``seconds``) and run metadata are not compared.

    uv run python tools/dev/compare_reports.py OLD/report.json NEW/report.json [--json OUT.json]

Exit status 0 when every number of OLD is in NEW with the same value, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def numbers(obj: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """Every number inside ``obj`` (booleans excluded) with its path, ``/metrics/x/value`` or ``/tables[0]/rows[1][2]``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from numbers(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from numbers(v, f"{path}[{i}]")
    elif isinstance(obj, int | float) and not isinstance(obj, bool) and "seconds" not in path:
        yield path, obj


def compare(old: dict, new: dict) -> dict[str, dict[str, Any]]:
    """Per section of ``old``: counts of its numbers, those that differ in ``new``, are missing there, or are new."""
    out = {}
    for name, section in old["sections"].items():
        a, b = dict(numbers(section)), dict(numbers(new["sections"].get(name, {})))
        differ = [k for k in a if k in b and a[k] != b[k]]
        out[name] = {"numbers": len(a), "differ": len(differ), "missing": sum(k not in b for k in a),
                     "new": sum(k not in a for k in b), "first_differences": [[k, a[k], b[k]] for k in differ[:5]]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--json", type=Path, help="also write the comparison here")
    args = ap.parse_args(argv)
    old, new = (json.loads(p.read_text(encoding="utf-8")) for p in (args.old, args.new))
    result = compare(old, new)
    for name, r in result.items():
        print(f"{name:36s} numbers {r['numbers']:6d}  differ {r['differ']:5d}  missing {r['missing']:5d}  "
              f"new {r['new']:5d}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0 if all(not r["differ"] and not r["missing"] for r in result.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
