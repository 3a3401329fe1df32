"""What happens between two merges besides the merges: a symbol deleted (its occurrences split
back into the symbols it was made of) and pre-token boundaries opened (pairs across them become
candidates). Training records them; encoding replays them at the same points of the rules.
(A learning run may also regroup its string, :class:`Regroup`: a change of layout that counts
the same text, which nothing records.)

A deletion after rule r happens before rule r + 1; boundaries that open at step s open when s
rules have been learned, before rule s. At the same point, deletions come first.
"""

from __future__ import annotations

import attrs
import numpy as np

from ..contract import BYTE_SYMBOLS
from ..errors import FormatError

#: a trace row's ``s1`` for a step that is not a merge: a deletion (``s0`` the symbol deleted,
#: ``k01`` its occurrences split) and an opening (``k01`` the boundaries opened)
DELETED, OPENED = -2, -3


def _array(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64).ravel()


@attrs.frozen(kw_only=True, eq=False)
class Deletion:
    """Symbol ``symbol`` leaves the vocabulary after rule ``after``: each occurrence becomes
    ``pieces``, the symbols it spells that are still in the vocabulary, piece k starting
    ``offsets[k]`` bytes into it."""

    after: int
    symbol: int
    pieces: np.ndarray = attrs.field(converter=_array)
    offsets: np.ndarray = attrs.field(converter=_array)

    @property
    def point(self) -> tuple[int, int]:
        return self.after + 1, 0


@attrs.frozen(kw_only=True, eq=False)
class Opening:
    """The boundaries after the bytes ``positions`` (ascending) open once ``at`` rules are learned."""

    at: int
    positions: np.ndarray = attrs.field(converter=_array)

    @property
    def point(self) -> tuple[int, int]:
        return self.at, 1


@attrs.frozen(kw_only=True, eq=False)
class Regroup:
    """Once ``at`` rules are learned, before that step's openings, the string is laid out again
    as tokens (:meth:`~.linkedstring.LinkedString.regroup`): token t a copy of the segment that
    starts at node ``word_starts[tokens[t]]``, counted ``weights[t]`` times (None: once). The
    openings due from then on name each boundary by the token it follows. A learning step only:
    nothing is recorded, since it changes no count where the tokens' weights add up to the
    segments' (as a text's words and the runs of them it was counted in do)."""

    at: int
    tokens: np.ndarray = attrs.field(converter=_array)
    word_starts: np.ndarray = attrs.field(converter=_array)
    weights: np.ndarray | None = attrs.field(converter=attrs.converters.optional(_array))


#: the pieces all of a dictionary's deletions split their symbols into, at most: Picky BPE's
#: split into a few each, while K deletions crafted to double each other ask for 2^K; such a
#: rules file is refused before any of it is split
MAX_DELETION_PIECES = 1 << 22


def _fold(symbol: int, rules, gone, leaf, join):
    """``join(part a's value, part b's value)`` of ``symbol``, where a part in ``gone`` (deleted
    before) is folded the same way and any other part is ``leaf(part)``: each deleted symbol is
    folded once, however often it is met (iterative: a chain of deletions may be long)."""
    done: dict = {}
    stack = [symbol]
    while stack:
        s = stack[-1]
        if s in done:
            stack.pop()
            continue
        a, b = (int(v) for v in rules[s - BYTE_SYMBOLS])
        waiting = [p for p in dict.fromkeys((a, b)) if p in gone and p not in done]
        if waiting:
            stack += waiting
            continue
        stack.pop()
        done[s] = join(*(done[p] if p in gone else leaf(p) for p in (a, b)))
    return done[symbol]


def split_of(symbol: int, rules, lengths, gone) -> tuple[np.ndarray, np.ndarray]:
    """(pieces, offsets) that ``symbol`` splits into: its two parts, each part in ``gone``
    (deleted before) split further, as Picky BPE's ``walk``; ``lengths``: bytes per symbol."""
    pieces = _fold(symbol, rules, gone, lambda p: np.array([p], dtype=np.int64),
                   lambda x, y: np.concatenate([x, y]))
    ends = np.cumsum([lengths[p] for p in pieces.tolist()], dtype=np.int64)
    return pieces, np.concatenate([[0], ends[:-1]]).astype(np.int64)


def piece_count(symbol: int, rules, gone) -> int:
    """How many pieces :func:`split_of` gives, without making them."""
    return _fold(symbol, rules, gone, lambda p: 1, lambda x, y: x + y)


def deletion_steps(rules: np.ndarray, deletions: np.ndarray) -> list[Deletion]:
    """The deletions (rows ``(after, symbol)``) with what each symbol splits into: its two parts,
    each part deleted before it split further (Picky BPE's ``walk``). FormatError when a row
    is out of order, deletes a byte, a symbol twice, one not yet made, or one a later rule uses."""
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    deletions = np.asarray(deletions, dtype=np.int64).reshape(-1, 2)
    lengths = np.ones(BYTE_SYMBOLS + len(rules), dtype=np.int64)
    for r, (a, b) in enumerate(rules.tolist()):
        lengths[BYTE_SYMBOLS + r] = lengths[a] + lengths[b]
    gone: dict[int, int] = {}
    last, total = -1, 0
    for after, symbol in deletions.tolist():  # checked and counted before any symbol is split
        if not (last <= after < len(rules)) or not BYTE_SYMBOLS <= symbol <= BYTE_SYMBOLS + after or symbol in gone:
            raise FormatError(f"deletion ({after}, {symbol}): out of order, of a byte, repeated, or of a symbol "
                              "not made yet")
        last = after
        total += piece_count(symbol, rules, gone)
        if total > MAX_DELETION_PIECES:
            raise FormatError(f"the deletions split their symbols into more than {MAX_DELETION_PIECES:,} pieces "
                              "in all (Picky BPE's split each into a few): more work than a dictionary justifies")
        gone[symbol] = after
    steps: list[Deletion] = []
    before: dict[int, int] = {}
    for after, symbol in deletions.tolist():
        pieces, offsets = split_of(symbol, rules, lengths, before)
        before[symbol] = after
        steps.append(Deletion(after=after, symbol=symbol, pieces=pieces, offsets=offsets))
    if gone:  # the last rule that uses each symbol must come before its deletion
        last_use = np.full(BYTE_SYMBOLS + len(rules), -1, dtype=np.int64)
        np.maximum.at(last_use, rules.ravel(), np.repeat(np.arange(len(rules)), 2))
        for symbol, after in gone.items():
            if last_use[symbol] > after:
                raise FormatError(f"symbol {symbol} is deleted after rule {after} but rule {last_use[symbol]} uses it")
    return steps


def schedule(*events) -> list:
    """The events in the order they happen (see the module docstring)."""
    return sorted((e for group in events for e in group), key=lambda e: e.point)
