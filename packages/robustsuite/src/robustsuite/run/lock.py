"""Per-unit run locks: several processes (or cluster workers) can share one run directory.

A unit being computed holds an exclusive ``flock`` on ``units/<unit id>.lock``. The kernel drops the lock when
its process ends, however it ends (over NFS the server drops the locks of a client whose lease expired), so a
killed run leaves no lock to judge stale: its units are free at once. The holder writes who it is (pid, host,
since when) into the file, for the message of whoever finds the unit locked, and removes the file as it
releases; a process whose lock landed on a file removed meanwhile (no longer the one at the path) locks the
new one instead.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path


class UnitLocked(RuntimeError):
    """The unit is being computed by another live process (see :attr:`owner`)."""

    def __init__(self, path: Path, owner: dict):
        self.path, self.owner = Path(path), owner
        super().__init__(f"unit {Path(path).stem} is being computed elsewhere: {describe(owner)} (lock file {path}; "
                         "it is released when that process ends)")


def describe(owner: dict) -> str:
    since = owner.get("since")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since)) if isinstance(since, int | float) else "?"
    return f"pid {owner.get('pid')} on host {owner.get('host')} since {when}"


def read_owner(path: Path) -> dict:
    """Who holds the lock at ``path``, as its holder wrote it (``{}`` when unreadable, e.g. being written)."""
    try:
        owner = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}


def _lock(path: Path, *, blocking: bool) -> int | None:
    """A descriptor of the file at ``path`` holding its exclusive flock, or ``None`` (not ``blocking``: held)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            here, mine = os.stat(path), os.fstat(fd)
            current = (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)
        except FileNotFoundError:
            current = False
        if current:
            return fd
        os.close(fd)  # its holder released and removed it while we waited: lock the file at the path now


class UnitLock:
    """An acquired lock on one unit; :meth:`release` (or the context manager) removes the file and frees it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = Path(path), fd

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)  # while still holding it: nobody else holds this file
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> UnitLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def try_acquire(path: Path) -> UnitLock:
    """Acquire the lock at ``path`` or raise :class:`UnitLocked` naming its live owner."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _lock(path, blocking=False)
    if fd is None:
        raise UnitLocked(path, read_owner(path))
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}).encode())
    return UnitLock(path, fd)


def wait_released(path: Path) -> None:
    """Block until nobody holds the lock at ``path``."""
    path = Path(path)
    if path.exists():
        fd = _lock(path, blocking=True)
        if fd is not None:
            UnitLock(path, fd).release()
