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
size), so a chunk takes fewer decisions and each says more. The weights are
each rank's count in the parse, in 32 classes (:func:`code_weights`, a few hundred bytes).
Model 4 splits a node where its ranks' spellings part soonest, among the splits that leave a
tenth of its weight or more on each side, so that most decisions are about one next byte (is
it below ``"h"``?), and picks the maps and mixers by how many bytes the node's ranks share
instead of by depth alone (a few more decisions, each easier; the orders of the ranks tried
instead, and what each cost, are in ``examples/chunk-cm/NOTES.md``).

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
* *state maps*: bit history -> probability, one map per context, each entry P(1) and its count
  in one word (model 4's bit histories count runs of one bit further: :data:`MODEL4_COUNT_LIMIT`);
* the *match model*: the id that followed the last occurrence of the previous two ids, as long
  as the ids since agree, predicting the branch toward it while the path so far leads to it
  (model 4 also looks up the last four ids while its match is shorter: :func:`match_lookup`);
* the *run model* (model 3): per context, the rank seen there last and its repeats, for the
  previous id, order 2, the word in progress and the last four ids, each predicting the branch
  toward its rank while the path leads to it (at low orders many ranks share a context and the
  last one is the better guess);
* three *mixers* whose weight sets are picked by bit position, how many text contexts were
  seen and the runs' vote, by the path so far (or bit position and the last byte's class), and
  by the previous id (model 4: mixer 2 also has a flag input a context whose history is empty,
  and the weights start at half model 3's; model 5: the node itself near the root picks
  them, :data:`PATH1_NODES`); a *final mixer* combines them;
* an *APM chain*: the final probability refined on the path so far, with the last byte, and
  with the previous id, averaged with its input;
* *direct probabilities* (model 5 with the ``direct`` param, as at ``-9``): for order 0, the
  previous id, the word in progress and two ids, each node's own counted P(1) as one more mixer
  input (:mod:`..mixing.direct`), where the shared state map can only say what a bit history
  means at any node. They take the third APM's place, whose table misses the cache at every
  bit;
* *text-indirect contexts* (model 5 with the ``indirect`` param, as at ``-9``): the chunk that
  followed the last 5 bytes, the last 3 and the word in progress the last time they were seen,
  each a context of its own (:data:`INDIRECT_CONTEXTS`), so the bit histories learn what
  follows the chunk the text predicts.

A *light* model (the coder's ``light`` param) keeps the mixer picked by the path and the APM on
the path alone: a decision costs less, for a slightly larger archive.

What each piece buys and costs, measured, is in ``examples/chunk-cm/NOTES.md``.

All arithmetic is integer: an archive decodes identically on any machine.
"""
