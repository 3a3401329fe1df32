"""Running compiled kernels from Python: a long kernel that stops on Ctrl-C or SIGTERM, and
whether numba's cache is warm. No numba here: a program asks these before any kernel loads.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path


def _cache_folder(folder: Path) -> Path | None:
    """Where numba keeps the kernels of the modules in ``folder``: NUMBA_CACHE_DIR's
    ``<folder's name>_<sha1 of its path>``, else beside the modules; None where it would fall
    back to a user-wide folder this cannot see cheaply."""
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    if user_dir:
        return Path(user_dir) / f"{folder.name}_{hashlib.sha1(str(folder).encode()).hexdigest()}"
    if os.access(folder, os.W_OK):
        return folder / "__pycache__"
    return None


@dataclass(frozen=True)
class CompiledPart:
    """Kernels a first run compiles: ``name`` (the main kernel's reference, or ``learner``),
    the ``folder`` of the module that holds the main kernel, the ``prefix`` of that kernel's
    numba cache file, and roughly how many ``seconds`` two cores take to compile them all.
    :mod:`chunkpress.firstcompile` makes one for a component from its descriptor."""

    name: str
    folder: Path
    prefix: str
    seconds: int


#: the engine's own: the fused merge loop every learned dictionary runs
LEARNER = CompiledPart("learner", Path(os.path.abspath(os.path.dirname(__file__))), "fused.run_fused-", 30)


def part_cache(part: CompiledPart) -> Path | None:
    """The folder numba keeps the kernels of ``part`` in, or None (:func:`_cache_folder`)."""
    return _cache_folder(part.folder)


def first_compile_seconds(parts, alongside=()) -> int:
    """Roughly how long numba will compile the kernels of ``parts`` (CompiledParts) that its
    cache does not hold yet (0: all are there, or where they are cannot be seen); those named
    in ``alongside`` compile at the same time, in another process. A program may say so first:
    a first run otherwise looks hung."""
    here, there = 0, 0
    for part in parts:
        cache = part_cache(part)
        if cache is not None and not any(cache.glob(part.prefix + "*.nbi")):
            if part.name in alongside:
                there += part.seconds
            else:
                here += part.seconds
    return max(here, there)


#: kernels an interrupt left running, each as the event its helper sets when it returns
#: (``Thread.is_alive`` cannot tell: in Python 3.11 an interrupted ``join`` marks the thread
#: stopped while it still runs)
_abandoned: list[threading.Event] = []


def kernel_abandoned() -> bool:
    """Whether a kernel left behind by an interrupt is still running. A process that exits
    normally then tears the interpreter down under it, compiled code included, and can die of
    SIGSEGV instead of its exit status: a program ends such a process with ``os._exit``."""
    return not all(finished.is_set() for finished in _abandoned)


#: how long an interrupted call waits for its kernel to see the stop request and return
STOP_WAIT_SECONDS = 1.0


def call_interruptibly(func, *args, meter=None, stop=None):
    """``func(*args)`` for a long kernel compiled with ``nogil=True``, run on a helper thread
    while the main thread waits in short steps, so that Ctrl-C and SIGTERM act within a fraction
    of a second instead of when the kernel returns (a context-mixing pass held them its length).
    On an interrupt ``stop()`` asks the kernel to return (it sets a flag the kernel polls) and
    the call waits up to :data:`STOP_WAIT_SECONDS` for it, so no kernel goes on using a core and
    its memory after the interrupt, in a program or in an interactive interpreter; then the
    interrupt propagates from here. A kernel that does not stop in time is left to end with the
    process (it only touches arrays it holds). ``meter``, when given, is called at every step
    (progress: see ``progress.coding_meter``). Off the main thread (a worker, a host's thread)
    it is a plain call."""
    if threading.current_thread() is not threading.main_thread():
        return func(*args)
    outcome: list = []
    finished = threading.Event()

    def target():
        try:
            outcome.append((True, func(*args)))
        except BaseException as exc:  # handed back to the caller below
            outcome.append((False, exc))
        finally:
            finished.set()

    helper = threading.Thread(target=target, name="chunkpress-kernel", daemon=True)
    helper.start()
    try:
        while helper.is_alive():
            helper.join(0.05)
            if meter is not None:
                meter()
    except BaseException:
        if stop is not None:
            stop()
            finished.wait(STOP_WAIT_SECONDS)
        if not finished.is_set():
            _abandoned.append(finished)
        raise
    if meter is not None:
        meter()  # the last count, which the kernel may have reached between two steps
    ok, value = outcome[0]
    if not ok:
        raise value
    return value
