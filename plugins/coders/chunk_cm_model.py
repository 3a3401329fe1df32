"""The compiled model behind ``chunk-cm``: context mixing whose events are chunk ids.

The byte-level ``cm`` makes 8 binary decisions per byte whatever the dictionary; here each
chunk of the parse is one event, its id coded down a binary tree in a few decisions.

**Ranks.** Ids are ranks: the distinct spellings sorted bytewise, so neighbouring ranks share
their first bytes (``" the"`` sits beside ``" then"`` and ``" there"``). A byte the dictionary
does not cover is a chunk of one byte, ranked among the others.

**Trees** (:data:`Tree`). Model 1 codes a rank's bits top first, down the complete binary
trie. Model 2 codes the ranks the parse uses down an alphabetic tree split where the weight
halves (:func:`weighted_tree`): siblings still share spelling, frequent chunks sit near the
root, and a chunk costs about its order-0 entropy in decisions instead of log2(dictionary
size): on en_mix_10MB 15% less time and 0.5% smaller with the same contexts. The weights are
each rank's count in the parse, in 32 classes (:func:`code_weights`, a few hundred bytes).
Model 4 splits a node where its ranks' spellings part soonest, among the splits that leave a
tenth of its weight or more on each side, so that most decisions are about one next byte (is
it below ``"h"``?), and picks the maps and mixers by how many bytes the node's ranks share
instead of by depth alone: 3.4% more decisions, 0.25% smaller on en_mix_10MB, 0.9% on alice29
(the same contexts; other orders of the ranks were larger: case folded +0.9%, clustered by the
ids around them +0.5-0.9%, bytes grouped by class +0.1-1.4%).

**Exclusion.** The parse is the longest-match parse, so after a chunk ``w`` no chunk can start
with ``u`` where ``w + u`` is in the dictionary (the parse would have taken ``w + u``). The
ranks starting with ``u`` are one range; where a node's half lies wholly in such ranges, or
past the last rank, its bit is known to both sides and not coded (``forced_bit``). Every chunk
still codes at least one bit, so a payload's length bounds its number of chunks.

**Model** (lpaq1's pieces; each named below): per decision,

* *contexts* (:data:`MODEL2_ORDER`): the node (order 0); decoded-text contexts kept beside the
  ids (the bytes before the chunk at orders 1, 2, 3, 4 and 6, the word in progress alone, with
  the previous word, with the two before it and with the second before, the two words before,
  the classes of the last bytes alone and with the word, the column, the innermost open
  bracket); id contexts (the previous id, two, three, the two before the previous, and the
  previous id with the id that followed it last time: an indirect context). Each is hashed
  with the node into the *hash table* of bit histories (``cm_model._slot``: one 16-byte slot
  per context and 4 levels of the tree);
* *state maps*: bit history -> probability, one map per context (model 4's bit histories count
  runs of one bit further: :data:`MODEL4_COUNT_LIMIT`);
* the *match model*: the id that followed the last occurrence of the previous two ids, as long
  as the ids since agree, predicting the branch toward it while the path so far leads to it
  (model 4 also looks up the last four ids while its match is shorter: :func:`long_match`);
* the *run model* (model 3): per context, the rank seen there last and its repeats, for the
  previous id, order 2, the word in progress and the last four ids, each predicting the branch
  toward its rank while the path leads to it (at low orders many ranks share a context and the
  last one is the better guess: en_mix_10MB 0.8% smaller);
* three *mixers* whose weight sets are picked by bit position, how many text contexts were
  seen and the runs' vote, by the path so far (or bit position and the last byte's class), and
  by the previous id (model 4: mixer 2 also has a flag input a context whose history is empty,
  and the weights start at half model 3's; model 5: the node itself near the root picks
  them, :data:`PATH1_NODES`); a *final mixer* combines them;
* an *APM chain*: the final probability refined on the path so far, with the last byte, and
  with the previous id, averaged with its input.

A *light* model (the coder's ``light`` param) keeps the mixer picked by the path and the APM on
the path alone: a decision costs about a quarter less (en_mix_10MB, 8,000 rules, three
contexts, no runs: 2,199,243 B in 2.1 s against 2,177,176 B in 2.9 s with the full mixing).

All arithmetic is integer: an archive decodes identically on any machine.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from ...engine.kernels import long_kernel
from ...engine.prefetch import prefetch_item, prefetch_row
from .cm_model import (_APM_STEPS, _B8, _K1, _K2, _K3, _M8, _Z, STRETCH, _adapt, _adapt_apm, _apm, _ctx,
                       _slot, code_bit, coder_flush, coder_start, mix64, slot_base, slot_hash, slot_mask, squash)

# ---------------------------------------------------------------- layout

#: hashed contexts (model 1 uses the first 12, in this order; model 2 all, in MODEL2_ORDER;
#: model 3 eighteen, in MODEL3_ORDER):
#: order 0; the previous id; text orders 2, 3, 1, 4, 6; the word in progress with the one
#: before (WORD) and the two before (WORD2); two and three ids; the previous id with what
#: followed it last time; the word in progress alone (WORD0); the two ids before the previous
#: (SKIP_IDS); the two words before (WORDS12); the word in progress with the second before
#: (WORD0_2); the classes of the last 6 bytes (CLASSES); the column with the last 2 bytes'
#: classes (LINE); the last 12 bytes' classes with the word in progress (SHAPE); the innermost
#: open bracket with the last 2 bytes (NEST)
(C_ORDER0, C_ID1, C_O2, C_WORD, C_O3, C_ID2, C_O1, C_O4, C_WORD2, C_O6, C_ID3, C_INDIRECT,
 C_WORD0, C_SKIP_IDS, C_WORDS12, C_WORD0_2, C_CLASSES, C_LINE, C_SHAPE, C_NEST, N_CONTEXTS) = range(21)
#: the contexts of each model version, in mixer order: a coder's ``contexts`` param keeps the
#: first few (fewer is faster)
MODEL1_ORDER = tuple(range(12))
MODEL2_ORDER = (C_ORDER0, C_ID1, C_O2, C_WORD0, C_WORD, C_O3, C_CLASSES, C_ID2, C_O1, C_O4, C_LINE, C_WORD2,
                C_O6, C_NEST, C_SHAPE, C_ID3, C_INDIRECT, C_SKIP_IDS, C_WORDS12, C_WORD0_2)
#: model 3 leaves out the two contexts the run model makes least worth their time
MODEL3_ORDER = tuple(c for c in MODEL2_ORDER if c not in (C_SKIP_IDS, C_WORD0_2))
#: model 3's runs: the contexts whose last rank the run model follows, and how many ids before
#: the chunk key one more run
MODEL3_RUN_CONTEXTS = (C_ID1, C_O2, C_WORD0)
MODEL3_RUN_IDS = 4
MAX_RUNS = len(MODEL3_RUN_CONTEXTS) + (MODEL3_RUN_IDS > 0)
#: mixer inputs: the match model's state map and its expected bit, a bias, the contexts, the
#: runs, and (model 4, mixer 2 alone) one flag a context: 256 where its bit history is empty,
#: so that each of mixer 2's weight sets learns what a context's silence says there (en_mix_10MB
#: 0.21% smaller; the flags in all three mixers 0.24%, for about 5% more time)
IN_MATCH, IN_EXPECTED, IN_BIAS, IN_CONTEXTS = range(4)
N_INPUTS = IN_CONTEXTS + N_CONTEXTS + MAX_RUNS
#: mixer 2's inputs at most (the flags after the runs): its rows and the scratch's ``tx``
MIX2_INPUTS = N_INPUTS + N_CONTEXTS
#: model 4's bit histories: longer runs of one bit kept (237 states instead of 159)
MODEL4_COUNT_LIMIT = (50, 40, 20, 10, 6, 5)
#: model 4's second match lookup: the last 4 ids hashed, for when the match in hand is shorter
MODEL4_LONG_MATCH = 4
#: mixer 1's weight sets: bit position (up to 32) x how many text contexts were seen (0..7) x
#: the runs' vote (none in range, all for 0, all for 1, split)
MIX1_SETS = 32 * 8 * 4
#: mixer 2's weight sets: the rank's bits so far below 2048, then bit position x byte class
MIX2_SETS = 2048 + 32 * 16
#: model 5 picks weight sets by the node itself near the root, where most decisions are made
#: and each node asks its own question: mixer 1 by the node of the first 4 levels (else the bit
#: position), mixer 2 by the node of the first 9 levels with the last byte's class, mixer 3 by
#: the previous id with the node of the first 3 levels (en_mix_10MB 0.56% smaller, the same
#: time with the weights asked for ahead)
PATH1_NODES, PATH2_NODES, PATH3_NODES = 16, 512, 8
MIX1_PATH_SETS = (PATH1_NODES + 32) * 8 * 4
MIX2_PATH_SETS = (PATH2_NODES + 32) * 16
#: the mixers' learning rate (error in 1/4096 times this, weights in 1/65536)
MIX_RATE = 24
#: the mixers learn faster at first: MIX_BOOST more, halving every 2^MIX_HALF_LIFE coded bits
#: (alice29 0.3% smaller, en_mix_1MB 0.3%)
MIX_BOOST = 120
MIX_HALF_LIFE = 17
#: the final mixer's learning rate
FINAL_RATE = 8
#: how many previous ids the match model hashes to find where the ids repeat
MATCH_IDS = 2
#: the longest match it verifies backwards (in ids)
MATCH_VERIFY = 16
#: match model state-map contexts: (length 0..15, expected bit) x bit position, and "no match"
MATCH_CONTEXTS = 33 << 5
#: run maps: (run, repeats 0..15, expected bit, bit position 0..7) -> P(1)
RUN_MAPS = MAX_RUNS * 16 * 2 * 8
#: the longest dictionary chunk whose extensions exclude ranks (bounds the table's build)
EXCLUDE_MAX_LEN = 32

#: the decoded-text and id history, a uint64 record
#: (CLASS: 4 bits per byte class, newest lowest; LINE: bytes since the last newline, up to 64;
#: NEST: the open brackets, 3 bits each, innermost lowest)
H_BYTES, H_WORD0, H_WORD1, H_WORD2, H_ID1, H_ID2, H_ID3, H_CLASS, H_LINE, H_NEST, N_HISTORY = range(11)
#: the match model's state, an int64 record: where the expected id is, the match length
M_PTR, M_LEN, N_MATCH = range(3)
#: one run's state for the chunk being coded, a row of an int64 record: the rank last seen in
#: its context (-1: none, or off the path), its repeats, its table entry and key check, the
#: run map read at the last coded bit (-1: none)
R_RANK, R_COUNT, R_SLOT, R_CHECK, R_MAP, N_RUN_FIELDS = range(6)
#: one coded bit's working values, an int64 record (what predict leaves for learn)
(B_S1, B_S2, B_S3, B_D1, B_D2, B_D3, B_PM, B_MCTX, B_IA1, B_IA2, B_IA3, B_JJ, B_NIB, B_COUNT,
 N_BIT) = range(15)

#: the model's tables, fresh for each encode or decode (built by ``chunk_cm.new_tables``)
#: (``order``: the contexts used, in mixer order, one state map of 256 entries each;
#: ``text_order[m]``: 1 where context ``order[m]`` is in :data:`TEXT_ORDERS`; ``run_contexts``
#: and ``run_ids``: the runs' keys, ``run`` their table, ``rm_*`` their maps; ``light``: 1 for
#: mixer 2 and the first APM alone, whose other mixers and APMs are then one-entry stand-ins;
#: ``next_state``: the bit histories' transitions; ``empty_flags``: 1 for model 4's flag inputs;
#: ``long_ids``, ``mm_long``: the second match lookup's ids and table (0 and one entry: none);
#: ``path_sets``: 1 for model 5's weight sets)
Tables = namedtuple("Tables", "order text_order run_contexts run_ids run rm_p rm_n ht next_state sm_p sm_n "
                              "empty_flags mm_p mm_n mm_ht long_ids mm_long light path_sets w1 w2 w3 wf a1 a2 a3 "
                              "follow")
#: the dictionary as ranks: ``spell[start[r]:start[r] + length[r]]`` spells rank r; after rank r
#: the ranks in ``ex_lo[k]:ex_hi[k]`` for k in ``ex_start[r]:ex_start[r + 1]`` are excluded;
#: ``depth[r]``: the levels of ``tree`` above rank r's leaf (at most that many decisions)
Ranks = namedtuple("Ranks", "start length spell ex_start ex_lo ex_hi tree depth")
#: the binary tree a rank is coded down, node 0 the root: node k splits ranks ``lo[k]:hi[k]``
#: at ``mid[k]`` (bit 0: below it); ``child[k, bit]`` is the next node, or ``-1 - rank`` at a
#: leaf; ``group[k]``: how many bits of the node's 16-byte slot are decided above it (0: the
#: node starts a new slot); ``pos[k]``: the bit position the mixers and maps are selected by
Tree = namedtuple("Tree", "lo mid hi child group pos")
#: per-token scratch: every context's hash, the used ones' hashes, slot offsets, bit histories,
#: mixer inputs, the runs
Scratch = namedtuple("Scratch", "every ctx ptr st tx fx bit hist match runs")
#: the arithmetic coder: state, output (encoder), input (decoder), and the loop's control record
Stream = namedtuple("Stream", "ac out inp control")
#: the control record, int64, shared with the calling thread: the chunks done (the loop writes
#: it, a progress thread reads it) and the decisions the decoder may still take: a crafted tree
#: could make every byte cost :data:`MAX_DEPTH` of them, where honest archives take 3 to 9
#: (en_mix_1MB, alice29, udhr_cmn_hans, random bytes at -5, -6 and -9)
C_DONE, C_BUDGET, N_CONTROL = range(3)
#: the decoder's budget: this many decisions a byte of text, and a few to start with
DECISIONS_PER_BYTE = 24
DECISIONS_AT_LEAST = 1 << 16


def new_scratch() -> Scratch:
    return Scratch(every=np.zeros(N_CONTEXTS, np.uint64), ctx=np.zeros(N_CONTEXTS, np.uint64),
                   ptr=np.zeros(N_CONTEXTS, np.int64), st=np.zeros(N_CONTEXTS, np.int64),
                   tx=np.zeros(MIX2_INPUTS, np.int32), fx=np.zeros(4, np.int64), bit=np.zeros(N_BIT, np.int64),
                   hist=np.zeros(N_HISTORY, np.uint64), match=np.zeros(N_MATCH, np.int64),
                   runs=np.zeros((MAX_RUNS, N_RUN_FIELDS), np.int64))


def new_stream(decode: bool, payload: bytes | None = None, capacity: int = 0, text_bytes: int = 0) -> Stream:
    """A coder's stream; the decoder's may take :data:`DECISIONS_PER_BYTE` for each of the
    ``text_bytes`` its header promises (the encoder's is not bounded)."""
    inp = np.frombuffer(payload or b"", dtype=np.uint8)
    control = np.zeros(N_CONTROL, np.int64)
    control[C_BUDGET] = DECISIONS_PER_BYTE * text_bytes + DECISIONS_AT_LEAST if decode else 1 << 62
    return Stream(ac=coder_start(decode, inp), out=np.zeros(capacity, np.uint8), inp=inp, control=control)


@numba.njit(cache=True, inline="always")
def byte_class(c):
    """16 classes of a byte (space, newline, digits, letters, UTF-8, punctuation kinds): what
    mixer 2 knows of the text just before the chunk."""
    if c == 32:
        return 0
    if c == 10:
        return 1
    if 48 <= c <= 57:
        return 2
    if 97 <= c <= 122:
        return 3 + (c >= 110)
    if 65 <= c <= 90:
        return 5
    if c >= 128:
        return 6 + ((c >> 6) & 1)
    if c == 46 or c == 44:
        return 8 + (c == 44)
    if c == 39 or c == 34:
        return 10
    if c == 60 or c == 62 or c == 47:
        return 11
    if c == 91 or c == 93 or c == 124:
        return 12
    if c == 61 or c == 38 or c == 59:
        return 13
    if c < 32:
        return 14
    return 15


#: the text orders: how many of them were seen picks mixer 1's weight set
TEXT_ORDERS = (C_O1, C_O2, C_O3, C_O4, C_O6)


# ---------------------------------------------------------------- exclusion


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
def forced_bit(rk, a, b, lo, mid, hi):
    """The bit both sides know at a trie node: 0 when ranks ``mid:hi`` are past the last rank
    or all excluded, 1 when ``lo:mid`` are all excluded, else -1 (code it)."""
    if mid >= rk.length.size or _covered(rk, a, b, mid, hi):
        return 0
    if _covered(rk, a, b, lo, mid):
        return 1
    return -1


# ---------------------------------------------------------------- mixers


@numba.njit(cache=True, inline="always")
def mix_dot(tx, w, s, n_in):
    """A mixer's output (a logit in 1/256, clamped) with weight set ``s`` over the first ``n_in``
    inputs (match, expected bit, bias, the contexts, the runs; mixer 2 also the flags), in one
    contiguous loop."""
    dot = 0
    for k in range(n_in):
        dot += np.int64(tx[k]) * w[s, k]
    return max(-2047, min(2047, dot >> 16))


@numba.njit(cache=True, inline="always")
def mix_learn(tx, w, s, y, p, n_in, rate):
    """Move weight set ``s`` along the error; a nearly right mixer learns nothing worth the time."""
    e = ((y << 12) - p) * rate
    if e > rate * 32 or e < -rate * 32:
        for k in range(n_in):
            w[s, k] += (np.int64(tx[k]) * e) >> 16


@numba.njit(cache=True, inline="always")
def final_mix(wf, fx, jj):
    d = 0
    for k in range(4):
        d += fx[k] * wf[jj, k]
    return max(-2047, min(2047, d >> 16))


# ---------------------------------------------------------------- one chunk


@numba.njit(cache=True, inline="always")
def set_contexts(sc, order, follow):
    """Hash the contexts of the next chunk from the history record; keep the used ones."""
    h = sc.hist
    b = h[H_BYTES]
    id1 = h[H_ID1]
    w0 = h[H_WORD0]
    every = sc.every
    every[C_ORDER0] = _ctx(12, _Z, _Z)
    every[C_ID1] = _ctx(9, id1, _Z)
    every[C_O2] = _ctx(2, b & np.uint64(0xFFFF), _Z)
    every[C_WORD] = _ctx(7, w0, h[H_WORD1])
    every[C_O3] = _ctx(3, b & np.uint64(0xFFFFFF), _Z)
    every[C_ID2] = _ctx(10, id1, h[H_ID2])
    every[C_O1] = _ctx(1, b & _M8, _Z)
    every[C_O4] = _ctx(4, b & np.uint64(0xFFFFFFFF), _Z)
    every[C_WORD2] = _ctx(8, w0 * _K2 + h[H_WORD1], h[H_WORD2])
    every[C_O6] = _ctx(6, b & np.uint64(0xFFFFFFFFFFFF), _Z)
    every[C_ID3] = _ctx(11, id1 * _K2 + h[H_ID2], h[H_ID3])
    every[C_INDIRECT] = _ctx(13, id1, np.uint64(follow[np.int64(id1)]))
    every[C_WORD0] = _ctx(14, w0, _Z)
    every[C_SKIP_IDS] = _ctx(15, h[H_ID2], h[H_ID3])
    every[C_WORDS12] = _ctx(16, h[H_WORD1], h[H_WORD2])
    every[C_WORD0_2] = _ctx(17, w0 * _K2 + h[H_WORD2], _Z)
    every[C_CLASSES] = _ctx(18, h[H_CLASS] & np.uint64(0xFFFFFF), _Z)
    every[C_LINE] = _ctx(19, h[H_LINE], h[H_CLASS] & _M8)
    every[C_SHAPE] = _ctx(20, h[H_CLASS] & np.uint64(0xFFFFFFFFFFFF), w0)
    every[C_NEST] = _ctx(21, h[H_NEST] & np.uint64(7), b & np.uint64(0xFFFF))
    for m in range(order.size):
        sc.ctx[m] = every[order[m]]


@numba.njit(cache=True, inline="always")
def _apm_context(apm, key, direct):
    """An APM's context: ``direct`` where the table has room for it, else ``key`` hashed."""
    size = apm.shape[0] // _APM_STEPS
    if 0 <= direct < size:
        return direct
    return np.int64(mix64(key) & np.uint64(size - 1))


@numba.njit(cache=True, inline="always")
def prefetch_knots(apm, ctx):
    """Ask for the cache lines of an APM context's knots (they span three)."""
    first = ctx * _APM_STEPS
    prefetch_row(apm, first)
    prefetch_row(apm, first + 16)
    prefetch_row(apm, first + _APM_STEPS - 1)


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
def prefetch_weights(w, s, n_in):
    """Ask for the cache lines of weight set ``s``'s first ``n_in`` weights."""
    for k in range(0, n_in, 16):
        prefetch_item(w, s, k)


@numba.njit(cache=True, inline="always")
def predict(tb, sc, j, g, c0, eb, m_len, c1, cls, id1, mid):
    """P(the rank's next bit is 1) in 1/4096 at a node of bit position ``j`` splitting at rank
    ``mid``, ``c0`` holding the bits above it after a leading 1, ``g`` of them since the last
    slot; ``eb`` is the match model's expected bit (-1: none). Leaves in ``sc.bit`` what
    :func:`learn` needs."""
    bit = sc.bit
    n_ctx = tb.order.size
    # the APMs' contexts and mixers 2 and 3's weight sets are known now, read last: ask for
    # them first (the hashed APMs and the larger weight tables miss the cache)
    ac1 = _apm_context(tb.a1, np.uint64(c0), c0)
    ac2 = _apm_context(tb.a2, np.uint64(c0) * _K1 + np.uint64(c1), -1)
    ac3 = _apm_context(tb.a3, np.uint64(c0) * _K2 + mix64(np.uint64(id1) + _K3), -1)
    jj = min(j, 31)
    s2, s3 = mixer_sets(tb, c0, jj, cls, id1)
    n_in = n_inputs(tb)  # the flags follow, for mixer 2 alone
    n_in2 = mix2_inputs(tb)
    prefetch_knots(tb.a1, ac1)
    prefetch_weights(tb.w2, s2, n_in2)
    if not tb.light:
        prefetch_knots(tb.a2, ac2)
        prefetch_knots(tb.a3, ac3)
        prefetch_weights(tb.w3, s3, n_in)
    nib = (1 << g) | (c0 & ((1 << g) - 1))
    seen = 0
    for m in range(n_ctx):
        s = np.int64(tb.ht[sc.ptr[m] + nib])
        sc.st[m] = s
        sc.tx[IN_CONTEXTS + m] = STRETCH[tb.sm_p[(m << 8) + s] >> 10]
        seen += (s != 0) & tb.text_order[m]
        sc.tx[n_in + m] = 256 * (s == 0)
    vote = run_inputs(tb, sc, mid, jj, IN_CONTEXTS + n_ctx)
    if eb >= 0:
        mctx = ((min(m_len, 15) * 2 + eb) << 5) | jj
        sc.tx[IN_EXPECTED] = (2 * eb - 1) * min(m_len, 16) * 64
        seen = 6 + (m_len >= 4)
    else:
        mctx = (32 << 5) | jj
        sc.tx[IN_EXPECTED] = 0
    sc.tx[IN_MATCH] = STRETCH[tb.mm_p[mctx] >> 10]
    sc.tx[IN_BIAS] = 256
    d2 = mix_dot(sc.tx, tb.w2, s2, n_in2)
    bit[B_S2], bit[B_D2], bit[B_MCTX], bit[B_JJ], bit[B_NIB] = s2, d2, mctx, jj, nib
    if tb.light:  # mixer 2 alone, then the first APM
        pm = squash(d2)
        pa1, ia1 = _apm(tb.a1, ac1, pm)
        bit[B_PM], bit[B_IA1] = pm, ia1
        return max(1, min(4095, (pm + pa1 + 1) >> 1))
    node1 = jj
    if tb.path_sets:
        node1 = c0 if c0 < PATH1_NODES else PATH1_NODES + jj
    s1 = (node1 * 8 + seen) * 4 + vote
    d1 = mix_dot(sc.tx, tb.w1, s1, n_in)
    d3 = mix_dot(sc.tx, tb.w3, s3, n_in)
    sc.fx[0] = d1
    sc.fx[1] = d2
    sc.fx[2] = d3
    sc.fx[3] = 256
    pm = squash(final_mix(tb.wf, sc.fx, jj))
    pa1, ia1 = _apm(tb.a1, ac1, pm)
    pa2, ia2 = _apm(tb.a2, ac2, pm)
    pa3, ia3 = _apm(tb.a3, ac3, pm)
    bit[B_S1], bit[B_S3], bit[B_D1], bit[B_D3], bit[B_PM] = s1, s3, d1, d3, pm
    bit[B_IA1], bit[B_IA2], bit[B_IA3] = ia1, ia2, ia3
    return max(1, min(4095, (pm + pa1 + pa2 + pa3 + 2) >> 2))


@numba.njit(cache=True, inline="always")
def learn(tb, sc, y):
    """Update every piece that predicted the bit just coded."""
    bit = sc.bit
    n_ctx = tb.order.size
    nib = bit[B_NIB]
    for m in range(n_ctx):
        s = sc.st[m]
        tb.ht[sc.ptr[m] + nib] = tb.next_state[s, y]
        _adapt(tb.sm_p, tb.sm_n, (m << 8) + s, y, 1023)
    _adapt(tb.mm_p, tb.mm_n, bit[B_MCTX], y, 1023)
    runs = n_runs(tb)
    for i in range(runs):
        if sc.runs[i, R_MAP] >= 0:
            _adapt(tb.rm_p, tb.rm_n, sc.runs[i, R_MAP], y, 1023)
    n_in = n_inputs(tb)
    bit[B_COUNT] += 1
    rate = MIX_RATE + (MIX_BOOST >> min(bit[B_COUNT] >> MIX_HALF_LIFE, 31))
    mix_learn(sc.tx, tb.w2, bit[B_S2], y, squash(bit[B_D2]), mix2_inputs(tb), rate)
    _adapt_apm(tb.a1, bit[B_IA1], y)
    if tb.light:
        return
    mix_learn(sc.tx, tb.w1, bit[B_S1], y, squash(bit[B_D1]), n_in, rate)
    mix_learn(sc.tx, tb.w3, bit[B_S3], y, squash(bit[B_D3]), n_in, rate)
    ef = ((y << 12) - bit[B_PM]) * FINAL_RATE
    jj = bit[B_JJ]
    for k in range(4):
        tb.wf[jj, k] += (sc.fx[k] * ef) >> 16
    _adapt_apm(tb.a2, bit[B_IA2], y)
    _adapt_apm(tb.a3, bit[B_IA3], y)


@numba.njit(cache=True, inline="always")
def prefetch_slots(tb, sc, c0, hmask):
    """Ask for the cache lines of each context's slot for the node whose path is ``c0``."""
    for m in range(tb.order.size):
        prefetch_row(tb.ht, slot_base(slot_hash(sc.ctx[m], c0), hmask))


@numba.njit(cache=True, inline="always")
def find_slots(tb, sc, c0, hmask):
    """Each context's slot for the next 4 bits of the rank (its line asked for earlier:
    :func:`prefetch_slots`)."""
    for m in range(tb.order.size):
        sc.ptr[m] = _slot(tb.ht, slot_hash(sc.ctx[m], c0), hmask)


# ---------------------------------------------------------------- run model
# Per context, the rank seen there last and how many times in a row (paq8's run map): at low
# orders, where many ranks share a context, the bit histories weigh the past evenly and the
# last rank seen is the better guess. One entry per run and chunk: a 24-bit key check, the rank
# + 1 (32 bits) and the repeats (8 bits). While the tree's path leads to a run's rank, the run
# map (repeats, expected bit, bit position) gives a mixer input, and the runs' agreement picks
# mixer 1's weight set.


_S40 = np.uint64(40)
_RANK_BITS = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True, inline="always")
def n_runs(tb):
    return tb.run_contexts.size + (tb.run_ids > 0)


