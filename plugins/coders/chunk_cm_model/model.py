"""chunk-cm's model and its coding loop: per decision down a rank's tree, the contexts' bit
histories, the runs and the match model mixed by three mixers and a final one, refined by
APMs (the light model: one mixer, one APM), and coded; then every piece learns the bit."""

from __future__ import annotations

import enum

import numba
import numpy as np
from chunkpress.plugin import inlined_kernel, long_kernel, prefetch_row

from ..mixing.apm import apm_context, apm_predict, apm_update, prefetch_knots
from ..mixing.arithmetic import AC, code_bit, coder_flush
from ..mixing.direct import direct_input, direct_line, direct_update
from ..mixing.hashing import B8, K1, K2, K3, M8, ZERO, context_hash, mix64
from ..mixing.logistic import STRETCH, squash
from ..mixing.mixer import mix_dot, mix_learn, prefetch_weights
from ..mixing.slots import find_slot, slot_base, slot_hash, slot_mask
from ..mixing.states import adapt_counted
from .layout import (
    B_COUNT,
    B_D1,
    B_D2,
    B_D3,
    B_IA1,
    B_IA2,
    B_IA3,
    B_JJ,
    B_MCTX,
    B_NIB,
    B_PM,
    B_S1,
    B_S2,
    B_S3,
    C_BUDGET,
    C_CLASSES,
    C_DONE,
    C_FOLLOW3,
    C_FOLLOW5,
    C_FOLLOW_WORD,
    C_ID1,
    C_ID2,
    C_ID3,
    C_ID_SCOPED,
    C_INDIRECT,
    C_LINE,
    C_NEST,
    C_O1,
    C_O2,
    C_O3,
    C_O4,
    C_O6,
    C_OPENER,
    C_ORDER0,
    C_SHAPE,
    C_SKIP_IDS,
    C_WORD,
    C_WORD0,
    C_WORD0_2,
    C_WORD2,
    C_WORD_SCOPED,
    C_WORDS12,
    FINAL_RATE,
    H_BYTES,
    H_CLASS,
    H_DEPTH,
    H_ID1,
    H_ID2,
    H_ID3,
    H_LINE,
    H_LINE_START,
    H_NEST,
    H_OPENER,
    H_OPENER_STATE,
    H_OPENERS,
    H_STRUCTURE,
    H_WORD0,
    H_WORD1,
    H_WORD2,
    IN_BIAS,
    IN_CONTEXTS,
    IN_EXPECTED,
    IN_MATCH,
    M_LEN,
    MIX_BOOST,
    MIX_HALF_LIFE,
    MIX_RATE,
    MIX_SKIP,
    OPENER_DEPTH,
    PATH1_NODES,
    PATH2_NODES,
    PATH3_NODES,
    R_MAP,
    STRUCTURE_SETS,
    Stream,
    byte_class,
)
from .ranks import forced_bit
from .recall import (
    expected_context,
    follow_match,
    match_expected,
    match_lookup,
    mix2_inputs,
    n_inputs,
    n_runs,
    run_inputs,
    run_lookup,
    run_read,
    run_update,
    runs_off_path,
    text_follow_record,
    text_followed,
)


class Status(enum.IntEnum):
    """What the coding loop returns instead of the text's length when it stops early."""

    #: a decoded rank past the dictionary
    RANK_PAST_DICTIONARY = -1
    #: the chunks spell more than the header's length
    TEXT_OVERFLOW = -2
    #: the decoder read past the payload's end, or the caller stopped the loop (``stop_coder``)
    INPUT_ENDED = -4
    #: the encoder's parse is not the longest-match parse (a chunk the exclusions rule out)
    NOT_LONGEST_MATCH = -5
    #: the chunks' decisions exceed the decoder's budget (``C_BUDGET``)
    OVER_BUDGET = -6


