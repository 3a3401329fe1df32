"""The code length of held-out text under each prefix of a dictionary's rules, as training
records it step by step for its own text (``train --eval``)."""

from __future__ import annotations

import numpy as np

from ..contract import BYTE_SYMBOLS, as_symbols
from ..engine.codelength import PART_NAMES, parts_from_sum
from ..engine.events import schedule
from ..engine.linkedstring import LinkedString
from .pretokenize import pretoken_breaks
from .units import opening_steps, openings


def code_length_curve(rules: np.ndarray, pretokenizer: str, events, boundary, data) -> np.ndarray:
    """Held-out code length of ``data`` under the first r of ``rules`` (with their deletion
    ``events`` and ``boundary`` policy), for r = 0 .. R: a table with m, N and the five parts."""
    arr = as_symbols(data)
    breaks = pretoken_breaks(arr, pretokenizer)
    string = LinkedString()
    string.load(arr, breaks)
    if boundary is not None and breaks is not None:
        events = schedule(events, openings(opening_steps(boundary, arr, breaks)))
    n_before, sums = string.replay(rules, record=True, events=events)
    columns = [("m", np.int64), ("total_bits", np.int64), *[(p, np.int64) for p in PART_NAMES], ("N", np.int64)]
    rows = np.zeros(len(n_before), dtype=columns)
    parts = np.zeros(5, dtype=np.int64)
    for i in range(len(n_before)):
        m = BYTE_SYMBOLS + i
        parts_from_sum(m, int(n_before[i]), float(sums[i]), parts)
        rows[i] = (m, int(parts.sum()), *parts.tolist(), int(n_before[i]))
    return rows
