"""Safe file I/O for the CLI: '-' for stdin/stdout, atomic writes, never a partial output."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from .errors import InputError


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


def _special(path: Path) -> bool:
    """A device or a FIFO (``/dev/null``, a named pipe): written through, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


def check_writable(path: str, force: bool) -> None:
    """Fail early, before any work, if ``path`` exists (without force), is a directory, or its
    folder is missing. Devices and FIFOs are fine: they are written through."""
    if path == "-":
        return
    p = Path(path)
    if p.is_dir():
        raise InputError(f"cannot write {path}: it is a directory")
    if _special(p):
        return
    if (p.exists() or p.is_symlink()) and not force:
        raise InputError(f"{path} already exists; use --force to overwrite it")
    if not p.resolve().parent.exists():
        raise InputError(f"cannot write {path}: folder {p.parent} does not exist")


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _remove_orphaned_parts(target: Path) -> None:
    """Staging files ``.NAME.PID.part`` of a process that no longer exists (one killed between
    linking and renaming) are removed before a new write of NAME."""
    for part in target.parent.glob(f".{target.name}.*.part"):
        pid = part.name[len(target.name) + 2 : -len(".part")]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            part.unlink(missing_ok=True)
        except (PermissionError, OSError):
            continue


def _write_anonymous(target: Path, data: bytes, force: bool) -> bool:
    """Linux: write into an unnamed file (O_TMPFILE) and give it its name only when complete, so
    even a killed process leaves nothing behind. False where the file system cannot do it."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return False
    try:
        fd = os.open(target.parent, flag | os.O_WRONLY, _umask_mode())
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb", closefd=False) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # linkat(/proc/self/fd/N, AT_SYMLINK_FOLLOW) names the unnamed file; a dir fd makes
        # CPython call linkat rather than link (which would link the /proc symlink itself)
        proc = os.open("/proc/self/fd", os.O_RDONLY)
        try:
            if force:  # replace atomically whatever is (or meanwhile appears) there
                _remove_orphaned_parts(target)
                staging = target.parent / f".{target.name}.{os.getpid()}.part"
                os.link(str(fd), staging, src_dir_fd=proc, follow_symlinks=True)
                try:
                    os.replace(staging, target)
                except BaseException:
                    staging.unlink(missing_ok=True)
                    raise
            else:
                os.link(str(fd), target, src_dir_fd=proc, follow_symlinks=True)
        finally:
            os.close(proc)
        return True
    finally:
        os.close(fd)


def _write_stdout(data: bytes) -> None:
    """All of ``data`` to standard output, or an error: a short write (a full disk, a file size
    limit) is never taken for success."""
    try:
        if sys.stdout is None:
            raise OSError("it is closed")
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[: 1 << 20]) :]
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write to standard output: {getattr(exc, 'strerror', None) or exc}") from None


def write_output(path: str, data: bytes, force: bool = False, binary: bool = False) -> None:
    """Write ``data`` to ``path`` so that an error, an interrupt or a kill leaves either the old
    file or nothing: an unnamed file linked in when complete (Linux), else
    :class:`StreamingOutput` (a temporary file renamed at the end), which also handles stdout,
    devices, FIFOs and symlinks. ``binary`` output (an archive) is refused on a terminal unless
    forced, as zstd does."""
    if path != "-":
        check_writable(path, force)
        target = Path(path)
        if not _special(target):
            try:
                if _write_anonymous(target.resolve() if target.is_symlink() else target, data, force):
                    return
            except FileExistsError:
                raise InputError(f"{path} already exists; use --force to overwrite it") from None
            except OSError as exc:
                raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    with StreamingOutput(path, force, binary) as out:
        out.write(data)


class StreamingOutput:
    """A file written piece by piece that appears under its name only when complete (a temporary
    file in the same folder, renamed at the end; removed on any failure). '-' is stdout; a
    device or FIFO is written through. For outputs too large to hold in memory."""

    def __init__(self, path: str, force: bool = False, binary: bool = False):
        self.path, self.force, self.binary = path, force, binary
        self.tmp = None
        self.fh = None

    def __enter__(self):
        if self.path == "-":
            if self.binary and not self.force and sys.stdout is not None and sys.stdout.isatty():
                raise InputError("refusing to write binary data to a terminal; use -o FILE, a pipe, or -f")
            return self
        check_writable(self.path, self.force)
        target = Path(self.path)
        try:
            if _special(target):
                self.fh = open(target, "wb")
            else:
                target = target.resolve() if target.is_symlink() else target
                fd, self.tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
                self.fh = os.fdopen(fd, "wb")
                self.target = target
        except OSError as exc:
            raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self

    def write(self, data: bytes) -> None:
        if self.path == "-":
            _write_stdout(data)
            return
        try:
            self.fh.write(data)
        except OSError as exc:
            raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def __exit__(self, kind, value, tb) -> None:
        if self.fh is None:
            return
        try:
            if kind is None and self.tmp is not None:
                self.fh.flush()
                os.fsync(self.fh.fileno())
            self.fh.close()
            if self.tmp is not None:
                if kind is None:
                    os.chmod(self.tmp, _umask_mode())
                    os.replace(self.tmp, self.target)
                    self.tmp = None
        except OSError as exc:
            if kind is None:
                raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        finally:
            if self.tmp is not None:
                try:
                    os.unlink(self.tmp)
                except OSError:
                    pass
