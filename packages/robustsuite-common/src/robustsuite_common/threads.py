"""Torch's intra-op threads, chosen deliberately (issue 37).

Torch's default (one intra-op thread per core) costs twice: on a busy machine the threads wait for each other at
every small operator (a forward pass of the shipped CNN on 45 images took 26 ms with one thread, 50–157 ms with
two, under load), and a reduction split over a different number of threads sums in a different order, so a
training run or a search can end elsewhere (iortemp's quick start: 72.5 % clean accuracy with two threads,
85.0 % with one). Every command line of the suite therefore computes with **one** intra-op thread unless
``ROBUSTSUITE_THREADS`` says otherwise, whatever ``OMP_NUM_THREADS`` the environment holds; parallelism comes from
processes (``robustsuite run --workers N``), which gives the same numbers as a serial run.

- :func:`use_threads` is what a command line calls first: it sets ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` (read by
  a torch imported later and inherited by child processes) and, when torch is already imported,
  ``torch.set_num_threads``.
- :func:`limited_threads` sets torch's threads for a block and restores the caller's afterwards (library code
  that computes on a caller's behalf, e.g. a run's worker).

Importing this module imports neither torch nor numpy.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

THREADS_ENV = "ROBUSTSUITE_THREADS"
DEFAULT_THREADS = 1
_OMP_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def requested_threads(default: int = DEFAULT_THREADS) -> int:
    """The intra-op threads asked for by ``ROBUSTSUITE_THREADS`` (a positive integer), else ``default``."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive integer (torch's intra-op threads per process), "
                         f"got {raw!r}")
    return n


def _check(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"threads must be a positive integer, got {n!r}")
    return n


def use_threads(n: int | None = None) -> int:
    """Compute with ``n`` intra-op threads from now on (default :func:`requested_threads`); returns ``n``.

    Call it before torch is imported where possible: the environment variables set here are what OpenMP reads when
    torch loads, and what child processes inherit; if torch is already imported, ``torch.set_num_threads(n)`` is
    called as well, so the choice holds either way.
    """
    n = requested_threads() if n is None else _check(n)
    for var in _OMP_VARS:
        os.environ[var] = str(n)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(n)
    return n


@contextlib.contextmanager
def limited_threads(n: int | None = None) -> Iterator[int]:
    """Run the block with ``n`` torch intra-op threads (default :func:`requested_threads`), then restore the
    caller's count."""
    import torch

    n = requested_threads() if n is None else _check(n)
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)
