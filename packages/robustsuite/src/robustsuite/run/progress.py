"""What ``robustsuite run``/``demo`` shows while computing, and Ctrl-C. On a terminal: a live bar of units k/N with
the time elapsed and left (sizes: :func:`~robustsuite.run.units.unit_cost`), the running units, and the stage the
running experiment's progress bars report (e.g. ``AutoAttack 1/2 batch``; the bars themselves are not printed).
Otherwise (``--no-progress``, a log): one plain line per unit start and end, reused units named as such. Ctrl-C
keeps the finished units (records are written atomically), lists them with the command that resumes; exit 130."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path

from robustsuite_common.progress import Tally, clock, stage

from .config import RunConfig
from .units import Unit, unit_cost

INTERRUPTED = 130


def label(unit: Unit) -> str:
    return f"{unit.method} · {unit.model}" + ("" if unit.deterministic else f" · seed {unit.seed}")


@contextlib.contextmanager
def _live(console, tally: Tally, running: dict):
    """The live display; the experiments' tqdm bars (on stderr) are silenced while it runs."""
    from rich.console import Group
    from rich.live import Live
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("units"), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                   TextColumn("{task.fields[left]}"), console=console)
    task = bar.add_task("units", total=tally.total, left="")

    class View:
        def __rich__(self):
            left = tally.remaining()
            bar.update(task, completed=len(tally.ended), left="" if left is None else f"≈ {clock(left)} left")
            now = stage()
            return Group(bar, *[f"  unit {k}: {x}" for k, x in running.values()], *([f"  stage: {now}"] if now else []))

    stderr, sys.stderr = sys.stderr, open(os.devnull, "w")  # noqa: SIM115 - closed below
    try:
        with Live(View(), console=console, refresh_per_second=4, transient=True, redirect_stderr=False):
            yield
    finally:
        sys.stderr.close()
        sys.stderr = stderr


def run_with_display(config: RunConfig, out: Path, *, progress: bool, make_executor, locked_message=None) -> int:
    """Compute ``config`` into ``out`` with ``make_executor()`` (made once the config is planned) and the display
    above; the exit status (0, 1: a unit failed, 130: Ctrl-C)."""
    from rich.console import Console
    from rich.markup import escape

    from . import execute, plan

    console, argv, out = Console(file=sys.stderr), ["robustsuite", *sys.argv[1:]], Path(out)
    cache: dict = {}
    units = plan(config, cache=cache)
    executor = make_executor()  # bad --executor/--workers/--address, or Ray missing: before any work
    tally, running = Tally([u.id for u in units], [unit_cost(u, config) for u in units]), {}
    live = progress and console.is_terminal

    def on_unit(unit: Unit, status: str) -> None:
        if status == "start":
            tally.start(unit.id)
            running[unit.id] = (f"{tally.index[unit.id]}/{tally.total}", label(unit))
        seconds = tally.end(unit.id, status) if status in ("done", "failed", "skip") else None
        if status != "start":
            running.pop(unit.id, None)
        if status == "waiting" and locked_message is not None:
            console.print(f"[yellow]{escape(locked_message(unit))}[/yellow]")
        text = tally.line(unit.id, status, label(unit), seconds)
        if live and status != "start":
            console.print(escape(text))
        elif not live:
            print(text, file=sys.stderr, flush=True)

    try:
        with executor, (_live(console, tally, running) if live else contextlib.nullcontext()):
            report = execute(config, out, progress=live and executor.name == "local", command=" ".join(argv),
                             on_unit=on_unit, executor=executor, cache=cache)
    except KeyboardInterrupt:
        kept = [u for u, s in tally.ended.items() if s in ("done", "skip")]
        console.print(f"\n[yellow]interrupted[/yellow]: {len(kept)} of {len(units)} units are finished and kept in "
                      f"{escape(str(out / 'units'))}" + "".join(f"\n  kept: {escape(u)}" for u in kept))
        console.print("resume with: " + escape(shlex.join(argv)))
        return INTERRUPTED
    for u in report["units"]:
        if u["status"] == "failed":
            console.print(f"[red]unit failed:[/red] {escape(u['id'])}: {escape(u['error'] or '')} "
                          f"(traceback: {escape(str(out / 'units' / (u['id'] + '.failed.json')))})")
    console.print(f"report written: {escape(str(out / 'report.html'))}, {escape(str(out / 'report.md'))}, "
                  f"{escape(str(out / 'report.json'))}")
    return 1 if any(u["status"] == "failed" for u in report["units"]) else 0
