"""The ``bwt-cm`` coder: block sorting with a context-mixing back end, for the fast levels.

Each block of the input's bytes is shortened by LZP (long repeats of what followed the last
occurrence of the same four bytes become a length), sorted by the Burrows-Wheeler transform
(libdivsufsort, through the ``pydivsufsort`` package), and the sorted bytes are coded bit by bit
by the small model of :mod:`.blocksort_model`. Like the ``raw-*`` coders it codes bytes: rules
are expanded and discarded, so pair it with ``max_rules = 0`` to skip learning.

Payload (codec ``chunkpress.bwt-cm.v1``): LEB128 ``B``, the number of blocks, then per block
LEB128 ``size lzp sorted primary row_1 .. row_W-1 coded`` and ``coded`` bytes. ``size``: the
block's bytes; ``lzp``: 1 where LZP coded it; ``sorted``: the bytes sorted (LZP's output, or
the block); ``primary``: where the transform's end marker stood; ``row_j``: the row of the
rotation that starts at the j-th of W even parts of the sorted bytes, W one for each MiB of
them (1 to 16): the decoder inverts the parts side by side.
"""

from __future__ import annotations

import attrs
import numpy as np
from chunkpress.plugin import (
    Coder,
    ConfigError,
    FormatError,
    call_interruptibly,
    check_allocation,
    expand,
    read_varint,
    varint,
)

from . import blocksort_model as bsm
from .mixing.arithmetic import AC, NO_INPUT, NO_OUTPUT, coder_flush, coder_start, stop_coder


@attrs.frozen(kw_only=True)
class BlockSortParams:
    """``block_mb``: the largest block, in MiB (a larger block sorts more context together, but
    its model adapts less to a change of content: on en_mix_100MB 32 was smaller than 16 and 64,
    bwt_cm_notes.md; encoding holds about 8 bytes a byte of a block, decoding 7).
    ``lzp_min``: the shortest repeat LZP replaces, or 0 for no LZP."""

    block_mb: int = attrs.field(default=32, validator=[attrs.validators.instance_of(int), attrs.validators.ge(1),
                                                       attrs.validators.le(1024)])
    lzp_min: int = attrs.field(default=40, validator=[attrs.validators.instance_of(int),
                                                      attrs.validators.or_(attrs.validators.in_((0,)),
                                                                           attrs.validators.and_(
                                                                               attrs.validators.ge(8),
                                                                               attrs.validators.le(255)))])


#: bytes held per byte of a block while it is encoded (the block, LZP's output, the suffix
#: array, the sorted bytes, the coded bytes) and decoded (the coded and sorted bytes, LZP's
#: output, the inverse's int32 table, the block)
ENCODE_BYTES_PER_BYTE = 8
DECODE_BYTES_PER_BYTE = 7


def _suffix_sorter():
    try:
        import pydivsufsort  # loaded only when a block is sorted: its import is not free
    except ImportError:  # pragma: no cover - a dependency; an install without it
        raise ConfigError("the bwt-cm coder needs the package pydivsufsort: pip install pydivsufsort") from None
    return pydivsufsort


def _code(decode: bool, data: np.ndarray, inp: np.ndarray, capacity: int):
    """Run the model over ``data`` (encode: its bytes; decode: filled); returns (bytes coded,
    coder state, output)."""
    out = np.zeros(capacity, dtype=np.uint8) if capacity else NO_OUTPUT
    ac = coder_start(decode, inp)
    done = call_interruptibly(bsm.code_sorted, decode, data, data.size, bsm.sorted_tables(), ac, out, inp,
                              stop=lambda: stop_coder(ac))
    return done, ac, out


def _read_varints(payload: bytes, count: int, pos: int) -> tuple[list[int], int]:
    """``count`` LEB128 values at ``pos`` (a block head: a few values, read in Python)."""
    values = []
    for _ in range(count):
        value, pos = read_varint(payload, pos)
        values.append(value)
    return values, pos