@inlined_kernel
def set_contexts(sc, tb):
    """Hash the contexts of the next chunk from the history record; keep the used ones."""
    order, follow, tf = tb.order, tb.follow, tb.text_follow
    h = sc.hist
    b = h[H_BYTES]
    id1 = h[H_ID1]
    w0 = h[H_WORD0]
    bracket = h[H_NEST] & np.uint64(7)  # the innermost open bracket's kind (0: none)
    every = sc.every
    every[C_ORDER0] = context_hash(12, ZERO, ZERO)
    every[C_ID1] = context_hash(9, id1, ZERO)
    every[C_O2] = context_hash(2, b & np.uint64(0xFFFF), ZERO)
    every[C_WORD] = context_hash(7, w0, h[H_WORD1])
    every[C_O3] = context_hash(3, b & np.uint64(0xFFFFFF), ZERO)
    every[C_ID2] = context_hash(10, id1, h[H_ID2])
    every[C_O1] = context_hash(1, b & M8, ZERO)
    every[C_O4] = context_hash(4, b & np.uint64(0xFFFFFFFF), ZERO)
    every[C_WORD2] = context_hash(8, w0 * K2 + h[H_WORD1], h[H_WORD2])
    every[C_O6] = context_hash(6, b & np.uint64(0xFFFFFFFFFFFF), ZERO)
    every[C_ID3] = context_hash(11, id1 * K2 + h[H_ID2], h[H_ID3])
    every[C_INDIRECT] = context_hash(13, id1, np.uint64(follow[np.int64(id1)]))
    every[C_WORD0] = context_hash(14, w0, ZERO)
    every[C_SKIP_IDS] = context_hash(15, h[H_ID2], h[H_ID3])
    every[C_WORDS12] = context_hash(16, h[H_WORD1], h[H_WORD2])
    every[C_WORD0_2] = context_hash(17, w0 * K2 + h[H_WORD2], ZERO)
    every[C_CLASSES] = context_hash(18, h[H_CLASS] & np.uint64(0xFFFFFF), ZERO)
    every[C_LINE] = context_hash(19, h[H_LINE], h[H_CLASS] & M8)
    every[C_SHAPE] = context_hash(20, h[H_CLASS] & np.uint64(0xFFFFFFFFFFFF), w0)
    every[C_NEST] = context_hash(21, bracket, b & np.uint64(0xFFFF))
    # tag 26: 25 is the expected chunk's (recall.expected_context)
    markup = line_markup(line_start(h))
    opened = bracket + h[H_OPENER] * K3 + markup * K1
    every[C_OPENER] = context_hash(26, opened, h[H_CLASS] & np.uint64(0xF))
    # the scoped contexts: the previous id, and the previous word with the last byte, in the scope
    every[C_ID_SCOPED] = context_hash(27, id1, opened)
    every[C_WORD_SCOPED] = context_hash(28, h[H_WORD1] + (b & M8) * K3, opened)
    if tf.size > 1:  # the text-indirect contexts: the chunk the last bytes or the word predict, alone
        every[C_FOLLOW5] = context_hash(22, ZERO, text_followed(tf, b, w0, 0))
        every[C_FOLLOW3] = context_hash(23, ZERO, text_followed(tf, b, w0, 1))
        every[C_FOLLOW_WORD] = context_hash(24, ZERO, text_followed(tf, b, w0, 2))
    if tb.structure:  # mixer 1's set: the innermost bracket's kind (0 none, 1-4 ([{<), the line's markup
        h[H_STRUCTURE] = bracket + np.uint64(5) * (markup != ZERO)
    for m in range(order.size):
        sc.ctx[m] = every[order[m]]


@numba.njit(cache=True, forceinline=True)
def mixer_sets(tb, c0, jj, cls, id1):
    """Mixers 2 and 3's weight sets at a node whose path is ``c0`` (a leading 1, then the bits
    above it): known before its contexts are read, so their weights can be asked for first."""
    if tb.path_sets:
        s2 = c0 * 16 + cls if c0 < PATH2_NODES else PATH2_NODES * 16 + jj * 16 + cls
        s3 = id1 * PATH3_NODES + (c0 if c0 < PATH3_NODES else 0)
    else:
        s2 = c0 if c0 < 2048 else 2048 + jj * 16 + cls
        s3 = id1
    return s2, s3 & (tb.w3.shape[0] - 1)


