"""The ``chunk-cm`` coder: context mixing over chunk ids, so the dictionary saves work as well as bits.

The rules are coded as ``cm`` codes them; then each chunk of the longest-match parse is one
event, its rank (its place among the dictionary's spellings, sorted) coded down a binary tree
by the compiled model in :mod:`.chunk_cm_model`, with contexts from the previous ids and from
the decoded text kept beside them. Decoding returns the rules and the longest-match parse of
the text (as ``cm`` with ``parse = "longest"``).

Payload (codec ``chunkpress.chunk-cm.v6``; v5's is the same): LEB128 ``N T R L``, then ``L`` bytes of coded
rules, then one arithmetic-coded stream: each rank's weight class (which shapes the tree),
then the ranks. ``N`` bytes of text, ``T`` chunks, ``R`` rules. Table sizes are a function of
``N``, ``T``, the number of distinct spellings and the ``memory`` param (in the archive
header), so the decoder builds the same model. The model versions differ only as
:data:`MODELS` says; the older ones' coders are in :mod:`.chunk_cm_legacy`.
"""

from __future__ import annotations

import functools

import attrs
import numba
import numpy as np
from chunkpress.plugin import (
    BYTE_SYMBOLS,
    AheadPart,
    Coder,
    FormatError,
    await_compiled_ahead,
    call_interruptibly,
    check_allocation,
    coding_meter,
    decode_varints,
    encode_varints,
    expand,
    expand_into,
    share_compile_ahead,
)

from . import CHUNK_CM_LOOP
from .chunk_cm_model import layout
from .chunk_cm_model import ranks as rks
from .chunk_cm_model.ahead import loop_parts
from .chunk_cm_model.model import Status, code_chunks, finish
from .chunk_cm_model.versions import MODELS, Model
from .dictionary import (
    Dictionary,
    ZeroedAhead,
    decode_rules,
    encode_rules,
    max_prefixes,
    pow2_at_least,
    zeros,
)
from .mixing.apm import APM_STEPS, apm_table
from .mixing.arithmetic import AC, stop_coder
from .mixing.hashing import CHUNK_BASE, chunk_key, lookup
from .mixing.states import bit_history_states, counted_table

#: a coded bit costs at least log2(4096/4095) bits and every chunk codes at least one
_MAX_CHUNKS_PER_BYTE = 22_800


def _int_field(default: int, least: int, most: int):
    return attrs.field(default=default, validator=[attrs.validators.instance_of(int), attrs.validators.ge(least),
                                                   attrs.validators.le(most)])


def _contexts_field(model: Model):
    return _int_field(len(model.orders), 1, len(model.orders))


def _runs_field(model: Model):
    return _int_field(model.runs, 0, model.runs)


def _needs_indirect(params, attribute, value) -> None:
    if value != attribute.default and not params.indirect:
        raise ValueError(f"chunk-cm's {attribute.name} = {value} needs indirect = true (the contexts it changes)")


@attrs.frozen(kw_only=True)
class _Params:
    """What every model's params share; the run model and light mixing are models 3 to 5's
    (class constants here, so older models' archive headers stay as they were)."""

    memory: int = _int_field(28, 16, 32)
    contexts: int = _contexts_field(MODELS[5])
    runs = 0
    light = False
    direct = False
    indirect = False
    expect = False
    opener = False
    structure = False
    scoped = False
    hash_per_byte = 32
    indirect_history = 1


@attrs.frozen(kw_only=True)
class ChunkCmV4Params(_Params):
    """Models 3 and 4's params: :class:`ChunkCmParams`'s but ``direct``, ``indirect``, ``expect``,
    ``opener``, ``structure``, ``scoped``, ``hash_per_byte`` and ``indirect_history``."""

    runs: int = _runs_field(MODELS[5])
    light: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))