@numba.njit(cache=True, inline="always")
def n_inputs(tb):
    """The inputs every mixer reads: match, expected bit, bias, the contexts, the runs."""
    return IN_CONTEXTS + tb.order.size + n_runs(tb)


@numba.njit(cache=True, inline="always")
def mix2_inputs(tb):
    """Mixer 2's inputs: those, then (model 4) a flag a context."""
    return n_inputs(tb) + tb.order.size * tb.empty_flags


@numba.njit(cache=True, inline="always")
def run_key(tb, sc, ranks, t, i):
    """Run ``i``'s key for chunk ``t``: a context's hash, or the last ``run_ids`` ids hashed."""
    if i < tb.run_contexts.size:
        return mix64(sc.every[tb.run_contexts[i]] + _K3)
    h = np.uint64(tb.run_ids) * _K2
    for k in range(1, tb.run_ids + 1):
        h = (h + np.uint64(ranks[t - k] + 2 if t >= k else 0)) * _K1
    return mix64(h)


@numba.njit(cache=True, inline="always")
def run_lookup(tb, sc, ranks, t):
    """Each run's rank and repeats for chunk ``t`` (rank -1 where its entry holds another key)."""
    mask = np.uint64(tb.run.size - 1)
    for i in range(n_runs(tb)):
        h = run_key(tb, sc, ranks, t, i)
        sc.runs[i, R_SLOT] = np.int64(h & mask)
        sc.runs[i, R_CHECK] = np.int64(h >> _S40)
        e = tb.run[sc.runs[i, R_SLOT]]
        if np.int64(e >> _S40) == sc.runs[i, R_CHECK]:
            sc.runs[i, R_RANK] = np.int64((e >> _B8) & _RANK_BITS) - 1
            sc.runs[i, R_COUNT] = np.int64(e & _M8)
        else:
            sc.runs[i, R_RANK] = -1
            sc.runs[i, R_COUNT] = 0


