"""Paths and fixture data shared by the tests."""

from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).parent.parent


def decompress(archive: bytes, registry=None, **settings) -> bytes:
    """``chunkpress.decompress`` with the registry a test built (its plugins)."""
    import chunkpress

    return chunkpress.Decompressor(registry=registry, **settings).decompress(archive)


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def fixture_inputs() -> dict[str, bytes]:
    """The round-trip fixtures every coder must handle."""
    rng = np.random.default_rng(1234)
    return {
        "alice29": read("alice29.txt"),
        "udhr_arb": read("udhr_arb.txt"),
        "udhr_cmn_hans": read("udhr_cmn_hans.txt"),
        "empty": b"",
        "one_byte": b"x",
        "random_64k": rng.integers(0, 256, 65536, dtype=np.uint8).tobytes(),
        "run_100k": b"a" * 100_000,
        "all_bytes": bytes(range(256)) * 3,
    }


#: seconds within which a hostile input must be refused: generous for a loaded 2-core CI
#: machine, far below the minutes (or the memory exhaustion) the guarded defects took
FAST = 10.0


def extra_peak_bytes(function) -> int:
    """How much more resident memory ``function()`` peaks at than doing nothing, each in a
    forked child process (the test process's own peak, raised by earlier tests, is no baseline)."""
    from chunkpress.study.isolation import run_isolated

    def quietly():
        try:
            function()
        except Exception:  # noqa: BLE001 - the caller asserts the error; here only memory counts
            pass

    return run_isolated(quietly)[1] - run_isolated(lambda: None)[1]


from chunkpress.testing import mutated  # noqa: E402,F401 - the fuzz tests' damage, as plugin authors get it


class PlainBpe:
    """BPE written from the papers' definitions, in plain Python over weighted words, as a
    reference for the engine: the most frequent pair (ties: the smallest (s0, s1)), counted
    left to right without overlaps (in x x x the pair (x, x) counts once). ``words`` maps a
    unit to its count, a unit being a tuple of words, each a tuple of symbols: pairs across
    words are candidates from rule ``join_after`` on (SuperBPE; None: never). ``tau``: Picky
    BPE's threshold (after a merge of (a, b) into z, a part x with k_z / (k_z + k_x) > tau, not
    a byte, is removed: its occurrences split into what it was made of)."""

    def __init__(self, words: dict, join_after: int | None = None, tau: float | None = None):
        self.units = {tuple(tuple(w) for w in unit): count for unit, count in words.items()}
        self.join_after, self.tau = join_after, tau
        self.rules: list[tuple[int, int]] = []
        self.deletions: list[tuple[int, int]] = []

    def _sequences(self, joined: bool):
        for unit, count in self.units.items():
            if joined:
                yield [s for w in unit for s in w], count
            else:
                for w in unit:
                    yield list(w), count

    def counts(self):
        from collections import Counter

        joined = self.join_after is not None and len(self.rules) >= self.join_after
        if joined:  # the words of a unit become one sequence for good
            self.units = {(tuple(s for w in unit for s in w),): c for unit, c in self.units.items()}
        pairs, symbols = Counter(), Counter()
        for seq, count in self._sequences(False):
            for s in seq:
                symbols[s] += count
            offset = 0
            for i in range(len(seq) - 1):
                if seq[i] != seq[i + 1] or offset % 2 == 0:
                    pairs[(seq[i], seq[i + 1])] += count
                offset = offset + 1 if seq[i] == seq[i + 1] else 0
        return pairs, symbols

    def _rewrite(self, change):
        self.units = {tuple(tuple(change(list(w))) for w in unit): c for unit, c in self.units.items()}

    def _split(self, symbol: int) -> list[int]:
        gone = {s for _, s in self.deletions}

        def walk(s):
            if s >= 256 and (s == symbol or s in gone):
                a, b = self.rules[s - 256]
                return walk(a) + walk(b)
            return [s]
        return walk(symbol)

    def step(self, min_count: int = 2) -> bool:
        pairs, _ = self.counts()
        best = max(((k, (-a, -b)) for (a, b), k in pairs.items() if k >= min_count), default=None)
        if best is None:
            return False
        a, b = -best[1][0], -best[1][1]
        z = 256 + len(self.rules)

        self._rewrite(lambda seq: merge_pair(seq, a, b, z))
        self.rules.append((a, b))
        if self.tau is not None:
            for part in dict.fromkeys((a, b)):
                _, symbols = self.counts()
                if part >= 256 and symbols[z] > self.tau * (symbols[z] + symbols[part]):
                    pieces = self._split(part)
                    self.deletions.append((len(self.rules) - 1, part))
                    self._rewrite(lambda seq, p=part, q=pieces: [x for s in seq for x in (q if s == p else [s])])
        return True

    def vocabulary(self) -> int:
        return 256 + len(self.rules) - len(self.deletions)


def merge_pair(seq, a: int, b: int, z: int) -> list:
    """``seq`` with each occurrence of the pair (a, b), left to right and not overlapping,
    replaced by ``z``: one BPE merge, by its definition."""
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(z)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out
