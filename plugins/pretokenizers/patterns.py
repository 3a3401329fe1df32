"""Pre-tokenizers given by a regular expression, as tiktoken and HF's ``Split`` give theirs: a
word is each match, in order. The patterns are tiktoken's own, run by the ``regex`` package
(the possessive quantifiers and ``\\p{..}`` classes they use; Python's ``re`` has neither).

A match is found on the text's characters; the word ends are mapped back to bytes by the
characters' starts that ``chunkpress.plugin.char_classes`` finds, which reads an invalid byte as
a character of its own, as the ``surrogateescape`` decoding below does.
"""

from __future__ import annotations

import chunkpress.plugin as cp
import numpy as np

#: tiktoken's ``cl100k_base`` (tiktoken_ext/openai_public.py)
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                  r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
#: tiktoken's ``o200k_base`` (tiktoken_ext/openai_public.py)
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])


class Pattern(cp.PreTokenizer):
    """Each match of :attr:`pattern` a word (a subclass names the pattern, and the same pattern
    as HF's Split reads it)."""

    #: the pattern, in the syntax of the ``regex`` package
    pattern: str = ""

    def __init__(self, params=None):
        super().__init__(params)
        try:
            import regex  # the patterns' syntax: see the module docstring
        except ImportError:
            raise cp.PluginError(f"pre-tokenizer {type(self).__name__.lower()!r} needs the regex package "
                                 "(pip install regex)") from None
        self._compiled = regex.compile(self.pattern)

    def split(self, data, ends, breaks):
        _, start = cp.char_classes(data)
        char_at = np.append(np.flatnonzero(start), data.size)  # the byte where each character starts
        lo = 0
        for hi in ends.tolist():
            first = int(np.searchsorted(char_at, lo))
            text = data[lo:hi].tobytes().decode("utf-8", errors="surrogateescape")
            cuts = [m.end() for m in self._compiled.finditer(text)]
            if cuts:
                at = char_at[first + np.array(cuts, dtype=np.int64)]
                breaks[at[at < hi] - 1] = True
            lo = hi


class CL100K(Pattern):
    pattern = CL100K_PATTERN
    # Oniguruma, HF's regex engine, reads "{1,3}+" as a repetition of "{1,3}", not as possessive;
    # nothing follows the digits in their branch, so the greedy "{1,3}" matches as tiktoken does
    hf_pattern = CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")


class O200K(Pattern):
    pattern = hf_pattern = O200K_PATTERN
