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
def _kind(data, cls, lo, hi):
    """WORD (letters), SPACED_WORD (a space, then letters), LONE_SPACE (one space) or
    OTHER_KIND: the kind of the pre-token ``data[lo:hi]``."""
    first = lo + 1 if data[lo] == 32 else lo
    if first == hi:
        return LONE_SPACE if hi - lo == 1 else OTHER_KIND
    for p in range(first, hi):
        if cls[p] != LETTER:
            return OTHER_KIND
    return SPACED_WORD if first > lo else WORD


@numba.njit(cache=True)
def _open_joined(data, breaks, cls, steps, after):
    """``steps[i] = after`` at each boundary (offset i: between bytes i and i + 1) between two
    words joined by a single space: a word and a space-led word, or a word, a lone space and an
    unspaced word. One pass, deciding as each pre-token ends about the two before it."""
    n = data.size
    k1, k2 = OTHER_KIND, OTHER_KIND  # the kinds of the two pre-tokens before this one
    e1, e2 = -1, -1  # and their last bytes
    lo = 0
    for i in range(n):
        if i == n - 1 or breaks[i]:
            k0 = _kind(data, cls, lo, i + 1)
            word1 = k1 == WORD or k1 == SPACED_WORD
            if word1 and k0 == SPACED_WORD:
                steps[e1] = after
            elif k1 == LONE_SPACE and k0 == WORD and (k2 == WORD or k2 == SPACED_WORD):
                steps[e2] = after  # on both sides of the lone space
                steps[e1] = after
            k2, k1, e2, e1 = k1, k0, e1, i
            lo = i + 1


#: GPT-2's pattern with words joined by single spaces: the units under gpt2 pre-tokens
GPT2_UNITS = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+(?: \p{L}+)*| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


class SuperBpe(BoundaryPolicy):
    """A boundary between two words joined by a single space opens after ``after`` rules."""

    def hf_units(self, pretokenizer):
        return GPT2_UNITS if pretokenizer == "gpt2" else None

    def opening_steps(self, data, breaks):
        steps = np.full(data.size, -1, dtype=np.promote_types(np.int16, np.min_scalar_type(-self.params.after - 1)))
        _open_joined(data, breaks, char_classes(data)[0], steps, steps.dtype.type(self.params.after))
        return steps
