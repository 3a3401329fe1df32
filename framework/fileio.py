"""Safe file I/O for the CLI: '-' for stdin/stdout, atomic writes, never a partial output."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from chunkpress.errors import InputError


def read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def check_writable(path: str, force: bool) -> None:
    """Fail early, before any work, if ``path`` exists (without force) or its folder is missing."""
    if path == "-":
        return
    p = Path(path)
    if p.exists() and not force:
        raise InputError(f"{path} already exists; use --force to overwrite it")
    if not p.parent.exists():
        raise InputError(f"cannot write {path}: folder {p.parent} does not exist")


def write_output(path: str, data: bytes, force: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, renamed at the end,
    so an error or an interrupt leaves either the old file or nothing."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    check_writable(path, force)
    target = Path(path)
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
        tmp_name = None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
