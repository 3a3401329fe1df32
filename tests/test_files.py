"""Files as zstd users handle them: closed standard streams, odd names, --rm and -r, and the
small API edges the third review found (a fractional block size, a fractional token id)."""

import io
import os
import subprocess
import sys

import chunkpress
import pytest
from chunkpress.cli import main
from support import read

CLI = [sys.executable, "-m", "chunkpress.cli"]


@pytest.mark.slow
def test_a_closed_stdout_is_an_error_in_a_line(tmp_path):
    """``chunkpress -c FILE >&-`` was a traceback (AttributeError on sys.stdout)."""
    (tmp_path / "a.txt").write_bytes(b"some text\n")
    run = subprocess.run(" ".join([*CLI, "-c", str(tmp_path / "a.txt")]) + " >&-", shell=True, capture_output=True,
                         text=True)
    assert run.returncode == 5 and run.stderr.strip() == \
        f"chunkpress: error: {tmp_path / 'a.txt'}: cannot write to standard output: it is closed"
    no_stderr = subprocess.run(" ".join([*CLI, "-c", str(tmp_path / "a.txt")]) + " 2>&-", shell=True,
                               capture_output=True)
    assert no_stderr.returncode == 0 and chunkpress.decompress(no_stderr.stdout) == b"some text\n"


@pytest.mark.slow
def test_a_file_named_dash_is_a_file_not_stdout(tmp_path):
    """``-d -- -.cpz`` wrote to stdout: the archive of a file named ``-`` decompresses to one."""
    (tmp_path / "-").write_bytes(b"a file named dash\n")
    subprocess.run([*CLI, "-q", "./-"], cwd=tmp_path, check=True)
    os.unlink(tmp_path / "-")
    run = subprocess.run([*CLI, "-d", "--", "-.cpz"], cwd=tmp_path, capture_output=True)
    assert run.returncode == 0 and run.stdout == b"" and (tmp_path / "-").read_bytes() == b"a file named dash\n"


def test_rm_and_recursive_as_zstd_has_them(tmp_path, capsys):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_bytes(read("udhr_arb.txt"))
    (tree / "sub" / "b.txt").write_bytes(b"b text\n")
    assert main(["-r", "--rm", "-q", str(tree)]) == 0
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == \
        ["a.txt.cpz", "sub/b.txt.cpz"]
    assert main(["compress", "-r", "-q", str(tree)]) == 0  # the archives are not compressed again
    assert main(["-d", "-r", "--rm", "-q", str(tree)]) == 0
    assert (tree / "a.txt").read_bytes() == read("udhr_arb.txt") and (tree / "sub" / "b.txt").read_bytes() == b"b text\n"
    assert not list(tree.rglob("*.cpz"))
    capsys.readouterr()
    assert main(["-q", str(tree / "a.txt")]) == 0
    assert main(["-t", "--rm", str(tree / "a.txt.cpz")]) == 0  # testing: the archive stays
    assert (tree / "a.txt.cpz").exists() and "--rm keeps the inputs" in capsys.readouterr().err


def test_the_zstd_form_takes_every_compress_option_and_compress_takes_T(tmp_path):
    """One option set for both forms: --block-size, --max-rules, --scorer and --rules in the
    zstd form, -T in compress (it used to refuse them)."""
    src = tmp_path / "a.txt"
    src.write_bytes(read("alice29.txt")[:60_000])
    assert main(["-q", "-f", "--scorer", "repair", "--max-rules", "50", "--block-size", "20K", str(src)]) == 0
    first = (tmp_path / "a.txt.cpz").read_bytes()
    assert main(["compress", "-q", "-f", "-T", "1", "--scorer", "repair", "--max-rules", "50", "--block-size", "20K",
                 str(src)]) == 0
    assert (tmp_path / "a.txt.cpz").read_bytes() == first and first[:4] == b"CHKB"


def test_a_block_size_that_is_not_a_whole_number_is_refused_when_opening(tmp_path):
    with pytest.raises(chunkpress.ConfigError, match="block_size"):
        chunkpress.open(tmp_path / "a.cpz", "wb", block_size=0.5e6)
    assert not (tmp_path / "a.cpz").exists()


