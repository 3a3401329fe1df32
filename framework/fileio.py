"""Safe file I/O for the CLI: '-' for stdin/stdout, atomic writes, never a partial output."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

from .errors import InputError


def read_input(path: str, limit: int | None = None) -> bytes:
    """The whole of ``path`` ('-': stdin). With ``limit``, an input longer than that many
    bytes (a FIFO, a device such as /dev/zero, an endless pipe, or a file) is refused once
    that much is read, instead of filling memory."""
    try:
        if path == "-":
            return read_rest(sys.stdin.buffer, path, b"", limit)
        with open(path, "rb") as fh:
            return read_rest(fh, path, b"", limit)
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_rest(stream, path: str, head: bytes, limit: int | None) -> bytes:
    """``head`` and the rest of ``stream``, refused past ``limit`` bytes (see :func:`read_input`)."""
    if limit is None:
        return head + stream.read()
    pieces, total = [head], len(head)
    while True:
        piece = stream.read(min(1 << 20, limit + 1 - total))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            raise InputError(f"{path}: more than {limit:,} bytes, the memory limit (set CHUNKPRESS_MAX_MEMORY "
                             "to raise it)")



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


def source_stat(path: str | None) -> os.stat_result | None:
    """The stat of a regular input file whose mode (and time) its outputs take, as gzip, xz and
    zstd do; None for stdin, a pipe, a device or no file (outputs get the umask's default)."""
    if not path or path == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _finish(fd: int, like: os.stat_result | None, times: bool) -> None:
    """Give a staged output (still unnamed or private) its final mode, and with ``times`` the
    source's access and modification times, before it gets its name: a private input's output
    is never readable by others, not even for a moment. The owner and group are the source's
    where this process may set them (root; or a group it belongs to), as zstd does; the mode is
    set after, since a change of owner may clear bits."""
    if like is not None and (like.st_uid, like.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, like.st_uid, like.st_gid)
        except OSError:  # not permitted: the output stays ours, with the source's mode
            try:
                os.fchown(fd, -1, like.st_gid)
            except OSError:
                pass
    os.fchmod(fd, stat.S_IMODE(like.st_mode) & 0o777 if like is not None else _umask_mode())
    if like is not None and times:
        os.utime(fd, ns=(like.st_atime_ns, like.st_mtime_ns))


def _staging_prefix(target: Path) -> str:
    """Staging files are ``.NAME.PID.XXXX.part``: the PID tells a later run whose they are."""
    return f".{target.name}.{os.getpid()}."


def _remove_orphaned_parts(target: Path) -> None:
    """Staging files ``.NAME.PID[.XXXX].part`` of a process that no longer exists (one killed
    between linking and renaming, or by SIGKILL while streaming) are removed before a new write
    of NAME."""
    for part in target.parent.glob(f".{target.name}.*.part"):
        pid = part.name[len(target.name) + 2 : -len(".part")].split(".")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            part.unlink(missing_ok=True)
        except (PermissionError, OSError):
            continue


def _write_anonymous(target: Path, data: bytes, force: bool, like: os.stat_result | None, times: bool) -> bool:
    """Linux: write into an unnamed file (O_TMPFILE) and give it its name only when complete, so
    even a killed process leaves nothing behind. False where the file system cannot do it."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return False
    try:
        fd = os.open(target.parent, flag | os.O_WRONLY, 0o600)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb", closefd=False) as fh:
            fh.write(data)
            fh.flush()
            _finish(fd, like, times)
            os.fsync(fh.fileno())
        # linkat(/proc/self/fd/N, AT_SYMLINK_FOLLOW) names the unnamed file; a dir fd makes
        # CPython call linkat rather than link (which would link the /proc symlink itself)
        proc = os.open("/proc/self/fd", os.O_RDONLY)
        try:
            if force:  # replace atomically whatever is (or meanwhile appears) there
                _remove_orphaned_parts(target)
                staging = target.parent / f"{_staging_prefix(target)}part"
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


def write_output(path: str, data: bytes, force: bool = False, binary: bool = False, like: str | None = None,
                 times: bool = False) -> None:
    """Write ``data`` to ``path`` so that an error, an interrupt or a kill leaves either the old
    file or nothing: an unnamed file linked in when complete (Linux), else
    :class:`StreamingOutput` (a temporary file renamed at the end), which also handles stdout,
    devices, FIFOs and symlinks. ``binary`` output (an archive) is refused on a terminal unless
    forced, as zstd does. The file takes the mode of ``like`` (the input it comes from; the
    umask's default without one), and with ``times`` its times too."""
    if path != "-":
        check_writable(path, force)
        target = Path(path)
        if not _special(target):
            try:
                if _write_anonymous(target.resolve() if target.is_symlink() else target, data, force,
                                    source_stat(like), times):
                    return
            except FileExistsError:
                raise InputError(f"{path} already exists; use --force to overwrite it") from None
            except OSError as exc:
                raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    with StreamingOutput(path, force, binary, like, times) as out:
        out.write(data)


class StreamingOutput:
    """A file written piece by piece that appears under its name only when complete (a temporary
    file in the same folder, renamed at the end; removed on any failure). '-' is stdout; a
    device or FIFO is written through. For outputs too large to hold in memory."""

    def __init__(self, path: str, force: bool = False, binary: bool = False, like: str | None = None,
                 times: bool = False):
        self.path, self.force, self.binary = path, force, binary
        self.like, self.times = source_stat(like), times
        self.tmp: str | None = None
        self.fh: BinaryIO | None = None

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
                _remove_orphaned_parts(target)
                # mkstemp's file is private (0600) until it is complete and renamed
                fd, self.tmp = tempfile.mkstemp(prefix=_staging_prefix(target), suffix=".part", dir=target.parent)
                self.fh = os.fdopen(fd, "wb")
                self.target = target
        except OSError as exc:
            raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self

    def write(self, data: bytes) -> None:
        if self.path == "-":
            _write_stdout(data)
            return
        assert self.fh is not None, "write() outside the with block"
        try:
            self.fh.write(data)
        except OSError as exc:
            raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def _publish(self) -> None:
        """Give the complete file its name: replacing what is there with --force, else only if
        the name is still free (a file created meanwhile is reported, never overwritten)."""
        assert self.tmp is not None
        if self.force:
            os.replace(self.tmp, self.target)
            return
        try:
            os.link(self.tmp, self.target)
        except FileExistsError:
            raise InputError(f"{self.path} already exists (created meanwhile); use --force to overwrite it") from None
        except OSError:  # a file system without hard links: the best it allows
            if self.target.exists():
                raise InputError(f"{self.path} already exists (created meanwhile); use --force to overwrite it") from None
            os.replace(self.tmp, self.target)
            return
        os.unlink(self.tmp)

    def __exit__(self, kind, value, tb) -> None:
        if self.fh is None:
            return
        try:
            if kind is None and self.tmp is not None:
                self.fh.flush()
                _finish(self.fh.fileno(), self.like, self.times)
                os.fsync(self.fh.fileno())
            self.fh.close()
            if self.tmp is not None:
                if kind is None:
                    self._publish()
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
