"""The plugin contract, the lowest floor of the house: one base class per role, declaring everything the framework reads.

Components subclass these (as numcodecs codecs subclass ``abc.Codec``); the framework checks
``isinstance`` when it builds one and never probes for optional methods. Symbol ids below
:data:`BYTE_SYMBOLS` are bytes; rule r makes symbol ``BYTE_SYMBOLS + r``.

Scorers: write the loss of ONE pair with scalar arguments (ints and a bool), in numpy/math
style, as a ``@staticmethod`` (or as a function made in ``__init__`` that closes over your
params: numba freezes the values it closes over as constants). The engine compiles it with
numba and calls it from its fused merge loop, exactly as it calls the built-in scorers' losses.
Selection rule: within a group of equal k01 the pair with the smallest ``loss_b`` wins, then
the smallest (s0, s1); across groups the smallest ``loss_a + loss_b``, then the lower k01 (a
non-split ``loss``: smallest loss, then lower k01, then smallest (s0, s1)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

BYTE_SYMBOLS = 256


class Scorer:
    """A loss per candidate pair (lower is better) that does not split: implement
    ``loss(N, m, k01, k0, k1, same)``; the engine rescores every candidate each step, unless
    ``uses_totals`` is False (then only the pairs whose counts changed)."""

    #: Pairs seen fewer times are never merged (the index keeps no score for them).
    min_merge_count: int = 1
    #: False when the loss ignores k0 and k1: a symbol-count change then rescores nothing.
    uses_parts: bool = True
    #: False when ``loss`` ignores N and m (non-split scorers only).
    uses_totals: bool = True
    #: True when the loss orders pairs exactly as "most frequent first, then smallest (s0, s1)":
    #: the fused loop then finds the best pair with a pointer instead of evaluating losses.
    by_count: bool = False
    #: Optional ``stop(best_loss, k01) -> bool``, compiled like the loss: True stops the run
    #: before the best candidate is merged. None: the run stops on the limits only.
    stop: Callable | None = None

    #: ``loss(N, m, k01, k0, k1, same) -> float`` for one pair.
    loss: Callable | None = None

    def __init__(self, params=None):
        """``params``: an instance of the descriptor's params class (None: defaults), as every
        role's factory receives it."""
        self.params = params


class SplitScorer(Scorer):
    """A loss that splits as ``loss_a(N, m, k01) + loss_b(k01, k0, k1, same)``: the engine
    keeps pairs grouped by k01 with the minimum ``loss_b`` of each group, and rescores only the
    pairs whose k01, k0 or k1 changed."""

    #: ``loss_a(N, m, k01) -> float``: the part that depends on the step.
    loss_a: Callable | None = None
    #: ``loss_b(k01, k0, k1, same) -> float``: the part that depends on the pair.
    loss_b: Callable | None = None
    #: True when the loss reads the byte lengths of the pair's symbols: ``loss_b`` is then
    #: ``loss_b(k01, k0, k1, same, n0, n1)``, n0 and n1 the bytes that s0 and s1 spell.
    uses_lengths: bool = False


@attrs.frozen(kw_only=True)
class MergeReport:
    """What one merge changed: the new symbol, how many sites it replaced, and every pair whose
    joint count changed with its new count (0 means the pair no longer occurs)."""

    symbol: int
    sites: int
    s0: np.ndarray
    s1: np.ndarray
    k01: np.ndarray


