"""What a program built on chunkpress owns of its process, as the ``chunkpress`` command does:
standard streams a caller closed, SIGTERM handled as Ctrl-C (so outputs in progress are
removed and workers stopped), warnings and errors as one line each, naming the file they are
about. A library call never does any of this: only a program's ``main`` asks for it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import warnings

from .engine.cachefiles import after_numba_cache_loads
from .errors import ChunkpressError, UnverifiedWarning


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``), raised where the program is, so that it cleans up as on
    Ctrl-C."""


@contextlib.contextmanager
def sigterm_as_interrupt():
    """SIGTERM handled like SIGINT within the block (main thread only; restored after).

    The signal's exception is raised wherever the program is, which may be inside a library
    that turns it into an error of its own (numba's compiled argument unboxing answers a
    TypeError when its call back into Python is cut short), or inside a C library's callback,
    which ctypes reports as an unraisable exception and swallows (numba's compile, through
    LLVM's object cache). So whatever leaves the block once a SIGTERM or SIGINT has arrived, or
    the block's normal end, leaves it as that signal, raised from the error it became; and the
    unraisable exceptions that follow a signal (a callback cut short, an object half made by a
    compile the signal stopped, freed as the process ends) are the signal's, not reported."""
    arrived: list[int] = []

    def on_signal(signum, frame):
        arrived.append(signum)
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    def as_signal() -> BaseException:
        return Terminated() if arrived[0] == signal.SIGTERM else KeyboardInterrupt()

    try:
        previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, on_signal)}
    except ValueError:  # not the main thread: leave signals to the host
        yield
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, on_signal)
    reported = sys.unraisablehook

    def on_unraisable(unraisable) -> None:
        if not arrived:
            reported(unraisable)

    sys.unraisablehook = on_unraisable
    try:
        yield
    except BaseException as exc:
        if not arrived or isinstance(exc, KeyboardInterrupt):
            raise
        raise as_signal() from exc
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if not arrived:  # after a signal, the process ends with the half-made objects unreported
            sys.unraisablehook = reported
    if arrived:  # a callback swallowed the signal's exception: the block went on to its end
        raise as_signal()


#: glibc's mallopt parameter for the size from which a block is mapped on its own
_M_MMAP_THRESHOLD = -3
#: blocks from this size up are mapped on their own, so that freeing one returns it at once
MAPPED_FROM = 1 << 20


def return_large_blocks_when_freed() -> None:
    """Blocks of MAPPED_FROM bytes or more are mapped on their own and go back to the system
    when freed. glibc's default raises that size to the largest block freed so far (up to 32 MB),
    so a program whose stages free large arrays and then make others (training: word counts,
    then a first learning stage, then a second) keeps the freed ones resident beside the new.
    No effect where the C library has no ``mallopt``."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, MAPPED_FROM)


def hold_closed_standard_streams() -> None:
    """A standard stream the caller closed (``>&-``) keeps its number taken by /dev/null, so no
    file this process opens gets it and is then written as that stream. Python has already set
    sys.stdin or sys.stdout to None, which the commands refuse to use; a closed stderr becomes
    /dev/null (the exit status still tells), so no message goes to stdout instead."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line, as errors are (for ``warnings.showwarning``)."""
    print(f"chunkpress: warning: {message}", file=sys.stderr)


def shown(path: str) -> str:
    """How messages name an input: its path, or ``<stdin>``."""
    return "<stdin>" if path == "-" else path


def naming(exc: ChunkpressError, path: str) -> ChunkpressError:
    """The same error, its message starting with the file it is about (unless it names it)."""
    if shown(path) in str(exc):
        return exc
    try:
        return type(exc)(f"{shown(path)}: {exc}")
    except TypeError:  # an error class that takes other arguments: leave it as it is
        return exc


@contextlib.contextmanager
def warnings_about(path: str):
    """What a file's decoding could not verify (``UnverifiedWarning``), printed once as a line
    naming the file, even when the file then fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnverifiedWarning)
        try:
            yield
        finally:
            for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UnverifiedWarning)):
                print(f"chunkpress: warning: {shown(path)}: {message}", file=sys.stderr)


def load_cached_kernels_lightly() -> None:
    """numba reloads a kernel from its disk cache only after installing every typing and
    lowering registry it has, the work a compile needs, which is most of a warm start (a few
    tenths of a second). A cached kernel needs none of it to run: numba's runtime, and the type
    of a first-class function passed to it. This process loads cached kernels so; a compile
    still installs the registries (numba's compiler refreshes its contexts itself), and where
    numba lacks what this expects, nothing changes. Applied when numba's cache module is
    imported, so a command that compiles nothing never imports numba for it."""
    after_numba_cache_loads(_light_cache_loads)


def _light_cache_loads(caching) -> None:
    cache = getattr(caching, "Cache", None)
    if cache is None or not all(hasattr(cache, a) for a in ("load_overload", "_load_overload",
                                                           "_guard_against_spurious_io_errors")):
        return
    if getattr(cache.load_overload, "light", False):
        return
    full = cache.load_overload

    def load_overload(self, sig, target_context):
        try:
            # imported here, not when installed: numba may be importing itself then
            import numba.experimental.function_type  # noqa: F401  (the type of a cfunc argument)
            from numba.core.runtime import rtsys  # numba's runtime, which a kernel's arrays need
        except ImportError:
            return full(self, sig, target_context)
        rtsys.initialize(target_context)  # what the registries' refresh did that running needs
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    load_overload.light = True  # type: ignore[attr-defined]
    cache.load_overload = load_overload
