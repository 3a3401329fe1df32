"""The ranks, the exclusions between them, and the trees they are coded down.

A rank is a distinct spelling of the dictionary, sorted bytewise. After a chunk ``w`` of the
longest-match parse, no chunk can start with ``u`` where ``w + u`` is a chunk: those ranks form
ranges that both sides know are excluded (:func:`forced_bit`). Each rank is coded down a binary
tree of the ranks the parse uses, shaped by their weight classes (coded first, by
:func:`code_weights`), frequent ranks near the root.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from chunkpress.plugin import inlined_kernel

from ..mixing.arithmetic import AC, code_bit

#: the dictionary as ranks: ``spell[start[r]:start[r] + length[r]]`` spells rank r; after rank r
#: the ranks in ``ex_lo[k]:ex_hi[k]`` for k in ``ex_start[r]:ex_start[r + 1]`` are excluded;
#: ``depth[r]``: the levels of ``tree`` above rank r's leaf (at most that many decisions)
Ranks = namedtuple("Ranks", "start length spell ex_start ex_lo ex_hi tree depth")
#: the binary tree a rank is coded down, node 0 the root: node k splits ranks ``lo[k]:hi[k]``
#: at ``mid[k]`` (bit 0: below it); ``child[k, bit]`` is the next node, or ``-1 - rank`` at a
#: leaf; ``group[k]``: how many bits of the node's 16-byte slot are decided above it (0: the
#: node starts a new slot); ``pos[k]``: the bit position the mixers and maps are selected by
Tree = namedtuple("Tree", "lo mid hi child group pos")

#: the longest dictionary chunk whose extensions exclude ranks (bounds the table's build)
EXCLUDE_MAX_LEN = 32




@numba.njit(cache=True, forceinline=True)
def _covered(rk, a, b, lo, hi):
    """Whether the sorted, disjoint excluded ranges ``a:b`` cover ranks ``lo:hi``."""
    for k in range(a, b):
        if rk.ex_hi[k] <= lo:
            continue
        if rk.ex_lo[k] > lo:
            return False
        lo = rk.ex_hi[k]
        if lo >= hi:
            return True
    return lo >= hi


@inlined_kernel
def forced_bit(rk, a, b, lo, mid, hi):
    """The bit both sides know at a trie node: 0 when ranks ``mid:hi`` are past the last rank
    or all excluded, 1 when ``lo:mid`` are all excluded, else -1 (code it)."""
    if mid >= rk.length.size or _covered(rk, a, b, mid, hi):
        return 0
    if _covered(rk, a, b, lo, mid):
        return 1
    return -1




@numba.njit(cache=True, forceinline=True)
def _cmp_truncated(spell, start, length, r, u, u_len):
    """Rank r's spelling cut to ``u_len`` bytes against ``spell[u:u + u_len]``: -1, 0 or 1."""
    a = start[r]
    n = min(length[r], u_len)
    for k in range(n):
        x = spell[a + k]
        y = spell[u + k]
        if x != y:
            return -1 if x < y else 1
    return -1 if length[r] < u_len else 0


@numba.njit(cache=True)
def _prefix_range(spell, start, length, u, u_len):
    """The ranks whose spelling starts with ``spell[u:u + u_len]`` (one range: ranks are sorted)."""
    m = length.size
    lo, hi = 0, m
    while lo < hi:  # first rank not below u
        mid = (lo + hi) >> 1
        if _cmp_truncated(spell, start, length, mid, u, u_len) < 0:
            lo = mid + 1
        else:
            hi = mid
    first = lo
    hi = m
    while lo < hi:  # first rank above every spelling that starts with u
        mid = (lo + hi) >> 1
        if _cmp_truncated(spell, start, length, mid, u, u_len) <= 0:
            lo = mid + 1
        else:
            hi = mid
    return first, lo


@numba.njit(cache=True)
def exclusion_pairs(spell, start, length, prefix_rank, rows, lo, hi):
    """For every rank w (up to :data:`EXCLUDE_MAX_LEN` bytes) and every split w = v + u where
    v is a rank (``prefix_rank[start[w] + k]`` is v's rank, or -1), the range of ranks starting
    with u, as a row (v) and a range. Returns how many were written."""
    n = 0
    for w in range(length.size):
        if length[w] > EXCLUDE_MAX_LEN:
            continue
        for k in range(1, length[w]):
            v = prefix_rank[start[w] + k]
            if v < 0:
                continue
            a, b = _prefix_range(spell, start, length, start[w] + k, length[w] - k)
            if a < b:
                rows[n] = v
                lo[n] = a
                hi[n] = b
                n += 1
    return n