class Rewriter:
    """Owns the working symbol string and applies merges.

    Pair counts are non-overlapping, left to right: in ``aaaa`` the pair (a, a) counts 2, in
    ``aaa`` it counts 1; a merge replaces occurrences left to right, as BPE does. Optional
    pre-token boundaries (``breaks[i]`` true: no pair between positions i and i + 1) keep pairs
    from crossing word boundaries.
    """

    #: True when :meth:`load` accepts ``weights`` (position i counts ``weights[i]`` times), so
    #: that the distinct words of a text, weighted by their counts, train like the whole text.
    supports_weights: bool = False
    #: True when the rewriter implements :meth:`delete` and :meth:`open`, which a deletion
    #: policy (Picky BPE) and a boundary policy (SuperBPE) need.
    supports_events: bool = False

    def __init__(self, params=None):
        """``params``: an instance of the descriptor's params class (None: defaults), as every
        role's factory receives it."""
        self.params = params

    def load(self, data: np.ndarray, breaks: np.ndarray | None = None, weights: np.ndarray | None = None) -> None:
        """Start from ``data`` (uint8 array); ``breaks`` marks pre-token boundaries."""
        raise NotImplementedError

    @property
    def length(self) -> int:
        """N, the current number of symbols (weighted, when loaded with weights)."""
        raise NotImplementedError

    def symbol_counts(self) -> np.ndarray:
        """int64 counts indexed by symbol id (length >= dictionary size); kept up to date."""
        raise NotImplementedError

    def pairs(self):
        """(s0, s1, k01) of every pair that occurs, as int64 arrays."""
        raise NotImplementedError

    def apply(self, s0: int, s1: int) -> MergeReport:
        """Replace (s0, s1) by a new symbol, left to right, and report what changed."""
        raise NotImplementedError

    def symbols(self) -> np.ndarray:
        """The current symbol string."""
        raise NotImplementedError

    def delete(self, step) -> MergeReport:
        """Split every occurrence of ``step.symbol`` into ``step.pieces`` (a
        :class:`chunkpress.engine.events.Deletion`: piece k starts ``step.offsets[k]`` bytes into
        the symbol) and report what changed (``sites``: the occurrences)."""
        raise NotImplementedError

    def open(self, positions: np.ndarray) -> MergeReport:
        """Let pairs cross the boundaries after the bytes ``positions`` of the loaded text (cuts
        ``breaks`` made) and report what changed (``sites``: the boundaries)."""
        raise NotImplementedError

    def replay(self, rules: np.ndarray) -> None:
        """Apply ``rules`` in order, as training did (a rule whose pair is absent is skipped)."""
        for s0, s1 in np.asarray(rules, dtype=np.int64).reshape(-1, 2).tolist():
            self.apply(s0, s1)

    def linked_string(self):
        """The engine's compiled string (:class:`chunkpress.engine.linkedstring.LinkedString`)
        this rewriter keeps, if any: the engine then runs the whole merge loop in compiled
        code. None: the engine calls :meth:`apply` once per merge."""
        return None


@attrs.frozen(kw_only=True)
class AheadPart:
    """A kernel a coder's first call compiles, as :meth:`Coder.ahead_parts` lists it: ``compile``
    compiles it (numba keeps it in its cache). ``shared``: the process that will call the coder
    may compile it while a helper compiles the others (the kernels it calls are no other part's
    to compile); a part not shared waits, in the helper, for every part listed before it."""

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    compile: Callable[[], object] = attrs.field(validator=attrs.validators.is_callable())
    shared: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))


