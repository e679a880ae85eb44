"""Where and with what the numbers were computed: package versions, the uv lock, the user's git commit; and the
run directory's ``run.json`` and report (assembled from unit records by :mod:`robustsuite.assemble`)."""

from __future__ import annotations

import datetime as _dt
import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .._io import sha256_file, stable_hash, write_json

PACKAGES = ("robustsuite", "robustsuite-common", "zeroe-perturb", "iortemp", "uncspan", "transduct-attack", "certcal",
            "torch", "transformers", "numpy", "scipy", "scikit-learn", "cvxpy", "textattack", "robustbench")


def version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def uv_lock() -> Path | None:
    """The ``uv.lock`` of the environment robustsuite runs from (next to its sources, else above the cwd)."""
    dirs = (d for start in (Path(__file__).resolve().parent, Path.cwd()) for d in (start, *start.parents))
    return next((d / "uv.lock" for d in dirs if (d / "uv.lock").is_file()), None)


def user_git() -> dict | None:
    """The git commit of the user's working directory, only when the run is started inside a repository."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], capture_output=True, text=True, timeout=10, cwd=Path.cwd())

    try:
        top = git("rev-parse", "--show-toplevel")
        if top.returncode != 0:
            return None
        head, dirty = git("rev-parse", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    if head.returncode != 0 or not commit:
        return None
    return {"commit": commit, "repository": top.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def provenance(config: dict, command: str) -> dict:
    """What the report's ``run`` block records about where and with what the numbers were computed."""
    lock = uv_lock()
    return {"id": stable_hash(config, 10), "versions": {p: version(p) for p in PACKAGES},
            "uv_lock_sha256": sha256_file(lock) if lock else None, "user_git": user_git(),
            "command": command or " ".join(sys.argv), "platform": platform.platform()}


def check_run_dir(run_dir: Path) -> Path:
    """``run_dir`` if it is, or can be created as, a writable directory; else :class:`ConfigError` naming the part
    in the way (a regular file on the path, a folder that cannot be written). Nothing is created: a cheap check
    before any unit is planned."""
    import os

    from ..errors import ConfigError

    run_dir = Path(run_dir)
    for q in (run_dir, *run_dir.absolute().parents):
        if q.exists():
            if not q.is_dir():
                raise ConfigError(f"--out {run_dir}: {q} is a file, not a directory; choose another run directory")
            if not os.access(q, os.W_OK | os.X_OK):
                raise ConfigError(f"--out {run_dir}: {q} is not writable; choose another run directory")
            return run_dir
    return run_dir


def prepare_dir(config: dict, run_dir: Path) -> str:
    """Create the run directory and ``run.json`` (keeping the first ``created``); returns ``created``."""
    run_dir = Path(run_dir)
    (run_dir / "units").mkdir(parents=True, exist_ok=True)
    meta_path = run_dir / "run.json"
    try:
        created = json.loads(meta_path.read_text())["created"]
    except (OSError, ValueError, KeyError, TypeError):
        created = None
    created = created or _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    write_json(meta_path, {"created": created, "config": config})
    return created


def write_run_report(run_dir: Path, records: list[dict], *, config: dict, seed: int, device: str, created: str,
                     command: str) -> dict:
    """The report of ``records`` (:func:`robustsuite.assemble.assemble`, with this run's provenance and the run
    directory's per-sample records for paired comparisons), written as report.json/.md/.html into ``run_dir``."""
    from ..assemble import assemble
    from ..report import write_report

    report = assemble(records, config=config, seed=seed, device=device, created=created,
                      provenance=provenance(config, command), run_dir=Path(run_dir))
    write_report(Path(run_dir), report)
    return report
