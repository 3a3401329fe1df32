"""The context-mixing kit that ``cm`` and ``chunk-cm`` share, in lpaq's shape: each piece named,
in a module of its own, with a short usage note.

* :mod:`.hashing`: hashes of contexts and spellings, key tables with bounded probes;
* :mod:`.slots`: the hash table of bit histories (16-byte slots, three to a cache line);
* :mod:`.states`: bit-history states and the adaptive probabilities (state maps) they map to;
* :mod:`.direct`: counted probabilities of a context at a node, a line of them per 4-level group;
* :mod:`.logistic`: ``squash`` and ``STRETCH``, the mixers' domain, in integers;
* :mod:`.mixer`: a layer of weighted stretched inputs, its weight set picked by a context;
* :mod:`.apm`: adaptive probability maps, a probability refined by a context;
* :mod:`.arithmetic`: the binary arithmetic coder and its named state.

The match models differ (bytes in ``cm``, chunk ids in ``chunk-cm``) and stay with their
models. Everything is integer arithmetic: an archive decodes alike on any machine.
"""
