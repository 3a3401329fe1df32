"""Doubly-linked lists threaded through index arrays, for numba kernels.

``head[key]`` is the first element of list ``key``; ``nxt``/``prv`` link the elements (-1 ends
a list). The linked rewriter threads each pair's occurrences this way, the index each symbol's
pairs.
"""

import numba

EMPTY = -1


@numba.njit(cache=True, inline="always")
def list_add(x, key, head, nxt, prv):
    """Put ``x`` first in list ``key``."""
    h = head[key]
    nxt[x] = h
    prv[x] = EMPTY
    if h != EMPTY:
        prv[h] = x
    head[key] = x


@numba.njit(cache=True, inline="always")
def list_remove(x, key, head, nxt, prv):
    """Take ``x`` out of list ``key``."""
    if prv[x] != EMPTY:
        nxt[prv[x]] = nxt[x]
    else:
        head[key] = nxt[x]
    if nxt[x] != EMPTY:
        prv[nxt[x]] = prv[x]
