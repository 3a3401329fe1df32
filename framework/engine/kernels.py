"""How the hot kernels are compiled: :data:`kernel` is ``numba.njit(cache=True)`` without
numba's reference counting.

numba counts references to every array a jitted function handles, with atomic increments and
decrements. A helper inlined into a loop (``inline="always"``) gets one such pair per array
argument per iteration, and numba's pruning pass does not remove them all. In the merge kernels
that cost more than the work itself: counting the pairs of en_mix_10MB took 0.48 s with it and
0.08 s without, for the same code. So kernels that create no arrays, and only take arrays that
their callers own, are compiled without it (numba's ``_nrt=False``). Such a kernel cannot create
arrays, so its callers pass in scratch space. Functions that allocate stay plain ``njit``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numba


def _without_refcounts():
    """``njit`` options for a kernel: no reference counting where this numba has the option
    (looked up, not compiled: a probe compile cost 0.2 s at every import)."""
    from numba.core.cpu import CPUTargetOptions  # numba's internals: looked up once, where the decorators are made

    if not hasattr(CPUTargetOptions, "_nrt"):  # pragma: no cover - correct, only slower
        return {"cache": True}
    return {"cache": True, "_nrt": False}


#: decorator for an allocation-free kernel
kernel = numba.njit(**_without_refcounts())
#: the same for a long kernel run by :func:`call_interruptibly` (it releases the GIL)
long_kernel = numba.njit(nogil=True, **_without_refcounts())


def first_compile_ahead() -> bool:
    """Whether numba will compile the engine's kernels at their first use here (about 15 s once
    after install; later runs load them from its cache): a program may say so first."""
    engine = Path(__file__).parent
    return os.access(engine, os.W_OK) and not any((engine / "__pycache__").glob("fused.run_fused-*.nbi"))


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
    of a second instead of when the kernel returns (a 20 s context-mixing pass held them 20 s).
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


@numba.njit(cache=True, inline="always")
def _insertion_sort(a, lo, hi):
    for i in range(lo + 1, hi):
        x = a[i]
        j = i - 1
        while j >= lo and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@kernel
def sort_in_place(a, n, tmp):
    """Sort ``a[:n]`` ascending with ``tmp`` (at least n long) as scratch: a bottom-up merge
    sort over insertion-sorted runs of 32, which skips a merge when its halves are already in
    order (so nearly sorted input costs little); sorted input is left as it is, ``tmp``
    untouched (so its pages need not be resident). numba's own sort allocates."""
    ordered = True
    for k in range(1, n):
        if a[k - 1] > a[k]:
            ordered = False
            break
    if ordered:
        return
    run = 32
    for lo in range(0, n, run):
        _insertion_sort(a, lo, min(lo + run, n))
    src, dst = a, tmp
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            if mid >= hi or src[mid - 1] <= src[mid]:
                for k in range(lo, hi):
                    dst[k] = src[k]
                continue
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if src[j] < src[i]:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    if src is not a:
        for k in range(n):
            a[k] = src[k]
