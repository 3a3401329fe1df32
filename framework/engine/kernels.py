"""How the hot kernels are compiled: :data:`kernel` is ``numba.njit(cache=True)`` without
numba's reference counting.

numba counts references to every array a jitted function handles, with atomic increments and
decrements. A helper inlined into a loop (``inline="always"``) gets one such pair per array
argument per iteration, and numba's pruning pass does not remove them all. In the merge kernels
that cost several times the work itself. So kernels that create no arrays, and only take arrays that
their callers own, are compiled without it (numba's ``_nrt=False``). Such a kernel cannot create
arrays, so its callers pass in scratch space. Functions that allocate stay plain ``njit``.

Helpers are inlined two ways. A short one (a hash, a probability update) is inlined by numba
(``inline="always"``): its IR is copied into each caller. A longer one, which inlines helpers of
its own, is compiled once and inlined by LLVM (``forceinline=True``): numba's inlining copies a
helper's whole IR, with all it inlined, at every call site, so a kernel built of long helpers
(chunk-cm's coding loop) spent most of its first compile copying IR, while LLVM's inlining gives
the same machine code at a fraction of the compile time.
"""

from __future__ import annotations

import numba


def _without_refcounts():
    """``njit`` options for a kernel: no reference counting where this numba has the option
    (looked up, not compiled: a probe compile would cost every import its time)."""
    from numba.core.cpu import CPUTargetOptions  # numba's internals: looked up once, where the decorators are made

    if not hasattr(CPUTargetOptions, "_nrt"):  # pragma: no cover - correct, only slower
        return {"cache": True}
    return {"cache": True, "_nrt": False}


#: decorator for an allocation-free kernel
kernel = numba.njit(**_without_refcounts())
#: the same for a long kernel run by :func:`call_interruptibly` (it releases the GIL)
long_kernel = numba.njit(nogil=True, **_without_refcounts())
#: the same for a long helper of such kernels, inlined by LLVM (``forceinline``). A helper
#: without options of its own takes its caller's when the caller's compile types it, but
#: counts references when it is compiled first by itself (ahead of its caller, or in another
#: process, as :meth:`chunkpress.contract.Coder.ahead_parts` does), and its caller then links
#: that copy: saying so here compiles it alike either way
inlined_kernel = numba.njit(forceinline=True, **_without_refcounts())


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