@attrs.frozen(kw_only=True)
class ChunkCmParams(ChunkCmV4Params):
    """Model 5's params (models 3 and 4 have the same contexts and runs, and neither ``direct``
    nor ``indirect``).
    ``memory``: log2 of the largest hash table in bytes (smaller inputs get smaller tables; the
    model uses about 1.2x this at most, 1.7x with ``direct``). ``contexts``: how many of the
    model's hashed contexts are used, in mixer order (``chunk_cm_model.MODEL3_ORDER``: order 0,
    previous id, order 2, word in progress, word with the previous, order 3, byte classes, two
    ids, ...): fewer is faster. ``runs``: how many of the run model's runs are used, in order
    (the previous id, order 2, the word in progress, the last four ids). ``light``: one mixer
    and one APM instead of three mixers, a final mixer and three APMs (a decision costs about a
    quarter less; larger archives). ``direct``
    (``-9``): direct probabilities for order 0, the previous id, the word in progress and two
    ids, in the third APM's place (smaller archives for more time). ``indirect`` (``-9``): three contexts more, after the
    others, the chunk that followed the last 5 bytes, the last 3 and the word in progress the
    last time they were seen (``chunk_cm_model.INDIRECT_CONTEXTS``). ``expect`` (``-9``): the
    chunk the match model expects, with the match's length, as a context in order 2's place
    (``chunk_cm_model.EXPECTED_REPLACES``). ``opener`` (``-9``): what opened the innermost open
    bracket (its kind and first word: a tag's, template's or link's name) and the line (its
    first two bytes where they are markup), with the last byte's class, as a context in order
    3's place (``chunk_cm_model.OPENER_REPLACES``; after the contexts kept where they leave
    order 3 out). ``structure`` (``-9``): mixer 1's weight sets also by the innermost open
    bracket's kind and whether the line starts with markup (``chunk_cm_model.STRUCTURE_SETS``).
    ``scoped`` (``-9``): the previous id, and the previous word with the last byte, each with
    what opened the innermost bracket and the line, as contexts in the places of orders 1 and 6
    (``chunk_cm_model.SCOPED_REPLACES``; after the contexts kept where they leave those out).
    ``hash_per_byte`` (``-8``, ``-9``: 256): the hash table's bytes a byte of text (32, 64, 128
    or 256), where that is at most half of ``memory``'s table: a smaller input's contexts
    collide less (``-9``'s table then holds 256 a byte up to 1 MB of text, 256 MB up to 8 MB,
    32 a byte beyond). ``indirect_history`` (``-9``: 3): how many of the chunks that followed
    the last 5 bytes the first indirect context names, the newest first (1: the last one; up to
    ``chunk_cm_model.layout.INDIRECT_HISTORY_MOST``), so that its bit histories tell a key whose
    followers repeat from one whose followers change. Each of the eight is absent from the
    header where off (32, 1), so such archives are what chunk-cm wrote before it."""

    direct: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool),
                               metadata={"added": True})
    indirect: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool),
                                 metadata={"added": True})
    expect: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool),
                               metadata={"added": True})
    opener: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool),
                               metadata={"added": True})
    structure: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool),
                                  metadata={"added": True})
    scoped: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool),
                               metadata={"added": True})
    hash_per_byte: int = attrs.field(default=32, validator=[attrs.validators.instance_of(int),
                                                            attrs.validators.in_((32, 64, 128, 256))],
                                     metadata={"added": True})
    indirect_history: int = attrs.field(default=1, validator=[attrs.validators.instance_of(int),
                                                              attrs.validators.ge(1),
                                                              attrs.validators.le(layout.INDIRECT_HISTORY_MOST),
                                                              _needs_indirect],
                                        metadata={"added": True})


@attrs.frozen(kw_only=True)
class ChunkCmV6Params(ChunkCmV4Params):
    """Model 6's params: ``memory``, ``contexts``, ``runs`` and ``light`` as
    :class:`ChunkCmParams` has them. What model 5 turned on by params, model 6 always has: the
    direct probabilities, the indirect contexts naming the last three followers, the expected
    chunk, the opener, mixer 1 by structure, the scoped contexts, and 256 bytes of hash table a
    byte of text where that is at most half of ``memory``'s table (class constants, so no
    archive header names them)."""

    direct = True
    indirect = True
    expect = True
    opener = True
    structure = True
    scoped = True
    hash_per_byte = 256
    indirect_history = 3


