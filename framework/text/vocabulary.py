"""A vocabulary as segmenters search it: the tokens' spellings in a byte trie, each node with
the symbol id of the token that ends there and that token's log-probability.

    vocab = Vocabulary.of(rules, symbols, scores)   # symbols: the token ids (the bytes always in)
    node = trie_child(vocab.keys, vocab.children, node, byte)   # in a kernel: -1 where none
    vocab.token[node], vocab.logp[node]                          # -1 / nan where no token ends

The trie's edges live in one open-addressing table keyed by (node, byte), so a lookup is a
hash and a probe or two whatever the node's fan-out; node 0 is the root.
"""

from __future__ import annotations

import functools

import attrs
import numba
import numpy as np

from ..contract import BYTE_SYMBOLS
from ..errors import FormatError
from ..format.expand import expand_into, symbol_lengths
from ..format.limits import check_allocation

#: the most memory a trie takes per byte of its tokens' spellings, the spellings included (a
#: node a byte where no prefix is shared; the edge table at most half full, grown by doubling)
TRIE_BYTES_PER_BYTE = 88
#: a searched vocabulary's tokens are shorter than this, as sentencepiece's pieces must be: a
#: search from each byte of a text then walks at most this many trie nodes
LONGEST_TOKEN_BYTES = 8000

#: the hash multiplier of the edge table (a 64-bit odd constant)
_MIX = np.int64(-7046029254386353131)


@numba.njit(cache=True, forceinline=True)
def trie_child(keys, children, node, byte):
    """The node reached from ``node`` by ``byte``, or -1."""
    key = (np.int64(node) << 8) | np.int64(byte)
    mask = keys.size - 1
    i = ((key + 1) * _MIX >> 20) & mask
    while True:
        k = keys[i]
        if k == key:
            return np.int64(children[i])
        if k < 0:
            return np.int64(-1)
        i = (i + 1) & mask


@numba.njit(cache=True)
def _leading_words(spell, starts):
    """Each token's first 16 bytes as two big-endian words (zeros past its end): sorting by
    them puts tokens that share a prefix side by side."""
    words = np.zeros((2, starts.size - 1), dtype=np.uint64)
    for t in range(starts.size - 1):
        for k in range(min(16, starts[t + 1] - starts[t])):
            words[k >> 3, t] |= np.uint64(spell[starts[t] + k]) << np.uint64(56 - 8 * (k & 7))
    return words


