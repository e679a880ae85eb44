"""``robustsuite`` command line: audit, demo, run, plan, run-unit, collect, report, models, datasets, methods,
benchmarks.

Imports are lazy: ``robustsuite --help`` loads neither torch nor the method packages. Exit status: 0 success, 1 a
unit failed, 2 bad input (the message names it), 3 units locked elsewhere or missing. ``--verbose`` logs what each
unit is doing to stderr; warnings (e.g. a unit record that had to be recomputed) are shown without it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .errors import ConfigError

if TYPE_CHECKING:
    from .run.config import RunConfig

# rich_markup_mode=None: typer renders help and usage errors as plain click text instead of importing rich,
# markdown-it and pygments (about 3/4 of the time `robustsuite --help` took); commands still print with rich.
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Evaluate what adversarial robustness numbers hide: one report over five methods.")
DEFAULT_DEMO_DIR = Path("runs/demo")


def _console(stderr: bool = True):
    from rich.console import Console

    return Console(stderr=stderr)


def _print_table(title: str, columns: tuple[str, ...], rows, width: int | None = 200, **kw) -> None:
    """A rich table of ``rows`` (cells escaped) on stdout."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=escape(title), **kw)
    for col in columns:
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(*(escape("" if v is None else str(v)) for v in r))
    Console(width=width).print(t)


def _version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"robustsuite {version('robustsuite')}")
        raise typer.Exit()


@app.callback()
def main(version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True,
                                      help="print the version and exit"),
         verbose: bool = typer.Option(False, "--verbose", "-v", help="log what each unit is doing (stderr)")) -> None:
    """Evaluate what adversarial robustness numbers hide: one report over five methods."""
    import logging

    from robustsuite_common.threads import use_threads

    use_threads()  # before torch is imported: one intra-op thread per process unless ROBUSTSUITE_THREADS says otherwise

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    log = logging.getLogger("robustsuite")
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO if verbose else logging.WARNING)
    log.propagate = False


def apply_overrides(config: dict, sets: list[str]) -> dict:
    """``--set dotted.key=value`` overrides applied to a copy of ``config``
    (:func:`robustsuite.run.config.apply_overrides`)."""
    from .run.config import apply_overrides as apply

    return apply(config, sets)


def _execute(config: RunConfig, out: Path, progress: bool, executor: str = "local", address: str | None = None,
             workers: int = 1) -> int:
    """Run ``config`` into ``out`` with the display of :mod:`robustsuite.run.progress`."""
    from .run.executors import make_executor
    from .run.progress import run_with_display

    return run_with_display(config, out, progress=progress, locked_message=lambda unit: _locked_message(out, unit),
                            make_executor=lambda: make_executor(executor, address, workers=workers))


def _locked_message(out: Path, unit) -> str:
    from .run import lock_path
    from .run.lock import describe, read_owner

    return f"unit {unit.id} is being computed elsewhere ({describe(read_owner(lock_path(out, unit)))})"


def _guard(fn):
    """Run a command body: a user's mistake (:mod:`.errors`, a file that cannot be read or written) prints one line
    naming the input and exits 2; any other error is internal: one line and exit 1, its traceback with --verbose."""
    from .errors import user_error_message

    try:
        return fn()
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as e:
        from rich.markup import escape

        message = user_error_message(e)
        if message is not None:
            _console().print(f"[red]error:[/red] {escape(message)}")
            raise typer.Exit(2) from None
        import logging

        if logging.getLogger("robustsuite").isEnabledFor(logging.INFO):  # --verbose
            raise
        _console().print(f"[red]internal error:[/red] {escape(f'{type(e).__name__}: {e}')} (run with --verbose for "
                         "the traceback)")
        raise typer.Exit(1) from None


SEEDS = typer.Option(None, "--seeds", min=1, help="repeat every unit with seeds SEED..SEED+N-1; report mean ± 95 % interval")
LIMIT = typer.Option(None, "--limit", min=1, help="first N samples of every split (quick checks)")
LOG = typer.Option(None, "--log-samples", help="write per-sample records per unit: parquet or jsonl")
SET = typer.Option([], "--set", help="override a config value: --set methods.certcal.config.certify.n=500 (JSON or TOML values)")
EXECUTOR = typer.Option("local", "--executor", help="local (this process) or ray (one Ray task per unit; "
                        "needs robustsuite[ray])")
