"""SuperBPE's curriculum (Liu et al. 2025, arXiv 2503.13423): learn subwords inside pre-tokens
up to a transition point, then let merges cross the white space between words ("superwords"
such as " of the").

The paper's second stage drops white-space pre-tokenization but keeps the rules that split
digits, and its released tokenizers keep punctuation and line breaks apart as well. Here the
boundary between two pre-tokens opens after ``after`` rules where it lies between two words
joined by a single space: a word (its characters letters, after at most one leading space) and
a space-led word (GPT-2's pre-tokens), or a word, a lone space and a word (the white-space
pre-tokenizer's). Every other boundary (a newline, digits, punctuation, runs of white space)
stays closed. A run of words joined so is split alike on its own and in context, which
encoding relies on. Our choice: no cap on the words in a superword.
"""

import attrs
import numba
import numpy as np
from chunkpress.plugin import LETTER, BoundaryPolicy, char_classes


@attrs.frozen(kw_only=True)
class SuperBpeParams:
    """``after``: the rules learned before pairs across words become candidates (the
    transition point, as a count of rules: a vocabulary of t tokens has t - 256 rules)."""

    after: int = attrs.field(default=0, validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)])


#: kinds of pre-token
OTHER_KIND, WORD, SPACED_WORD, LONE_SPACE = 0, 1, 2, 3


@numba.njit(cache=True)
def _kinds(data, cls, starts, ends, kinds):
    """Per pre-token: WORD (letters), SPACED_WORD (a space, then letters), LONE_SPACE (one
    space) or OTHER_KIND."""
    for t in range(starts.size):
        lo, hi = starts[t], ends[t]
        first = lo + 1 if data[lo] == 32 else lo
        kind = OTHER_KIND
        if first == hi:
            kind = LONE_SPACE if hi - lo == 1 else OTHER_KIND
        else:
            kind = SPACED_WORD if first > lo else WORD
            for p in range(first, hi):
                if cls[p] != LETTER:
                    kind = OTHER_KIND
                    break
        kinds[t] = kind


def joins(kinds: np.ndarray) -> np.ndarray:
    """For each boundary between pre-tokens t and t + 1: whether it lies between two words
    joined by a single space."""
    left, right = kinds[:-1], kinds[1:]
    word = (kinds == WORD) | (kinds == SPACED_WORD)
    before = np.concatenate([[False], word[:-2]])  # pre-token t - 1 is a word
    after = np.concatenate([kinds[2:] == WORD, [False]])  # pre-token t + 2 is an unspaced word
    return ((word[:-1] & (right == SPACED_WORD))
            | (word[:-1] & (right == LONE_SPACE) & after)
            | ((left == LONE_SPACE) & before & (right == WORD)))


#: GPT-2's pattern with words joined by single spaces: the units under gpt2 pre-tokens
GPT2_UNITS = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+(?: \p{L}+)*| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


class SuperBpe(BoundaryPolicy):
    """A boundary between two words joined by a single space opens after ``after`` rules."""

    def hf_units(self, pretokenizer):
        return GPT2_UNITS if pretokenizer == "gpt2" else None

    def opening_steps(self, data, breaks):
        cuts = np.flatnonzero(breaks[:-1]) + 1
        starts = np.concatenate([[0], cuts]).astype(np.int64)
        ends = np.concatenate([cuts, [data.size]]).astype(np.int64)
        cls, _ = char_classes(data)
        kinds = np.empty(starts.size, dtype=np.int64)
        _kinds(data, cls, starts, ends, kinds)
        steps = np.full(data.size, -1, dtype=np.int64)
        steps[ends[:-1][joins(kinds)] - 1] = self.params.after
        return steps
