"""Running compiled kernels from Python: a long kernel that stops on Ctrl-C or SIGTERM, and
whether numba's cache is warm. No numba here: a program asks these before any kernel loads.
"""

from __future__ import annotations

import hashlib
import os
import threading
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


#: the kernels a first run compiles, by what uses them: (the package's folder holding their
#: module, the cache's file name for the main one), and roughly how many seconds two cores take
#: (chunk-cm's: its loop, shared by a helper and the process that waits for it, with a
#: decoder's rules)
FIRST_COMPILE = {
    "learner": (("engine",), "fused.run_fused-", 30),
    "bwt-cm": (("plugins", "coders"), "blocksort_model.code_sorted-", 5),
    "chunk-cm": (("plugins", "coders", "chunk_cm_model"), "model.code_chunks-", 15),
}


def part_cache(part: str) -> Path | None:
    """The folder numba keeps the kernels of ``part`` (a key of FIRST_COMPILE) in, or None
    (:func:`_cache_folder`)."""
    package = Path(os.path.abspath(os.path.dirname(__file__))).parent
    return _cache_folder(package.joinpath(*FIRST_COMPILE[part][0]))


def first_compile_seconds(parts, alongside=()) -> int:
    """Roughly how long numba will compile the kernels of ``parts`` (keys of FIRST_COMPILE) that
    its cache does not hold yet (0: all are there, or where they are cannot be seen); those of
    ``alongside`` compile at the same time, in another process. A program may say so first: a
    first run otherwise looks hung."""
    here, there = 0, 0
    for part in parts:
        _, prefix, cost = FIRST_COMPILE[part]
        cache = part_cache(part)
        if cache is not None and not any(cache.glob(prefix + "*.nbi")):
            if part in alongside:
                there += cost
            else:
                here += cost
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