WORKERS = typer.Option(1, "--workers", "-j", min=1, help="compute independent units, and the shards of sharded "
                       "units, in N local processes (one torch thread each); same records as a serial run")
METHODS = typer.Option("", "--methods", help="comma-separated subset of the config's methods (default: all)")
ADDRESS = typer.Option(None, "--address", help="with --executor ray: an existing Ray cluster (auto, HOST:6379, "
                       "ray://HOST:10001); default: start a local Ray")


@app.command(short_help="Run every method on the embedded defaults (offline): `run demo`.")
def demo(out: Path = typer.Option(DEFAULT_DEMO_DIR, "--out", "-o", help="run directory (resumes if it exists)"),
         methods: str = METHODS, seed: int = typer.Option(0),
         device: str = typer.Option("cpu", help="cpu, cuda or auto"),
         seeds: int | None = SEEDS, limit: int | None = LIMIT, log_samples: str | None = LOG,
         sets: list[str] = SET, executor: str = EXECUTOR, address: str | None = ADDRESS,
         workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="local worker processes (one torch "
                                            "thread each); default: one per CPU core, at most 4 and one per method"),
         progress: bool = typer.Option(True, "--progress/--no-progress")) -> None:
    """Run the shipped `demo` benchmark (every method on the embedded models and data, offline; see `robustsuite
    benchmarks`) and write the report to OUT (default runs/demo): `robustsuite run demo` with a default OUT."""
    import os

    from .run.config import demo_config, run_config

    config = _guard(lambda: run_config(demo_config(methods.split(","), seed, device), seeds=seeds, limit=limit,
                                       log_samples=log_samples, sets=sets))
    workers = workers or max(1, min(os.cpu_count() or 1, 4, len(config.methods)))
    raise typer.Exit(_guard(lambda: _execute(config, out, progress, executor, address, workers)))


@app.command("run")
def run_config(config: Path = typer.Argument(..., help="TOML config naming models, data and methods, or a shipped "
                                            "benchmark's name (demo, paper-cpu; see `robustsuite benchmarks`)"),
               out: Path = typer.Option(..., "--out", "-o", help="run directory (resumes if it exists)"),
               methods: str = METHODS, seeds: int | None = SEEDS, limit: int | None = LIMIT,
               log_samples: str | None = LOG, sets: list[str] = SET, executor: str = EXECUTOR,
               address: str | None = ADDRESS, workers: int = WORKERS,
               progress: bool = typer.Option(True, "--progress/--no-progress"),
               recompute: list[str] = typer.Option([], "--recompute", help="compute unit UNIT again even though OUT "
                                                   "holds its record (repeatable; ids as `robustsuite plan` lists)")
               ) -> None:
    """Run the methods of CONFIG; finished units in OUT are not redone (an edited or damaged record is recomputed,
    --recompute UNIT forces one)."""
    from . import run as _run

    cfg = _guard(lambda: _run.run_config(_run.load_config(config), methods=methods.split(","), seeds=seeds,
                                         limit=limit, log_samples=log_samples, sets=sets))
    _guard(lambda: _run.forget_units(cfg, out, recompute))
    raise typer.Exit(_guard(lambda: _execute(cfg, out, progress, executor, address, workers)))


