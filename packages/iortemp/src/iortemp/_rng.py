"""Seeding for third-party code (TextAttack) that draws from the global RNGs.

Library code must not change the caller's global RNG state, but TextAttack's character transformations
call ``np.random`` / ``random`` directly. ``seeded_globals`` seeds them for the duration of a block and
restores the caller's state afterwards, which fixes the attack's randomness across temperatures (Sec. 4.2).
"""

from __future__ import annotations

import contextlib
import random

import numpy as np


@contextlib.contextmanager
def seeded_globals(seed: int):
    py_state = random.getstate()
    np_state = np.random.get_state()  # noqa: NPY002 - TextAttack uses the legacy global RNG
    try:
        random.seed(seed)
        np.random.seed(seed % (2**32))  # noqa: NPY002
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002