@attrs.frozen(kw_only=True)
class ChunkCmV2Params(_Params):
    """``memory`` and ``contexts`` as in :class:`ChunkCmParams`, over model 2's twenty contexts
    (``MODEL2_ORDER``)."""

    contexts: int = _contexts_field(MODELS[2])


@attrs.frozen(kw_only=True)
class ChunkCmV1Params(_Params):
    """``memory`` and ``contexts`` as in :class:`ChunkCmParams`, over model 1's twelve contexts
    (``MODEL1_ORDER``)."""

    contexts: int = _contexts_field(MODELS[1])


def model_sizes(n: int, chunks: int, ranks: int, model: Model, params: _Params) -> dict:
    """Table sizes (entries) for ``n`` bytes in ``chunks`` chunks over ``ranks`` spellings: a
    function of the header's fields, its params and the rules only, so both sides agree. A
    piece the model does not use is one entry."""
    memory, full = params.memory, not params.light
    id_sets = min(1 << 16, pow2_at_least(ranks + 1))
    if model.path_sets:  # a set for each previous id and node of the first levels, 13 MB at most
        id_sets = min(1 << 17, layout.PATH3_NODES * id_sets)
    # APMs of memory - 12 bits on large inputs, so a higher level's model on small ones is the same model
    small = max(10, min(memory - 12, model.apm_bits, chunks.bit_length() - 2))
    direct = _direct(model, params)
    # 32 bytes a byte of text; ``hash_per_byte`` where that is at most half of the cap
    hash_bytes = max(1 << 16, min(1 << memory, max(pow2_at_least(32 * n),
                                                   min(pow2_at_least(params.hash_per_byte * n), 1 << (memory - 1)))))
    return {
        "hash_bytes": hash_bytes,
        "match": max(1 << 12, min(1 << 22, pow2_at_least(chunks))),
        "mix1_sets": (((layout.MIX1_PATH_SETS if model.path_sets else layout.MIX1_SETS)
                       * (layout.STRUCTURE_SETS if _structure(model, params) else 1)) if full else 1),
        "mix2_sets": layout.MIX2_PATH_SETS if model.path_sets else layout.MIX2_SETS,
        "id_sets": id_sets if full else 1,
        "final_sets": 32 if full else 1,
        "apm1": min(1 << 16, pow2_at_least(ranks)),
        "apm2": 1 << small if full else 1,
        # the run model: one entry a chunk and run at most; 16 MB at memory 29 (more buys nothing)
        "runs": max(1 << 10, min(1 << (memory - 8), pow2_at_least(chunks))) if params.runs else 1,
        "long_match": max(1 << 12, min(1 << 22, pow2_at_least(chunks))) if model.long_match else 1,
        # 4-byte counters, 64 a chunk, as many bytes as the hash table at most and half of it
        # on large inputs: 256 MB at memory 29 (a smaller table makes the archive larger)
        "direct": (min(1 << (memory - 3), hash_bytes >> 2, max(1 << 12, pow2_at_least(64 * chunks)))
                   if direct else 16),
        "apm3": 1 if direct or not full else 1 << small,
        # the chunks that followed each indirect context's key: three 8-byte entries a chunk, 32 MB at most
        "text_follow": (max(1 << 12, min(1 << 22, 1 << (memory - 7), pow2_at_least(3 * chunks)))
                        if _indirect(model, params) else 1),
    }


def _direct(model: Model, params: _Params) -> bool:
    return bool(params.direct and model.direct)


def _indirect(model: Model, params: _Params) -> bool:
    return bool(params.indirect and model.indirect)


def _expect(model: Model, params: _Params) -> bool:
    return bool(params.expect and model.expected_replaces >= 0)


def _opener(model: Model, params: _Params) -> bool:
    return bool(params.opener and model.opener_replaces >= 0)


def _structure(model: Model, params: _Params) -> bool:
    return bool(params.structure and model.structure_sets)


def _scoped(model: Model, params: _Params) -> bool:
    return bool(params.scoped and model.scoped_replaces)