@app.command(short_help="Verdict: is this model's robustness real? Every lens that applies, one report.")
def audit(model: str = typer.Argument(..., help="model spec (see `robustsuite models`): builtin:NAME, torch:PATH[#ARCH], "
                                      "robustbench:DATASET/THREAT/NAME, hf:NAME; append ?mean=M1,M2,M3&std=S1,S2,S3 "
                                      "when an image model expects normalised inputs (ε stays in [0, 1] pixels)"),
          data: str = typer.Argument(..., help="dataset spec (see `robustsuite datasets`): its test split is audited"),
          eps: str | None = typer.Option(None, "--eps", help="the budget in [0, 1] pixel space, a number or a fraction "
                                         "(L∞: 8/255 for CIFAR-10, 0.1 for Fashion-MNIST; L2: 0.5); required for "
                                         "images"),
          norm: str = typer.Option("Linf", "--norm", help="the threat model's norm: Linf or L2"),
          limit: int = typer.Option(1000, "--limit", min=0, help="audit the first N test points (default 1000: "
                                    "about ±0.03 on robust accuracy; 0: the whole split, leaderboard-comparable)"),
          claim: float | None = typer.Option(None, "--claim", min=0.0, max=1.0, help="a claimed robust accuracy "
                                             "(e.g. from a paper), checked against AutoAttack's 95 % upper bound"),
          adaptive: bool = typer.Option(False, "--adaptive", help="the model adapts at test time (e.g. DENT): add "
                                        "the transductive threat models"),
          out: Path = typer.Option(Path("runs/audit"), "--out", "-o", help="run directory (resumes if it exists)"),
          seed: int = typer.Option(0, help="seed of every attack and resample"),
          device: str = typer.Option("cpu", help="cpu, cuda or auto"),
          log_samples: str | None = LOG,
          progress: bool = typer.Option(True, "--progress/--no-progress")) -> None:
    """Audit MODEL on DATA: the robust-accuracy overview (standard AutoAttack at --eps) with the checks that catch a
    failed evaluation (AutoAttack's own flags, gradients, an ε sweep, more iterations, an unbounded attack, PGD
    against AutoAttack, Square against the white-box attacks), and every lens that applies to the model (the
    temperature illusion, uncertainty and calibration under attack; text: Zéroe noise; --adaptive: transductive
    threat models). OUT/report.html opens with one verdict per model: supported, supported-with-caveats,
    not-supported or inconclusive, and the scorecard that gives it. Finished units are reused."""
    from .audit import audit_config, parse_eps
    from .run.config import run_config

    def go() -> int:
        budget = parse_eps(eps) if eps is not None else None
        config = audit_config(model, data, eps=budget, norm=norm, limit=limit or None, claim=claim,
                              adaptive=adaptive, seed=seed, device=device)
        return _execute(run_config(config, log_samples=log_samples), out, progress)

    raise typer.Exit(_guard(go))


@app.command("plan", short_help="List the units a config would run and which are cached; runs nothing.")
def plan_config(config: Path = typer.Argument(..., help="TOML config naming models, data and methods, or a shipped "
                                             "benchmark's name"),
                out: Path | None = typer.Option(None, "--out", "-o", help="run directory to check for cached units"),
                write: bool = typer.Option(False, "--write", help="write the plan into OUT (plan.json, "
                                           "plan/<unit>.json) for run-unit and collect"),
                methods: str = METHODS, seeds: int | None = SEEDS, limit: int | None = LIMIT,
                log_samples: str | None = LOG, sets: list[str] = SET) -> None:
    """List the units CONFIG would run and which are already cached in OUT; runs nothing. Every unit's inputs are
    checked as `run` checks them before any unit starts (specs, labels, model outputs): exit 2 on bad input.

    With --out OUT --write, the plan is written into OUT for `robustsuite run-unit OUT UNIT_ID` (one unit per job
    of a batch scheduler) and `robustsuite collect OUT`.
    """
    from . import run as _run

    def go() -> None:
        cfg = _run.run_config(_run.load_config(config), methods=methods.split(","), seeds=seeds, limit=limit,
                              log_samples=log_samples, sets=sets)
        cache: dict = {}
        units = _run.plan(cfg, cache=cache)
        _run.check_inputs(units, cache=cache, limit=cfg.limit, device=_run.resolve_device(cfg.device))  # as `run` does
        fmt = cfg.log_format
        hits = [out is not None and _run.cached_record(out, u, fmt) is not None for u in units]
        _print_table(f"{len(units)} units", ("unit", "method", "model", "dataset", "seed", "shards", "state"),
                     [(u.id, u.method, u.model, u.dataset, u.seed, _run.shard_count(u), "cached" if hit else "to run")
                      for u, hit in zip(units, hits, strict=True)])
        cached = sum(hits)
        typer.echo(f"{cached} cached, {len(units) - cached} to run")
        if write:
            if out is None:
                raise ConfigError("--write needs --out DIR (the run directory the plan is written to)")
            _run.write_plan(cfg, out)
            typer.echo(f"plan written: {out / _run.PLAN_FILE} and {len(units)} unit files in {out / 'plan'}; "
                       f"run one with `robustsuite run-unit {out} UNIT_ID`, assemble with `robustsuite collect {out}`")

    _guard(go)


