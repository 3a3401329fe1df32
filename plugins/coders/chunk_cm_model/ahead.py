"""The coding loop's kernels as ahead parts (:meth:`chunkpress.contract.Coder.ahead_parts`):
what a first call compiles, split so that a helper process and the coding process compile
its two long halves side by side."""

from __future__ import annotations

import functools

import numba
import numpy as np
from chunkpress.plugin import AheadPart

from . import layout
from . import ranks as rks
from .model import after_chunk, code_chunks, code_rank, learn, predict, set_contexts
from .ranks import forced_bit
from .recall import follow_match, match_lookup, run_read, run_update


def loop_parts(tables: layout.Tables) -> list[AheadPart]:
    """The coding loop and the kernels under it that take longest to compile, typed for the
    arguments coding passes them (``tables``: any model's, as every model version, encode
    and decode, runs one signature): first those under :func:`code_rank` and it, then the
    rest of the loop's, and the loop. A helper compiles them from the first, the coding process
    from the last shared one (each compiles what the others do not call)."""
    flag, index = numba.types.boolean, numba.types.int64
    ranks, text = numba.typeof(np.zeros(16, dtype=np.int64)), numba.typeof(np.zeros(16, dtype=np.uint8))
    rk, tb = numba.typeof(rks.byte_ranks()), numba.typeof(tables)
    sc, io = numba.typeof(layout.new_scratch()), numba.typeof(layout.new_stream(False, capacity=64))

    def part(kernel, *types, shared=True) -> AheadPart:
        return AheadPart(name=kernel.py_func.__name__, compile=functools.partial(kernel.compile, types), shared=shared)

    return [
        part(predict, tb, sc, *[index] * 9), part(learn, tb, sc, index), part(match_lookup, tb, ranks, sc),
        part(run_read, tb, sc), part(forced_bit, rk, *[index] * 5),
        part(code_rank, flag, index, index, ranks, rk, tb, sc, io, shared=False),
        part(run_update, tb, sc, index), part(follow_match, ranks, index, index, tb, sc),
        part(after_chunk, index, index, rk, tb, sc, text, index, flag), part(set_contexts, sc, tb),
        part(code_chunks, flag, ranks, text, rk, tb, sc, io, shared=False),
    ]