def _in_place_of(order: tuple[int, ...], replaced: int, context: int) -> tuple[int, ...]:
    """``order`` with ``context`` in ``replaced``'s place, or after it where it leaves that out."""
    return tuple(context if c == replaced else c for c in order) if replaced in order else order + (context,)


def _order(model: Model, params: _Params) -> tuple[int, ...]:
    """The contexts a coder uses, in mixer order: the first ``contexts`` of the model's (the
    opener's and the scoped ones in the places of those they replace, or after them where they
    leave those out), then the expected chunk's in place of the one it replaces, and the
    indirect ones, where asked."""
    order = model.orders[: params.contexts]
    if _opener(model, params):
        order = _in_place_of(order, model.opener_replaces, layout.C_OPENER)
    if _scoped(model, params):
        for replaced, context in zip(model.scoped_replaces, layout.SCOPED_CONTEXTS, strict=True):
            order = _in_place_of(order, replaced, context)
    if _expect(model, params):
        order = tuple(c for c in order if c != model.expected_replaces) + (layout.C_EXPECTED,)
    order += model.indirect if _indirect(model, params) else ()
    # the scratch and the mixers' rows hold MAX_USED_CONTEXTS contexts and the compiled loop does
    # not check: a params combination that made more would write past them
    if len(order) > layout.MAX_USED_CONTEXTS or len(set(order)) < len(order):
        raise AssertionError(f"chunk-cm's contexts {order} do not fit its scratch")
    return order


def model_bytes(n: int, chunks: int, ranks: int, model: Model, params: _Params) -> int:
    s = model_sizes(n, chunks, ranks, model, params)
    mixers = (4 * layout.N_INPUTS * (s["mix1_sets"] + s["id_sets"]) + 4 * layout.MIX2_INPUTS * s["mix2_sets"]
              + 16 * s["final_sets"])
    apms = 4 * APM_STEPS * (s["apm1"] + s["apm2"] + s["apm3"])
    maps = 8 * (layout.N_CONTEXTS * 256 + layout.MATCH_CONTEXTS + layout.RUN_MAPS) + 8 * s["runs"]
    tree = 2 * (ranks + 64) * 8 * 8  # the coding tree: at most two nodes a rank, eight int64 a node
    return (s["hash_bytes"] + 4 * (s["match"] + s["long_match"] + s["direct"]) + 8 * s["text_follow"] + mixers + apms + maps
            + 8 * (ranks + 2) + tree)


def tables_ahead(n: int, chunks: int, model: Model, params: _Params) -> ZeroedAhead:
    """The model's two largest tables (the hash table and the direct counters) for ``n`` bytes
    of text in ``chunks`` chunks or fewer, zeroed in a thread while the dictionary is learned
    (:class:`.dictionary.ZeroedAhead`). Neither size depends on the spellings; a model of fewer
    chunks takes the front of the direct counters. (Decoding has no such wait to fill: its
    rules and tree take a fraction of the zeroing's time.)"""
    return ZeroedAhead(ahead_sizes(n, chunks, model, params))


def ahead_sizes(n: int, chunks: int, model: Model, params: _Params) -> dict[str, tuple[int, type]]:
    """The tables :func:`tables_ahead` makes: name: (entries, dtype)."""
    s = model_sizes(n, chunks, BYTE_SYMBOLS, model, params)
    return {"hash_bytes": (s["hash_bytes"], np.uint8), "direct": (s["direct"], np.uint32)}


