"""The bwt-cm coder: LZP, block sorting and its model round-trip every kind of block, and a
damaged payload is refused with FormatError."""

import numpy as np
import pytest
from chunkpress.errors import FormatError
from chunkpress.format.leb128 import decode_varints, encode_varints
from chunkpress.plugins.coders import blocksort_model as bsm
from chunkpress.plugins.coders.blocksort import BlockSortCoder, BlockSortParams
from chunkpress.testing import check_coder
from support import read

NO_RULES = np.zeros((0, 2), dtype=np.int64)


def _round_trip(data: bytes, **params) -> bytes:
    coder = BlockSortCoder(BlockSortParams(**params))
    payload = coder.encode(NO_RULES, np.frombuffer(data, dtype=np.uint8))
    rules, symbols = coder.decode(payload, max_symbols=len(data))
    assert rules.shape == (0, 2) and symbols.tobytes() == data
    return payload


def _heads(payload: bytes):
    """Each block's (size, lzp, sorted, primary) from a payload."""
    (count,), pos = decode_varints(payload, 1)
    heads = []
    for _ in range(int(count)):
        head, pos = decode_varints(payload, 4, pos)
        fields, pos = decode_varints(payload, bsm.walk_count(int(head[2])), pos)
        heads.append(tuple(int(v) for v in head))
        pos += int(fields[-1])
    assert pos == len(payload)
    return heads


def test_the_kit_round_trips_and_refuses_damage():
    check_coder("bwt-cm")


@pytest.mark.parametrize("data", [b"", b"a", b"ab", b"\xf2" * 5, bytes(range(256)), b"\xf2\xff" * 3000,
                                  b"\0" * 100_000], ids=["empty", "one", "two", "escapes", "alphabet", "escape-runs",
                                                         "zeros"])
def test_edge_blocks_round_trip(data):
    _round_trip(data)
    _round_trip(data, lzp_min=0)


def test_a_text_smaller_than_bzip3_s_model_alone_would_make_it():
    """alice29 codes to 40,322 bytes (bzip3 -b 16: 40,496; the same model without the counted
    order-1 rate: 40,507)."""
    payload = _round_trip(read("alice29.txt"))
    assert len(payload) < 40_400


def test_lzp_shortens_repeats_and_the_escape_byte_survives():
    text = read("alice29.txt").replace(b"the", b"th\xf2")  # the escape byte, 7,000 times
    text = text + text[:50_000]  # a long repeat for LZP
    payload = _round_trip(text)
    ((size, lzp, n_sorted, _),) = _heads(payload)
    assert size == len(text) and lzp == 1 and n_sorted < size - 40_000
    plain = _round_trip(text, lzp_min=0)
    assert _heads(plain)[0][1:3] == (0, len(text))


def test_large_inputs_are_cut_into_even_blocks_inverted_by_several_walks():
    text = read("alice29.txt") * 16  # 2.4 MB: three even blocks of at most 1 MiB
    payload = _round_trip(text, block_mb=1)
    third = -(-len(text) // 3)
    assert [h[0] for h in _heads(payload)] == [third, third, len(text) - 2 * third]
    big = _round_trip(text, lzp_min=0)  # one block of 2.4 MB sorted bytes: two walks
    ((size, _, n_sorted, _),) = _heads(big)
    assert size == n_sorted == len(text) and bsm.walk_count(n_sorted) == 2


def test_inverse_transform_refuses_a_marker_that_does_not_invert():
    data = np.frombuffer(read("alice29.txt")[:5000], dtype=np.uint8).copy()
    import pydivsufsort

    last = np.zeros(data.size, dtype=np.uint8)
    rows = np.zeros(0, dtype=np.int64)
    primary = bsm.sort_block(data, pydivsufsort.divsufsort(data), last, rows)
    out = np.zeros(data.size, dtype=np.uint8)
    lf = np.zeros(data.size + 1, dtype=np.int32)
    counts = np.zeros(257, dtype=np.int64)
    assert bsm.inverse_bwt(last, primary, rows, lf, counts, out) and out.tobytes() == data.tobytes()
    wrong = [p for p in range(1, data.size + 1) if p != primary][:200]
    results = [bsm.inverse_bwt(last, p, rows, lf, counts, out) and out.tobytes() == data.tobytes() for p in wrong]
    assert not any(results)


def test_forged_block_heads_are_refused():
    data = read("alice29.txt")
    coder = BlockSortCoder(BlockSortParams(block_mb=1))
    payload = coder.encode(NO_RULES, np.frombuffer(data, dtype=np.uint8))
    (count,), pos = decode_varints(payload, 1)
    head, after = decode_varints(payload, 4, pos)
    size, lzp, n_sorted, primary = (int(v) for v in head)
    rest = payload[after:]

    def forged(*fields):
        return encode_varints([count]) + encode_varints(list(fields)) + rest

    cases = {
        "larger than the header's length": (forged(size, lzp, n_sorted, primary), len(data) - 1),
        "sorted longer than the block": (forged(size, lzp, size + 1, primary), None),
        "block over block_mb": (forged(2 << 20, lzp, n_sorted, primary), None),
        "marker past the end": (forged(size, lzp, n_sorted, n_sorted + 1), None),
        "marker at row 0": (forged(size, lzp, n_sorted, 0), None),
        "bad lzp flag": (forged(size, 2, n_sorted, primary), None),
        "wrong marker": (forged(size, lzp, n_sorted, primary + 1), None),
        "trailing bytes": (payload + b"\0", None),
        "no blocks listed": (encode_varints([count + 1]) + payload[pos:], None),
    }
    for label, (bad, cap) in cases.items():
        with pytest.raises(FormatError):
            coder.decode(bad, max_symbols=cap)
            pytest.fail(label)


def test_params_are_checked():
    for bad in ({"block_mb": 0}, {"block_mb": 2048}, {"lzp_min": 7}, {"lzp_min": 256}, {"lzp_min": -1}):
        with pytest.raises((TypeError, ValueError)):
            BlockSortParams(**bad)


def _tiny_blocks_payload(data: bytes, size: int) -> bytes:
    """What an encoder that cut ``data`` into blocks of ``size`` bytes would write (ours cuts
    evenly into as few blocks as block_mb allows)."""
    coder = BlockSortCoder(BlockSortParams(block_mb=1))
    coder._blocks = lambda n: [(start, min(n, start + size)) for start in range(0, n, size)]
    return coder.encode(NO_RULES, np.frombuffer(data, dtype=np.uint8))


def test_blocks_other_than_the_even_split_are_refused_before_their_models_are_set_up(monkeypatch):
    """Each block costs a model's set-up whatever its size, so a payload of thousands of tiny
    blocks would cost far more per byte than an honest one: the decoder takes only the split
    the encoder makes, and refuses the rest before setting up any block."""
    data = read("alice29.txt")[:20_000]
    tiny = _tiny_blocks_payload(data, 10)
    uneven = _tiny_blocks_payload(read("alice29.txt") * 4, 400_000)  # two blocks, where the encoder makes one
    set_up = []
    monkeypatch.setattr(bsm, "sorted_tables", lambda: set_up.append(1))
    coder = BlockSortCoder(BlockSortParams(block_mb=1))
    with pytest.raises(FormatError, match="2,000 blocks"):
        coder.decode(tiny, max_symbols=len(data))
    with pytest.raises(FormatError, match="even split"):
        coder.decode(tiny)  # no bound given: the heads are read, then refused
    with pytest.raises(FormatError, match="even split"):
        coder.decode(uneven)
    assert not set_up
