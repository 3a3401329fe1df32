"""chunkpress as a numcodecs codec: found through numcodecs' registry, and a zarr array."""

import numpy as np
import pytest

from support import read

numcodecs = pytest.importorskip("numcodecs")


def test_numcodecs_finds_the_codec_by_id_and_round_trips_its_config():
    codec = numcodecs.get_codec({"id": "chunkpress", "scorer": "repair", "max_rules": 200})
    assert codec.get_config() == {"id": "chunkpress", "scorer": "repair", "max_rules": 200}
    assert numcodecs.get_codec(codec.get_config()).get_config() == codec.get_config()
    data = np.frombuffer(read("udhr_arb.txt"), dtype=np.uint8)
    encoded = codec.encode(data)
    assert len(encoded) < data.size // 2
    assert np.array_equal(np.frombuffer(codec.decode(encoded), dtype=np.uint8), data)
    out = np.empty_like(data)
    codec.decode(encoded, out=out)
    assert np.array_equal(out, data)


def test_a_zarr_array_compressed_with_chunkpress_round_trips(tmp_path):
    zarr = pytest.importorskip("zarr")
    from chunkpress import numcodecs_codec

    text = np.frombuffer(read("alice29.txt"), dtype=np.uint8)
    codec = numcodecs_codec(scorer="repair", max_rules=500)
    path = str(tmp_path / "text.zarr")
    if int(zarr.__version__.split(".")[0]) >= 3:
        array = zarr.create_array(path, shape=text.shape, chunks=(50_000,), dtype="u1",
                                  compressors=[codec], zarr_format=2)
    else:
        array = zarr.open(path, mode="w", shape=text.shape, chunks=(50_000,), dtype="u1", compressor=codec)
    array[:] = text
    again = zarr.open(path, mode="r")
    assert np.array_equal(again[:], text)
    chunk_files = [p for p in (tmp_path / "text.zarr").iterdir() if not p.name.startswith(".")]
    stored = sum(p.stat().st_size for p in chunk_files)
    assert len(chunk_files) == 4 and stored < 0.5 * text.size  # compressed chunks, not raw ones
    assert all(p.read_bytes()[:4] == b"CHKP" for p in chunk_files)