class Coder:
    """Turns (rules, symbols) into bytes and back. ``codec_id`` is written into every archive
    and must change whenever the byte format changes (as in numcodecs)."""

    codec_id: str = ""
    #: True when :meth:`encode` / :meth:`decode` take ``dictionary_size``: the archive may then
    #: name its dictionary (``compress --rules-ref``) instead of holding it.
    references_dictionary: bool = False
    #: What the coder holds per input byte at most while it codes, beyond the symbols (a
    #: model's tables): the compressor cuts an input into blocks that fit the memory limit.
    working_bytes_per_byte: int = 0
    #: True when :meth:`encode` takes the input's bytes (a uint8 array) as its symbols where
    #: there are no rules: a pipeline with ``max_rules = 0`` then learns nothing and hands the
    #: bytes over as they are (a raw xz of 30 MB held 26 bytes a byte in the learner).
    codes_bytes: bool = False
    #: True when the coder's archives hold bytes and no rules, and :meth:`describe` reads the
    #: payload alone (``rules`` empty, ``symbols`` None): ``inspect`` then describes an archive
    #: from its header and payload without decoding it, as ``zstd -l`` does.
    describes_from_payload: bool = False

    def __init__(self, params=None):
        self.params = params

    def working_bytes(self, length: int) -> int:
        """What the coder holds at most while it codes ``length`` bytes of text, beyond the text
        and its symbols: the compressor cuts an input into blocks whose learning and coding fit
        the memory limit. It must not fall as ``length`` grows. By default
        ``working_bytes_per_byte`` a byte; a coder whose tables have a floor, or grow faster than
        the text on small inputs, says so here."""
        return self.working_bytes_per_byte * length

    def encode(self, rules: np.ndarray, symbols: np.ndarray, *, dictionary_size: int | None = None) -> bytes:
        """Payload bytes of rules (R x 2) and symbols. With ``dictionary_size`` the rules are
        not stored (they are passed empty) and symbols range below that size."""
        raise NotImplementedError

    def decode(self, payload: bytes, *, dictionary_size: int | None = None, max_symbols: int | None = None):
        """(rules, symbols) of a payload. ``max_symbols`` bounds the string (the header's length:
        every symbol is at least one byte): refuse, with FormatError, to decode more."""
        raise NotImplementedError

    def prepare(self, length: int) -> None:
        """Called before the dictionary is learned, with the length of the text the next
        :meth:`encode` will code: a coder may set up its tables meanwhile (in a thread of its
        own, which ``encode`` waits for). The default does nothing."""

    def prepared_bytes(self, length: int) -> int:
        """What :meth:`prepare` holds while the dictionary is learned, for a text of ``length``
        bytes (tables it sets up ahead, part of :meth:`working_bytes`): the compressor counts
        them beside the learner's memory. 0 by default, as the default prepare holds nothing."""
        return 0

    def ahead_parts(self) -> Sequence[AheadPart]:
        """The kernels :meth:`encode` and :meth:`decode` spend their first call compiling, each
        for the argument types they pass it (numba's cache keys on those), in an order that
        compiles a part after the parts it calls. The ``chunkpress`` program compiles them in a
        helper process on a spare core where numba's cache lacks them, while its own process
        learns the dictionary or decodes the rules, for the coders whose descriptor says so
        (:class:`chunkpress.plugin.FirstCompile` with ``ahead``); the coder calls
        ``await_compiled_ahead(kernel)`` (its FirstCompile's reference) right before its first call of them,
        compiles there the shared parts the helper has not begun, and loads the rest from the
        cache. The default lists none."""
        return ()

    def compile_ahead(self) -> None:
        """Compile :meth:`ahead_parts` in order, without coding anything (numba keeps them in its
        cache)."""
        for part in self.ahead_parts():
            part.compile()

    def describe(self, payload: bytes, rules: np.ndarray, symbols: np.ndarray | None) -> dict:
        """Sizes by part of an already decoded payload, for ``inspect`` and studies. Keys the
        framework reads (all optional): ``dictionary_bytes`` (payload bytes spent on the rules,
        a float where the coder's parts are not whole bytes) and ``string_bytes`` (on the
        symbol string); studies record the first and derive the second when it is missing. Any
        other key (a str, its value a number or str) is shown by ``inspect`` as it is."""
        return {}


#: the boundary policy every pipeline has unless it names another: it opens no boundary
OPENS_NOTHING = "pretokens"
#: the deletion policy that deletes nothing: the default, and plain BPE
DELETES_NOTHING = "none"


class BoundaryPolicy:
    """Which pairs across a pre-token boundary may merge, as a function of the step: each
    boundary gets the number of rules learned from which pairs across it are candidates, or
    never (SuperBPE: words first, then the spaces between words). This base class opens none:
    no pair ever crosses a pre-token, as in BPE."""

    def __init__(self, params=None):
        self.params = params

    def opening_steps(self, data: np.ndarray, breaks: np.ndarray) -> np.ndarray | None:
        """For the text ``data`` (uint8) cut by the pre-tokenizer at ``breaks`` (``breaks[i]``:
        a boundary between bytes i and i + 1): a signed integer array as long as ``data``, whose entry
        i, where ``breaks[i]``, is the rules learned before that boundary opens, or -1 for
        never (other entries are not read; the array is the caller's to change). None: no
        boundary ever opens. Opening a boundary
        must leave a pre-token unchanged: the text between two boundaries that never open is
        split alike on its own and in context (encoding relies on it)."""
        return None

    def hf_units(self, pretokenizer: str) -> str | None:
        """A regex (Oniguruma, as HF's ``Split`` pre-tokenizer takes it) that cuts text into this
        policy's units under ``pretokenizer``, for ``export-hf``; None: no HF tokenizer encodes
        as this policy does (export-hf refuses)."""
        return None


class DeletionPolicy:
    """Whether a symbol leaves the vocabulary after a merge that used it (Picky BPE). After
    each merge of (a, b) into z, the engine asks ``removes(k_z, k_part)`` for each part that is
    not a byte: k_z the new symbol's count, k_part what is left of the part's. A removed part's
    occurrences split back into what it was made of; it frees a place in the vocabulary."""

    #: ``removes(k_z, k_part) -> bool``, compiled like a scorer's loss (scalar arguments; params
    #: through a closure). None: nothing is ever removed.
    removes: Callable | None = None

    def __init__(self, params=None):
        self.params = params


