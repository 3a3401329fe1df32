"""Files as zstd and xz handle them: '-' for stdin/stdout, outputs that appear only when
complete (never a partial file), the input's mode, owner and times on its output, and the
naming policy (``FILE`` -> ``FILE.cpz`` -> ``FILE``)."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Protocol

from .errors import InputError


class Readable(Protocol):
    """What a reader of bytes takes: a binary stream, or anything with ``read(n)``."""

    def read(self, n: int = -1, /) -> bytes: ...

#: the suffix of archives
SUFFIX = ".cpz"


def stdin_binary():
    """Standard input as a binary stream; InputError when the caller closed it (``<&-``)."""
    if sys.stdin is None:
        raise InputError("cannot read standard input: it is closed")
    return sys.stdin.buffer


def check_stdout() -> None:
    """InputError when standard output is closed (``>&-``): before any work that would write it."""
    if sys.stdout is None:
        raise InputError("cannot write to standard output: it is closed")


def open_input(path: str) -> BinaryIO:
    """The binary stream of ``path`` ('-': stdin), for reading piece by piece."""
    try:
        return stdin_binary() if path == "-" else open(path, "rb")
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory (-r takes the files in it)") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def opened(path: str):
    """The binary stream of ``path`` ('-': stdin) for the block's duration (stdin stays open)."""
    stream = open_input(path)
    try:
        yield stream
    finally:
        if path != "-":
            stream.close()


def files_under(path: str, compressing: bool) -> list[str]:
    """The files in the folder ``path`` and its folders, sorted (no symlinks followed):
    compressing, those not ending in .cpz; decompressing, those that do. A file is itself."""
    if path == "-" or not os.path.isdir(path):
        return [path]
    found = sorted(str(p) for p in Path(path).rglob("*") if p.is_file() and not p.is_symlink())
    return [f for f in found if f.endswith(SUFFIX) != compressing]


def read_input(path: str, limit: int | None = None) -> bytes:
    """The whole of ``path`` ('-': stdin). With ``limit``, an input longer than that many
    bytes (a FIFO, a device such as /dev/zero, an endless pipe, or a file) is refused once
    that much is read, instead of filling memory."""
    stream = open_input(path)
    try:
        return read_rest(stream, path, b"", limit)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        if path != "-":
            stream.close()


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
            raise InputError(f"{path + ': ' if path else ''}more than {limit:,} bytes, the most this can take "
                             "within the memory limit (set CHUNKPRESS_MAX_MEMORY to raise it)")


def file_size(path: str) -> int | None:
    """Size of a regular file; None for stdin, a pipe, a device or a socket (a stream whose
    length is not known beforehand)."""
    if path == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # reported by the read
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def default_output(path: str, compressing: bool, force: bool = False) -> str:
    """Where an input's output goes without -o: ``INPUT.cpz``, or the archive's name without
    ``.cpz``. As zstd does, an input that already ends in .cpz is not compressed again (unless
    -f) and an archive without the suffix is not decompressed to a made-up name."""
    if path == "-":
        return "-"
    if compressing:
        if path.endswith(SUFFIX) and not force:
            raise InputError(f"{path}: already ends in {SUFFIX}, not compressed again (-f to insist)")
        return path + SUFFIX
    if path.endswith(SUFFIX) and len(path) > len(SUFFIX):
        out = path[: -len(SUFFIX)]
        return os.path.join(".", out) if out == "-" else out  # the file -.cpz decompresses to a file named -
    raise InputError(f"{path}: does not end in {SUFFIX}: give -o OUT or -c for stdout")


def check_not_input(path: str, out: str) -> None:
    """InputError when writing ``out`` would replace the input ``path`` (a device such as
    /dev/null is written through, so it replaces nothing)."""
    if path == "-" or out == "-" or not (os.path.exists(path) and os.path.exists(out)):
        return
    if os.path.samefile(path, out) and os.path.isfile(out):
        raise InputError(f"{path}: the output would overwrite the input")


