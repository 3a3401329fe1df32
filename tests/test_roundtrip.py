"""compress -> decompress gives back the same bytes, for every coder and fixture."""

import numpy as np
import pytest
from chunkpress import FormatError
from chunkpress.pipeline import Pipeline, inspect
from support import decompress, fixture_inputs, read

INPUTS = fixture_inputs()
CODERS = ["varint-zstd", "varint-zlib", "varint-lzma", "varint-bz2", "combinatorial", "raw-zlib", "raw-lzma", "raw-zstd",
          "raw-bz2", "raw-ppmd", "varint-ppmd", "cm", "chunk-cm"]


@pytest.mark.parametrize("coder", CODERS)
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_roundtrip(registry, coder, name):
    data = INPUTS[name]
    pipe = Pipeline.from_config(registry=registry, coder=coder, scorer="repair", limits={"max_rules": 500})
    archive = pipe.compress(data)
    assert decompress(archive, registry) == data


@pytest.mark.parametrize("scorer", ["mdl", "pmi", "spmi"])
def test_roundtrip_other_scorers(registry, scorer):
    data = INPUTS["udhr_arb"]
    pipe = Pipeline.from_config(registry=registry, scorer=scorer, limits={"max_rules": 300})
    assert decompress(pipe.compress(data), registry) == data


def test_default_pipeline_compresses_alice(registry, alice):
    pipe = Pipeline.from_config(registry=registry)
    archive = pipe.compress(alice)
    assert decompress(archive, registry) == alice
    assert len(archive) < 0.4 * len(alice)
    info = inspect(archive, registry)
    assert info["codec"] == "chunkpress.combinatorial.v1"
    assert info["rules"] == 2651  # the mdl stopping point on alice29 (reference: m = 2907)
    assert info["header_bytes"] + info["payload_bytes"] == len(archive)


def test_varint_inspect_reports_frames(registry, alice):
    pipe = Pipeline.from_config(registry=registry, coder="varint-zstd", scorer="repair", limits={"max_rules": 100})
    archive = pipe.compress(alice)
    info = inspect(archive, registry)
    assert info["model_bytes"] + info["string_bytes"] == info["payload_bytes"]


def test_fit_api_returns_rules_symbols_trace(registry, alice):
    result = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 100}).fit(alice)
    assert result.rules.shape == (100, 2)
    assert len(result.trace) == 101
    assert result.trace["k01"][0] == 4377  # "e " is the most frequent pair of alice29
    from chunkpress.format.expand import expand

    assert expand(result.rules, result.symbols) == alice


def test_payload_corruption_is_detected(registry, alice):
    archive = bytearray(Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 50}).compress(alice[:5000]))
    archive[-20] ^= 0xFF
    with pytest.raises(FormatError):
        decompress(bytes(archive), registry)


def test_varint_rank_order():
    from chunkpress.plugins.coders.varint import rank_table

    table, ranks = rank_table(np.array([5, 7, 7, 3, 7, 5]))
    assert table.tolist() == [7, 5, 3]
    assert ranks.tolist() == [1, 0, 0, 2, 0, 1]


def test_id_order_ablation_round_trips_and_differs(registry, alice):
    by_rank, by_id = (Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 1000},
                                           coder={"name": "varint-zlib", "params": {"order": order}})
                      for order in ("frequency", "id"))
    a, b = by_rank.compress(alice), by_id.compress(alice)
    assert decompress(a, registry) == alice and decompress(b, registry) == alice
    assert len(a) < len(b)  # frequency order helps zlib (seed 3's finding)


def test_one_shot_api():
    import chunkpress

    data = INPUTS["udhr_arb"]
    archive = chunkpress.compress(data, scorer="repair", limits={"max_rules": 100}, coder="cm")
    assert chunkpress.decompress(archive) == data
    assert inspect(archive)["codec"] == "chunkpress.cm.v1"
    with pytest.raises(FormatError):
        chunkpress.decompress(archive[:-5])
    from importlib.metadata import version

    assert chunkpress.__version__ == version("chunkpress")  # pyproject.toml's, as installed


def test_a_backend_added_to_the_table_gives_a_raw_and_a_varint_coder(monkeypatch):
    """One table: adding a backend adds both coder families, with capped decoding."""
    import attrs
    from chunkpress import FormatError
    from chunkpress.pipeline import Pipeline
    from chunkpress.plugin.registry import build_registry
    from chunkpress.plugins.coders import backends

    def stored(frame, params, max_size):
        if len(frame) > max_size:
            raise FormatError("stored frame is larger than allowed")
        return bytes(frame)

    table = dict(backends.BACKENDS)
    table["stored"] = backends.Backend(name="stored", params=attrs.make_class("StoredParams", {}, frozen=True),
                                       compress=lambda data, params: bytes(data), decompress=stored,
                                       summary="no compression")
    monkeypatch.setattr(backends, "BACKENDS", table)
    reg = build_registry(autoload=False)
    data = read("udhr_arb.txt")
    for name in ("raw-stored", "varint-stored"):
        assert reg.get("coder", name).codec_id == f"chunkpress.{name}.v1"
        archive = Pipeline.from_config(None, registry=reg, scorer="repair", coder=name,
                                       limits={"max_rules": 50}).compress(data)
        assert decompress(archive, reg) == data