@inlined_kernel
def predict(tb, sc, j, g, c0, eb, m_len, c1, cls, id1, mid):
    """P(the rank's next bit is 1) in 1/4096 at a node of bit position ``j`` splitting at rank
    ``mid``, ``c0`` holding the bits above it after a leading 1, ``g`` of them since the last
    slot; ``eb`` is the match model's expected bit (-1: none). Leaves in ``sc.bit`` what
    :func:`learn` needs."""
    bit = sc.bit
    n_ctx = tb.order.size
    # the APMs' contexts and mixers 2 and 3's weight sets are known now, read last: ask for
    # them first (the hashed APMs and the larger weight tables miss the cache)
    ac1 = apm_context(tb.a1, np.uint64(c0), c0)
    ac2 = apm_context(tb.a2, np.uint64(c0) * K1 + np.uint64(c1), -1)
    ac3 = apm_context(tb.a3, np.uint64(c0) * K2 + mix64(np.uint64(id1) + K3), -1) if tb.apm3 else 0
    jj = min(j, 31)
    s2, s3 = mixer_sets(tb, c0, jj, cls, id1)
    n_in = n_inputs(tb)  # the flags follow, for mixer 2 alone
    n_in2 = mix2_inputs(tb)
    prefetch_knots(tb.a1, ac1)
    prefetch_weights(tb.w2, s2, n_in2)
    if not tb.light:
        prefetch_knots(tb.a2, ac2)
        if tb.apm3:
            prefetch_knots(tb.a3, ac3)
        prefetch_weights(tb.w3, s3, n_in)
    nib = (1 << g) | (c0 & ((1 << g) - 1))
    seen = 0
    for m in range(n_ctx):
        s = np.int64(tb.ht[sc.ptr[m] + nib])
        sc.st[m] = s
        sc.tx[IN_CONTEXTS + m] = STRETCH[tb.sm[(m << 8) + s] >> 20]
        seen += (s != 0) & tb.text_order[m]
        sc.tx[n_in + m] = 256 * (s == 0)
    vote = run_inputs(tb, sc, mid, jj, IN_CONTEXTS + n_ctx)
    first = n_in - tb.direct.size
    for k in range(tb.direct.size):
        sc.tx[first + k] = direct_input(tb.dc, sc.lines[k] + nib)
    if eb >= 0:
        mctx = ((min(m_len, 15) * 2 + eb) << 5) | jj
        sc.tx[IN_EXPECTED] = (2 * eb - 1) * min(m_len, 16) * 64
        seen = 6 + (m_len >= 4)
    else:
        mctx = (32 << 5) | jj
        sc.tx[IN_EXPECTED] = 0
    sc.tx[IN_MATCH] = STRETCH[tb.mm[mctx] >> 20]
    sc.tx[IN_BIAS] = 256
    d2 = mix_dot(sc.tx, tb.w2, s2, n_in2)
    bit[B_S2], bit[B_D2], bit[B_MCTX], bit[B_JJ], bit[B_NIB] = s2, d2, mctx, jj, nib
    if tb.light:  # mixer 2 alone, then the first APM
        pm = squash(d2)
        pa1, ia1 = apm_predict(tb.a1, ac1, pm)
        bit[B_PM], bit[B_IA1] = pm, ia1
        return max(1, min(4095, (pm + pa1 + 1) >> 1))
    node1 = jj
    if tb.path_sets:
        node1 = c0 if c0 < PATH1_NODES else PATH1_NODES + jj
    s1 = (node1 * 8 + seen) * 4 + vote
    if tb.structure:
        s1 = s1 * STRUCTURE_SETS + np.int64(sc.hist[H_STRUCTURE])
    d1 = mix_dot(sc.tx, tb.w1, s1, n_in)
    d3 = mix_dot(sc.tx, tb.w3, s3, n_in)
    sc.fx[0] = d1
    sc.fx[1] = d2
    sc.fx[2] = d3
    sc.fx[3] = 256
    pm = squash(mix_dot(sc.fx, tb.wf, jj, 4))  # the final mixer: the three mixers' outputs and a bias
    pa1, ia1 = apm_predict(tb.a1, ac1, pm)
    pa2, ia2 = apm_predict(tb.a2, ac2, pm)
    pa3, ia3 = apm_predict(tb.a3, ac3, pm) if tb.apm3 else (pm, 0)  # without it, pm counts twice
    bit[B_S1], bit[B_S3], bit[B_D1], bit[B_D3], bit[B_PM] = s1, s3, d1, d3, pm
    bit[B_IA1], bit[B_IA2], bit[B_IA3] = ia1, ia2, ia3
    return max(1, min(4095, (pm + pa1 + pa2 + pa3 + 2) >> 2))


