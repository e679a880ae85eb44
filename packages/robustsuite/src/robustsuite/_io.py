"""Umbrella-specific file helpers: the cache location and content hashes; atomic writes and file-name-safe names
are robustsuite_common's, re-exported."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from robustsuite_common.io import atomic_write, safe_name, write_json, write_text

__all__ = ["atomic_write", "write_json", "write_text", "cache_dir", "sha256_file", "stable_hash", "safe_name",
           "hash_path"]


def cache_dir() -> Path:
    """``$ROBUSTSUITE_CACHE`` or ``~/.cache/robustsuite`` (created on demand)."""
    root = Path(os.environ.get("ROBUSTSUITE_CACHE") or Path.home() / ".cache" / "robustsuite")
    root.mkdir(parents=True, exist_ok=True)
    return root


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def stable_hash(obj: Any, length: int = 12) -> str:
    """Hash of a JSON-serialisable object, independent of dict order."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:length]


def hash_path(path: Path) -> str:
    """SHA-256 over a file, or over every file of a directory (relative names and contents, sorted)."""
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    h = hashlib.sha256()
    for p in sorted(q for q in path.rglob("*") if q.is_file()):
        h.update(p.relative_to(path).as_posix().encode() + b"\0" + sha256_file(p).encode())
    return h.hexdigest()