class BlockSortCoder(Coder):
    """LZP, block sorting and a context-mixing coder over the bytes; see the module docstring."""

    codec_id = "chunkpress.bwt-cm.v1"
    codes_bytes = True
    describes_from_payload = True  # bytes, no rules: sizes from the payload
    working_bytes_per_byte = ENCODE_BYTES_PER_BYTE

    def __init__(self, params: BlockSortParams):
        super().__init__(params)
        self.block_bytes = params.block_mb << 20
        self.lzp_min = params.lzp_min

    def _blocks(self, n: int):
        """Even blocks of at most ``block_bytes``: the last is not a small remainder."""
        count = -(-n // self.block_bytes)
        size = -(-n // count) if count else 0
        return [(start, min(n, start + size)) for start in range(0, n, size)] if n else []

    def encode(self, rules, symbols, *, dictionary_size=None) -> bytes:
        data = (np.frombuffer(expand(rules, symbols), dtype=np.uint8) if len(rules)
                else np.ascontiguousarray(symbols, dtype=np.uint8))
        sorter = _suffix_sorter()
        parts = [varint(len(self._blocks(data.size)))]
        lut = np.zeros(1 << bsm.LZP_TABLE_BITS, dtype=np.int32)
        for start, end in self._blocks(data.size):
            block = data[start:end]
            lzp = np.zeros(block.size + 16, dtype=np.uint8)
            shortened = bsm.lzp_encode(block, lzp, lut, self.lzp_min) if self.lzp_min else -1
            source = lzp[:shortened] if shortened > 0 else np.array(block)  # the sorter wants it writable
            sa = sorter.divsufsort(source)
            last = np.zeros(source.size, dtype=np.uint8)
            rows = np.zeros(bsm.walk_count(source.size) - 1, dtype=np.int64)
            primary = bsm.sort_block(source, sa, last, rows)
            del sa
            capacity = source.size + source.size // 8 + 4096
            while True:
                done, ac, out = _code(False, last, NO_INPUT, capacity)
                if done != last.size:  # pragma: no cover - only a stop request ends it early
                    raise FormatError("bwt-cm: the coder stopped before the end of the block")
                coder_flush(ac, out)
                if ac[AC.OUT] <= capacity:
                    break
                capacity = int(ac[AC.OUT]) + 16
            coded = out[: ac[AC.OUT]]
            head = [block.size, int(shortened > 0), last.size, primary, *(int(r) for r in rows), coded.size]
            parts.append(b"".join(varint(v) for v in head))
            parts.append(coded.tobytes())
        return b"".join(parts)

    def decode(self, payload: bytes, *, dictionary_size=None, max_symbols=None):
        count, pos = read_varint(payload, 0)
        if max_symbols is not None and count > len(self._blocks(max_symbols)):
            # the encoder splits evenly into as few blocks as block_mb allows: more are crafted,
            # and each costs a model's set-up whatever its size
            raise FormatError(f"corrupt bwt-cm payload: {count:,} blocks for at most {max_symbols:,} bytes")
        blocks = []
        total = 0
        for _ in range(count):
            if pos >= len(payload):
                raise FormatError("corrupt bwt-cm payload: truncated block list")
            (size, lzp, n_sorted, primary), pos = _read_varints(payload, 4, pos)
            if not 0 < n_sorted <= self.block_bytes:
                raise FormatError(f"corrupt bwt-cm payload: a block of {n_sorted:,} sorted bytes")
            fields, pos = _read_varints(payload, bsm.walk_count(n_sorted), pos)
            rows = np.array(fields[:-1], dtype=np.int64)
            n_coded = fields[-1]
            total += size
            if not 0 < size <= self.block_bytes or lzp > 1 or not 0 < n_sorted <= size or (not lzp and n_sorted != size):
                raise FormatError(f"corrupt bwt-cm payload: a block of {size:,} bytes sorted as {n_sorted:,}")
            if not 0 < primary <= n_sorted or (rows.size and rows.max() > n_sorted) or n_coded > len(payload) - pos:
                raise FormatError("corrupt bwt-cm payload: a block's marker or length is out of range")
            if max_symbols is not None and total > max_symbols:
                raise FormatError(f"corrupt bwt-cm payload: {total:,} bytes, more than the header's length")
            blocks.append((size, lzp, n_sorted, primary, rows, payload[pos : pos + n_coded]))
            pos += n_coded
        if pos != len(payload):
            raise FormatError("corrupt bwt-cm payload: trailing bytes after the last block")
        if [b[0] for b in blocks] != [end - start for start, end in self._blocks(total)]:
            raise FormatError("corrupt bwt-cm payload: the blocks are not the even split the encoder makes")
        check_allocation(f"bwt-cm blocks of {total:,} bytes",
                         total + DECODE_BYTES_PER_BYTE * max((b[0] for b in blocks), default=0))
        result = np.zeros(total, dtype=np.uint8)
        lut = np.zeros(1 << bsm.LZP_TABLE_BITS, dtype=np.int32)
        counts = np.zeros(257, dtype=np.int64)
        at = 0
        for size, lzp, n_sorted, primary, rows, coded in blocks:
            inp = np.frombuffer(coded, dtype=np.uint8)
            last = np.zeros(n_sorted, dtype=np.uint8)
            done, ac, _ = _code(True, last, inp, 0)
            if done != n_sorted or ac[AC.OVERRUN]:
                raise FormatError("corrupt bwt-cm payload: a block's coded bytes end early")
            if ac[AC.IN] != inp.size:
                raise FormatError("corrupt bwt-cm payload: trailing bytes after a block's coded bytes")
            lf = np.zeros(n_sorted + 1, dtype=np.int32)
            target = result[at : at + size]
            if lzp:  # two kernels, called from here: compiled into one they ran three times as long
                shortened = np.zeros(n_sorted, dtype=np.uint8)
                unsorted = bsm.inverse_bwt(last, primary, rows, lf, counts, shortened)
                if unsorted and bsm.lzp_decode(shortened, target, lut, self.lzp_min) != size:
                    raise FormatError("corrupt bwt-cm payload: a block's LZP stream does not fill it")
            else:
                unsorted = bsm.inverse_bwt(last, primary, rows, lf, counts, target)
            if not unsorted:
                raise FormatError("corrupt bwt-cm payload: a block's sorted bytes or marker do not invert")
            at += size
        return np.zeros((0, 2), dtype=np.int64), result

    def describe(self, payload: bytes, rules, symbols) -> dict:
        return {"dictionary_bytes": 0, "string_bytes": len(payload)}