@numba.njit(cache=True, inline="always")
def runs_off_path(tb, sc, lo, hi):
    """Forget, for this chunk, the runs whose rank is not under the node ``lo:hi``."""
    for i in range(n_runs(tb)):
        if not (lo <= sc.runs[i, R_RANK] < hi):
            sc.runs[i, R_RANK] = -1


@numba.njit(cache=True, inline="always")
def run_inputs(tb, sc, mid, jj, first):
    """The runs' mixer inputs from ``tx[first]`` on, at a node splitting at ``mid``; returns the
    vote (bit 0: a run expects 0, bit 1: a run expects 1)."""
    vote = 0
    for i in range(n_runs(tb)):
        if sc.runs[i, R_RANK] >= 0:
            eb = np.int64(sc.runs[i, R_RANK] >= mid)
            vote |= 1 << eb
            sc.runs[i, R_MAP] = ((((i << 4) | min(sc.runs[i, R_COUNT], 15)) << 1 | eb) << 3) | min(jj, 7)
            sc.tx[first + i] = STRETCH[tb.rm_p[sc.runs[i, R_MAP]] >> 10]
        else:
            sc.runs[i, R_MAP] = -1
            sc.tx[first + i] = 0
    return vote


@numba.njit(cache=True, inline="never")
def run_update(tb, sc, rank):
    """The chunk is known: each run's entry now holds it, one repeat more if it was expected.
    Not inlined: inlined into ``code_chunks``, its store made LLVM compile the whole loop worse
    (the same bytes, but -6's coder 5.9 s instead of 4.0 s and -9's 16.8 s instead of 12.3-13.9
    s on en_mix_10MB); a call a chunk costs nothing measurable."""
    for i in range(n_runs(tb)):
        slot, check = sc.runs[i, R_SLOT], sc.runs[i, R_CHECK]
        e = tb.run[slot]
        same = np.int64(e >> _S40) == check and np.int64((e >> _B8) & _RANK_BITS) == rank + 1
        count = min(np.int64(e & _M8) + 1, 255) if same else 1
        tb.run[slot] = (np.uint64(check) << _S40) | (np.uint64(rank + 1) << _B8) | np.uint64(count)