#: the normalizer that changes nothing: the config's default, the only one an archive takes
NO_NORMALIZER = "none"


class Normalizer:
    """How text is rewritten before it is cut (HF's Normalizer, sentencepiece's normalization
    rule): Unicode normal forms, lower case. A tokenizer and a training run name it
    (``normalizer = "nfkc"``) and a rules file records it; its ids are then those of the
    normalized text, as HF's and sentencepiece's are. A normalizer that is not
    :attr:`lossless` loses the original bytes, so no archive is made with one."""

    #: True only where ``normalize`` gives back its input (:data:`NO_NORMALIZER`)
    lossless: bool = False
    #: HF tokenizers' normalizer that rewrites text as this does (``export-hf``, ``import-hf``);
    #: None where HF has none
    hf_normalizer: dict | None = None

    def __init__(self, params=None):
        self.params = params

    def normalize(self, text: bytes) -> bytes:
        """The text's UTF-8 rewritten (a byte that is not UTF-8 kept as it is)."""
        raise NotImplementedError

    def normalize_aligned(self, text: bytes) -> tuple[bytes, np.ndarray | None]:
        """:meth:`normalize`'s text and where each of its bytes came from: for each, and for its
        end, a byte offset in ``text`` (int64, one more than the bytes), so that a token's
        offsets point into the text as given, as HF's do. None where this normalizer does not
        say (the offsets then point into the normalized text)."""
        return self.normalize(text), None

    def normalize_batch(self, texts: list[bytes]) -> list[tuple[bytes, np.ndarray | None]]:
        """:meth:`normalize_aligned` of each text (a batch to ``encode_batch``); a normalizer
        whose calls cost more than their text does overrides it to take them in one pass."""
        return [self.normalize_aligned(text) for text in texts]


#: the pre-tokenizer that cuts nothing: the text (each piece of it that is read on its own) is
#: one word; the config's default, and no registered pre-tokenizer's name
NO_PRETOKENIZER = "none"


class PreTokenizer:
    """How text is cut into pre-tokens (words) before any merge: no rule joins two of them, and
    no token crosses one (HF's PreTokenizer). A tokenizer, a training run and a rules file name
    it (``pretokenizer = "gpt2"``); :data:`NO_PRETOKENIZER` cuts nothing.

    A text may come in pieces that are pre-tokenized each on its own (the lines of a training
    file, the text between added tokens): ``split`` is given their ends and must not look past
    one (a lookahead at a piece's end sees the end of the text)."""

    #: True where a file is read as sentencepiece reads it, a sentence a line: ``train`` puts a
    #: space before each line that is not empty, in place of its line break (the dummy prefix,
    #: so a line's first word is counted as every other), and a tokenizer trained so puts one
    #: before each text it encodes, which ``decode`` takes off again
    sentences: bool = False
    #: HF tokenizers' ``Split`` pattern that cuts text as this does (behavior ``Isolated``,
    #: before a ByteLevel that splits nothing more), written by ``export-hf`` and recognised
    #: by ``import-hf``; None where the pre-tokenizer has its own HF form or none
    hf_pattern: str | None = None

    def __init__(self, params=None):
        self.params = params

    def split(self, data: np.ndarray, ends: np.ndarray, breaks: np.ndarray) -> None:
        """Set ``breaks[i]`` where a pre-token ends after byte ``i`` of ``data`` (uint8: the
        text's UTF-8, an invalid byte a character of its own). ``ends``: the pieces' ends,
        ascending, the last ``data.size``; the framework breaks at each of them itself.
        ``breaks`` comes all False."""
        raise NotImplementedError


#: the segmenter of a dictionary learned by merges: its rules replayed in order, as in training
REPLAYS_MERGES = "merges"


