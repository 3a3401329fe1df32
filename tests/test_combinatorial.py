"""The combinatorial codec: exact round trips, and a payload the size of the MDL code length."""

import numpy as np
import pytest
from chunkpress import FormatError
from chunkpress.engine.codelength import code_length
from chunkpress.engine.learner import fit
from chunkpress.engine.stops import Limits
from chunkpress.pipeline import Pipeline, inspect
from chunkpress.plugins.coders.combinatorial import CombinatorialCoder
from chunkpress.plugins.rewriters.linked import LinkedRewriter
from chunkpress.plugins.scorers.mdl import MdlScorer
from chunkpress.plugins.scorers.repair import RepairScorer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import decompress

CODER = CombinatorialCoder()


def roundtrip(rules, symbols):
    payload = CODER.encode(rules, symbols)
    r2, s2 = CODER.decode(payload)
    assert np.array_equal(r2, np.asarray(rules).reshape(-1, 2))
    assert np.array_equal(s2, symbols)
    return payload


@pytest.mark.parametrize(
    "rules,symbols",
    [
        ([], []),                                   # empty input
        ([], [65]),                                 # N = 1, one symbol
        ([], [0] * 1000),                           # one symbol repeated: the string costs 0 bits
        ([(97, 98)], [256]),                        # a dictionary of one rule
        ([(97, 98)], [256, 256, 97, 256]),
        ([], list(range(256))),                     # all 256 bytes
        ([(255, 255), (256, 256)], [257, 255, 0]),  # rules over the largest ids
    ],
)
def test_edge_cases(rules, symbols):
    roundtrip(np.array(rules, dtype=np.int64).reshape(-1, 2), np.array(symbols, dtype=np.int64))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400), max_rules=st.integers(0, 40))
def test_roundtrip_of_learned_dictionaries(data, max_rules):
    result = fit(data, RepairScorer(), LinkedRewriter(), Limits(max_rules=max_rules), trace=False)
    roundtrip(result.rules, result.symbols)


@pytest.mark.parametrize("length", [0, 1, 2, 7, 300])
def test_random_rule_dags(length):
    rng = np.random.default_rng(length)
    rules = np.array([(rng.integers(0, 256 + r), rng.integers(0, 256 + r)) for r in range(length)], dtype=np.int64).reshape(-1, 2)
    symbols = rng.integers(0, 256 + length, size=5 * length + 3)
    roundtrip(rules, symbols)


def test_size_matches_the_mdl_code_length_on_alice(alice):
    result = fit(alice, MdlScorer(), LinkedRewriter())
    payload = roundtrip(result.rules, result.symbols)
    model_bits = int(result.trace["total_bits"][-1])
    assert model_bits == 404833  # the reference's final total
    written = 8 * len(payload)
    assert abs(written - model_bits) <= 64 + 0.0001 * model_bits


def test_size_matches_the_model_for_any_state(alice):
    # not only at the mdl optimum: after 500 repair rules too
    result = fit(alice, RepairScorer(), LinkedRewriter(), Limits(max_rules=500), trace=False)
    m = 256 + len(result.rules)
    model = code_length(m, len(result.symbols), np.bincount(result.symbols, minlength=m)).total_bits
    written = 8 * len(CODER.encode(result.rules, result.symbols))
    assert abs(written - model) <= 64 + 0.0001 * model


def test_inspect_shows_parts_as_written_and_predicted(registry, alice):
    archive = Pipeline.from_config(registry=registry).compress(alice)
    info = inspect(archive, registry)
    assert info["model_total_bits"] == 404833
    assert info["string_bits (model / written)"].startswith("334,562 / ")
    assert abs(info["written_minus_model_bits"]) <= 64


def test_corrupt_payloads_never_give_wrong_output(registry, alice):
    archive = Pipeline.from_config(registry=registry).compress(alice[:3000])
    rng = np.random.default_rng(7)
    for _ in range(200):
        bad = bytearray(archive)
        i = int(rng.integers(len(bad) - 40, len(bad)))
        bad[i] ^= int(rng.integers(1, 256))
        try:
            out = decompress(bytes(bad), registry)
        except FormatError:
            continue
        assert out == alice[:3000]


def test_claimed_length_bounds_the_string(registry):
    from chunkpress.format.container import Header, pack, unpack

    archive = Pipeline.from_config(registry=registry, limits={"max_rules": 0}).compress(b"a" * 5000)
    header, payload, _ = unpack(archive)
    forged = pack(Header(codec=header.codec, params={}, length=10, blake2b=header.blake2b), payload)
    with pytest.raises(FormatError, match="beyond the limit 10"):
        decompress(forged, registry)