@numba.njit(cache=True, inline="always")
def code_rank(decode, rank, t, expected, rk, tb, sc, io):
    """Code (or decode and return) the rank of chunk ``t`` down the tree, skipping the bits the
    exclusion decides (but coding at least one); ``expected`` is the match model's rank or -1.
    Returns the rank, or -5 when the encoder's rank is excluded. Inlined into the chunk loop: as
    a call a chunk (its dozens of arrays passed each time) the coder took 1.3x-2.2x as long,
    for the same bytes (en_mix_10MB: -6 4.99 s -> 2.27 s, -9 15.3 s -> 11.8 s)."""
    h = sc.hist
    tree = rk.tree
    c1 = np.int64(h[H_BYTES] & _M8)
    cls = byte_class(c1)
    id1 = np.int64(h[H_ID1])
    ex_a = rk.ex_start[id1 - 1] if t > 0 else 0
    ex_b = rk.ex_start[id1] if t > 0 else 0
    m_len = sc.match[M_LEN]
    hmask = slot_mask(tb.ht)
    coded = False
    c0 = 1
    node = 0
    while True:
        g = tree.group[node]
        if g == 0:
            find_slots(tb, sc, c0, hmask)
        elif g == 3:  # the next node starts a slot: ask for both children's
            for side in range(2):
                if tree.child[node, side] >= 0:
                    prefetch_slots(tb, sc, (c0 << 1) | side, hmask)
        lo, mid, hi = tree.lo[node], tree.mid[node], tree.hi[node]
        forced = forced_bit(rk, ex_a, ex_b, lo, mid, hi)
        if forced >= 0 and (coded or tree.child[node, forced] >= 0):
            if not decode and forced != np.int64(rank >= mid):
                return -5
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


