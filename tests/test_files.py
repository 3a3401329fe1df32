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
