"""chunk-cm's layout: its contexts, the versions' orders of them, the mixers' inputs and weight
sets, and the records the compiled model passes around (named tuples of arrays, fields named by
the constants below)."""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from ..mixing.arithmetic import coder_start

#: hashed contexts (model 1 uses the first 12, in this order; model 2 all, in MODEL2_ORDER;
#: model 3 eighteen, in MODEL3_ORDER):
#: order 0; the previous id; text orders 2, 3, 1, 4, 6; the word in progress with the one
#: before (WORD) and the two before (WORD2); two and three ids; the previous id with what
#: followed it last time; the word in progress alone (WORD0); the two ids before the previous
#: (SKIP_IDS); the two words before (WORDS12); the word in progress with the second before
#: (WORD0_2); the classes of the last 6 bytes (CLASSES); the column with the last 2 bytes'
#: classes (LINE); the last 12 bytes' classes with the word in progress (SHAPE); the innermost
#: open bracket with the last 2 bytes (NEST); model 5's text-indirect contexts (its ``indirect``
#: param): the chunk that followed the last 5 bytes, the last 3, and the word in progress, the
#: last time they were seen (FOLLOW5, FOLLOW3, FOLLOW_WORD); model 5's ``expect`` param: the
#: chunk the match model expects with the match's length (EXPECTED); model 5's ``opener``
#: param: what opened the innermost open bracket and the line (OPENER); model 5's ``scoped``
#: param: the previous id, and the previous word with the last byte, each with what opened the
#: innermost bracket and the line (ID_SCOPED, WORD_SCOPED)
(C_ORDER0, C_ID1, C_O2, C_WORD, C_O3, C_ID2, C_O1, C_O4, C_WORD2, C_O6, C_ID3, C_INDIRECT,
 C_WORD0, C_SKIP_IDS, C_WORDS12, C_WORD0_2, C_CLASSES, C_LINE, C_SHAPE, C_NEST, C_FOLLOW5, C_FOLLOW3,
 C_FOLLOW_WORD, C_EXPECTED, C_OPENER, C_ID_SCOPED, C_WORD_SCOPED, N_CONTEXTS) = range(28)
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
#: model 5's text-indirect contexts, after its others where ``indirect`` is on, and how many
#: bytes before the chunk each one's key spells (0: the word in progress). The contexts say
#: which chunk the text predicts and the bit histories what follows that prediction at each
#: node
INDIRECT_CONTEXTS = (C_FOLLOW5, C_FOLLOW3, C_FOLLOW_WORD)
INDIRECT_BYTES = (5, 3, 0)
#: model 5's ``indirect_history`` param: the first text-indirect context (the last 5 bytes'
#: key, the longest) names the last few chunks that followed its key, newest lowest, each in
#: HISTORY_BITS bits of its table entry, up to INDIRECT_HISTORY_MOST of them; its bit
#: histories then learn what follows a key whose followers repeat, alternate or change (on
#: the longest key only: the shorter keys' followers change too often). A rank past 2^20 spills
#: into the older followers' bits: only a hash reads them, on both sides alike
HISTORY_BITS = 20
INDIRECT_HISTORY_MOST = 3
#: model 5's ``expect`` param: the chunk the match model expects, with the match's length (up to
#: 15 ids), as a context in order 2's place (order 2 keeps its run); its bit histories learn
#: how each expected chunk fares at each node, where the match model's one input knows only the
#: length. Known at a chunk's first node, after the match model's lookups; after the contexts,
#: before the indirect ones
EXPECTED_REPLACES = C_O2
EXPECTED_LENGTHS = 15
#: model 5's ``opener`` param: what opened the innermost open bracket and the line, as a
#: context in order 3's place (order 3 is worth least once the expected chunk's context is in):
#: the bracket's first word (an XML tag's name, a wiki template's or link's, a parenthesis's
#: first word) and kind, the line's first two bytes where they are markup (a list's ``*``, a
#: table's ``|``, a heading's ``==``, an indent; not a letter, digit or UTF-8), and the last
#: byte's class. What a bracket or a line holds depends on what opened it, which no context of
#: the last bytes or words sees once that is behind them. Each open bracket's word is kept down
#: to OPENER_DEPTH brackets; deeper ones close to no word.
OPENER_REPLACES = C_O3
OPENER_DEPTH = 8
#: model 5's ``scoped`` param: the previous id, and the previous word with the last byte, each
#: with what opened the innermost bracket and the line (the opener's key), in the places of
#: orders 1 and 6 (the two text orders worth least). The same id or word is followed by other
#: chunks in a template's field, a tag, a table's row or a list than in prose, and the opener's
#: context knows the structure but not the id or word before
SCOPED_REPLACES = (C_O1, C_O6)
SCOPED_CONTEXTS = (C_ID_SCOPED, C_WORD_SCOPED)
#: model 5's ``structure`` param: mixer 1's weight sets also by the innermost open bracket's
#: kind (none, ``(``, ``[``, ``{``, ``<``) and whether the line starts with markup, so that it
#: can trust other contexts inside a template, a tag or a table than in prose
STRUCTURE_SETS = 10
#: the most contexts a model uses: model 2's twenty, model 5's eighteen and three indirect
MAX_USED_CONTEXTS = max(len(MODEL2_ORDER), len(MODEL3_ORDER) + len(INDIRECT_CONTEXTS))
#: mixer inputs: the match model's state map and its expected bit, a bias, the contexts, the
#: runs, and (model 4, mixer 2 alone) one flag a context: 256 where its bit history is empty,
#: so that each of mixer 2's weight sets learns what a context's silence says there (in all
#: three mixers they buy little more for their time)
IN_MATCH, IN_EXPECTED, IN_BIAS, IN_CONTEXTS = range(4)
#: the direct probabilities (``mixing.direct``) of model 5 with ``direct`` on, an input each after
#: the runs: the contexts met most often, where a counter of its own node beats a state map shared
#: by all (order 0, the previous id, the word in progress, two ids; those a coder's ``contexts`` keeps)
DIRECT_CONTEXTS = (C_ORDER0, C_ID1, C_WORD0, C_ID2)
MAX_DIRECT = len(DIRECT_CONTEXTS)
#: the mixers' inputs at most, a weight set's row rounded up to 16 of them (whole cache lines)
N_INPUTS = -(-(IN_CONTEXTS + MAX_USED_CONTEXTS + MAX_RUNS + MAX_DIRECT) // 16) * 16
#: mixer 2's inputs at most (the flags after the direct inputs): its rows and the scratch's ``tx``
MIX2_INPUTS = N_INPUTS + MAX_USED_CONTEXTS
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
#: the previous id with the node of the first 3 levels (their weights asked for ahead, so the
#: larger tables cost no time)
PATH1_NODES, PATH2_NODES, PATH3_NODES = 16, 512, 8
MIX1_PATH_SETS = (PATH1_NODES + 32) * 8 * 4
MIX2_PATH_SETS = (PATH2_NODES + 32) * 16
#: the mixers' learning rate (error in 1/4096 times this, weights in 1/65536)
MIX_RATE = 24
#: the mixers learn faster at first: MIX_BOOST more, halving every 2^MIX_HALF_LIFE coded bits
#: (small inputs gain most)
MIX_BOOST = 120
MIX_HALF_LIFE = 17
#: errors (in 1/4096) at or below this leave a mixer's weights as they are
MIX_SKIP = 32
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
#: the decoded-text and id history, a uint64 record
#: (CLASS: 4 bits per byte class, newest lowest; LINE: bytes since the last newline, up to 64;
#: NEST: the open brackets, 3 bits each, innermost lowest; OPENER: the hashed first word inside
#: the innermost open bracket, OPENER_STATE: 1 while that word has not begun, 2 while it goes
#: on, 0 after it; LINE_START: the line's first two bytes, the first lowest, as
#: ``model.line_start`` last read them; DEPTH: how many brackets are open; STRUCTURE: mixer
#: 1's structure set (``STRUCTURE_SETS``) for the next chunk, where asked; then OPENER_DEPTH
#: entries, each open bracket's outer OPENER, outermost first)
(H_BYTES, H_WORD0, H_WORD1, H_WORD2, H_ID1, H_ID2, H_ID3, H_CLASS, H_LINE, H_NEST, H_OPENER, H_OPENER_STATE,
 H_LINE_START, H_DEPTH, H_STRUCTURE, H_OPENERS) = range(16)
N_HISTORY = H_OPENERS + OPENER_DEPTH
#: the match model's state, an int64 record: where the expected id is, the match length; and
#: its lookups asked for after a chunk, done at the next chunk's first node: the chunk to record
#: (0: none pending), the two-id and the long keys' table entries
M_PTR, M_LEN, M_AT, M_SHORT, M_LONG, N_MATCH = range(6)
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
#: ``path_sets``: 1 for model 5's weight sets; ``direct``: the positions in ``order`` of the
#: contexts with direct probabilities, ``dc`` their counters; ``apm3``: 0 where the third APM
#: is left out, its time spent on the direct probabilities; ``text_follow``: the indirect
#: contexts' table, one entry where ``indirect`` is off; ``history_keep``: the bits of the
#: older followers the first indirect context's entries keep (0: the last one alone);
#: ``expected``: the position in ``order``
#: of the expected chunk's context, -1 where ``expect`` is off; ``structure``: 1 where mixer 1's
#: sets are also picked by the structure)
Tables = namedtuple("Tables", "order text_order run_contexts run_ids run rm ht next_state sm "
                              "empty_flags mm mm_ht long_ids mm_long light path_sets w1 w2 w3 wf a1 a2 a3 "
                              "follow text_follow history_keep direct dc apm3 expected structure")
#: per-token scratch: every context's hash, the used ones' hashes, slot offsets, bit histories,
#: mixer inputs, the runs, the direct probabilities' lines
Scratch = namedtuple("Scratch", "every ctx ptr st tx fx bit hist match runs lines")
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
                   runs=np.zeros((MAX_RUNS, N_RUN_FIELDS), np.int64), lines=np.zeros(MAX_DIRECT, np.int64))


def new_stream(decode: bool, payload: bytes | None = None, capacity: int = 0, text_bytes: int = 0) -> Stream:
    """A coder's stream; the decoder's may take :data:`DECISIONS_PER_BYTE` for each of the
    ``text_bytes`` its header promises (the encoder's is not bounded)."""
    inp = np.frombuffer(payload or b"", dtype=np.uint8)
    control = np.zeros(N_CONTROL, np.int64)
    control[C_BUDGET] = DECISIONS_PER_BYTE * text_bytes + DECISIONS_AT_LEAST if decode else 1 << 62
    return Stream(ac=coder_start(decode, inp), out=np.zeros(capacity, np.uint8), inp=inp, control=control)


@numba.njit(cache=True, forceinline=True)
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


#: the text orders, and the opener's and the scoped contexts in the places of orders 3, 1 and
#: 6: how many of them were seen picks mixer 1's weight set
TEXT_ORDERS = (C_O1, C_O2, C_O3, C_O4, C_O6, C_OPENER, C_ID_SCOPED, C_WORD_SCOPED)