@numba.njit(cache=True, inline="always")
def match_find(mm_ht, ranks, t, ids_hash):
    """Where the ids before chunk ``t`` occurred last, verified backwards: (the chunk after
    them, the match length in ids), or (-1, 0); records ``t`` for the next lookup."""
    h = np.int64(ids_hash & np.uint64(mm_ht.size - 1))
    cand = np.int64(mm_ht[h])
    mm_ht[h] = t
    if cand <= 0:
        return -1, 0
    k = 0
    while k < MATCH_VERIFY and cand - 1 - k >= 0 and ranks[cand - 1 - k] == ranks[t - 1 - k]:
        k += 1
    if k < MATCH_IDS:
        return -1, 0
    return cand, k


@numba.njit(cache=True, inline="always")
def long_match(tb, ranks, t, mt):
    """Model 4's second lookup, keyed by the last ``long_ids`` ids: taken when the match in
    hand is shorter (two ids often repeat in a new place; four seldom do), else kept up to
    date. en_mix_10MB 0.13% smaller."""
    n = tb.long_ids
    h = np.uint64(n)
    for k in range(n):
        h = (h + np.uint64(ranks[t - k] + 1)) * _K1
    h = mix64(h)
    if mt[M_LEN] < n:
        cand, k = match_find(tb.mm_long, ranks, t + 1, h)
        if cand >= 0 and k >= n:
            mt[M_PTR] = cand
            mt[M_LEN] = k
    else:
        tb.mm_long[np.int64(h & np.uint64(tb.mm_long.size - 1))] = t + 1


