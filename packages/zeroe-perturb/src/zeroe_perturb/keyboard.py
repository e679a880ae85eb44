"""QWERTY key adjacency for the keyboard-typo attacker (§3.2, after Belinkov & Bisk 2017)."""

from __future__ import annotations

# Key rows of a US QWERTY keyboard with their horizontal stagger (in key widths).
_ROWS: tuple[tuple[str, float], ...] = (
    ("1234567890", 0.0),
    ("qwertyuiop", 0.5),
    ("asdfghjkl", 0.75),
    ("zxcvbnm", 1.25),
)


def _neighbours() -> dict[str, str]:
    pos = {c: (r, off + k) for r, (keys, off) in enumerate(_ROWS) for k, c in enumerate(keys)}
    out: dict[str, str] = {}
    for c, (r, x) in pos.items():
        near = []
        for d, (r2, x2) in pos.items():
            if d == c or c.isdigit() != d.isdigit():
                continue  # letters are mistyped as letters, digits as digits
            if (r2 == r and abs(x2 - x) == 1.0) or (abs(r2 - r) == 1 and abs(x2 - x) < 1.0):
                near.append(d)
        out[c] = "".join(sorted(near))
    return out


#: Lower-case key -> its physically adjacent keys (same row left/right, touching keys above/below).
QWERTY_NEIGHBOURS: dict[str, str] = _neighbours()
