"""The rewriter role: owns the working symbol string and applies merges.

Pair counts are non-overlapping, left to right: in ``aaaa`` the pair (a, a) counts 2, in ``aaa``
it counts 1; a merge replaces occurrences left to right, as BPE does. Optional pre-token
boundaries (``breaks[i]`` true: no pair between positions i and i + 1) keep pairs from crossing
word boundaries.
"""

from __future__ import annotations

import attrs
import numpy as np

BYTE_SYMBOLS = 256


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
    """Interface of rewriters (a base class to document it; subclassing is optional)."""

    def load(self, data: np.ndarray, breaks: np.ndarray | None = None) -> None:
        """Start from ``data`` (uint8 array); ``breaks`` marks pre-token boundaries."""
        raise NotImplementedError

    @property
    def length(self) -> int:
        """N, the current number of symbols."""
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
        """The current symbol string (int32)."""
        raise NotImplementedError


def as_symbols(data) -> np.ndarray:
    """bytes / bytearray / memoryview / uint8 array -> uint8 array without copying."""
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8:
            raise TypeError(f"expected a uint8 array, got {data.dtype}")
        return data
    return np.frombuffer(bytes(data) if not isinstance(data, (bytes, bytearray, memoryview)) else data, dtype=np.uint8)