@numba.njit(cache=True)
def merge_rows(rows, lo, hi, n_ranks, ex_start, ex_lo, ex_hi):
    """Ranges sorted by (row, lo) -> each row's disjoint ranges in CSR form. Returns their count."""
    n = 0
    k = 0
    for r in range(n_ranks):
        ex_start[r] = n
        first = n
        while k < rows.size and rows[k] == r:
            if n > first and lo[k] <= ex_hi[n - 1]:
                ex_hi[n - 1] = max(ex_hi[n - 1], hi[k])
            else:
                ex_lo[n] = lo[k]
                ex_hi[n] = hi[k]
                n += 1
            k += 1
    ex_start[n_ranks] = n
    return n



# ---------------------------------------------------------------- coding trees


@numba.njit(cache=True)
def complete_tree(n_ranks, bits, tree):
    """Model 1's tree: the complete binary trie of ``bits``-bit ranks, the rank's bits top
    first, slots of 4 bits aligned so that the last holds the lowest 4; subtrees starting at or
    past ``n_ranks`` are leaves (ranks no encoder writes). Returns the number of nodes."""
    depth = np.zeros(tree.lo.size, np.int64)
    tree.lo[0] = 0
    tree.hi[0] = 1 << bits
    count = 1
    k = 0
    while k < count:
        lo, hi = tree.lo[k], tree.hi[k]
        mid = (lo + hi) >> 1
        j = bits - 1 - depth[k]
        tree.mid[k] = mid
        tree.group[k] = min(bits - 1, j | 3) - j
        tree.pos[k] = j
        for side in range(2):
            a, b = (lo, mid) if side == 0 else (mid, hi)
            if b - a == 1 or a >= n_ranks:
                tree.child[k, side] = -1 - a
            else:
                tree.lo[count], tree.hi[count] = a, b
                depth[count] = depth[k] + 1
                tree.child[k, side] = count
                count += 1
        k += 1
    return count


@numba.njit(cache=True, forceinline=True)
def _half_split(cum, a, b):
    """The split of ``a:b`` (first index on the right, in ``a + 1 .. b - 1``) nearest its
    weight's half."""
    half = cum[a] + (cum[b] - cum[a] + 1) // 2
    lo_s, hi_s = a + 1, b - 1
    while lo_s < hi_s:
        c = (lo_s + hi_s) >> 1
        if cum[c] < half:
            lo_s = c + 1
        else:
            hi_s = c
    split = lo_s
    if split > a + 1 and half - cum[split - 1] < cum[split] - half:
        split -= 1
    return split


@numba.njit(cache=True, forceinline=True)
def _prefix_split(cum, lcp, a, b):
    """The split of ``a:b`` between the two neighbours that share the shortest prefix, among
    the splits leaving :data:`PREFIX_SPLIT_SHARE` of the weight or more on each side (the
    nearest the half among equals; the half split where none does), and the prefix every rank
    of ``a:b`` shares."""
    total = cum[b] - cum[a]
    shared = lcp[a + 1] if b - a > 1 else 0
    best, best_lcp, best_off = _half_split(cum, a, b), 1 << 30, 1 << 62
    for c in range(a + 1, b):
        shared = min(shared, lcp[c])
        left = (cum[c] - cum[a]) * 10
        if left < PREFIX_SPLIT_SHARE * total or left > (10 - PREFIX_SPLIT_SHARE) * total:
            continue
        off = abs(2 * (cum[c] - cum[a]) - total)
        if lcp[c] < best_lcp or (lcp[c] == best_lcp and off < best_off):
            best, best_lcp, best_off = c, lcp[c], off
    return best, shared


@numba.njit(cache=True)
def weighted_tree(used, cum, tree, lcp, prefix):
    """An alphabetic tree over the ranks in ``used`` (sorted), each node split where its weight
    halves (``cum``: the weights' running sums, ``cum[0] = 0``), so a frequent rank is near the
    root and costs few coded bits while ranks keep their order (siblings still share spelling).
    With ``prefix`` (model 4) a node splits where its ranks' spellings part soonest
    (``lcp[i]``: the prefix ``used[i - 1]`` and ``used[i]`` share), so that a decision is about
    one next byte, and its bit position says how much of the chunk is known
    (:func:`_prefix_split`). Slots hold 4 levels from the root. Returns the number of nodes and
    the deepest leaf's depth."""
    m = used.size
    first = np.zeros(tree.lo.size, np.int64)
    last = np.zeros(tree.lo.size, np.int64)
    depth = np.zeros(tree.lo.size, np.int64)
    first[0], last[0] = 0, m
    count = 1
    deepest = 0
    k = 0
    while k < count:
        a, b = first[k], last[k]
        if prefix:
            split, shared = _prefix_split(cum, lcp, a, b)
            tree.pos[k] = min(shared, 7) * 4 + min(depth[k], 3)
        else:
            split = _half_split(cum, a, b)
            tree.pos[k] = min(depth[k], 31)
        tree.lo[k], tree.mid[k], tree.hi[k] = used[a], used[split], used[b - 1] + 1
        tree.group[k] = depth[k] & 3
        for side in range(2):
            x, y = (a, split) if side == 0 else (split, b)
            if y - x == 1:
                tree.child[k, side] = -1 - used[x]
                deepest = max(deepest, depth[k] + 1)
            else:
                first[count], last[count] = x, y
                depth[count] = depth[k] + 1
                tree.child[k, side] = count
                count += 1
        k += 1
    return count, deepest