@numba.njit(cache=True, inline="always")
def add_byte(h, c):
    """Move the text history past byte ``c``: the bytes, their classes, the column, the open
    brackets (``([{<`` push, ``)]}>`` pop) and the words (letters and UTF-8, case folded)."""
    h[H_BYTES] = (h[H_BYTES] << _B8) | np.uint64(c)
    h[H_CLASS] = (h[H_CLASS] << np.uint64(4)) | np.uint64(byte_class(c))
    opening = 1 if c == 40 else 2 if c == 91 else 3 if c == 123 else 4 if c == 60 else 0
    if opening:
        h[H_NEST] = (h[H_NEST] << np.uint64(3)) | np.uint64(opening)
    elif c == 41 or c == 93 or c == 125 or c == 62:
        h[H_NEST] = h[H_NEST] >> np.uint64(3)
    if c == 10:
        h[H_LINE] = _Z
    elif h[H_LINE] < np.uint64(64):
        h[H_LINE] += np.uint64(1)
    cl = c + 32 if 65 <= c <= 90 else c
    if 97 <= cl <= 122 or c >= 128:
        h[H_WORD0] = (h[H_WORD0] + np.uint64(cl + 1)) * _K1
    elif h[H_WORD0] != _Z:
        h[H_WORD2] = h[H_WORD1]
        h[H_WORD1] = h[H_WORD0]
        h[H_WORD0] = _Z


