"""What a run shows while it computes (``robustsuite run`` / ``demo``), and how it stops on Ctrl-C.

- On a terminal (and without ``--no-progress``): a live display of unit k of N, its method and model, the time
  elapsed and an estimate of the time left (from the sizes of the units still to run — a sharded unit counts as
  its number of shards — and the time the finished ones took), and, below it, the stage the unit is in with its
  own count, read from the progress bars the method's experiment opens (e.g. ``AutoAttack 1/2``, ``zeroe cells
  12/40``); the experiments' own bars are not printed.
- Otherwise (``--no-progress``, output redirected, a batch job): one plain line per unit as it starts and as it
  ends (:func:`plain_line`); a unit finished by an earlier run is reported as reused.
- Ctrl-C: the units finished so far are kept (each wrote its record atomically); the message lists them and the
  command that resumes the run; exit status 130.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .units import Unit, shard_count

INTERRUPTED = 130  # the shell's status for a process ended by SIGINT


def _label(unit: Unit) -> str:
    seed = "" if unit.deterministic else f" · seed {unit.seed}"
    return f"{unit.method} · {unit.model}{seed}"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class Tally:
    """Counts of a run's units and the estimate of the time left: units still to run weigh their size (their
    shard count), and the finished ones of this run give the seconds per size."""

    def __init__(self, units: list[Unit]) -> None:
        self.units, self.total = units, len(units)
        self.size = {u.id: shard_count(u) for u in units}
        self.index = {u.id: k + 1 for k, u in enumerate(units)}
        self.ended: dict[str, str] = {}
        self.computed_size = 0
        self.t0 = time.monotonic()
        self.compute_seconds = 0.0
        self.started: dict[str, float] = {}

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def start(self, unit: Unit) -> None:
        self.started[unit.id] = time.monotonic()

    def end(self, unit: Unit, status: str) -> float | None:
        self.ended[unit.id] = status
        began = self.started.pop(unit.id, None)
        if status in ("done", "failed") and began is not None:
            self.computed_size += self.size[unit.id]
            self.compute_seconds = self.elapsed()
            return time.monotonic() - began
        return None

    def remaining(self) -> float | None:
        """Seconds left, or ``None`` before any unit of this run finished."""
        if not self.computed_size:
            return None
        left = sum(self.size[u.id] for u in self.units if u.id not in self.ended)
        since = self.elapsed() - self.compute_seconds  # counts down between two ends
        return max(0.0, self.compute_seconds / self.computed_size * left - since) if left else 0.0

    def finished(self) -> list[str]:
        return [uid for uid, s in self.ended.items() if s in ("done", "skip")]


def plain_line(tally: Tally, unit: Unit, status: str, seconds: float | None = None) -> str:
    """One line of the plain display, e.g. ``[2/5] done uncspan · builtin:fashion-cnn · seed 0 in 12.3 s (elapsed
    0:01:02, about 0:03:10 left)``."""
    k = tally.index[unit.id]
    head = f"[{k}/{tally.total}]"
    if status == "start":
        return f"{head} start {_label(unit)}"
    if status == "skip":
        return f"{head} reused {_label(unit)}: finished by an earlier run (units/{unit.id}.json)"
    if status == "waiting":
        return f"{head} waiting {_label(unit)}: being computed by another process; awaited after the other units"
    took = "" if seconds is None else f" in {seconds:.1f} s"
    return (f"{head} {status} {_label(unit)}{took} (elapsed {_clock(tally.elapsed())}, about "
            f"{_clock(tally.remaining())} left)")


class _Stage:
    """The innermost progress bar the running experiment opened (tqdm keeps every open bar in a class-level set),
    rendered as ``stage: AutoAttack 1/2 batch``."""

    def __rich__(self):
        from rich.text import Text

        try:
            from tqdm.std import tqdm
        except ImportError:  # pragma: no cover - tqdm comes with every method package
            return Text("")
        bars = [b for b in list(tqdm._instances) if not getattr(b, "disable", True)]
        if not bars:
            return Text("")
        parts = []
        for b in sorted(bars, key=lambda b: getattr(b, "pos", 0) or 0, reverse=True)[:2]:
            total = f"/{b.total}" if b.total else ""
            parts.append(f"{(b.desc or 'working').rstrip(': ')} {b.n}{total} {b.unit or ''}".rstrip())
        return Text("  stage: " + " › ".join(parts), style="dim")


class _DropBars:
    """stderr while the live display runs: tqdm's redraws (carriage returns) are dropped — the display shows the
    stage instead —, any other text goes to the console above the display."""

    def __init__(self, console) -> None:
        self.console, self.buffer = console, ""

    def write(self, text: str) -> int:
        self.buffer += text
        while "\n" in self.buffer:
            line, self.buffer = self.buffer.split("\n", 1)
            if "\r" not in line and line.strip():
                self.console.print(line, markup=False, highlight=False)
        if "\r" in self.buffer:
            self.buffer = ""
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def run_with_display(config: dict, out: Path, *, progress: bool, executor: str = "local", address: str | None = None,
                     workers: int = 1, command: list[str] | None = None,
                     locked_message: Callable[[Unit], str] | None = None) -> int:
    """Plan ``config``, compute it into ``out`` with the display described above, print the report's paths;
    returns the exit status (0, 1 when a unit failed, 130 on Ctrl-C)."""
    from rich.console import Console
    from rich.markup import escape

    from . import execute, plan
    from .executors import make_executor

    console = Console(file=sys.stderr)  # bound to the real stderr: the live display replaces sys.stderr
    argv = command or ["robustsuite", *sys.argv[1:]]
    cache: dict[str, Any] = {}
    units = plan(config, cache=cache)
    engine = make_executor(executor, address, workers=workers)  # bad options, or Ray missing: before any work
    live = progress and console.is_terminal
    tally = Tally(units)
    failed: list[str] = []
    display = _Live(console, tally) if live else None

    def on_unit(unit: Unit, status: str) -> None:
        if status == "start":
            tally.start(unit)
        seconds = tally.end(unit, status) if status in ("done", "failed", "skip") else None
        if status == "failed":
            failed.append(unit.id)
        if status == "waiting" and locked_message is not None:
            console.print(f"[yellow]{escape(locked_message(unit))}[/yellow]; waiting for it after the other units")
        if display is not None:
            display.update(unit, status, seconds)
        else:
            print(plain_line(tally, unit, status, seconds), file=sys.stderr, flush=True)

    try:
        with engine, (display or _Nothing()):
            report = execute(config, out, progress=live and workers == 1, command=" ".join(argv),
                             on_unit=on_unit, executor=engine, cache=cache)
    except KeyboardInterrupt:
        kept = tally.finished()
        console.print(f"\n[yellow]interrupted[/yellow]: {len(kept)} of {len(units)} units are finished and kept in "
                      f"{escape(str(Path(out) / 'units'))}" + (":" if kept else "; nothing was finished"))
        for uid in kept:
            console.print(f"  kept: {escape(uid)}")
        console.print("resume with: " + escape(shlex.join(argv)))
        return INTERRUPTED
    for u in report["units"]:
        if u["status"] == "failed":
            console.print(f"[red]unit failed:[/red] {escape(u['id'])}: {escape(u['error'] or '')} "
                          f"(traceback: {escape(str(Path(out) / 'units' / (u['id'] + '.failed.json')))})")
    console.print(f"report written: {escape(str(Path(out) / 'report.html'))}, {escape(str(Path(out) / 'report.md'))}, "
                  f"{escape(str(Path(out) / 'report.json'))}")
    return 1 if failed else 0


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class _Live:
    """The live display: a bar over the units (k/N, elapsed, time left), the running units, the stage."""

    def __init__(self, console, tally: Tally) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console, self.tally = console, tally
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                            TimeElapsedColumn(), TextColumn("{task.fields[left]}"), console=console)
        self.task = self.bar.add_task("units", total=tally.total, left="")
        self.running: dict[str, str] = {}

    def _renderable(self):
        from rich.console import Group
        from rich.text import Text

        running = [Text(f"  unit {k}: {label}") for k, label in self.running.values()]
        return Group(self.bar, *running, _Stage())

    def update(self, unit: Unit, status: str, seconds: float | None) -> None:
        from rich.markup import escape

        k = self.tally.index[unit.id]
        if status == "start":
            self.running[unit.id] = (f"{k}/{self.tally.total}", _label(unit))
        else:
            self.running.pop(unit.id, None)
            if status != "waiting":
                self.bar.advance(self.task)
            if status != "start":
                self.console.print(escape(plain_line(self.tally, unit, status, seconds)))
        left = self.tally.remaining()
        self.bar.update(self.task, description="units",
                        left="" if left is None else f"≈ {_clock(left)} left")
        self.live.update(self._renderable())

    def __enter__(self):
        from rich.live import Live

        self.live = Live(self._renderable(), console=self.console, refresh_per_second=4, transient=True,
                         redirect_stdout=False, redirect_stderr=False)
        self.live.__enter__()
        self._stderr, sys.stderr = sys.stderr, _DropBars(self.console)
        return self

    def __exit__(self, *exc) -> None:
        sys.stderr = self._stderr
        self.live.__exit__(*exc)
