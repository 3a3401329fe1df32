"""The cm coder: exact round trips, the parse modes, what the chunk contexts buy, hostile payloads."""

import lzma
import time

import numpy as np
import pytest
from chunkpress import FormatError
from chunkpress.config import load_config
from chunkpress.format.container import pack, unpack
from chunkpress.format.expand import expand
from chunkpress.format.leb128 import encode_varints
from chunkpress.pipeline import Pipeline, decode_archive, inspect
from chunkpress.plugins.coders.cm import CmCoder, CmParams
from chunkpress.plugins.coders.mixing.logistic import STRETCH, squash
from chunkpress.plugins.coders.mixing.states import NEXT_STATE
from support import FAST, ROOT, decompress, mutated, read

BEST = ROOT / "examples" / "context-mixing" / "best.toml"


@pytest.fixture(scope="module")
def alice_fit(registry):
    pipe = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 500})
    return pipe.fit(read("alice29.txt"), trace=False)


def coder(**params):
    return CmCoder(CmParams(**params))


def test_exact_parse_returns_the_very_rules_and_symbols(alice_fit):
    payload = coder().encode(alice_fit.rules, alice_fit.symbols)
    rules, symbols = coder().decode(payload)
    assert np.array_equal(rules, alice_fit.rules) and np.array_equal(symbols, alice_fit.symbols)
    # context mixing beats what xz makes of the same text
    assert len(payload) < 0.85 * len(lzma.compress(read("alice29.txt"), preset=9))


def test_longest_parse_keeps_text_and_rules_and_returns_the_longest_match_parse(alice_fit):
    payload = coder(parse="longest").encode(alice_fit.rules, alice_fit.symbols)
    rules, symbols = coder(parse="longest").decode(payload)
    assert np.array_equal(rules, alice_fit.rules)
    assert expand(rules, symbols) == read("alice29.txt")
    # the longest-match parse, checked against a plain Python one over the first 3,000 bytes
    spell = {}
    for s in range(256 + len(rules)):
        spell.setdefault(expand(rules, np.array([s])), s)
    text, pos, want = read("alice29.txt")[:3000], 0, []
    longest = max(len(k) for k in spell)
    while pos + longest <= len(text):  # the cut must not shorten a match
        size = max(n for n in range(1, longest + 1) if text[pos : pos + n] in spell)
        want.append(spell[text[pos : pos + size]])
        pos += size
    assert symbols[: len(want)].tolist() == want
    # no bit per boundary: smaller than the exact parse
    assert len(payload) < len(coder().encode(alice_fit.rules, alice_fit.symbols))


def test_chunk_contexts_improve_the_coded_text(alice_fit):
    """The ablation, on the same dictionary: the chunk contexts make the text cheaper."""
    sizes = {c: len(coder(parse="longest", contexts=c).encode(alice_fit.rules, alice_fit.symbols))
             for c in ("all", "bytes", "chunks")}
    assert sizes["all"] < sizes["bytes"] < sizes["chunks"]


def test_encoding_is_deterministic_and_byte_level_bits_are_integer(alice_fit):
    a = coder().encode(alice_fit.rules, alice_fit.symbols)
    assert a == coder().encode(alice_fit.rules, alice_fit.symbols)
    # the logistic tables are integers and inverse to each other
    assert STRETCH.dtype.kind == "i" and all(abs(squash(int(STRETCH[p])) - p) <= 40 for p in range(1, 4095, 7))
    assert NEXT_STATE.dtype == np.uint8 and NEXT_STATE[0, 1] != NEXT_STATE[0, 0]


@pytest.mark.parametrize("data", [b"", b"x", bytes(range(256)) * 3, b"ab" * 5000, "中文 العربية".encode() * 40])
@pytest.mark.parametrize("parse", ["exact", "longest"])
def test_edge_inputs_round_trip(registry, data, parse):
    pipe = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 50},
                                coder={"name": "cm", "params": {"parse": parse, "memory": 16}})
    assert decompress(pipe.compress(data), registry) == data


@pytest.mark.parametrize("name", ["alice29.txt", "udhr_arb.txt", "udhr_cmn_hans.txt"])
def test_best_config_round_trips_and_beats_xz(registry, name):
    data = read(name)
    pipe = Pipeline(load_config(BEST, registry), registry)
    archive = pipe.compress(data)
    assert decompress(archive, registry) == data
    assert len(archive) < len(lzma.compress(data, preset=9))


