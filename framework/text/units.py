"""A boundary policy applied to a text: which pre-token boundaries never open (they cut the text
into units, which word counting treats as words), and which open at a step (inside a unit).

Without a policy that opens anything, the units are the pre-tokens. With SuperBPE's, a unit is
a run of words joined by single spaces, split at punctuation, digits and line breaks.
"""

from __future__ import annotations

import numba
import numpy as np

from ..arrays import distinct
from ..engine.events import Opening
from .pretokenize import pretoken_breaks


@numba.njit(cache=True)
def _keep_at_breaks(steps, breaks):
    """-1 in ``steps`` wherever ``breaks`` has no boundary; whether any step is left. Without
    branches (a boundary is no rarer than one byte in ten): the loop runs on vector lanes."""
    left = 0  # an int: a bool accumulator keeps the loop off vector lanes
    for i in range(steps.size):
        s = steps[i]
        kept = (s >= 0) & breaks[i]
        left |= kept
        steps[i] = s if kept or s < 0 else -1
    return left != 0


def opening_steps(policy, data: np.ndarray, breaks: np.ndarray, piece_ends=None) -> np.ndarray | None:
    """The policy's step for each boundary (-1: never), or None when none ever opens; the ends of
    independent pieces (``piece_ends``, offsets) never open."""
    if policy is None:
        return None
    steps = policy.opening_steps(data, breaks)
    if steps is None:
        return None
    steps = np.asarray(steps)
    if steps.dtype.kind != "i":  # a narrow signed array is kept: steps cover every byte
        steps = steps.astype(np.int64)
    if steps.shape != data.shape:
        raise ValueError(f"{type(policy).__name__}.opening_steps gave {steps.shape[0]:,} steps for "
                         f"{data.size:,} bytes")
    if piece_ends is not None:
        ends = np.asarray(piece_ends, dtype=np.int64)
        steps[ends[(ends > 0) & (ends <= data.size)] - 1] = -1
    # the policy's own array: only its entries at boundaries count
    return steps if _keep_at_breaks(steps, np.asarray(breaks, dtype=np.bool_)) else None


def openings(steps: np.ndarray | None) -> list[Opening]:
    """The boundaries that open, grouped by their step."""
    if steps is None:
        return []
    at = np.flatnonzero(steps >= 0)
    if not at.size:
        return []
    when = steps[at].astype(np.int64)
    if when.min() == when.max():  # one step for all, as SuperBPE's
        return [Opening(at=int(when[0]), positions=at)]
    return [Opening(at=int(step), positions=at[when == step]) for step in distinct(when).tolist()]


def unit_boundaries(policy, buf: np.ndarray, offsets: np.ndarray, pretokenizer: str,
                    steps: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(breaks, steps) of distinct units one after another in ``buf`` (unit u is
    ``buf[offsets[u]:offsets[u + 1]]``): read off their ``steps`` where counting kept them
    (:attr:`~.wordcounts.WordCounts.steps`: every boundary inside a unit opens at some step,
    and the units' ends are boundaries too), otherwise each unit pre-tokenized on its own,
    which a policy guarantees splits it as in context."""
    if steps is not None:
        breaks = steps >= 0
        breaks[offsets[1:-1] - 1] = True  # as pre-tokenizing marks them: none after the last byte
        return breaks, steps
    split = pretoken_breaks(buf, pretokenizer, pieces=offsets[1:])
    split = np.zeros(buf.size, dtype=bool) if split is None else split
    steps = opening_steps(policy, buf, split, offsets[1:])
    return split, np.full(buf.size, -1, dtype=np.int8) if steps is None else steps


def inside_units(policy, buf: np.ndarray, offsets: np.ndarray, pretokenizer: str,
                 steps: np.ndarray | None = None) -> tuple[np.ndarray, list[Opening]]:
    """(breaks, openings) of distinct units one after another (see :func:`unit_boundaries`)."""
    breaks, steps = unit_boundaries(policy, buf, offsets, pretokenizer, steps)
    return breaks, openings(steps)
