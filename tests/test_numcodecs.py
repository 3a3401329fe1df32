"""chunkpress as a numcodecs codec: found through numcodecs' registry, and a zarr array."""

import json

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


def test_a_level_is_a_codec_parameter_and_a_bad_one_is_refused_at_once():
    from chunkpress import ConfigError
    from chunkpress.format.container import unpack

    codec = numcodecs.get_codec({"id": "chunkpress", "level": 3})
    assert codec.get_config() == {"id": "chunkpress", "level": 3}
    data = np.frombuffer(read("udhr_arb.txt"), dtype=np.uint8)
    encoded = codec.encode(data)
    # level 3's coders: word-level BPE behind zstd, or zstd alone where that is smaller (13 KB)
    assert unpack(bytes(encoded))[0].codec in ("chunkpress.varint-zstd.v1", "chunkpress.raw-zstd.v1")
    assert np.array_equal(np.frombuffer(codec.decode(encoded), dtype=np.uint8), data)
    with pytest.raises(ConfigError, match="levels are 1 to 9"):
        numcodecs.get_codec({"id": "chunkpress", "level": 12})


@pytest.mark.slow
def test_a_zarr_3_array_round_trips_and_reopens_in_another_process(tmp_path):
    """zarr_format=3: the codec is found by its name through zarr's entry points."""
    import subprocess
    import sys
    import warnings

    zarr = pytest.importorskip("zarr")
    if int(zarr.__version__.split(".")[0]) < 3:
        pytest.skip("zarr 3 needed")
    from chunkpress import zarr_codec

    text = np.frombuffer(read("alice29.txt"), dtype=np.uint8)
    path = tmp_path / "text3.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # our own zarr 3 codec: no "not in the v3 spec" warning
        array = zarr.create_array(str(path), shape=text.shape, chunks=(50_000,), dtype="u1",
                                  compressors=[zarr_codec(level=1)], zarr_format=3)
        array[:] = text
    meta = json.loads((path / "zarr.json").read_text())
    assert meta["codecs"][-1] == {"name": "chunkpress", "configuration": {"level": 1}}
    chunks = sorted((path / "c").iterdir())
    assert len(chunks) == 4 and all(p.read_bytes()[:4] == b"CHKP" for p in chunks)
    probe = ("import sys, zarr, numpy as np; a = zarr.open(sys.argv[1], mode='r'); "
             "sys.stdout.buffer.write(np.asarray(a[:]).tobytes())")
    back = subprocess.run([sys.executable, "-W", "ignore", "-c", probe, str(path)], capture_output=True, check=True)
    assert back.stdout == text.tobytes()


@pytest.mark.slow
def test_a_hostile_chunk_is_refused_before_it_is_decoded(tmp_path):
    """A zarr 3 chunk replaced by an archive that claims 200 MB (a tiny archive of zeros): the
    chunk holds 50 kB, so it is refused at once, in bounded memory; the decodings of one codec
    share its max_memory."""
    import chunkpress
    from support import extra_peak_bytes

    zarr = pytest.importorskip("zarr")
    if int(zarr.__version__.split(".")[0]) < 3:
        pytest.skip("zarr 3 needed")
    from chunkpress import ChunkpressError, zarr_codec

    text = np.frombuffer(read("alice29.txt"), dtype=np.uint8)
    path = tmp_path / "text3.zarr"
    array = zarr.create_array(str(path), shape=text.shape, chunks=(50_000,), dtype="u1",
                              compressors=[zarr_codec(level=1)], zarr_format=3)
    array[:] = text
    (sorted((path / "c").iterdir())[0]).write_bytes(chunkpress.compress(bytes(200 << 20), coder="raw-zstd", max_rules=0))

    def read_all():
        zarr.open(str(path), mode="r")[:]

    with pytest.raises(ChunkpressError, match="max_output_size"):
        read_all()
    assert extra_peak_bytes(read_all) < 100 << 20
    codec = numcodecs.get_codec({"id": "chunkpress", "max_memory": 10 << 20})
    with pytest.raises(ChunkpressError, match="max_memory"):
        codec.decode(chunkpress.compress(bytes(50 << 20), level=1))