@app.command("run-unit", short_help="Run one planned unit (a batch-scheduler job).")
def run_unit(run_dir: Path = typer.Argument(..., help="run directory holding a plan (robustsuite plan --out)"),
             unit_id: str = typer.Argument(..., help="a unit id of the plan (see plan.json), or its 0-based index "
                                           "(e.g. $SLURM_ARRAY_TASK_ID)"),
             wait: bool = typer.Option(False, "--wait/--no-wait", help="if the unit is being computed elsewhere, "
                                       "wait for it instead of exiting with status 3"),
             shard: int | None = typer.Option(None, "--shard", help="run only shard K of the unit's data-parallel "
                                              "work (0-based; plan.json lists the units with shards); the unit "
                                              "itself, run afterwards, merges the shards"),
             progress: bool = typer.Option(False, "--progress/--no-progress")) -> None:
    """Run one planned unit into RUN_DIR (for a batch-scheduler job); exits 0 done or already finished, 1 failed,
    2 bad input, 3 being computed elsewhere. With --shard K, run one shard of a sharded unit instead."""
    from rich.markup import escape

    from . import run as _run
    from .run.lock import UnitLocked, wait_released

    console = _console()

    def go() -> int:
        uid = unit_id
        if uid.isdigit():
            import json

            plan_file = run_dir / _run.PLAN_FILE
            if not plan_file.is_file():
                raise ConfigError(f"no {_run.PLAN_FILE} in {run_dir}; write one with `robustsuite plan CONFIG "
                                  f"--out {run_dir} --write`")
            ids = json.loads(plan_file.read_text())["units"]
            if int(uid) >= len(ids):
                raise ConfigError(f"unit index {uid} out of range: the plan has {len(ids)} units (0..{len(ids) - 1})")
            uid = ids[int(uid)]
        if shard is not None:
            status = _run.run_planned_shard(run_dir, uid, shard, progress=progress)
            if status == "locked":
                console.print(f"[yellow]shard {shard} of unit {escape(uid)} is being computed elsewhere[/yellow]")
                return 3
            console.print(f"unit {escape(uid)} shard {shard}: "
                          + ("the unit is already finished" if status == "skip" else "done"))
            return 0
        while True:
            try:
                record, status = _run.run_planned_unit(run_dir, uid, progress=progress)
                break
            except UnitLocked as e:
                if not wait:
                    console.print(f"[yellow]{escape(str(e))}[/yellow]")
                    return 3
                console.print(f"[yellow]{escape(str(e))}[/yellow]; waiting")
                wait_released(e.path)
        if status == "failed":
            console.print(f"[red]unit failed:[/red] {escape(uid)}: {escape(record['error'] or '')} (traceback: "
                          f"{escape(str(run_dir / 'units' / (uid + '.failed.json')))})")
            return 1
        console.print(f"unit {escape(uid)}: " + ("already finished" if status == "skip" else
                                                  f"done in {record['seconds']:.1f} s"))
        return 0

    raise typer.Exit(_guard(go))


