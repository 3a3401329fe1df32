"""Bit histories and the adaptive probabilities they map to: each context remembers, in one
byte, what it saw (a state of a (zeros, ones) count machine, lpaq's nex table), and a state map
turns a state into a probability that adapts to what followed it.

    next_state, state_p = bit_history_states()   # [S, 2] transitions, [S] starting P(1)
    p = state_map_p[s] >> 10                     # P(1) in 1/4096 of state s
    adapt(state_map_p, state_map_n, s, bit, 1023)     # after the bit is known
    s = next_state[s, bit]
"""

from __future__ import annotations

import numba
import numpy as np

#: Largest count of one bit allowed for each count (0..5) of the other: long runs are kept,
#: mixed histories are kept short so they adapt.
COUNT_LIMIT = (40, 24, 12, 7, 5, 5)


def bit_history_states(count_limit: tuple[int, ...] = COUNT_LIMIT) -> tuple[np.ndarray, np.ndarray]:
    """(next state [S, 2], initial P(1) in 1/2^22 [S]) of a (zeros, ones) count machine.

    A bit increments its own count and discounts the other (above 2 it is halved, plus one),
    so a state remembers recent history more than old; counts beyond ``count_limit`` (the
    largest count of one bit for each count of the other) are clamped. States are numbered by
    total count, so a state's number is also its priority when a hash slot is replaced. State 0
    is "nothing seen".
    """

    def allowed(n0, n1):
        lo, hi = min(n0, n1), max(n0, n1)
        return lo < len(count_limit) and hi <= count_limit[lo]

    def step(n0, n1, y):
        if y:
            n1, n0 = n1 + 1, (n0 if n0 <= 2 else n0 // 2 + 1)
        else:
            n0, n1 = n0 + 1, (n1 if n1 <= 2 else n1 // 2 + 1)
        while not allowed(n0, n1):
            if n0 > n1:
                n0 -= 1
            else:
                n1 -= 1
        return n0, n1

    seen, frontier = {(0, 0)}, [(0, 0)]
    while frontier:
        nxt = []
        for s in frontier:
            for y in (0, 1):
                t = step(*s, y)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    order = sorted(seen, key=lambda s: (s[0] + s[1], s[0]))
    number = {s: i for i, s in enumerate(order)}
    assert len(order) <= 256
    nex = np.zeros((len(order), 2), dtype=np.uint8)
    init = np.zeros(len(order), dtype=np.int64)
    for s, i in number.items():
        nex[i, 0] = number[step(*s, 0)]
        nex[i, 1] = number[step(*s, 1)]
        init[i] = ((2 * s[1] + 1) << 22) // (2 * (s[0] + s[1]) + 2)
    return nex, init


NEXT_STATE, STATE_P = bit_history_states()

#: rate table: 65536 / (n + 1.5), the step of an adaptive probability seen n times
RATE = np.array([(65536 * 2) // (2 * n + 3) for n in range(1024)], dtype=np.int32)


@numba.njit(cache=True, inline="always")
def toward(p, c, y):
    """P(1) ``p`` (in 1/2^22) moved toward bit ``y`` by 1/(c + 1.5), ``c`` the bits it has
    counted: the step every adaptive probability here takes (state maps, APM knots, counters)."""
    return p + ((((y << 22) - p) * RATE[c]) >> 16)


@numba.njit(cache=True, inline="always")
def adapt(p, n, i, y, limit):
    """Move p[i] (P(1) in 1/2^22) toward y by 1/(n + 1.5): fast at first, then stationary."""
    c = n[i]
    p[i] = toward(p[i], c, y)
    if c < limit:
        n[i] = c + 1


# A counted probability in one uint32 (P(1) in 1/2^22 above a 10-bit count): the state maps of
# a model whose maps are read at every bit keep p and n in one word, one load and one store.
#
#     t = counted_table(p22)                  # each entry at P(1) = p22 / 2^22, counted 0 times
#     p = t[i] >> 20                          # P(1) in 1/4096
#     adapt_counted(t, i, bit, 1023)          # after the bit is known


def counted_table(p22) -> np.ndarray:
    """Counted probabilities starting at ``p22`` (an int or an array of P(1) in 1/2^22), count 0."""
    return (np.asarray(p22, dtype=np.uint32) << np.uint32(10)).astype(np.uint32)


@numba.njit(cache=True, inline="always")
def adapt_counted(t, i, y, limit):
    """:func:`adapt` on a counted table: the same arithmetic, the same probabilities."""
    e = np.int64(t[i])
    c = e & 1023
    t[i] = np.uint32((toward(e >> 10, c, y) << 10) | min(c + 1, limit))