def test_inspect_splits_dictionary_and_text(registry, alice_fit):
    pipe = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 500}, coder="cm")
    info = inspect(pipe.encode(alice_fit.rules, alice_fit.symbols, read("alice29.txt")), registry)
    assert info["rules"] == 500 and info["dictionary_bytes"] + info["string_bytes"] == info["payload_bytes"]
    assert 500 < info["dictionary_bytes"] < 3000  # the 500 rules cost 1 to 6 bytes each


def _archive(payload: bytes, length: int, params=None) -> bytes:
    from chunkpress.format.container import Header, checksum

    return pack(Header(codec="chunkpress.cm.v1", params=params or {"memory": 16}, length=length,
                       blake2b=checksum(b"\0" * min(length, 1))), payload)


@pytest.mark.parametrize("fields", [
    [10**12, 1, 0, 0],          # a terabyte from a few bytes
    [1000, 2000, 0, 0],         # more symbols than bytes
    [1000, 0, 0, 0],            # text but no symbols
    [1000, 10, 2**40, 0],       # absurd rule count
    [1000, 10, 0, 99],          # rules section past the end
    [1000, 10, 10**7, 2],       # ten million rules in a 2-byte section
])
def test_forged_counts_are_refused_fast(registry, fields):
    start = time.perf_counter()
    with pytest.raises(FormatError):
        decompress(_archive(encode_varints(fields) + b"\x01\x02", fields[0]), registry)
    assert time.perf_counter() - start < FAST


def test_mutated_payloads_are_refused_or_exact(registry, alice_fit):
    """Flips and cuts anywhere in a cm payload: a FormatError or the original, never a crash."""
    data = read("alice29.txt")[:20000]
    pipe = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 100},
                                coder={"name": "cm", "params": {"memory": 16}})
    archive = pipe.compress(data)
    header, payload, _ = unpack(archive)
    refused = 0
    for bad in mutated(payload):
        try:
            out = decompress(pack(header, bad), registry)
        except FormatError:
            refused += 1
            continue
        assert out == data
    assert refused >= 140


def test_a_decoder_never_reads_past_the_payload(registry, alice_fit):
    payload = coder().encode(alice_fit.rules, alice_fit.symbols)
    with pytest.raises(FormatError, match="ends early|corrupt"):
        coder().decode(payload[:-3])
    decoded = decode_archive(_archive(payload, len(read("alice29.txt")), {"memory": 29}), None)
    assert np.array_equal(decoded.symbols, alice_fit.symbols)


def test_reference_to_an_external_dictionary_is_refused_clearly(registry, alice_fit):
    from chunkpress import ConfigError

    pipe = Pipeline.from_config(registry=registry, coder="cm")
    with pytest.raises(ConfigError, match="cannot reference"):
        pipe.encode(alice_fit.rules, alice_fit.symbols, read("alice29.txt"), reference=True)


def test_key_tables_bound_every_lookup_whatever_the_keys():
    """A hash flood: 60,000 keys with the same low 32 bits would all start at one slot of an
    unseeded table (quadratic to build, every lookup walking them). The seeded table keeps
    every run of occupied slots under MAX_PROBES, finds every key and no other."""
    from chunkpress.plugins.coders.dictionary import key_set
    from chunkpress.plugins.coders.mixing.hashing import MAX_PROBES, longest_run, lookup

    keys = np.arange(1, 60_001, dtype=np.uint64) << np.uint64(32)
    start = time.perf_counter()
    table, used = key_set(keys)
    assert time.perf_counter() - start < FAST
    assert longest_run(used) < MAX_PROBES and used.sum() == keys.size
    assert all(lookup(table, used, k) >= 0 for k in keys[::97])
    assert all(lookup(table, used, k + np.uint64(1)) < 0 for k in keys[::97])
    # another seed, another layout, the same answers
    again, _ = key_set(keys)
    assert again[-1] != table[-1]


def test_crafted_dictionaries_cost_about_what_honest_ones_do():
    """The parse bomb (``a`` x N with the rules ab, aab, ...: the longest-match parse walked
    every prefix at every byte, 5 s against 0.4 s at N = 200,000) is refused within a few
    times an honest archive's time; so is a flood of keys aimed at one table slot."""
    from hostile.cm_bombs import hash_flood, parse_bomb

    def seconds(archive):
        start = time.perf_counter()
        try:
            decompress(archive)
        except FormatError as exc:
            assert "prefixes run on far past" in str(exc)
        return time.perf_counter() - start

    for crafted, honest in (parse_bomb(100_000), hash_flood(20_000, 13, 20_000)):
        seconds(honest)  # compiled
        assert seconds(crafted) <= 10 * seconds(honest) + 0.2
