"""Damaged and crafted archives: fuzzed round trips, flipped, cut and forged archives refused,
claims that would need more than the memory limit refused before anything is allocated.

CHUNKPRESS_FUZZ_CASES (default 2000) sets how many round trips and how many mutated archives
each run makes; CHUNKPRESS_FUZZ_SEED (default 20261122) makes a run reproducible.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from chunkpress import ChunkpressError, FormatError
from chunkpress.format.container import Header, pack, unpack
from chunkpress.pipeline import Pipeline
from support import FAST, decompress, extra_peak_bytes, read

CASES = int(os.environ.get("CHUNKPRESS_FUZZ_CASES", "2000"))
SEED = int(os.environ.get("CHUNKPRESS_FUZZ_SEED", "20261122"))
CODERS = ["combinatorial", "varint-zstd", "varint-zlib", "varint-lzma", "raw-zlib", "raw-lzma", "raw-zstd", "raw-bz2",
          "raw-ppmd", "cm", "chunk-cm", "bwt-cm"]
# fast backend settings: the fuzz is about robustness, not ratio (xz -9e alone costs 50 ms/call)
FAST_PARAMS = {"varint-zstd": {"level": 1}, "varint-zlib": {"level": 1}, "varint-lzma": {"preset": 0, "extreme": False},
               "raw-zstd": {"level": 1}, "raw-zlib": {"level": 1}, "raw-lzma": {"preset": 0}, "raw-bz2": {"level": 1},
               "raw-ppmd": {"model_order": 4, "memory_mb": 1}, "cm": {"memory": 16},
               "chunk-cm": {"memory": 16}, "bwt-cm": {"lzp_min": 8}}  # LZP on inputs this small
SCORERS = ["mdl", "repair", "pmi", "spmi"]


def random_input(rng) -> bytes:
    kind = rng.integers(0, 7)
    n = int(rng.integers(0, 600))
    if kind == 0:
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()          # random bytes
    if kind == 1:
        return rng.choice(list(b"ab c"), n).astype(np.uint8).tobytes()    # tiny alphabet
    if kind == 2:
        return bytes([int(rng.integers(0, 256))]) * int(rng.integers(0, 5000))  # one long run
    if kind == 3:
        return rng.permutation(256).astype(np.uint8).tobytes()[: n % 257]  # all distinct
    if kind == 4:
        return b"" if rng.random() < 0.5 else bytes([int(rng.integers(0, 256))])  # empty / 1 byte
    if kind == 5:
        start = int(rng.integers(0, 150_000))
        return read("alice29.txt")[start : start + n]                      # real text
    words = [b"the", b"cat", b"sat", b" ", b"\n", b"on", b"mat", b"\xe4\xb8\xad"]
    return b"".join(words[i] for i in rng.integers(0, len(words), n // 3))


@pytest.fixture(scope="module")
def pipelines(registry):
    out = {}
    for coder in CODERS:
        for scorer in SCORERS:
            for rewriter in ("linked",):  # scan = linked is checked by test_rewriters
                out[coder, scorer, rewriter] = Pipeline.from_config(
                    registry=registry, coder={"name": coder, "params": FAST_PARAMS.get(coder, {})},
                    scorer=scorer, rewriter=rewriter,
                    limits={"max_rules": 40},
                )
    return out


def test_fuzzed_round_trips(registry, pipelines):
    rng = np.random.default_rng(SEED)
    keys = list(pipelines)
    for case in range(CASES):
        data = random_input(rng)
        key = keys[int(rng.integers(0, len(keys)))]
        archive = pipelines[key].compress(data)
        assert decompress(archive, registry) == data, (case, key, data[:50])


def mutate(rng, archive: bytes) -> bytes:
    kind = rng.integers(0, 3)
    if kind == 0 and archive:
        bad = bytearray(archive)
        i = int(rng.integers(0, len(bad)))
        bad[i] ^= 1 << int(rng.integers(0, 8))
        return bytes(bad)
    if kind == 1:
        return archive[: int(rng.integers(0, len(archive)))]
    return archive + rng.integers(0, 256, int(rng.integers(1, 16)), dtype=np.uint8).tobytes()


@pytest.fixture(scope="module")
def samples(pipelines):
    rng = np.random.default_rng(SEED + 1)
    out = []
    for coder in CODERS:
        for scorer in ("mdl", "repair"):
            for _ in range(3):
                data = random_input(rng) or b"x"
                out.append((data, pipelines[coder, scorer, "linked"].compress(data)))
    return out


def test_mutated_archives_are_rejected(registry, samples):
    """Flipped, truncated and extended archives: every one is refused with a FormatError."""
    rng = np.random.default_rng(SEED + 2)
    for _ in range(CASES):
        data, archive = samples[int(rng.integers(0, len(samples)))]
        bad = mutate(rng, archive)
        if bad == archive:
            continue
        with pytest.raises(FormatError):
            decompress(bad, registry)


def test_mutated_payloads_never_give_wrong_output(registry, samples):
    """Mutations behind a valid container check reach the decoders themselves: each one gives a
    FormatError or the original bytes, never another exception, a hang or wrong output."""
    rng = np.random.default_rng(SEED + 3)
    refused = 0
    for _ in range(CASES):
        data, archive = samples[int(rng.integers(0, len(samples)))]
        header, payload, _ = unpack(archive)
        bad_payload = mutate(rng, payload)
        try:
            out = decompress(pack(header, bad_payload), registry)
        except FormatError:
            refused += 1
            continue
        assert out == data, header.codec
    assert refused > CASES // 2


def forged(codec: str, length: int, payload: bytes) -> bytes:
    return pack(Header(codec=codec, params={}, length=length, blake2b="0" * 32), payload)


@pytest.mark.slow
@pytest.mark.parametrize("codec", ["chunkpress.combinatorial.v1", "chunkpress.varint-zstd.v1"])
def test_crafted_length_2_to_40_is_refused_fast(registry, codec):
    crafted = forged(codec, 1 << 40, b"\x01\x02\x03")
    t = time.perf_counter()
    with pytest.raises(FormatError, match="more than the limit"):
        decompress(crafted, registry)
    assert time.perf_counter() - t < FAST
    assert extra_peak_bytes(lambda: decompress(crafted, registry)) < 100e6


def test_crafted_dictionary_of_2_to_31_symbols_is_refused_fast(registry):
    import numba
    from chunkpress.plugins.coders import combinatorial as cb

    @numba.njit
    def header_only(r, out):
        st = np.zeros(5, dtype=np.uint64)
        st[cb._RANGE] = cb._MASK
        st[cb._CSIZE] = 1
        cb._encode_elias(st, out, r)
        cb._flush(st, out)
        return st[cb._POS]

    out = np.zeros(64, dtype=np.uint8)
    size = header_only((1 << 31) - 256, out)
    payload = out[1:size].tobytes()
    t = time.perf_counter()
    with pytest.raises(FormatError, match="impossible rule count"):
        decompress(forged("chunkpress.combinatorial.v1", 1000, payload), registry)
    # and the varint model frame claiming 2^31 rules in a few bytes
    import zstandard
    from chunkpress.format.leb128 import encode_varints

    model = zstandard.ZstdCompressor().compress(encode_varints([(1 << 31) - 256, 0, 0]))
    string = zstandard.ZstdCompressor().compress(b"")
    with pytest.raises(FormatError, match="truncated"):
        decompress(forged("chunkpress.varint-zstd.v1", 1000, encode_varints([len(model)]) + model + string), registry)
    assert time.perf_counter() - t < FAST


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_compress_leaves_nothing(tmp_path, sig):
    source = tmp_path / "big.txt"
    text = read("alice29.txt") * 8
    source.write_bytes(text)
    out = tmp_path / "big.cpz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "chunkpress.cli", "compress", str(source), "-o", str(out), "--rewriter", "scan"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    time.sleep(2.0)
    assert proc.poll() is None, "compress finished before the signal; make the input bigger"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and b"interrupted" in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    assert source.read_bytes() == text


def test_unwritable_output_is_a_clear_error(tmp_path, capsys):
    from chunkpress.cli import main

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    src = tmp_path / "a.txt"
    src.write_bytes(b"hello hello")
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        assert main(["compress", str(src), "-o", str(locked / "a.cpz")]) != 0
        assert "cannot write" in capsys.readouterr().err
    finally:
        locked.chmod(0o700)


def test_errors_are_chunkpress_errors():
    assert issubclass(FormatError, ChunkpressError)


def test_lengths_that_wrap_int64_are_refused():
    """48 doubling rules make a 2^48-byte symbol; 2^16 copies spell 2^64 bytes, which int64
    wraps to 0: the expansion must refuse, not trust the wrapped sum and write past its buffer."""
    from chunkpress.format.expand import expand

    rules = np.array([[0, 0]] + [[256 + k, 256 + k] for k in range(47)], dtype=np.int64)
    symbols = np.full(1 << 16, 256 + 47, dtype=np.int64)
    with pytest.raises(FormatError, match="does not match"):
        expand(rules, symbols, max_length=0)
    with pytest.raises(FormatError, match="more than the limit"):
        expand(rules, symbols)


#: the levels' archives of udhr_cmn_hans in this process (a warm cache, as a rule), handed to
#: the bounds-checked run below, which compiles every kernel afresh
WARM_DIGESTS = "CHUNKPRESS_TEST_WARM_DIGESTS"


def _level_digests() -> dict:
    import hashlib

    import chunkpress

    data = read("udhr_cmn_hans.txt")  # 8 KB: -9 codes it every way of -8, -7, -6 and -5 too
    return {str(level): hashlib.sha256(chunkpress.compress(data, level=level)).hexdigest() for level in range(1, 10)}


@pytest.mark.skipif(WARM_DIGESTS not in os.environ, reason="run by the bounds-checked suite, in its fresh cache")
def test_every_level_writes_in_a_fresh_cache_what_it_writes_in_a_warm_one():
    """An archive never depends on numba's cache: every level, compiled afresh (and with bounds
    checks), writes the bytes the warm run wrote."""
    assert _level_digests() == json.loads(os.environ[WARM_DIGESTS])


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NUMBA_BOUNDSCHECK") == "1", reason="already running bounds-checked")
def test_fuzz_suite_under_numba_boundscheck(tmp_path):
    """The round-trip and mutation fuzzers again with every compiled kernel bounds-checked
    (NUMBA_BOUNDSCHECK=1, compiled afresh into a cache of its own): an index past a buffer is
    an IndexError here instead of a silent write; and every level's archive is the warm one's."""
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"), CHUNKPRESS_FUZZ_CASES="300")
    env[WARM_DIGESTS] = json.dumps(_level_digests())
    proc = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=--import-mode=importlib -q",
                           "-p", "no:cacheprovider", __file__, "-k", "fuzzed or mutated or crafted or wrap or fresh_cache"],
                          cwd=Path(__file__).parent.parent, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "8 passed" in proc.stdout, proc.stdout[-2000:]
