"""Cache location, atomic writes and content hashes shared by the umbrella."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """``$ROBUSTSUITE_CACHE`` or ``~/.cache/robustsuite`` (created on demand)."""
    root = Path(os.environ.get("ROBUSTSUITE_CACHE") or Path.home() / ".cache" / "robustsuite")
    root.mkdir(parents=True, exist_ok=True)
    return root


def atomic_write(path: Path, writer: Callable[[Path], Any]) -> Path:
    """Call ``writer(tmp_path)`` and rename the result onto ``path``: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        writer(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: Path, text: str) -> Path:
    return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_json(path: Path, obj: Any) -> Path:
    return write_text(path, json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def stable_hash(obj: Any, length: int = 12) -> str:
    """Hash of a JSON-serialisable object, independent of dict order."""
    blob = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:length]


def safe_name(text: str, max_len: int = 48) -> str:
    """A file-name-safe, unique rendering of a user string (a spec, a path): letters, digits, ``_.-`` only.

    Characters outside that set become ``-``; a short hash of the original string is appended whenever the
    rendering changed or was truncated, so two different strings never map to the same name.
    """
    import re

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "x"
    if slug != text or len(slug) > max_len:
        slug = f"{slug[:max_len].rstrip('-.')}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return slug


def hash_path(path: Path) -> str:
    """SHA-256 over a file, or over every file of a directory (relative names and contents, sorted)."""
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    h = hashlib.sha256()
    for p in sorted(q for q in path.rglob("*") if q.is_file()):
        h.update(p.relative_to(path).as_posix().encode() + b"\0" + sha256_file(p).encode())
    return h.hexdigest()
