"""Umbrella-specific file helpers: the cache location, content hashes and file-name-safe names. Atomic writes
are robustsuite_common's (re-exported here for the umbrella's modules; there is no second copy)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from robustsuite_common.io import atomic_write, write_json, write_text

__all__ = ["atomic_write", "write_json", "write_text", "cache_dir", "sha256_file", "sha256_bytes", "stable_hash",
           "safe_name", "hash_path"]


def cache_dir() -> Path:
    """``$ROBUSTSUITE_CACHE`` or ``~/.cache/robustsuite`` (created on demand)."""
    root = Path(os.environ.get("ROBUSTSUITE_CACHE") or Path.home() / ".cache" / "robustsuite")
    root.mkdir(parents=True, exist_ok=True)
    return root


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def stable_hash(obj: Any, length: int = 12) -> str:
    """Hash of a JSON-serialisable object, independent of dict order."""
    return sha256_bytes(json.dumps(obj, sort_keys=True, default=str).encode())[:length]


def safe_name(text: str, max_len: int = 48) -> str:
    """A file-name-safe, unique rendering of a user string (a spec, a path): letters, digits, ``_.-`` only.

    Characters outside that set become ``-``; a short hash of the original string is appended whenever the
    rendering changed or was truncated, so two different strings never map to the same name.
    """
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "x"
    if slug != text or len(slug) > max_len:
        slug = f"{slug[:max_len].rstrip('-.')}-{sha256_bytes(text.encode())[:8]}"
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