def test_a_token_id_must_be_an_integer():
    tokenizer = chunkpress.Tokenizer(rules=[[104, 105]])
    assert tokenizer.decode([256, 33]) == "hi!"
    for bad in ([1.5], [True], ["a"]):
        with pytest.raises(chunkpress.ChunkpressError, match="integers"):
            tokenizer.decode(bad)


def test_open_tells_the_uncompressed_position(tmp_path):
    with chunkpress.open(tmp_path / "a.cpz", "wb", level=1) as f:
        f.write(b"0123456789")
        assert f.tell() == 10
    with chunkpress.open(tmp_path / "a.cpz") as f:
        assert f.read(4) == b"0123" and f.tell() == 4
    with chunkpress.open(io.BytesIO((tmp_path / "a.cpz").read_bytes()), "rt") as f:
        assert f.read() == "0123456789"


def _file_size_limit(size: int):
    """A child's preexec: files it writes may grow to ``size`` bytes (a disk that fills);
    Python ignores SIGXFSZ, so a write past it fails with EFBIG."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


@pytest.mark.slow
@pytest.mark.parametrize("kept", [3_000, 100_000], ids=["at-the-last-flush", "at-a-write"])
def test_a_full_disk_is_one_line_and_exit_5_and_r_goes_on(tmp_path, kept):
    """A disk that fills while the archive is written (a small archive fails at the last
    flush, which once closed the file a second time and ended in a traceback): one line, exit
    5, the source kept, no output; -r reports each file and goes on to the next."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("a.txt", "b.txt"):
        (tree / name).write_bytes(read("alice29.txt")[:kept])
    run = subprocess.run([*CLI, "-1", "--rm", str(tree / "a.txt")], capture_output=True, text=True,
                         preexec_fn=_file_size_limit(1024))
    assert run.returncode == 5, run.stderr
    assert run.stderr.splitlines() == [f"chunkpress: error: cannot write {tree / 'a.txt.cpz'}: File too large"]
    assert sorted(p.name for p in tree.iterdir()) == ["a.txt", "b.txt"]
    run = subprocess.run([*CLI, "-1", "-r", str(tree)], capture_output=True, text=True,
                         preexec_fn=_file_size_limit(1024))
    assert run.returncode == 5 and len(run.stderr.splitlines()) == 2 and "Traceback" not in run.stderr
    assert sorted(p.name for p in tree.iterdir()) == ["a.txt", "b.txt"]


@pytest.mark.slow
def test_rm_skips_a_symlink_named_on_the_command_line(tmp_path):
    """As zstd: --rm would remove the link and leave its file uncompressed, so a link is left
    alone with a note; the other inputs are compressed and removed as usual."""
    real = tmp_path / "real.txt"
    real.write_bytes(b"some words\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    other = tmp_path / "other.txt"
    other.write_bytes(b"more words\n")
    run = subprocess.run([*CLI, "--rm", "-1", str(link), str(other)], capture_output=True, text=True)
    assert run.returncode == 0
    assert run.stderr.splitlines() == [f"chunkpress: note: {link}: a symbolic link, skipped (--rm would remove the "
                                       "link, not its file)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "other.txt.cpz", "real.txt"]
    assert link.is_symlink()


def test_a_stream_writer_refuses_a_write_after_close():
    """A write after close appended a block after the end record, and the finished archive no
    longer decoded: every writer the API gives raises ValueError, as io and gzip do."""
    sink = io.BytesIO()
    writer = chunkpress.Compressor(1).stream_writer(sink)
    writer.write(b"hello ")
    writer.close()
    with pytest.raises(ValueError):
        writer.write(b"world")
    assert chunkpress.decompress(sink.getvalue()) == b"hello "
    opened = chunkpress.open(io.BytesIO(), "wb", level=1)
    opened.close()
    with pytest.raises(ValueError):
        opened.write(b"x")
