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