@inlined_kernel
def learn(tb, sc, y):
    """Update every piece that predicted the bit just coded."""
    bit = sc.bit
    n_ctx = tb.order.size
    nib = bit[B_NIB]
    for m in range(n_ctx):
        s = sc.st[m]
        tb.ht[sc.ptr[m] + nib] = tb.next_state[s, y]
        adapt_counted(tb.sm, (m << 8) + s, y, 1023)
    adapt_counted(tb.mm, bit[B_MCTX], y, 1023)
    for k in range(tb.direct.size):
        direct_update(tb.dc, sc.lines[k] + nib, y)
    runs = n_runs(tb)
    for i in range(runs):
        if sc.runs[i, R_MAP] >= 0:
            adapt_counted(tb.rm, sc.runs[i, R_MAP], y, 1023)
    n_in = n_inputs(tb)
    bit[B_COUNT] += 1
    rate = MIX_RATE + (MIX_BOOST >> min(bit[B_COUNT] >> MIX_HALF_LIFE, 31))
    mix_learn(sc.tx, tb.w2, bit[B_S2], y, squash(bit[B_D2]), mix2_inputs(tb), rate, MIX_SKIP)
    apm_update(tb.a1, bit[B_IA1], y)
    if tb.light:
        return
    mix_learn(sc.tx, tb.w1, bit[B_S1], y, squash(bit[B_D1]), n_in, rate, MIX_SKIP)
    mix_learn(sc.tx, tb.w3, bit[B_S3], y, squash(bit[B_D3]), n_in, rate, MIX_SKIP)
    ef = ((y << 12) - bit[B_PM]) * FINAL_RATE
    jj = bit[B_JJ]
    for k in range(4):
        tb.wf[jj, k] += (sc.fx[k] * ef) >> 16
    apm_update(tb.a2, bit[B_IA2], y)
    if tb.apm3:
        apm_update(tb.a3, bit[B_IA3], y)


@numba.njit(cache=True, inline="always")
def prefetch_slots(tb, sc, c0, hmask):
    """Ask for the cache lines of each context's slot (and direct probabilities) for the node
    whose path is ``c0``."""
    for m in range(tb.order.size):
        prefetch_row(tb.ht, slot_base(slot_hash(sc.ctx[m], c0), hmask))
    for k in range(tb.direct.size):
        prefetch_row(tb.dc, direct_line(tb.dc, slot_hash(sc.ctx[tb.direct[k]], c0)))


@numba.njit(cache=True, inline="always")
def find_slots(tb, sc, c0, hmask):
    """Each context's slot for the next 4 bits of the rank (its line asked for earlier:
    :func:`prefetch_slots`), and the lines of its direct probabilities."""
    for m in range(tb.order.size):
        sc.ptr[m] = find_slot(tb.ht, slot_hash(sc.ctx[m], c0), hmask)
    for k in range(tb.direct.size):
        sc.lines[k] = direct_line(tb.dc, slot_hash(sc.ctx[tb.direct[k]], c0))