def _special(path: Path) -> bool:
    """A device or a FIFO (``/dev/null``, a named pipe): written through, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


def check_writable(path: str, force: bool) -> None:
    """Fail early, before any work, if ``path`` exists (without force), is a directory, or its
    folder is missing; '-' if stdout is closed. Devices and FIFOs are fine: written through."""
    if path == "-":
        check_stdout()
        return
    p = Path(path)
    if p.is_dir():
        raise InputError(f"cannot write {path}: it is a directory")
    if _special(p):
        return
    if (p.exists() or p.is_symlink()) and not force:
        raise InputError(f"{path} already exists; use --force to overwrite it")
    if not p.absolute().parent.exists():  # the name's own folder: a symlink there is replaced, not followed
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


#: the staging files seen in each folder, listed once per process: listing a folder for every
#: output made -d of N files in one folder take O(N^2)
_staged_by_folder: dict[Path, list[str]] = {}


def _remove_orphaned_parts(target: Path) -> None:
    """Staging files ``.NAME.PID[.XXXX].part`` of a process that no longer exists (one killed
    between linking and renaming, or by SIGKILL on a file system without unnamed files) are
    removed before a new write of NAME. The folder is listed once; files staged after that by
    other processes are left to a later run."""
    folder = target.parent
    staged = _staged_by_folder.get(folder)
    if staged is None:
        try:
            staged = [e.name for e in os.scandir(folder) if e.name.startswith(".") and e.name.endswith(".part")]
        except OSError:
            staged = []
        _staged_by_folder[folder] = staged
    prefix = f".{target.name}."
    for name in [n for n in staged if n.startswith(prefix)]:
        pid = name[len(prefix): -len(".part")].split(".")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            (folder / name).unlink(missing_ok=True)
            staged.remove(name)
        except (PermissionError, OSError):
            continue


def _write_stdout(data) -> None:
    """All of ``data`` to standard output, or an error: a short write (a full disk, a file size
    limit) is never taken for success."""
    try:
        check_stdout()
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[: 1 << 20]):]
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write to standard output: {getattr(exc, 'strerror', None) or exc}") from None


def write_output(path: str, data: bytes, force: bool = False, binary: bool = False, like: str | None = None,
                 times: bool = False) -> None:
    """Write ``data`` to ``path`` as :class:`StreamingOutput` does: an error, an interrupt or a
    kill leaves either the old file or nothing."""
    with StreamingOutput(path, force, binary, like, times) as out:
        out.write(data)


class StreamingOutput:
    """A file written piece by piece that appears under its name only when complete: on Linux
    an unnamed file (O_TMPFILE) given its name at the end, so even a killed process leaves
    nothing behind; elsewhere a private temporary file in the same folder, renamed at the end
    and removed on any failure. '-' is stdout; a device or FIFO is written through. The file
    takes the mode of ``like`` (the input it comes from; the umask's default without one), and
    with ``times`` its times too. ``binary`` output (an archive) is refused on a terminal
    unless forced, as zstd does."""

    def __init__(self, path: str, force: bool = False, binary: bool = False, like: str | None = None,
                 times: bool = False):
        self.path, self.force, self.binary = path, force, binary
        self.like, self.times = source_stat(like), times
        self.tmp: str | None = None  # the temporary file's name; None: unnamed, or written through
        self.fh: BinaryIO | None = None
        self.target: Path | None = None

    def __enter__(self):
        if self.path == "-":
            check_stdout()
            if self.binary and not self.force and sys.stdout.isatty():
                raise InputError("refusing to write binary data to a terminal; use -o FILE, a pipe, or -f")
            return self
        check_writable(self.path, self.force)
        target = Path(self.path)
        try:
            if _special(target):
                self.fh = open(target, "wb")
                return self
            # a symlink named as the output is replaced by the output, as zstd and gzip do:
            # its target (perhaps another file of the user's) is never written through
            self.target = target
            _remove_orphaned_parts(target)
            fd = self._unnamed(target.parent)
            if fd is None:
                # mkstemp's file is private (0600) until it is complete and renamed
                fd, self.tmp = tempfile.mkstemp(prefix=_staging_prefix(target), suffix=".part", dir=target.parent)
            self.fh = os.fdopen(fd, "wb")
        except OSError as exc:
            raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self

    @staticmethod
    def _unnamed(folder: Path) -> int | None:
        """A private unnamed file in ``folder`` (Linux O_TMPFILE), or None where there is none."""
        flag = getattr(os, "O_TMPFILE", None)
        if flag is None:
            return None
        try:
            return os.open(folder, flag | os.O_WRONLY, 0o600)
        except OSError:
            return None

    def write(self, data) -> None:
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
        assert self.target is not None and self.fh is not None
        if self.tmp is None:  # unnamed: linkat(/proc/self/fd/N, AT_SYMLINK_FOLLOW) names it
            proc = os.open("/proc/self/fd", os.O_RDONLY)
            try:
                source = str(self.fh.fileno())
                if self.force:  # replace atomically whatever is (or meanwhile appears) there
                    _remove_orphaned_parts(self.target)
                    staging = self.target.parent / f"{_staging_prefix(self.target)}part"
                    os.link(source, staging, src_dir_fd=proc, follow_symlinks=True)
                    try:
                        os.replace(staging, self.target)
                    except BaseException:
                        staging.unlink(missing_ok=True)
                        raise
                else:
                    os.link(source, self.target, src_dir_fd=proc, follow_symlinks=True)
            except FileExistsError:
                raise InputError(f"{self.path} already exists (created meanwhile); use --force to overwrite it") from None
            finally:
                os.close(proc)
            return
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
            if kind is None and self.target is not None:
                self.fh.flush()
                _finish(self.fh.fileno(), self.like, self.times)
                os.fsync(self.fh.fileno())
                self._publish()
                self.tmp = None
            self.fh.close()
        except OSError as exc:
            if kind is None:
                raise InputError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        finally:
            if not self.fh.closed:
                # after a failed write or flush, closing flushes the same buffer again and fails
                # again: the first error is the one reported
                with contextlib.suppress(OSError):
                    self.fh.close()
            if self.tmp is not None:
                try:
                    os.unlink(self.tmp)
                except OSError:
                    pass