@numba.njit(cache=True)
def adjacent_prefixes(rk, used):
    """``lcp[i]``: how many first bytes the spellings of ranks ``used[i - 1]`` and ``used[i]``
    share (``lcp[0]`` unused)."""
    lcp = np.zeros(used.size + 1, np.int64)
    for i in range(1, used.size):
        a, b = rk.start[used[i - 1]], rk.start[used[i]]
        n = min(rk.length[used[i - 1]], rk.length[used[i]])
        k = 0
        while k < n and rk.spell[a + k] == rk.spell[b + k]:
            k += 1
        lcp[i] = k
    return lcp


@numba.njit(cache=True)
def leaf_depths(tree, n_ranks):
    """How many levels lie above each rank's leaf (0 for a rank not in the tree): nodes come
    after their parents. Model 1's complete trie has leaves past the last rank, which no
    decoder returns: they are left out."""
    depth = np.zeros(n_ranks, np.int64)
    node_depth = np.zeros(tree.lo.size, np.int64)
    for k in range(tree.lo.size):
        for side in range(2):
            child = tree.child[k, side]
            if child < 0:
                if -1 - child < n_ranks:
                    depth[-1 - child] = node_depth[k] + 1
            else:
                node_depth[child] = node_depth[k] + 1
    return depth


def byte_ranks() -> Ranks:
    """The ranks of a dictionary of the 256 bytes alone, each field of the type a dictionary's
    ranks have (the spelling read-only, as it is built from bytes): what a coding loop
    compiled ahead is typed for."""
    one = np.ones(256, dtype=np.int64)
    return Ranks(start=np.arange(256, dtype=np.int64), length=one, spell=np.frombuffer(bytes(range(256)), dtype=np.uint8),
                 ex_start=np.zeros(257, dtype=np.int64), ex_lo=np.zeros(0, dtype=np.int64),
                 ex_hi=np.zeros(0, dtype=np.int64), tree=new_tree(255), depth=one)


def new_tree(nodes: int) -> Tree:
    return Tree(lo=np.zeros(nodes, np.int64), mid=np.zeros(nodes, np.int64), hi=np.zeros(nodes, np.int64),
                child=np.zeros((nodes, 2), np.int64), group=np.zeros(nodes, np.int64), pos=np.zeros(nodes, np.int64))


#: the deepest leaf a tree may have: a rank's path, after a leading 1, fits a 64-bit integer
MAX_DEPTH = 56
#: a rank's weight class: 0 for a rank the parse never uses, else about 1.5 log2 of its count
WEIGHT_CLASSES = 32
#: how fast the weight classes' probabilities adapt (1/2^this of the error)
WEIGHT_RATE = 3
#: model 4's splits leave this many tenths of a node's weight or more on each side
PREFIX_SPLIT_SHARE = 1
#: the weight each class stands for (2^((q - 1) / 1.5), integers so both sides build one tree)
CLASS_WEIGHT = np.array([0] + [round(2 ** (i / 1.5)) for i in range(WEIGHT_CLASSES - 1)], dtype=np.int64)


@numba.njit(cache=True)
def code_weights(decode, q, io):
    """Code (or decode into ``q``) each rank's weight class, 5 bits top first in the context of
    the previous rank's class. Returns 0, or -4 when the decoder reads past the payload."""
    p = np.full(WEIGHT_CLASSES * WEIGHT_CLASSES, 1 << 15, np.int64)  # P(1) in 1/65536
    prev = np.int64(0)
    for r in range(q.size):
        c = np.int64(1)
        for j in range(4, -1, -1):
            i = prev * WEIGHT_CLASSES + c
            y = np.int64(code_bit(decode, io.ac, io.out, io.inp, (q[r] >> j) & 1, max(1, min(4095, p[i] >> 4))))
            p[i] += ((y << 16) - p[i]) >> WEIGHT_RATE
            c = (c << 1) | y
        q[r] = c - WEIGHT_CLASSES
        prev = q[r]
        if io.ac[AC.OVERRUN]:
            return -4  # model.Status.INPUT_ENDED: the payload ended
    return 0