@numba.njit(cache=True, inline="always")
def after_chunk(t, rank, rk, tb, sc, text, pos, decode):
    """The chunk is known: spell it into the text history (and, decoding, the text), move the
    id history. Returns the text position after it."""
    h = sc.hist
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


@numba.njit(cache=True, inline="always")
def follow_match(ranks, t, rank, tb, sc):
    """The match model after chunk ``t``: follow the match, or look one up."""
    h = sc.hist
    mt = sc.match
    if mt[M_LEN] > 0:
        if ranks[mt[M_PTR]] == rank:
            mt[M_PTR] += 1
            mt[M_LEN] = min(mt[M_LEN] + 1, 65535)
        else:
            mt[M_LEN] = 0
    if tb.long_ids and t + 1 >= tb.long_ids:
        long_match(tb, ranks, t, mt)
    if t + 1 >= MATCH_IDS:
        ids_hash = mix64(h[H_ID1] * _K1 + h[H_ID2] * _K2 + np.uint64(MATCH_IDS))
        if mt[M_LEN] == 0:
            cand, k = match_find(tb.mm_ht, ranks, t + 1, ids_hash)
            if cand >= 0:
                mt[M_PTR] = cand
                mt[M_LEN] = k
        else:
            tb.mm_ht[np.int64(ids_hash & np.uint64(tb.mm_ht.size - 1))] = t + 1