@inlined_kernel
def code_rank(decode, rank, t, ranks, rk, tb, sc, io):
    """Code (or decode and return) the rank of chunk ``t`` down the tree, skipping the bits the
    exclusion decides (but coding at least one); the match model's expected rank is known at
    the first node (:func:`match_lookup`). Returns the rank, or -5 when the encoder's rank is
    excluded. Inlined into the chunk loop: as a call a chunk, its dozens of arrays passed each
    time, the coder took far longer for the same bytes."""
    h = sc.hist
    tree = rk.tree
    c1 = np.int64(h[H_BYTES] & M8)
    cls = byte_class(c1)
    id1 = np.int64(h[H_ID1])
    ex_a = rk.ex_start[id1 - 1] if t > 0 else 0
    ex_b = rk.ex_start[id1] if t > 0 else 0
    hmask = slot_mask(tb.ht)
    expected = -1
    m_len = 0
    coded = False
    c0 = np.int64(1)
    node = 0
    while True:
        g = tree.group[node]
        if g == 0:
            if node == 0:  # the runs' and the match model's entries, asked for after the last chunk
                run_read(tb, sc)
                match_lookup(tb, ranks, sc)
                m_len = sc.match[M_LEN]
                expected = match_expected(ranks, sc.match)
                if tb.expected >= 0:
                    sc.ctx[tb.expected] = expected_context(expected, m_len)
            find_slots(tb, sc, c0, hmask)
        elif g == 3:  # the next node starts a slot: ask for both children's
            for side in range(2):
                if tree.child[node, side] >= 0:
                    prefetch_slots(tb, sc, (c0 << 1) | side, hmask)
        lo, mid, hi = tree.lo[node], tree.mid[node], tree.hi[node]
        forced = forced_bit(rk, ex_a, ex_b, lo, mid, hi)
        if forced >= 0 and (coded or tree.child[node, forced] >= 0):
            if not decode and forced != np.int64(rank >= mid):
                return Status.NOT_LONGEST_MATCH
            y = np.int64(forced)
        else:
            if expected >= 0 and not (lo <= expected < hi):
                expected = -1
            eb = np.int64(expected >= mid) if expected >= 0 else -1
            runs_off_path(tb, sc, lo, hi)
            p = predict(tb, sc, tree.pos[node], g, c0, eb, m_len, c1, cls, id1, mid)
            y = np.int64(code_bit(decode, io.ac, io.out, io.inp, np.int64(rank >= mid), p))
            learn(tb, sc, y)
            coded = True
        c0 = (c0 << 1) | y
        node = tree.child[node, y]
        if node < 0:
            return -1 - node


@numba.njit(cache=True, forceinline=True)
def line_start(h):
    """The line's first two bytes (the first lowest), read from the last 8 bytes while they
    hold them and kept for the rest of the line; where the line has not begun, the last line's
    (a list's item or a table's row is often followed by another). Read a chunk at a time: kept
    a byte at a time, the spelling loop compiled slower."""
    col = h[H_LINE]
    if np.uint64(1) <= col <= np.uint64(8):
        b = h[H_BYTES]
        start = (b >> (B8 * (col - np.uint64(1)))) & M8
        if col >= np.uint64(2):
            start |= ((b >> (B8 * (col - np.uint64(2)))) & M8) << B8
        h[H_LINE_START] = start
    return h[H_LINE_START]


@numba.njit(cache=True, inline="always")
def line_markup(start):
    """The line's first two bytes ``start`` (the first lowest) plus one where the first is
    markup, 0 where the line starts with a letter, a digit or UTF-8 (prose)."""
    if 2 <= byte_class(start & M8) <= 7:  # a digit, a letter, UTF-8
        return ZERO
    return start + np.uint64(1)


@numba.njit(cache=True, forceinline=True)
def add_opener(h, c, opening, closing):
    """Move the openers past byte ``c``: an opening bracket keeps the word of the one around it
    and starts its own (letters, UTF-8, ``!`` and ``/``, case folded: ``{{cite``, ``[[File``,
    ``</ref``), a closing one takes the outer word back."""
    if opening:
        d = np.int64(h[H_DEPTH])
        if d < OPENER_DEPTH:
            h[H_OPENERS + d] = h[H_OPENER]
        h[H_DEPTH] = np.uint64(d + 1)
        h[H_OPENER] = ZERO
        h[H_OPENER_STATE] = np.uint64(1)
    elif closing:
        d = np.int64(h[H_DEPTH])
        if d > 0:
            d -= 1
            h[H_DEPTH] = np.uint64(d)
            h[H_OPENER] = h[H_OPENERS + d] if d < OPENER_DEPTH else ZERO
        h[H_OPENER_STATE] = ZERO
    elif h[H_OPENER_STATE] != ZERO:
        cl = c + 32 if 65 <= c <= 90 else c
        if 97 <= cl <= 122 or c >= 128 or c == 33 or c == 47:
            h[H_OPENER] = (h[H_OPENER] + np.uint64(cl + 1)) * K2
            h[H_OPENER_STATE] = np.uint64(2)
        elif h[H_OPENER_STATE] == np.uint64(2):
            h[H_OPENER_STATE] = ZERO