def new_tables(n: int, chunks: int, ranks: int, model: Model, params: _Params,
               ahead: ZeroedAhead | None = None) -> layout.Tables:
    """The model's tables, each piece at its starting state, for the contexts and runs the
    params keep; the largest from ``ahead`` where it holds them."""
    take = ahead.take if ahead is not None else (lambda name, entries, dtype: zeros(entries, dtype))
    order = _order(model, params)
    direct_on = _direct(model, params)
    direct = [order.index(c) for c in model.direct if c in order] if direct_on else []
    run_contexts = model.run_contexts[: params.runs]
    run_ids = model.run_ids if params.runs > len(run_contexts) else 0
    s = model_sizes(n, chunks, ranks, model, params)
    next_state, state_p = _states(model.count_limit)
    first = np.full(256, 1 << 21, dtype=np.int32)  # each context's map starts at the states' own estimate
    first[: state_p.size] = state_p
    w = model.mixer_init

    def mixer(sets: int, flags: bool = False) -> np.ndarray:
        weights = np.full((sets, layout.MIX2_INPUTS if flags else layout.N_INPUTS), w, np.int32)
        inputs = layout.IN_CONTEXTS + len(order) + len(run_contexts) + (run_ids > 0) + len(direct)
        weights[:, inputs:] = 0  # the flags' weights
        return weights

    return layout.Tables(
        order=np.array(order, dtype=np.int64), text_order=np.isin(order, layout.TEXT_ORDERS).astype(np.int64),
        run_contexts=np.array(run_contexts, dtype=np.int64),
        run_ids=run_ids,
        run=np.zeros(s["runs"], np.uint64),
        rm=counted_table(np.full(layout.RUN_MAPS, 1 << 21)),
        ht=take("hash_bytes", s["hash_bytes"], np.uint8),
        next_state=next_state, sm=counted_table(np.tile(first, len(order))),
        empty_flags=int(model.empty_flags),
        mm=counted_table(np.full(layout.MATCH_CONTEXTS, 1 << 21)),
        mm_ht=np.zeros(s["match"], np.int32), long_ids=model.long_match, mm_long=np.zeros(s["long_match"], np.int32),
        light=int(params.light), path_sets=int(model.path_sets), w1=mixer(s["mix1_sets"]),
        w2=mixer(s["mix2_sets"], model.empty_flags), w3=mixer(s["id_sets"]),
        wf=np.full((s["final_sets"], 4), 21845, np.int32),
        a1=apm_table(s["apm1"]), a2=apm_table(s["apm2"]), a3=apm_table(s["apm3"]),
        # int64 at any indirect_history (one entry a follower at 1): one dtype, one compiled loop
        follow=np.zeros(ranks + 2, np.int64), text_follow=np.zeros(s["text_follow"], np.int64),
        history_keep=(1 << (layout.HISTORY_BITS * (params.indirect_history - 1))) - 1,
        direct=np.array(direct, dtype=np.int64), dc=take("direct", s["direct"], np.uint32),
        apm3=int(not direct_on), expected=order.index(layout.C_EXPECTED) if layout.C_EXPECTED in order else -1,
        structure=int(_structure(model, params) and not params.light),
    )


