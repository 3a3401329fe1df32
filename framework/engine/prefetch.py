"""Cache prefetch hints for numba kernels (LLVM's ``llvm.prefetch``).

The merge kernel is bound by cache misses on nodes scattered over the string; asking for the
node of a site a few sites ahead lets those misses overlap with the work on the current one.
chunk-cm asks for its hash slots, mixer weights and APM knots before it reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _prefetch(context, builder, aty, array, indices):
    """Emit a prefetch of ``array[indices]`` (read, high temporal locality, data cache)."""
    ary = context.make_array(aty)(context, builder, array)
    ptr = cgutils.get_item_pointer2(
        context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
        strides=cgutils.unpack_tuple(builder, ary.strides), layout=aty.layout, inds=indices,
    )
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
    builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
    return context.get_dummy_value()


if TYPE_CHECKING:  # how kernels call them: numba's intrinsics take the typing context first
    def prefetch_row(arr, row) -> None: ...

    def prefetch_item(arr, row, col) -> None: ...
else:
    @intrinsic
    def prefetch_row(typingctx, arr, row):
        """Hint the CPU to load row ``row`` of a C-contiguous array (1-d: element) into the cache.
        A hint only: it never faults and changes no result."""

        def codegen(context, builder, sig, args):
            zero = context.get_constant(types.intp, 0)
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            return _prefetch(context, builder, sig.args[0], args[0], [idx] + [zero] * (sig.args[0].ndim - 1))

        return types.void(arr, row), codegen


    @intrinsic
    def prefetch_item(typingctx, arr, row, col):
        """The same for item ``[row, col]`` of a 2-d array: a later cache line of a long row."""

        def codegen(context, builder, sig, args):
            inds = [context.cast(builder, a, t, types.intp) for a, t in zip(args[1:], sig.args[1:], strict=False)]
            return _prefetch(context, builder, sig.args[0], args[0], inds)

        return types.void(arr, row, col), codegen
