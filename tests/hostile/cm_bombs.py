"""Crafted cm archives that once cost far more to decode than honest ones (CPU bombs).

* a hash flood: rules whose chunk keys share their low bits, so that every key lands in one
  run of an unseeded open-addressing table and each lookup walks it;
* a parse bomb: ``a`` x N with the rules a^(k+1) b, whose prefixes run on far past the only
  match (``a``) at every byte of the text, so a longest-match parse walks them all.

Each comes with an honest archive of the same decoded length to time it against.

    cd tests && python -m hostile.cm_bombs    # times all four on this machine
"""

from __future__ import annotations

from unittest import mock

import numba
import numpy as np
from chunkpress.pipeline import Pipeline
from chunkpress.plugins.coders import dictionary
from chunkpress.plugins.coders.mixing.hashing import CHUNK_BASE, chunk_key

#: the -9 preset's coder: parse = "longest"
CODER = {"name": "cm", "params": {"memory": 22, "parse": "longest"}}


@numba.njit(cache=True)
def _flood_rules(count, low_bits, base):
    """``base`` ordinary rules (pairs of letters and of those pairs), then ``count`` rules
    (a, b) of any two symbols so far whose chunk keys share their low ``low_bits`` bits
    (all pairs tried in a fixed order, kept when they do; spellings up to 24 bytes)."""
    mask = np.uint64((1 << low_bits) - 1)
    total = base + count
    h = np.zeros(256 + total, dtype=np.uint64)
    lens = np.ones(256 + total, dtype=np.int64)
    pows = np.ones(64, dtype=np.uint64)
    for j in range(1, 64):
        pows[j] = pows[j - 1] * CHUNK_BASE
    for b in range(256):
        h[b] = np.uint64(b + 1)
    rules = np.zeros((total, 2), dtype=np.int64)
    k = 0
    hi = 97
    while k < total:
        # every pair that the newest symbol ``hi`` makes with the symbols before it
        for lo in range(97, hi + 1):
            for a, b in ((hi, lo), (lo, hi)):
                if k >= total or lens[a] + lens[b] > 24 or (a < 256 and a > 122) or (b < 256 and b > 122):
                    continue
                hh = h[a] * pows[lens[b]] + h[b]
                if k >= base and chunk_key(hh, lens[a] + lens[b]) & mask:
                    continue
                rules[k, 0], rules[k, 1] = a, b
                h[256 + k] = hh
                lens[256 + k] = lens[a] + lens[b]
                k += 1
        hi += 1
        if hi == 123:
            hi = 256
        if hi >= 256 + k:
            break
    return rules[:k]


def _archive(rules: np.ndarray, text: bytes) -> bytes:
    return Pipeline.from_config(coder=CODER).encode(rules, np.frombuffer(text, dtype=np.uint8).astype(np.int64), text)


def _text(n: int) -> bytes:
    """Lower-case letters and spaces, pseudo-random but fixed."""
    rng = np.random.default_rng(7)
    return bytes(rng.choice(np.frombuffer(b"abcdefghijklmnopqrstuvwxyz   ", dtype=np.uint8), n))


def hash_flood(rules: int = 200_000, low_bits: int = 13, n: int = 50_000) -> tuple[bytes, bytes]:
    """(crafted, honest): ``rules`` rules whose keys share their ``low_bits`` low bits after
    as many ordinary ones as it takes to find them, and the same number of ordinary rules; the
    same text of ``n`` bytes."""
    crafted = _flood_rules(rules, low_bits, 1 << low_bits)
    honest = _flood_rules(len(crafted), 0, 0)
    text = _text(n)
    return _archive(crafted, text), _archive(honest, text)


def _chain_length(n: int) -> int:
    """The most rules ab, aab, ... that cm allows for ``n`` bytes (its prefix bound)."""
    return int((2 * (16 * n + (1 << 20) - 256)) ** 0.5) - 2


def parse_bomb_archive(n: int) -> bytes:
    """``a`` x n with the rules ab, aab, aaab, ... (as long as cm allows: every prefix of each
    is a dictionary prefix, none but ``a`` a match)."""
    k = _chain_length(n)
    chain = [[97, 98]] + [[97, 256 + j] for j in range(k - 1)]
    # the encoder refuses such a dictionary now: craft it past that check
    with mock.patch.object(dictionary, "parse_budget", lambda n: 1 << 62):
        return _archive(np.array(chain, dtype=np.int64), b"a" * n)


def parse_bomb(n: int = 200_000) -> tuple[bytes, bytes]:
    """(crafted, honest): :func:`parse_bomb_archive`, and a dictionary of as many rules learned
    from ordinary text of the same length."""
    k = _chain_length(n)
    crafted = parse_bomb_archive(n)
    text = _text(n)
    fit = Pipeline.from_config(scorer="repair", limits={"max_rules": k}).fit(text, trace=False)
    honest = Pipeline.from_config(coder=CODER).encode(fit.rules, fit.symbols, text)
    return crafted, honest


if __name__ == "__main__":
    import time

    from chunkpress import decompress

    for name, make in (("hash flood", hash_flood), ("parse bomb", parse_bomb)):
        t0 = time.perf_counter()
        crafted, honest = make()
        print(f"{name}: built in {time.perf_counter() - t0:.1f} s")
        for label, archive in (("honest", honest), ("crafted", crafted)):
            t0 = time.perf_counter()
            try:
                decompress(archive)
                outcome = "decoded"
            except Exception as exc:  # noqa: BLE001 - report what happened
                outcome = f"refused: {exc}"
            print(f"  {label}: {time.perf_counter() - t0:.2f} s, {outcome}")