@functools.cache
def _states(count_limit: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    return bit_history_states(count_limit)


@numba.njit(cache=True)
def _prefix_ranks(spell, start, length, keys, used, group_start, group_ids, rank_of):
    """For each byte of each short rank's spelling, the rank spelled by the bytes before it
    (or -1): which splits of a chunk are a chunk and its continuation."""
    out = np.full(spell.size, -1, dtype=np.int64)
    for w in range(length.size):
        if length[w] > rks.EXCLUDE_MAX_LEN:
            continue
        h = np.uint64(0)
        for k in range(1, length[w]):
            h = h * CHUNK_BASE + np.uint64(spell[start[w] + k - 1] + 1)
            slot = lookup(keys, used, chunk_key(h, k))
            if slot >= 0:
                out[start[w] + k] = rank_of[group_ids[group_start[slot]]]
    return out


class RankedDictionary:
    """The rules as ranks: distinct spellings sorted bytewise, each rank standing for the
    first symbol id that spells it, with the exclusion ranges after each rank."""

    def __init__(self, rules: np.ndarray, n: int):
        self.dictionary = d = Dictionary(rules, max_prefixes(n))
        lens = d.lens
        total = int(lens.sum())
        if total > max_prefixes(n):
            raise FormatError(f"the dictionary spells {total:,} bytes, more than chunk-cm allows for this text")
        # every symbol spelled once, side by side, in one pass: linear in the bytes spelled
        # (bounded above), whatever the number of rules or how many of them spell alike
        ends = np.cumsum(lens)
        every = bytearray(total)
        expand_into(rules, np.arange(lens.size, dtype=np.int64), lens, np.frombuffer(every, dtype=np.uint8))
        spellings = [bytes(every[e - n:e]) for e, n in zip(ends.tolist(), lens.tolist(), strict=False)]
        first: dict[bytes, int] = {}
        for s, w in enumerate(spellings):
            first.setdefault(w, s)
        self.symbol_of = np.array([first[w] for w in sorted(first)], dtype=np.int64)
        self.rank_of = np.full(lens.size, -1, dtype=np.int64)
        self.rank_of[self.symbol_of] = np.arange(self.symbol_of.size)
        length = lens[self.symbol_of].astype(np.int64)
        start = np.zeros(length.size, dtype=np.int64)
        np.cumsum(length[:-1], out=start[1:])
        spell = np.frombuffer(b"".join(spellings[s] for s in self.symbol_of), dtype=np.uint8)
        ex_start, ex_lo, ex_hi = self._exclusions(spell, start, length)
        self.ranks = rks.Ranks(start=start, length=length, spell=spell, ex_start=ex_start, ex_lo=ex_lo, ex_hi=ex_hi,
                               tree=rks.new_tree(1), depth=np.zeros(length.size, np.int64))

    def _exclusions(self, spell, start, length):
        d = self.dictionary
        prefix = _prefix_ranks(spell, start, length, d.keys, d.used, d.start, d.ids, self.rank_of)
        cap = int(np.count_nonzero(prefix >= 0))
        rows, lo, hi = (np.zeros(cap, dtype=np.int64) for _ in range(3))
        count = rks.exclusion_pairs(spell, start, length, prefix, rows, lo, hi)
        order = np.lexsort((lo[:count], rows[:count]))
        rows, lo, hi = rows[order], lo[order], hi[order]
        ex_start = np.zeros(length.size + 1, dtype=np.int64)
        ex_lo, ex_hi = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
        used = rks.merge_rows(rows, lo, hi, length.size, ex_start, ex_lo, ex_hi)
        return ex_start, ex_lo[:used], ex_hi[:used]

    def complete_tree(self) -> rks.Tree:
        """Model 1's tree: each rank's bits, top first."""
        size = self.ranks.length.size
        bits = max(1, (size - 1).bit_length())
        tree = rks.new_tree(2 * size + 2 * bits + 2)
        count = rks.complete_tree(size, bits, tree)
        return rks.Tree(*(a[:count] for a in tree))

    def with_tree(self, tree: rks.Tree) -> rks.Ranks:
        """The ranks coded down ``tree``."""
        return self.ranks._replace(tree=tree, depth=rks.leaf_depths(tree, self.ranks.length.size))

    def weighted_tree(self, classes: np.ndarray, prefix_splits: bool = False) -> rks.Tree:
        """Model 2's tree: the used ranks (weight class above 0), frequent ones near the root
        (model 4's split where spellings part soonest). Fewer than two used ranks get neighbours,
        so every chunk codes a bit. A tree too deep for the 64-bit path (never seen on real text)
        is built with equal weights instead, and if the prefix splits still make it too deep, at
        the halves: equal weights split at their half are at most 32 levels deep. Encoder and
        decoder take the same steps, and each later step only runs where an earlier one failed,
        so older archives build the trees they were written with."""
        used = np.flatnonzero(classes)
        if used.size < 2:
            spare = np.setdiff1d(np.arange(3), used)
            used = np.sort(np.concatenate([used, spare[: 2 - used.size]]))
        weights = np.maximum(rks.CLASS_WEIGHT[classes[used]], 1)
        lcp = rks.adjacent_prefixes(self.ranks, used) if prefix_splits else np.zeros(used.size + 1, np.int64)
        for attempt, by_prefix in ((weights, prefix_splits), (np.ones_like(weights), prefix_splits),
                                   (np.ones_like(weights), False)):
            tree = rks.new_tree(used.size - 1)
            count, deepest = rks.weighted_tree(used, np.concatenate([[0], np.cumsum(attempt)]), tree, lcp, by_prefix)
            if deepest <= rks.MAX_DEPTH:
                return tree
        raise AssertionError("equal weights split at their half make a tree of at most 32 levels")

    def parse(self, text: np.ndarray) -> np.ndarray:
        """The ranks of the longest-match parse of ``text``."""
        return self.rank_of[self.dictionary.greedy_parse(text)]


def weight_classes(counts: np.ndarray) -> np.ndarray:
    """Each rank's weight class from its count in the parse: 0 unused, else 1 + 1.5 log2(count)."""
    classes = np.zeros(counts.size, dtype=np.int64)
    used = counts > 0
    classes[used] = np.minimum(rks.WEIGHT_CLASSES - 1, 1 + np.floor(1.5 * np.log2(counts[used])).astype(np.int64))
    return classes


def _run(decode: bool, ranks, text, rk: rks.Ranks, tables, io, ahead) -> int:
    # where a helper compiles the loop, this process compiles a share of its parts meanwhile,
    # and the loop is in the cache once the helper ends
    await_compiled_ahead(CHUNK_CM_LOOP.kernel, ahead)
    return call_interruptibly(code_chunks, decode, ranks, text, rk, tables, layout.new_scratch(), io,
                              meter=coding_meter(io.control, ranks.size, "decoding" if decode else "coding"),
                              stop=lambda: stop_coder(io.ac))


#: what encoding holds a byte of text beside the model's tables: the text twice, the parse (a
#: symbol a byte before it is cut), the ranks twice and the coded stream
ENCODE_BYTES_PER_BYTE = 32
#: the dictionaries :meth:`ChunkCmCoder.working_bytes` counts: up to 65,536 spellings (the
#: levels learn at most 8,000 rules); a larger one adds about 140 bytes a spelling (its tree)
COUNTED_RANKS = 1 << 16


class ChunkCmCoder(Coder):
    """Context mixing over chunk ids; see the module docstring for the format."""

    model = MODELS[6]
    codec_id = model.codec_id
    params_class: type[_Params] = ChunkCmV6Params

    def __init__(self, params: _Params | None = None):
        super().__init__(params or self.params_class())
        self._ahead: ZeroedAhead | None = None

    def working_bytes(self, length: int) -> int:
        # the tables as sized for one chunk a byte (the most) over at most COUNTED_RANKS
        # spellings, and what encoding holds beside them
        ranks = BYTE_SYMBOLS + min(length, COUNTED_RANKS)
        return model_bytes(length, length, ranks, self.model, self.params) + ENCODE_BYTES_PER_BYTE * length

    def prepared_bytes(self, length: int) -> int:
        return sum(entries * np.dtype(dtype).itemsize
                   for entries, dtype in ahead_sizes(length, length, self.model, self.params).values())

    def prepare(self, length: int) -> None:
        # the chunks are not known before the parse: at most one a byte
        self._ahead = tables_ahead(length, length, self.model, self.params)

    def encode(self, rules, symbols, *, dictionary_size=None) -> bytes:
        rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        symbols = np.ascontiguousarray(symbols, dtype=np.int64)
        text = np.frombuffer(expand(rules, symbols), dtype=np.uint8).copy()
        rd = RankedDictionary(rules, text.size)
        ranks = rd.parse(text)
        rule_stream = encode_rules(rules)
        classes = weight_classes(np.bincount(ranks, minlength=rd.ranks.length.size)) if self.model.weighted else None
        tree = rd.complete_tree() if classes is None else rd.weighted_tree(classes, self.model.prefix_splits)
        rk = rd.with_tree(tree)
        capacity = text.size + text.size // 4 + 4096 + (rd.ranks.length.size if classes is not None else 0)
        while True:
            io = layout.new_stream(False, capacity=capacity)
            if classes is not None:
                rks.code_weights(False, classes.copy(), io)
            ahead, self._ahead = self._ahead, None
            tables = new_tables(text.size, ranks.size, rd.ranks.length.size, self.model, self.params, ahead)
            status = _run(False, ranks.copy(), text, rk, tables, io, self.ahead_parts)
            if status != text.size:
                raise FormatError(f"chunk-cm could not code this parse (status {status})")
            payload = finish(io)
            if io.ac[AC.OUT] <= capacity:
                break
            capacity = int(io.ac[AC.OUT]) + 16
        head = encode_varints([text.size, ranks.size, len(rules), len(rule_stream)])
        return head + rule_stream + payload

    def _sections(self, payload: bytes, max_symbols: int | None):
        (n, t, r, size), pos = decode_varints(payload, 4)
        n, t, r, size = int(n), int(t), int(r), int(size)
        if max_symbols is not None and n > max_symbols:
            raise FormatError(f"corrupt chunk-cm payload: {n:,} bytes of text, more than the header's length")
        if t > n or (n > 0) != (t > 0):
            raise FormatError(f"corrupt chunk-cm payload: {t:,} chunks for {n:,} bytes")
        if size > len(payload) - pos:
            raise FormatError("payload truncated: the rules section extends past the end")
        coded = payload[pos + size:]
        if t > _MAX_CHUNKS_PER_BYTE * (len(coded) + 8):
            raise FormatError(f"corrupt chunk-cm payload: {len(coded):,} bytes cannot hold {t:,} chunks")
        return n, t, r, payload[pos: pos + size], coded

    def decode(self, payload: bytes, *, dictionary_size=None, max_symbols: int | None = None):
        n, t, r, rule_stream, coded = self._sections(payload, max_symbols)
        if r > (1 << 31) - BYTE_SYMBOLS:
            raise FormatError(f"corrupt chunk-cm payload: {r:,} rules")
        model = model_bytes(n, t, r + BYTE_SYMBOLS, self.model, self.params)
        check_allocation(f"{n:,} bytes of text in {t:,} chunks and {r:,} rules",
                         n * 2 + 16 * t + 96 * (r + BYTE_SYMBOLS) + model)
        # a cold cache: a share of the loop's compile first, then the rules' own kernels here
        # while the helper ends the loop's
        share_compile_ahead(CHUNK_CM_LOOP.kernel, self.ahead_parts)
        rules = decode_rules(rule_stream, r)
        rd = RankedDictionary(rules, n)
        text = np.zeros(n, dtype=np.uint8)
        ranks = np.zeros(t, dtype=np.int64)
        io = layout.new_stream(True, coded, text_bytes=n)
        if self.model.weighted:
            classes = np.zeros(rd.ranks.length.size, dtype=np.int64)
            status = rks.code_weights(True, classes, io)
            tree = rd.weighted_tree(classes, self.model.prefix_splits)
        else:
            status, tree = 0, rd.complete_tree()
        if status == 0:
            tables = new_tables(n, t, rd.ranks.length.size, self.model, self.params)
            status = _run(True, ranks, text, rd.with_tree(tree), tables, io, self.ahead_parts)
        if io.ac[AC.OVERRUN] or status == Status.INPUT_ENDED:
            raise FormatError("corrupt chunk-cm payload: the coded chunks end early")
        if status == Status.OVER_BUDGET:
            raise FormatError(f"corrupt chunk-cm payload: its chunks take more than {layout.DECISIONS_PER_BYTE} "
                              "coded decisions a byte")
        if status < 0:
            raise FormatError(f"corrupt chunk-cm payload: a decoded chunk does not fit (status {status})")
        if status != n:
            raise FormatError(f"corrupt chunk-cm payload: the chunks spell {status:,} bytes, expected {n:,}")
        if io.ac[AC.IN] != io.inp.size:
            raise FormatError("corrupt chunk-cm payload: trailing bytes after the coded chunks")
        return rules, rd.symbol_of[ranks]

    def ahead_parts(self) -> list[AheadPart]:
        return loop_parts(new_tables(16, 16, BYTE_SYMBOLS, self.model, self.params))

    def describe(self, payload: bytes, rules, symbols) -> dict:
        _, _, _, _, coded = self._sections(payload, None)
        return {"dictionary_bytes": len(payload) - len(coded), "string_bytes": len(coded)}
