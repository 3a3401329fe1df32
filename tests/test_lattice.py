"""The top-down learners' lattice: each position's chain of pieces is every piece its word's
bytes from there begin with, longest first, before and after pieces die."""

import numpy as np
import pytest
from chunkpress.plugins.learners.lattice import Lattice, occurrences, spelled


def chain(lattice: Lattice, p: int) -> list[int]:
    out, t = [], int(lattice.top[p])
    while t >= 0:
        out.append(t)
        t = int(lattice.shorter[t])
    return out


def expected_chain(words: bytes, offsets, pieces: list[bytes], alive, p: int) -> list[int]:
    w = int(np.searchsorted(offsets, p, side="right")) - 1
    rest = words[p: offsets[w + 1]]
    found = [t for t, piece in enumerate(pieces) if alive[t] and rest.startswith(piece)]
    return sorted(found, key=lambda t: -len(pieces[t]))


@pytest.mark.parametrize("seed", range(6))
def test_chains_are_every_piece_a_position_begins_with(seed):
    rng = np.random.default_rng(seed)
    alphabet = bytes(rng.choice(256, size=3 + seed, replace=False).astype(np.uint8))
    pieces = sorted({bytes(rng.choice(list(alphabet), size=int(rng.integers(1, 12 if seed % 2 else 40))))
                     for _ in range(150)})
    rng.shuffle(pieces)
    words = [bytes(rng.choice(list(alphabet), size=int(rng.integers(0, 60)))) for _ in range(40)]
    buf = np.frombuffer(b"".join(words), dtype=np.uint8)
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in words], out=offsets[1:])
    spell, starts = spelled(pieces)
    lattice = Lattice.of(buf, offsets, spell, starts)
    text = buf.tobytes()
    alive = np.ones(len(pieces), dtype=bool)
    for _ in range(3):
        first_at = np.full(len(pieces), -1)
        for p in range(buf.size):
            expected = expected_chain(text, offsets, pieces, alive, p)
            assert chain(lattice, p) == expected, p
            for t in expected:
                first_at[t] = p if first_at[t] < 0 else first_at[t]
        assert np.array_equal(occurrences(lattice.top, lattice.shorter, len(pieces)), first_at)
        alive &= rng.random(len(pieces)) < 0.6
        lattice = lattice.keep(alive)
    # numbered anew, the living pieces keep their chains under their new numbers
    living = np.flatnonzero(alive)
    renumbered = lattice.renumbered(alive)
    kept = [pieces[t] for t in living]
    for p in range(buf.size):
        assert [living[t] for t in chain(renumbered, p)] == expected_chain(text, offsets, pieces, alive, p), p
    assert renumbered.length.tolist() == [len(piece) for piece in kept]
