"""Pre-token boundaries: split text into words so that no merge crosses a word boundary.

The result is a ``breaks`` array (``breaks[i]`` true: no pair between bytes i and i + 1) that
the rewriters honour, from the registered pre-tokenizer a config names (the built-ins are in
``chunkpress.plugins.pretokenizers``), with the text's pieces (read each on its own) cut at
their ends.
"""

from __future__ import annotations

import numpy as np

from ..arrays import distinct
from ..contract import NO_PRETOKENIZER
from .pretokenizers import built, check_name


def pretoken_breaks(data, name: str, pieces=None, lines: bool = False) -> np.ndarray | None:
    """The ``breaks`` array of ``data`` under splitter ``name``; None (one word) for "none"
    unless the text is cut into pieces.

    ``pieces``: offsets where ``data`` is cut into texts pre-tokenized each on its own (HF
    splits at added tokens so; training, at the ends of its files); ``lines``: each line (its
    newline included) is such a piece, as HF's trainer reads files. A piece's end is always a
    break."""
    if check_name(name) == NO_PRETOKENIZER and pieces is None and not lines:
        return None
    arr = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    ends = _piece_ends(arr, pieces, lines)
    if name == NO_PRETOKENIZER and ends.size <= 1:
        return None
    breaks = np.zeros(arr.size, dtype=np.bool_)
    built("pretokenizer", name).split(arr, ends, breaks)  # the name was checked above
    breaks[ends[:-1] - 1] = True
    return breaks


def _piece_ends(arr: np.ndarray, pieces, lines: bool) -> np.ndarray:
    """The sorted ends of the independent pieces, the last at ``arr.size``."""
    cuts = [np.asarray(pieces, dtype=np.int64)] if pieces is not None else []
    if lines:
        cuts.append(np.flatnonzero(arr == 10).astype(np.int64) + 1)
    ends = distinct(np.concatenate([*cuts, np.array([arr.size], dtype=np.int64)]))
    return ends[(ends > 0) & (ends <= arr.size)]


def split(data: bytes, name: str) -> list[bytes]:
    """The pre-tokens themselves (for inspection and tests)."""
    breaks = pretoken_breaks(data, name)
    if breaks is None:
        return [bytes(data)] if data else []
    cuts = np.flatnonzero(breaks) + 1
    edges = [0, *cuts.tolist(), len(data)]
    return [bytes(data[a:b]) for a, b in zip(edges, edges[1:], strict=False) if b > a]
