"""chunkpress.open: archives as file objects, as gzip.open and zstandard.open give them."""

import io

import chunkpress
import pytest
from chunkpress import FormatError
from support import read


def test_written_in_pieces_read_back_in_pieces(tmp_path):
    data = read("alice29.txt")
    path = tmp_path / "a.cpz"
    with chunkpress.open(path, "wb", level=1, block_size=40_000) as f:
        for i in range(0, len(data), 7_777):
            assert f.write(data[i: i + 7_777]) == len(data[i: i + 7_777])
    archive = path.read_bytes()
    assert archive.startswith(b"CHKB") and chunkpress.decompress(archive) == data
    assert archive.count(b"CHKP") >= 4  # one archive per block: memory is that of one block
    with chunkpress.open(path) as f:
        assert f.read(10) == data[:10]
        assert f.read() == data[10:]
        assert f.read() == b""


def test_text_modes_append_and_single_archives(tmp_path):
    path = tmp_path / "log.cpz"
    with chunkpress.open(path, "wt", level=2, encoding="utf-8") as f:
        f.write("première ligne\n")
    with chunkpress.open(path, "at", level=3, encoding="utf-8") as f:  # a second archive after the first
        f.write("second line\n")
    with chunkpress.open(path, "rt", encoding="utf-8") as f:
        assert f.readlines() == ["première ligne\n", "second line\n"]
    single = tmp_path / "s.cpz"
    single.write_bytes(chunkpress.compress(read("udhr_arb.txt"), level=1))
    with chunkpress.open(single) as f:
        assert f.read() == read("udhr_arb.txt")


def test_file_objects_stay_open_and_errors_are_clear(tmp_path):
    buffer = io.BytesIO()
    with chunkpress.open(buffer, "wb", level=1) as f:
        f.write(b"abc\n" * 1000)
    assert not buffer.closed
    archive = buffer.getvalue()
    broken = archive[:-5] + bytes([archive[-5] ^ 1]) + archive[-4:]
    with chunkpress.open(io.BytesIO(broken)) as f, pytest.raises(FormatError):
        f.read()
    with pytest.raises(FileExistsError):
        chunkpress.open(tmp_path / "x", "xb").close() or chunkpress.open(tmp_path / "x", "xb")
    with pytest.raises(ValueError, match="invalid mode"):
        chunkpress.open(tmp_path / "y", "rw")
    with pytest.raises(ValueError, match="text modes"):
        chunkpress.open(tmp_path / "y", "wb", encoding="utf-8")


def test_compressobj_and_decompressobj_round_trip_in_pieces_of_any_size():
    """As python-zstandard's: compress in pieces, decompress the archive fed in pieces of any
    size; each block's bytes come back once it is complete, and the rest at flush."""
    import random

    data = read("alice29.txt")
    pieces = chunkpress.Compressor(level=1).compressobj(block_size=40_000)
    archive = b"".join(pieces.compress(data[i:i + 7_000]) for i in range(0, len(data), 7_000)) + pieces.flush()
    assert chunkpress.decompress(archive) == data and pieces.flush() == b""
    with pytest.raises(ValueError):
        pieces.compress(b"after the end")
    rng = random.Random(5)
    inflow, out, at = chunkpress.Decompressor().decompressobj(), [], 0
    while at < len(archive):
        step = rng.randint(1, 4_000)
        out.append(inflow.decompress(archive[at:at + step]))
        at += step
    assert sum(1 for o in out if o) >= 3  # the blocks came back as they completed
    assert b"".join(out) + inflow.flush() == data and inflow.eof
    cut = chunkpress.Decompressor().decompressobj()
    cut.decompress(archive[:-10])
    with pytest.raises(chunkpress.FormatError):
        cut.flush()


def test_a_reader_seeks_forward_and_back_as_gzip_s_does(tmp_path):
    data = read("alice29.txt")
    path = tmp_path / "a.cpz"
    path.write_bytes(chunkpress.compress(data, level=1, block_size=30_000))
    with chunkpress.open(path) as f:
        assert f.seekable()
        assert f.seek(100_000) == 100_000 and f.read(10) == data[100_000:100_010]
        assert f.seek(5) == 5 and f.read(10) == data[5:15]
        assert f.seek(3, 1) == 18 and f.read(5) == data[18:23]
        with pytest.raises(ValueError):
            f.seek(0, 2)
    with chunkpress.open(path, "rt", encoding="latin-1", newline="") as f:
        f.read(20)
        f.seek(0)
        assert f.read(8) == data[:8].decode("latin-1")
