"""``robustsuite`` command line: demo, run, report, models, datasets."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table as RichTable

from .errors import ConfigError, SpecError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Evaluate what adversarial robustness numbers hide: one report over five methods.")
console = Console(stderr=True)
DEFAULT_DEMO_DIR = Path("runs/demo")


def _execute(config: dict, out: Path, progress: bool) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from . import run as _run

    units = _run.plan(config)
    failed = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, disable=not progress) as bar:
        task = bar.add_task("units", total=len(units))

        def on_unit(unit, status):
            if status == "start":
                bar.update(task, description=f"{unit.method} · {unit.model}")
            else:
                bar.advance(task)
                if status == "failed":
                    failed.append(unit.id)
                    console.print(f"[red]unit failed:[/red] {unit.id} (see {out}/units/{unit.id}.failed.json)")

        _run.execute(config, out, progress=progress, command=" ".join(["robustsuite", *sys.argv[1:]]),
                     on_unit=on_unit)
    console.print(f"report written: {out / 'report.html'}, {out / 'report.md'}, {out / 'report.json'}")
    return 1 if failed else 0


def _guard(fn):
    try:
        return fn()
    except (ConfigError, SpecError) as e:
        console.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None


@app.command()
def demo(out: Path = typer.Option(DEFAULT_DEMO_DIR, "--out", "-o", help="run directory (resumes if it exists)"),
         methods: str = typer.Option("", help="comma-separated subset of methods (default: all)"),
         seed: int = typer.Option(0), device: str = typer.Option("cpu", help="cpu, cuda or auto"),
         progress: bool = typer.Option(True, "--progress/--no-progress")) -> None:
    """Run every method on the embedded defaults (offline) and write the report to OUT (default runs/demo)."""
    from . import run as _run

    config = _guard(lambda: _run.demo_config([m for m in methods.split(",") if m] or None, seed, device))
    raise typer.Exit(_guard(lambda: _execute(config, out, progress)))


@app.command("run")
def run_config(config: Path = typer.Argument(..., help="TOML config naming models, data and methods"),
               out: Path = typer.Option(..., "--out", "-o", help="run directory (resumes if it exists)"),
               progress: bool = typer.Option(True, "--progress/--no-progress")) -> None:
    """Run the methods of CONFIG; finished units in OUT are not redone."""
    from . import run as _run

    cfg = _guard(lambda: _run.load_config(config))
    raise typer.Exit(_guard(lambda: _execute(cfg, out, progress)))


@app.command()
def report(run_dir: Path = typer.Argument(..., help="a run directory holding report.json")) -> None:
    """Re-render report.md and report.html from RUN_DIR/report.json."""
    from .report import rerender

    if not (run_dir / "report.json").is_file():
        console.print(f"[red]error:[/red] no report.json in {run_dir}")
        raise typer.Exit(2)
    paths = rerender(run_dir)
    console.print("re-rendered: " + ", ".join(str(p) for p in paths.values()))


def _spec_table(title: str, specs) -> None:
    t = RichTable(title=title)
    for col in ("spec", "kind", "description"):
        t.add_column(col)
    for s in specs:
        t.add_row(s.spec, s.kind, s.description)
    Console().print(t)


@app.command()
def models() -> None:
    """List the model spec forms."""
    from .loaders import MODEL_SPECS

    _spec_table("model specs", MODEL_SPECS)


@app.command()
def datasets() -> None:
    """List the dataset spec forms."""
    from .loaders import DATASET_SPECS

    _spec_table("dataset specs", DATASET_SPECS)


@app.command()
def methods() -> None:
    """List the methods a config can name, with their default parameters."""
    from . import runners

    t = RichTable(title="methods")
    for col in ("method", "title", "paper", "defaults"):
        t.add_column(col)
    for name, mod in runners.available().items():
        t.add_row(name, mod.TITLE, str(getattr(mod, "PAPER", "") or ""), str(mod.DEFAULTS))
    Console().print(t)


if __name__ == "__main__":  # pragma: no cover
    app()
