"""Progress of N jobs of known sizes, as text: job k of N, the time elapsed and left, one plain line per event,
and the stage the running code reports through its tqdm bars. Imports neither torch nor tqdm (tqdm is read only
if the running code imported it)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable


def clock(seconds: float | None) -> str:
    """``H:MM:SS`` (``?`` for ``None``)."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class Tally:
    """Jobs ``ids`` with ``sizes`` (e.g. a job split into 3 shards weighs 3). The time left is the seconds per size
    of the jobs finished here times the size still to run, counting down between two ends; ``None`` before any."""

    def __init__(self, ids: Iterable[str], sizes: Iterable[float]) -> None:
        self.ids = list(ids)
        self.size = dict(zip(self.ids, sizes, strict=True))
        self.index = {j: k + 1 for k, j in enumerate(self.ids)}
        self.total, self.ended, self.started = len(self.ids), {}, {}
        self.t0, self.done_size, self.done_at = time.monotonic(), 0.0, 0.0

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def start(self, job: str) -> None:
        self.started[job] = time.monotonic()

    def end(self, job: str, status: str) -> float | None:
        """Record the end of ``job`` ("done", "failed", or "skip": finished before); its seconds if it ran here."""
        self.ended[job] = status
        began = self.started.pop(job, None)
        if began is None or status == "skip":
            return None
        self.done_size, self.done_at = self.done_size + self.size[job], self.elapsed()
        return time.monotonic() - began

    def remaining(self) -> float | None:
        if not self.done_size:
            return None
        left = sum(s for j, s in self.size.items() if j not in self.ended)
        return max(0.0, self.done_at / self.done_size * left - (self.elapsed() - self.done_at)) if left else 0.0

    def line(self, job: str, status: str, label: str, seconds: float | None = None) -> str:
        """``[2/5] done LABEL in 12.3 s (elapsed 0:01:02, about 0:03:10 left)``; ``start``, ``reused`` (status
        "skip": finished before, by an earlier run or another process) and ``waiting`` lines name the job only."""
        head = f"[{self.index[job]}/{self.total}]"
        if status in ("start", "waiting"):
            return f"{head} {status} {label}"
        if status == "skip":
            return f"{head} reused {label}: already finished (by an earlier run, or another process on this run)"
        took = "" if seconds is None else f" in {seconds:.1f} s"
        return f"{head} {status} {label}{took} (elapsed {clock(self.elapsed())}, about {clock(self.remaining())} left)"


def stage() -> str:
    """The open tqdm bars of this process, innermost last: ``AutoAttack 1/2 batch › ...`` ("" when none)."""
    tqdm = getattr(sys.modules.get("tqdm.std"), "tqdm", None)
    bars = [b for b in list(getattr(tqdm, "_instances", ())) if not getattr(b, "disable", True)]
    return " › ".join(f"{(b.desc or 'working').rstrip(': ')} {b.n}{f'/{b.total}' if b.total else ''} {b.unit}".rstrip()
                      for b in sorted(bars, key=lambda b: abs(getattr(b, "pos", 0) or 0))[:2])
