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
