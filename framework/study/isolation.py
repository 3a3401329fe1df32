"""One measurement in a child process of its own, so that its peak memory is the operating
system's figure for that measurement alone (tracemalloc sees Python's allocations only, not
numpy's or a compressor library's), and a crash in a plugin costs one row, not the study.

The child is forked: it starts with everything the parent has loaded (compiled kernels
included), so nothing is compiled inside the timing.
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import resource
import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

from ..errors import ChunkpressError


class ChildDied(ChunkpressError):
    """The measuring process ended without a result (killed, out of memory, a crash)."""


def peak_rss_bytes() -> int:
    """This process's peak resident set size, from the operating system."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def run_isolated(function: Callable[[], Any]) -> tuple[Any, int]:
    """``(function(), peak RSS of the process that ran it)``. On a system without fork the
    function runs here and the peak is this process's."""
    if not hasattr(os, "fork"):
        return function(), peak_rss_bytes()
    _give_back_free_memory()
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # Python 3.12 warns about fork beside threads (Dask's)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            os.close(read_end)
            try:
                outcome: tuple = (True, function())
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
                outcome = (False, f"{type(exc).__name__}: {exc}")
            with os.fdopen(write_end, "wb") as out:
                pickle.dump((*outcome, peak_rss_bytes()), out, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as results:
            payload = results.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C: the child goes with us
        _kill(pid)
        raise
    if not payload:
        raise ChildDied(f"the measuring process died ({_how(status)})")
    ok, result, peak = pickle.loads(payload)
    if not ok:
        raise ChildDied(f"the measuring process failed: {result}")
    return result, peak


def _give_back_free_memory() -> None:
    """Return the heap's free pages to the OS before forking, so that a row's peak starts from
    what the driver holds, not from what earlier rows' warm-ups freed (glibc keeps freed heap
    memory resident until asked)."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"signal {number}, {signal.Signals(number).name}"
        except ValueError:
            return f"signal {number}"
    return f"exit status {os.WEXITSTATUS(status)}"