@app.command(short_help="Assemble the report from the finished units of a run directory.")
def collect(run_dir: Path = typer.Argument(..., help="run directory (a plan, or a run started with run)"),
            allow_missing: bool = typer.Option(False, "--allow-missing", help="exit 0 even when units are missing")
            ) -> None:
    """Assemble the report from the finished units of RUN_DIR and list the missing ones; exits 3 when units are
    missing (unless --allow-missing), 1 when a unit failed."""
    from rich.markup import escape

    from . import run as _run

    console = _console()

    def go() -> int:
        report, missing = _run.collect(run_dir, command=" ".join(["robustsuite", *sys.argv[1:]]))
        failed = [u["id"] for u in report["units"] if u["status"] == "failed"]
        done = len(report["units"]) - len(failed) - len(missing)
        console.print(f"report written: {escape(str(run_dir / 'report.html'))}, {escape(str(run_dir / 'report.md'))}, "
                      f"{escape(str(run_dir / 'report.json'))}: {done} done, {len(failed)} failed, "
                      f"{len(missing)} missing of {len(report['units'])} units")
        for uid in failed:
            console.print(f"[red]failed:[/red] {escape(uid)}")
        for uid in missing:
            console.print(f"[yellow]missing:[/yellow] {escape(uid)}")
        if missing:
            console.print("[yellow]INCOMPLETE[/yellow]: the report lists the missing units as pending")
            return 0 if allow_missing else 3
        return 1 if failed else 0

    raise typer.Exit(_guard(go))


@app.command()
def report(run_dir: Path = typer.Argument(..., help="a run directory holding report.json")) -> None:
    """Re-render report.md and report.html from RUN_DIR/report.json; a report of an older schema version is
    migrated (or the message says which version wrote it and what to run)."""
    def go() -> None:
        import jsonschema

        from .report import rerender

        try:
            paths = rerender(run_dir)
        except jsonschema.ValidationError as e:
            raise ConfigError(f"{run_dir / 'report.json'} does not follow the report schema ({e.message} at "
                              f"{'/'.join(map(str, e.absolute_path))}); rebuild it from the unit records with "
                              f"`robustsuite collect {run_dir}`") from None
        _console().print("re-rendered: " + ", ".join(str(p) for p in paths.values()))

    _guard(go)


def _spec_table(title: str, specs) -> None:
    _print_table(title, ("spec", "kind", "description"), [(x.spec, x.kind, x.description) for x in specs], None)


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


@app.command(short_help="List the methods a config can name, with their defaults or parameters.")
def methods(schema: bool = typer.Option(False, "--schema", help="every parameter of every method: description, "
                                        "unit, bounds, default"),
            as_json: bool = typer.Option(False, "--json", help="with --schema: as JSON (one object per method)")
            ) -> None:
    """List the methods a config can name, with their defaults (--schema: each parameter's type, default, unit,
    bounds, description and paper reference as a table; --json for JSON)."""
    from . import runners
    from .config import schema_rows

    if schema and as_json:
        import json

        typer.echo(json.dumps({name: mod.schema() for name, mod in runners.available().items()}, indent=2, default=str))
    elif schema:
        cols = ("path", "type", "default", "unit", "bounds", "description", "paper")
        for name, mod in runners.available().items():
            _print_table(f"[methods.{name}]: {mod.TITLE}", ("parameter", *cols[1:]),
                         [[r.get(k) for k in cols] for r in schema_rows(name)], title_justify="left")
    else:
        _print_table("methods", ("method", "title", "paper", "defaults"),
                     [(name, mod.TITLE, getattr(mod, "PAPER", "") or "", mod.DEFAULTS)
                      for name, mod in runners.available().items()])


@app.command(short_help="List the shipped benchmark files (run one with `robustsuite run NAME`).")
def benchmarks() -> None:
    """List the benchmark files shipped with robustsuite: `robustsuite run NAME --out DIR` runs one."""
    from .run.config import benchmarks as shipped
    from .run.config import load_config

    rows = []
    for name, path in shipped().items():
        lines = [x[1:].strip() for x in path.read_text(encoding="utf-8").splitlines() if x.startswith("#")]
        rows.append((name, ", ".join(load_config(path).get("methods", {})), " ".join(lines[:2]), path))
    _print_table("shipped benchmarks", ("name", "methods", "description", "file"), rows)


if __name__ == "__main__":  # pragma: no cover
    app()
