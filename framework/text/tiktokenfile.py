"""A tiktoken vocabulary (a ``.tiktoken`` ranks file: each line a token in base64, a space and
its rank) read as a dictionary of merges, so that ``encode`` gives tiktoken's
``encode_ordinary`` ids.

tiktoken joins, again and again, the adjacent pair whose join is the token of the lowest rank.
Each token of more than one byte is then made by exactly one pair: the two parts that this same
rule leaves of the token itself when it stops below the token's rank (HF's converter,
``convert_slow_tokenizer.TikTokenConverter``, finds them so). Those pairs, in rank order, are
our rules; replaying them (each across the whole word, left to right) is what HF's BPE does
with the converted merges, and gives tiktoken's ids. The ranks are kept as the ids
(:class:`~chunkpress.text.hf.HFVocab`), and the split pattern is a pre-tokenizer
(``cl100k``, ``o200k``) the caller names, as tiktoken's ``Encoding`` takes ``pat_str`` apart
from the ranks. Special tokens are not read: ``encode_ordinary`` never gives them.
"""

from __future__ import annotations

import base64
import binascii

import numpy as np

from ..contract import BYTE_SYMBOLS
from ..errors import FormatError
from .hf import MAX_HF_ID, HFVocab

#: the pre-tokenizer of tiktoken's published encodings, by their number of ranks
PATTERN_BY_SIZE = {100_256: "cl100k", 199_998: "o200k"}


def read_ranks(data: bytes) -> dict[bytes, int]:
    """{token: rank} of a ranks file; FormatError naming the line for anything else."""
    ranks: dict[bytes, int] = {}
    seen: set[int] = set()
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            raise FormatError(f"line {number:,}: not a token in base64 and a rank")
        try:
            token = base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f"line {number:,}: the token is not base64") from None
        rank = int(parts[1])
        if not token:
            raise FormatError(f"line {number:,}: an empty token")
        if rank > MAX_HF_ID:
            raise FormatError(f"line {number:,}: rank {rank:,} is past {MAX_HF_ID:,}")
        if token in ranks or rank in seen:
            raise FormatError(f"line {number:,}: a token or a rank for the second time")
        ranks[token] = rank
        seen.add(rank)
    if not ranks:
        raise FormatError("no ranks: not a tiktoken ranks file")
    return ranks


def _parts(ranks: dict[bytes, int], token: bytes, below: int) -> list[bytes]:
    """tiktoken's joins on ``token`` alone, of tokens ranked below ``below`` only."""
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = below, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], below)
            if rank < best:
                best, at = rank, i
        if at < 0:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return parts


def merges_of_ranks(ranks: dict[bytes, int]) -> tuple[np.ndarray, HFVocab]:
    """(rules, the ranks as HF ids) of a ranks file's vocabulary; FormatError where a byte has
    no rank (tiktoken could not encode it) or a token is made by no pair of lower rank (no
    text can reach it, and no merge list holds it)."""
    missing = [b for b in range(BYTE_SYMBOLS) if bytes([b]) not in ranks]
    if missing:
        raise FormatError(f"byte 0x{missing[0]:02x} has no rank: tiktoken could not encode it")
    symbol = {bytes([b]): b for b in range(BYTE_SYMBOLS)}
    ids = [ranks[bytes([b])] for b in range(BYTE_SYMBOLS)]
    rules: list[tuple[int, int]] = []
    for token, rank in sorted(((t, r) for t, r in ranks.items() if len(t) > 1), key=lambda tr: tr[1]):
        parts = _parts(ranks, token, rank)
        if len(parts) != 2:
            raise FormatError(f"token {token[:40]!r} (rank {rank:,}) is made by no pair of tokens of lower rank")
        symbol[token] = BYTE_SYMBOLS + len(rules)
        rules.append((symbol[parts[0]], symbol[parts[1]]))
        ids.append(rank)
    return np.array(rules, dtype=np.int64).reshape(-1, 2), HFVocab(ids=np.array(ids, dtype=np.int64))
