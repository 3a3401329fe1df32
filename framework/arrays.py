"""Array helpers that numpy's own do more slowly for the shapes this package meets."""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending: ``np.unique`` by a sort, which is several times faster
    on the long, mostly ordered integer arrays here (offsets, steps) than numpy's hash path."""
    ordered = np.sort(np.asarray(values), kind="stable")
    if ordered.size == 0:
        return ordered
    keep = np.empty(ordered.size, dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