class Segmenter:
    """How a vocabulary cuts text into tokens: a tokenizer's inference (HF's model), a choice of
    its own beside how the vocabulary was learned. The tokenizer cuts text into units (its
    pre-tokens, or the runs of them a boundary policy joins), finds each distinct unit once and
    asks :meth:`segment` for their tokens, so a segmenter sees each word once.

    ``vocabulary`` is what :class:`chunkpress.plugin.Vocabulary` holds: the tokens' spellings
    as a byte trie (``child``/``token`` arrays, looked up by ``trie_child``), each token's
    symbol id, and its log-probability where the vocabulary has them (``needs_scores``: a
    segmenter that cannot do without). The 256 bytes are always tokens, so every text can be
    cut. A segmenter that replays a dictionary's merges (``merges``, the default for a learned
    one) is the framework's own: it needs the rules' order, not the vocabulary."""

    #: True where :meth:`segment` needs each token's log-probability (a vocabulary without them
    #: is refused, naming the segmenter)
    needs_scores: bool = False
    #: True where :meth:`segment` gives the most likely path under the tokens' log-probabilities,
    #: so that Unigram sampling (``encode(alpha=...)``) draws from the same lattice
    samples_lattice: bool = False
    #: True for the segmenter that replays a dictionary's merges in order (its ``segment`` is
    #: never called: the tokenizer replays the rules as training parsed)
    replays_merges: bool = False
    #: True where :meth:`segment` needs each text whole as one unit, not its pre-tokens (a
    #: score that runs along the text, as sentencepiece sums its path in float32: the same
    #: word may cut otherwise in another place)
    whole_text: bool = False
    #: the HF tokenizers model that cuts text as this does (``Unigram``, ``WordPiece``), which
    #: ``export-hf`` writes a vocabulary it cuts as; None where HF has none
    hf_model: str | None = None

    def __init__(self, params=None):
        self.params = params

    def segment(self, vocabulary, buf: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The tokens of each unit ``buf[offsets[u]:offsets[u + 1]]`` (uint8), as symbol ids
        written into ``out`` from ``offsets[u]`` (a unit has at most as many tokens as bytes);
        returns how many each unit has (int64, one per unit)."""
        raise NotImplementedError


#: the learner of a dictionary built bottom-up: the scorer picks merges, the rewriter applies them
LEARNS_BY_MERGES = "merges"


class Learner:
    """How a vocabulary is learned top-down, a role beside the merge engine (``merges``, the
    default, is the framework's own: the scorer and the rewriter, one rule at a time). A learner
    reads a text's word counts (each distinct pre-token once, with how often it was seen), so
    that its work and memory follow the distinct words, and returns the tokens of a vocabulary
    of ``vocab_size``: the 256 bytes are always tokens and count towards the size. The framework
    writes them as a rules file that records :attr:`segmenter`, the inference the vocabulary is
    meant for, and the tokens' log-probabilities where the learner has them."""

    #: how the vocabulary cuts text (a segmenter's name), recorded in its rules file
    segmenter: str = "likelihood"
    #: True for the learner that runs the framework's merge engine (the scorer picks a merge,
    #: the rewriter applies it): its ``learn`` is never called
    bottom_up: bool = False

    def __init__(self, params=None):
        self.params = params

    def learn(self, buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, vocab_size: int,
              bottom_up: Callable[[int], list[bytes]]) -> tuple[list[bytes], np.ndarray | None]:
        """(the tokens, their log-probabilities aligned with them or None) for the words
        ``buf[offsets[w]:offsets[w + 1]]`` (uint8) seen ``counts[w]`` times (int64). The tokens
        are byte strings: at most ``vocab_size - 256`` longer than a byte, plus any single bytes
        the learner scores (a byte it leaves out gets the least log-probability, less 10).
        ``bottom_up(n)``: the tokens beyond the bytes of the ``n``-token vocabulary that the
        merge engine (``repair``, BPE's counts) learns from the same words, for a learner that
        starts from one."""
        raise NotImplementedError

    def learn_sizes(self, buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, vocab_sizes: list[int],
                    bottom_up: Callable[[int], list[bytes]]) -> list[tuple[list[bytes], np.ndarray | None]]:
        """A sweep: :meth:`learn`'s answer for each of ``vocab_sizes``, in their order. This
        learns each size on its own; a learner whose pruning passes through every size
        overrides it to answer them all from one run (see :attr:`sweeps_in_one_run`)."""
        return [self.learn(buf, offsets, counts, size, bottom_up) for size in vocab_sizes]

    #: whether :meth:`learn_sizes` answers from one run: its largest size is :meth:`learn`'s,
    #: each smaller one the vocabulary the run reached at that size on its way down
    sweeps_in_one_run: bool = False


def as_symbols(data) -> np.ndarray:
    """bytes / bytearray / memoryview / uint8 array -> uint8 array without copying."""
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8:
            raise TypeError(f"expected a uint8 array, got {data.dtype}")
        return data
    return np.frombuffer(bytes(data) if not isinstance(data, (bytes, bytearray, memoryview)) else data, dtype=np.uint8)