@long_kernel
def code_chunks(decode, ranks, text, rk, tb, sc, io):
    """Code (encoder) or decode the ranks of ``ranks.size`` chunks; the decoder also fills
    ``text``. ``io.control[C_DONE]`` counts the chunks done (read by a progress thread). Returns
    the number of text bytes, or -1 (a decoded rank past the dictionary), -2 (the chunks spell
    more than the header's length), -4 (the decoder read past the payload's end, or the caller
    stopped the loop: ``cm_model.stop_coder``), -5 (the encoder's parse is not the
    longest-match parse), -6 (the chunks' decisions exceed ``io.control[C_BUDGET]``)."""
    pos = 0
    budget = io.control[C_BUDGET]
    hmask = slot_mask(tb.ht)
    set_contexts(sc, tb.order, tb.follow)
    prefetch_slots(tb, sc, 1, hmask)
    run_lookup(tb, sc, ranks, 0)
    for t in range(ranks.size):
        if io.ac[5]:
            return -4
        expected = np.int64(ranks[sc.match[M_PTR]]) if sc.match[M_LEN] > 0 else -1
        rank = code_rank(decode, np.int64(ranks[t]) if not decode else 0, t, expected, rk, tb, sc, io)
        if rank < 0:
            return rank
        if rank >= rk.length.size:
            return -1
        if pos + rk.length[rank] > text.size:
            return -2
        budget -= rk.depth[rank]
        if budget < 0:
            return -6
        ranks[t] = rank
        run_update(tb, sc, rank)
        pos = after_chunk(t, rank, rk, tb, sc, text, pos, decode)
        # the next chunk's contexts: their first slots are asked for before the match model's
        # and the runs' lookups, so that all their misses overlap
        set_contexts(sc, tb.order, tb.follow)
        prefetch_slots(tb, sc, 1, hmask)
        run_lookup(tb, sc, ranks, t + 1)
        follow_match(ranks, t, rank, tb, sc)
        if (t & 4095) == 0:
            io.control[C_DONE] = t
    io.control[C_DONE] = ranks.size
    return pos


def finish(io: Stream) -> bytes:
    coder_flush(io.ac, io.out)
    return io.out[: io.ac[4]].tobytes()


# ---------------------------------------------------------------- the ranks


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
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
    after their parents."""
    depth = np.zeros(n_ranks, np.int64)
    node_depth = np.zeros(tree.lo.size, np.int64)
    for k in range(tree.lo.size):
        for side in range(2):
            child = tree.child[k, side]
            if child < 0:
                depth[-1 - child] = node_depth[k] + 1
            else:
                node_depth[child] = node_depth[k] + 1
    return depth


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
    prev = 0
    for r in range(q.size):
        c = 1
        for j in range(4, -1, -1):
            i = prev * WEIGHT_CLASSES + c
            y = np.int64(code_bit(decode, io.ac, io.out, io.inp, (q[r] >> j) & 1, max(1, min(4095, p[i] >> 4))))
            p[i] += ((y << 16) - p[i]) >> WEIGHT_RATE
            c = (c << 1) | y
        q[r] = c - WEIGHT_CLASSES
        prev = q[r]
        if io.ac[5]:
            return -4
    return 0