def _prefix_order(spell: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The tokens in the order of their first 16 bytes, so that each shares what it can of its
    path with the one before."""
    first, second = _leading_words(spell, starts)
    return np.lexsort((second, first))


@numba.njit(cache=True)
def _build(spell, starts, ids, scores, order):
    """(keys, children, token, logp, ends) of the trie of the tokens (bytes
    ``spell[starts[t]:starts[t + 1]]``, id ``ids[t]``, score ``scores[t]``; ``ends[t]``: its
    node), its tables grown as nodes are added (a vocabulary of long tokens that share
    prefixes holds far fewer nodes than bytes). The tokens are added in ``order``: the bytes a
    token shares with the one before follow that one's path, with no lookup."""
    size = 1 << 12
    keys = np.full(size, -1, dtype=np.int64)
    children = np.zeros(size, dtype=np.int64)
    token = np.full(size, -1, dtype=np.int64)
    logp = np.full(size, np.nan)
    nodes = 1
    ends = np.empty(ids.size, dtype=np.int64)
    longest = 0
    for t in range(ids.size):
        longest = max(longest, starts[t + 1] - starts[t])
    path = np.zeros(longest + 1, dtype=np.int64)  # the node after each byte of the token before
    before = -1
    for r in range(order.size):
        t = order[r]
        lo, hi = starts[t], starts[t + 1]
        shared = 0
        if before >= 0:
            while (shared < hi - lo and shared < starts[before + 1] - starts[before]
                   and spell[lo + shared] == spell[starts[before] + shared]):
                shared += 1
        node = path[shared]
        for k in range(lo + shared, hi):
            mask = keys.size - 1
            key = (np.int64(node) << 8) | np.int64(spell[k])
            i = ((key + 1) * _MIX >> 20) & mask
            while keys[i] >= 0 and keys[i] != key:
                i = (i + 1) & mask
            if keys[i] < 0:
                keys[i] = key
                children[i] = nodes
                nodes += 1
            node = children[i]
            path[k - lo + 1] = node
            if 2 * nodes > keys.size:  # grow the edges and the nodes' arrays (node ids stay)
                old_keys, old_children = keys, children
                keys = np.full(2 * old_keys.size, -1, dtype=np.int64)
                children = np.zeros(2 * old_keys.size, dtype=np.int64)
                grown = keys.size - 1
                for e in range(old_keys.size):
                    if old_keys[e] >= 0:
                        j = ((old_keys[e] + 1) * _MIX >> 20) & grown
                        while keys[j] >= 0:
                            j = (j + 1) & grown
                        keys[j] = old_keys[e]
                        children[j] = old_children[e]
                more_token = np.full(keys.size, -1, dtype=np.int64)
                more_logp = np.full(keys.size, np.nan)
                more_token[: token.size] = token
                more_logp[: logp.size] = logp
                token, logp = more_token, more_logp
        token[node] = ids[t]
        logp[node] = scores[t]
        ends[t] = node
        before = t
    return keys, children, token[:nodes].copy(), logp[:nodes].copy(), ends


@attrs.frozen(kw_only=True, eq=False)
class Vocabulary:
    """See the module docstring: the trie's edges (``keys``, ``children``), each node's token
    and its log-probability, the tokens' ids ascending, and whether the log-probabilities are
    the vocabulary's own (else NaN)."""

    keys: np.ndarray
    children: np.ndarray
    token: np.ndarray
    logp: np.ndarray
    symbols: np.ndarray
    has_scores: bool
    #: each listed token's node, in the order the tokens were given
    ends: np.ndarray
    #: the longest token's bytes: a search from one position walks at most this far
    longest: int

    @classmethod
    def of(cls, rules: np.ndarray, symbols: np.ndarray | None = None, scores: np.ndarray | None = None) -> Vocabulary:
        """The vocabulary of ``symbols`` (ids spelled by ``rules``; None: every symbol), each
        with its log-probability in ``scores`` (aligned with ``symbols``; None: none). The 256
        bytes are tokens whether listed or not (log-probability: the least listed, less one),
        so every text can be cut."""
        lengths = symbol_lengths(rules)
        ids = np.arange(lengths.size, dtype=np.int64) if symbols is None else np.asarray(symbols, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= lengths.size):
            raise FormatError("the vocabulary names a symbol that no rule defines")
        given = scores is not None
        values = np.asarray(scores, dtype=np.float64) if given else np.full(ids.size, np.nan)
        if values.size != ids.size:
            raise FormatError(f"{values.size:,} scores for {ids.size:,} tokens")
        missing = np.setdiff1d(np.arange(BYTE_SYMBOLS), ids)
        if missing.size:  # a byte the vocabulary lacks: a token all the same, as unlikely as any
            floor = np.nan if not given else (np.nanmin(values) - 1.0) if values.size else 0.0
            ids = np.concatenate([missing, ids])
            values = np.concatenate([np.full(missing.size, floor), values])
        spelled = lengths[ids]
        if spelled.size and spelled.max() >= LONGEST_TOKEN_BYTES:
            at = int(np.argmax(spelled))
            raise FormatError(f"token {int(ids[at])} spells {int(spelled[at]):,} bytes: a searched vocabulary holds "
                              f"tokens of fewer than {LONGEST_TOKEN_BYTES:,} bytes (as sentencepiece does), so that a "
                              "search costs at most that much a byte of text; replay the rules' merges instead "
                              "(segmenter merges)")
        check_allocation("the vocabulary's trie", int(spelled.sum(dtype=np.float64)) * TRIE_BYTES_PER_BYTE)
        starts = np.zeros(ids.size + 1, dtype=np.int64)
        np.cumsum(spelled, out=starts[1:])
        spell = np.zeros(int(starts[-1]), dtype=np.uint8)
        expand_into(rules, ids, lengths, spell)
        return cls.of_spellings(spell, starts, ids, values, has_scores=given)

    @classmethod
    def of_spellings(cls, spell: np.ndarray, starts: np.ndarray, ids: np.ndarray, scores: np.ndarray,
                     has_scores: bool = True, by_prefix: bool = False) -> Vocabulary:
        """The vocabulary of tokens spelled ``spell[starts[t]:starts[t + 1]]``, token t with id
        ``ids[t]`` and log-probability ``scores[t]`` (the caller sees to the bytes). The nodes
        are numbered as the tokens come, so the first tokens' nodes lie together; ``by_prefix``:
        the tokens are added in the order of their bytes instead, which builds a large trie
        (a million seeds) sooner, its nodes numbered in that order."""
        starts = np.asarray(starts, dtype=np.int64)
        order = _prefix_order(spell, starts) if by_prefix else np.arange(starts.size - 1)
        keys, children, token, logp, ends = _build(spell, starts, np.asarray(ids, dtype=np.int64),
                                                   np.asarray(scores, dtype=np.float64), order)
        return cls(keys=keys, children=children, token=token, logp=logp, symbols=np.sort(ids), has_scores=has_scores,
                   ends=ends, longest=int(np.diff(starts).max(initial=0)))


def spellings(rules) -> list[bytes]:
    """Every symbol's bytes: the 256 bytes, then each rule's two parts joined."""
    spelled = [bytes([b]) for b in range(BYTE_SYMBOLS)]
    for a, b in np.asarray(rules).reshape(-1, 2).tolist():
        spelled.append(spelled[a] + spelled[b])
    return spelled


#: the longest first bytes of a piece made a symbol by the split nearest the middle; longer
#: ones are the shorter first bytes and a byte, so a piece of n bytes costs O(n^2), not O(n^3)
_MIDDLE_SPLIT_BYTES = 256


#: the most memory :func:`rules_for_pieces` takes per byte of the pieces' spellings: a piece
#: with no split makes a symbol of each of its prefixes, each a dict entry and a rule
RULES_BYTES_PER_PIECE_BYTE = 160


@functools.lru_cache(maxsize=_MIDDLE_SPLIT_BYTES + 1)
def _cuts_from_the_middle(length: int) -> tuple[int, ...]:
    """The places a piece of ``length`` bytes may be cut, the nearest the middle first (the
    left one first of two as near)."""
    return tuple(sorted(range(1, length), key=lambda c: (abs(2 * c - length), c)))


def rules_for_pieces(pieces: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(rules, the pieces' symbol ids) that spell ``pieces``: each piece is a rule joining two
    shorter symbols, where a split into two of them exists (the split nearest the middle), else
    its first bytes (made a symbol of their own, the same way up to 256 bytes, then as the
    first bytes before and a byte) and its last byte. Shorter pieces are made first, so a
    piece's parts are always made before it. FormatError, before any work, where that could
    need more than the memory limit."""
    check_allocation(f"the rules that spell {len(pieces):,} pieces",
                     sum(len(p) for p in pieces) * RULES_BYTES_PER_PIECE_BYTE)
    symbol_of = {bytes([b]): b for b in range(BYTE_SYMBOLS)}
    rules: list[tuple[int, int]] = []

    def split(text: bytes) -> int:  # where text splits into two symbols, nearest the middle; 0: nowhere
        cuts = _cuts_from_the_middle(len(text)) if len(text) <= _MIDDLE_SPLIT_BYTES else \
            sorted(range(1, len(text)), key=lambda c: (abs(2 * c - len(text)), c))
        return next((c for c in cuts if text[:c] in symbol_of and text[c:] in symbol_of), 0)

    def add(text: bytes, k: int) -> None:
        symbol_of[text] = BYTE_SYMBOLS + len(rules)
        rules.append((symbol_of[text[:k]], symbol_of[text[k:]]))

    for piece in sorted(set(pieces), key=lambda p: (len(p), p)):
        if piece in symbol_of:
            continue
        k = split(piece)
        if not k:
            for end in range(2, len(piece)):  # its prefixes, each then a prefix and a byte
                if piece[:end] not in symbol_of:
                    add(piece[:end], end - 1 if end > _MIDDLE_SPLIT_BYTES else split(piece[:end]))
            k = split(piece)
        add(piece, k)
    return (np.array(rules, dtype=np.int64).reshape(-1, 2),
            np.array([symbol_of[p] for p in pieces], dtype=np.int64))
