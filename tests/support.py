"""Paths and fixture data shared by the tests."""

from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).parent.parent


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


def mutated(payload: bytes, cases: int = 150, seed: int = 7):
    """Damaged copies of ``payload``, in turn cut short, with one bit flipped, and extended by
    1-8 random bytes: what a decoder must refuse (or decode exactly), never crash on."""
    rng = np.random.default_rng(seed)
    for case in range(cases):
        bad = bytearray(payload)
        if case % 3 == 0:
            bad = bad[: int(rng.integers(0, len(bad)))]
        elif case % 3 == 1:
            bad[int(rng.integers(0, len(bad)))] ^= 1 << int(rng.integers(0, 8))
        else:
            bad += bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8))
        yield bytes(bad)