@numba.njit(cache=True, forceinline=True)
def add_byte(h, c):
    """Move the text history past byte ``c``: the bytes, their classes, the open brackets
    (``([{<`` push, ``)]}>`` pop) and their openers, the line's first two bytes, the column, and
    the words (letters and UTF-8, case folded)."""
    h[H_BYTES] = (h[H_BYTES] << B8) | np.uint64(c)
    h[H_CLASS] = (h[H_CLASS] << np.uint64(4)) | np.uint64(byte_class(c))
    opening = 1 if c == 40 else 2 if c == 91 else 3 if c == 123 else 4 if c == 60 else 0
    closing = c == 41 or c == 93 or c == 125 or c == 62
    if opening:
        h[H_NEST] = (h[H_NEST] << np.uint64(3)) | np.uint64(opening)
    elif closing:
        h[H_NEST] = h[H_NEST] >> np.uint64(3)
    add_opener(h, c, opening, closing)
    if c == 10:
        h[H_LINE] = ZERO
    elif h[H_LINE] < np.uint64(64):
        h[H_LINE] += np.uint64(1)
    cl = c + 32 if 65 <= c <= 90 else c
    if 97 <= cl <= 122 or c >= 128:
        h[H_WORD0] = (h[H_WORD0] + np.uint64(cl + 1)) * K1
    elif h[H_WORD0] != ZERO:
        h[H_WORD2] = h[H_WORD1]
        h[H_WORD1] = h[H_WORD0]
        h[H_WORD0] = ZERO


@inlined_kernel
def after_chunk(t, rank, rk, tb, sc, text, pos, decode):
    """The chunk is known: spell it into the text history (and, decoding, the text), move the
    id history. Returns the text position after it."""
    h = sc.hist
    if tb.text_follow.size > 1:
        text_follow_record(tb.text_follow, h[H_BYTES], h[H_WORD0], rank, tb.history_keep)
    start = rk.start[rank]
    for k in range(rk.length[rank]):
        c = np.int64(rk.spell[start + k])
        if decode:
            text[pos + k] = c
        add_byte(h, c)
    if t > 0:
        tb.follow[np.int64(h[H_ID1])] = rank + 1
    h[H_ID3] = h[H_ID2]
    h[H_ID2] = h[H_ID1]
    h[H_ID1] = np.uint64(rank + 1)
    return pos + rk.length[rank]


@long_kernel
def code_chunks(decode, ranks, text, rk, tb, sc, io):
    """Code (encoder) or decode the ranks of ``ranks.size`` chunks; the decoder also fills
    ``text``. ``io.control[C_DONE]`` counts the chunks done (read by a progress thread). Returns
    the number of text bytes, or -1 (a decoded rank past the dictionary), -2 (the chunks spell
    more than the header's length), -4 (the decoder read past the payload's end, or the caller
    stopped the loop: ``cm_model.stop_coder``), -5 (the encoder's parse is not the
    longest-match parse), -6 (the chunks' decisions exceed ``io.control[C_BUDGET]``)."""
    pos = np.int64(0)  # not a literal 0: after_chunk compiles for one type of position, not two
    budget = io.control[C_BUDGET]
    hmask = slot_mask(tb.ht)
    set_contexts(sc, tb)
    prefetch_slots(tb, sc, 1, hmask)
    run_lookup(tb, sc, ranks, 0)
    for t in range(ranks.size):
        if io.ac[AC.OVERRUN]:
            return Status.INPUT_ENDED
        rank = code_rank(decode, np.int64(ranks[t]) if not decode else 0, t, ranks, rk, tb, sc, io)
        if rank < 0:
            return rank
        if rank >= rk.length.size:
            return Status.RANK_PAST_DICTIONARY
        if pos + rk.length[rank] > text.size:
            return Status.TEXT_OVERFLOW
        budget -= rk.depth[rank]
        if budget < 0:
            return Status.OVER_BUDGET
        ranks[t] = rank
        run_update(tb, sc, rank)
        pos = after_chunk(t, rank, rk, tb, sc, text, pos, decode)
        # the match model's entries and the next chunk's contexts: their first slots are asked
        # for, then the runs' entries, so that all their misses overlap (read at its first node)
        follow_match(ranks, t, rank, tb, sc)
        set_contexts(sc, tb)
        prefetch_slots(tb, sc, 1, hmask)
        run_lookup(tb, sc, ranks, t + 1)
        if (t & 4095) == 0:
            io.control[C_DONE] = t
    io.control[C_DONE] = ranks.size
    return pos


def finish(io: Stream) -> bytes:
    coder_flush(io.ac, io.out)
    return io.out[: io.ac[AC.OUT]].tobytes()
