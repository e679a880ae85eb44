"""Per-unit run locks: several processes (or cluster workers) can share one run directory.

A unit being computed holds ``units/<unit id>.lock``, created with ``O_CREAT | O_EXCL`` (atomic on local file
systems and NFSv3+), holding the owner's pid, host, process start time and a random token. While the unit runs,
a heartbeat thread touches the file every ``heartbeat`` seconds. A lock is *stale*, and is taken over, when

- its owner ran on this host and that process is gone (pid not alive, or the pid was reused by another process:
  its start time differs), or
- its file was not touched for ``stale_after`` seconds (an owner on another host that died or lost the network).

Taking over renames the stale file away (only one process wins the rename), checks that the renamed file is the
stale one it judged (else puts it back), and then competes for a fresh ``O_EXCL`` lock like everyone else.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HEARTBEAT_S = float(os.environ.get("ROBUSTSUITE_LOCK_HEARTBEAT", "30"))
STALE_AFTER_S = float(os.environ.get("ROBUSTSUITE_LOCK_STALE_AFTER", "300"))


class UnitLocked(RuntimeError):
    """The unit is being computed by another live process (see :attr:`owner`)."""

    def __init__(self, path: Path, owner: dict):
        self.path, self.owner = Path(path), owner
        super().__init__(f"unit {Path(path).stem} is being computed elsewhere: {describe(owner)} (lock file {path}; "
                         f"it is taken over when that process dies or stops touching the file for "
                         f"{STALE_AFTER_S:.0f} s)")


def describe(owner: dict) -> str:
    since = owner.get("since")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since)) if isinstance(since, int | float) else "?"
    return f"pid {owner.get('pid')} on host {owner.get('host')} since {when}"


def _proc_start(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (Linux ``/proc``), to detect a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22 of proc(5), counted after the "(comm)" field


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        pass
    return True


def _read(path: Path) -> dict | None:
    try:
        owner = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:  # being written right now (or garbage): judged by its age alone
        owner = {}
    return owner if isinstance(owner, dict) else {}


def is_stale(path: Path, owner: dict, *, stale_after: float | None = None) -> bool:
    """Whether the lock at ``path`` with content ``owner`` belongs to no live process (see module docstring)."""
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return True
    pid, start = owner.get("pid"), owner.get("start")
    if owner.get("host") == socket.gethostname() and isinstance(pid, int):
        # a live owner on this host is never stale, whatever the mtime; a reused pid has another start time
        return not _pid_alive(pid) or (start is not None and _proc_start(pid) not in (None, start))
    return age > (STALE_AFTER_S if stale_after is None else stale_after)


@dataclass
class UnitLock:
    """An acquired lock on one unit; :meth:`release` (or the context manager) removes it."""

    path: Path
    token: str
    heartbeat: float = HEARTBEAT_S

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lock-heartbeat {self.path.name}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            while not self._stop.wait(self.heartbeat):
                os.utime(self.path)

    def held(self) -> bool:
        """Whether the lock file still carries this lock's token (it was not taken over as stale)."""
        owner = _read(self.path)
        return owner is not None and owner.get("token") == self.token

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.held():
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> UnitLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def try_acquire(path: Path, *, heartbeat: float | None = None, stale_after: float | None = None) -> UnitLock:
    """Acquire the lock file ``path`` or raise :class:`UnitLocked` naming its live owner; stale locks are taken
    over."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(8)
    me = {"pid": os.getpid(), "host": socket.gethostname(), "start": _proc_start(os.getpid()), "since": time.time(),
          "token": token}
    for _ in range(100):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _read(path)
            if owner is not None:  # else released meanwhile
                if not is_stale(path, owner, stale_after=stale_after):
                    raise UnitLocked(path, owner) from None
                _break(path, owner)
            continue
        with os.fdopen(fd, "w") as f:
            json.dump(me, f)
        return UnitLock(path, token, HEARTBEAT_S if heartbeat is None else heartbeat)
    raise RuntimeError(f"could not acquire {path} after 100 attempts (lock file keeps changing)")


def _break(path: Path, owner: dict) -> None:
    """Move the stale lock ``owner`` away; if what moved was a fresh lock taken meanwhile, put it back."""
    aside = path.with_name(f"{path.name}.stale-{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return  # another process broke it first
    if (_read(aside) or {}).get("token") != owner.get("token"):  # not the lock judged stale: put it back
        with contextlib.suppress(FileExistsError):  # unless a new one exists already
            os.link(aside, path)
    aside.unlink(missing_ok=True)


def wait_released(path: Path, *, poll: float = 1.0, stale_after: float | None = None) -> None:
    """Block until the lock file ``path`` is gone or stale."""
    while True:
        owner = _read(path)
        if owner is None or is_stale(path, owner, stale_after=stale_after):
            return
        time.sleep(poll)
