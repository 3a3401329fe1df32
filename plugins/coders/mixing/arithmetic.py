"""The binary arithmetic coder (lpaq's, 32-bit, carry-less): one function codes a bit in the
encoder and decodes it in the decoder, so both run the same loop. Its state is an int64
record, named by :class:`AC`.

    ac = coder_start(decode, payload)        # payload: the decoder's input (encoder: empty)
    bit = code_bit(decode, ac, out, payload, bit, p)   # p: P(1) in 1/4096, 1..4095
    bit = code_bit_scaled(decode, ac, out, payload, bit, p, 16)   # p: P(1) in 1/65536
    coder_flush(ac, out)                     # the encoder's last bytes: out[:ac[AC.OUT]]
    stop_coder(ac)                           # from another thread: the coding loop returns
"""

from __future__ import annotations

import enum

import numba
import numpy as np


class AC(enum.IntEnum):
    """The coder's state record: the interval (``X1``, ``X2``), the decoder's window ``X``,
    the input and output positions, and ``OVERRUN``: set when the decoder reads past its input
    (a valid stream never does) or when a caller stops the loop."""

    X1 = 0
    X2 = 1
    X = 2
    IN = 3
    OUT = 4
    OVERRUN = 5


#: the record's length
N_AC = len(AC)


#: what a decoder writes: nothing
NO_OUTPUT = np.zeros(0, dtype=np.uint8)
#: what an encoder reads: nothing, typed as a decoder's read-only input so that both share one
#: compilation of a model's loop
NO_INPUT = np.frombuffer(b"", dtype=np.uint8)


def stop_coder(ac) -> None:
    """Stop a coding loop running on another thread: it checks the overrun flag at every byte
    or chunk (and returns as if its input had run out)."""
    ac[AC.OVERRUN] = 1


def coder_start(decode, inp) -> np.ndarray:
    """A fresh coder's record; a decoder's window holds its input's first 4 bytes (zeros past
    its end, the overrun flag then set, as :func:`next_byte` does). Plain Python: it runs once
    a stream, and a compiled kernel costs a load from numba's cache in every process."""
    ac = np.zeros(N_AC, dtype=np.int64)
    ac[AC.X2] = 0xFFFFFFFF
    if decode:
        head = bytes(inp[:4])
        ac[AC.X] = int.from_bytes(head.ljust(4, b"\0"), "big")
        ac[AC.IN] = 4
        ac[AC.OVERRUN] = int(len(head) < 4)
    return ac


@numba.njit(cache=True, inline="always")
def next_byte(ac, inp):
    pos = ac[AC.IN]
    ac[AC.IN] = pos + 1
    if pos < inp.size:
        return np.int64(inp[pos])
    ac[AC.OVERRUN] = 1  # a valid stream never reads past its end
    return 0


@numba.njit(cache=True, inline="always")
def code_bit(decode, ac, out, inp, bit, p):
    """Code ``bit`` (or decode and return it) with P(1) = p / 4096, p in 1..4095."""
    return code_bit_scaled(decode, ac, out, inp, bit, p, 12)


@numba.njit(cache=True, forceinline=True)
def code_bit_scaled(decode, ac, out, inp, bit, p, bits):
    """Code ``bit`` (or decode and return it) with P(1) = p / 2^bits, p in 1..2^bits - 1. Models
    of very predictable data (a block-sorted text) use 16 bits: at 12, a bit costs at least
    log2(4096/4095) bits."""
    x1 = ac[AC.X1]
    x2 = ac[AC.X2]
    r = x2 - x1
    xmid = x1 + (r >> bits) * p + (((r & ((1 << bits) - 1)) * p) >> bits)
    if decode:
        bit = 1 if ac[AC.X] <= xmid else 0
    if bit:
        x2 = xmid
    else:
        x1 = xmid + 1
    while ((x1 ^ x2) & 0xFF000000) == 0:
        if not decode:
            o = ac[AC.OUT]
            if o < out.size:
                out[o] = np.uint8(x2 >> 24)
            ac[AC.OUT] = o + 1
        else:
            ac[AC.X] = ((ac[AC.X] << 8) & 0xFFFFFFFF) | next_byte(ac, inp)
        x1 = (x1 << 8) & 0xFFFFFFFF
        x2 = ((x2 << 8) & 0xFFFFFFFF) | 255
    ac[AC.X1] = x1
    ac[AC.X2] = x2
    return bit


def coder_flush(ac, out) -> None:
    """Write x1's 4 bytes: the decoder then reads exactly what was written (bytes past
    ``out``'s end are counted, not written, as the coder counts them)."""
    x1 = int(ac[AC.X1])
    for k in range(4):
        o = int(ac[AC.OUT])
        if o < out.size:
            out[o] = (x1 >> (24 - 8 * k)) & 0xFF
        ac[AC.OUT] = o + 1
