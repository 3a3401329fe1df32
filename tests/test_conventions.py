"""Habits of gzip, xz and zstd users: the zstd-style command line, tar -I, stdin to stdout,
-c as stdout, concatenated archives."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import chunkpress
import pytest
from support import read

CLI = [sys.executable, "-m", "chunkpress.cli"]


def run(*args, stdin=None, cwd=None):
    proc = subprocess.run([*CLI, *map(str, args)], input=stdin, capture_output=True, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr.decode()


@pytest.mark.slow
def test_zstd_style_compress_decompress_test_and_list(tmp_path):
    src = tmp_path / "alice.txt"
    src.write_bytes(read("alice29.txt"))
    assert run("-2", "-q", src)[0] == 0
    archive = tmp_path / "alice.txt.cpz"
    assert archive.exists()
    rc, out, _ = run("-d", "-c", archive)
    assert rc == 0 and out == src.read_bytes()
    assert run("-t", archive)[0] == 0
    rc, out, _ = run("-l", archive)  # as zstd -l: a header, then a row an archive, no Python reprs
    header, row = out.decode().splitlines()
    assert rc == 0 and header.split() == ["compressed", "uncompressed", "ratio", "codecs", "blocks", "file"]
    assert "152,089" in row and row.endswith(str(archive)) and "{" not in row
    rc, out, _ = run("-lv", archive)  # -lv: the detail, params as key=value
    assert rc == 0 and b"original_bytes" in out and b"level=9" in out and b"{" not in out
    src.unlink()
    assert run("-d", archive)[0] == 0 and src.read_bytes() == read("alice29.txt")
    assert run("-d", archive)[0] != 0  # the output exists: -f to replace it
    assert run("-d", "-f", archive)[0] == 0


@pytest.mark.slow
def test_piped_stdin_goes_to_stdout_with_or_without_a_subcommand():
    data = read("udhr_arb.txt")
    for compress, decompress in (([], ["-d"]), (["compress"], ["decompress"]), (["-3"], ["-d", "-"])):
        rc, archive, err = run(*compress, stdin=data)
        assert rc == 0, err
        rc, back, err = run(*decompress, stdin=archive)
        assert rc == 0 and back == data, err


@pytest.mark.slow
def test_c_is_stdout_in_the_subcommands_and_the_config_keeps_its_long_name(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(read("udhr_arb.txt"))
    rc, archive, err = run("compress", "-c", "-1", src)
    assert rc == 0 and archive.startswith(b"CHKP"), err
    assert not (tmp_path / "a.txt.cpz").exists()
    rc, _, err = run("compress", "--config", "missing.toml", src)
    assert rc == 2 and "missing.toml" in err


@pytest.mark.slow
def test_concatenated_archives_decode_to_the_concatenation(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(read("alice29.txt"))
    b.write_bytes(read("udhr_cmn_hans.txt"))
    rc, both, _ = run("compress", "--stdout", "-1", a, b)
    assert rc == 0
    rc, streamed, _ = run("compress", "-2", stdin=a.read_bytes())  # a block archive
    assert rc == 0 and streamed.startswith(b"CHKB")
    whole = streamed + both + streamed
    rc, out, err = run("-d", stdin=whole)
    assert rc == 0 and out == a.read_bytes() * 2 + b.read_bytes() + a.read_bytes(), err
    assert chunkpress.decompress(whole) == out
    rc, _, err = run("-d", stdin=both + b"garbage")
    assert rc == 4 and "corrupt" in err
    rc, _, err = run("-d", stdin=streamed + b"garbage!")
    assert rc == 4 and "not an archive" in err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tar") is None, reason="needs tar")
def test_tar_uses_chunkpress_as_its_compressor_both_ways(tmp_path):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "alice.txt").write_bytes(read("alice29.txt"))
    (tree / "sub" / "arb.txt").write_bytes(read("udhr_arb.txt"))
    wrapper = tmp_path / "bin" / "chunkpress"  # tar runs the program by name, from PATH
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m chunkpress.cli \"$@\"\n")
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}"}
    for program in ("chunkpress", "chunkpress -9"):
        archive = tmp_path / "t.tar.cpz"
        subprocess.run(["tar", "-I", program, "-cf", archive, "-C", tmp_path, "tree"], env=env, check=True)
        assert archive.read_bytes().startswith(b"CHKB")
        out = tmp_path / "out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        subprocess.run(["tar", "-I", "chunkpress", "-xf", archive, "-C", out], env=env, check=True)
        assert (out / "tree" / "alice.txt").read_bytes() == read("alice29.txt")
        assert (out / "tree" / "sub" / "arb.txt").read_bytes() == read("udhr_arb.txt")


def test_no_input_on_a_terminal_and_an_archive_to_a_terminal_are_refused(tmp_path, monkeypatch, capsys):
    from chunkpress.cli import main

    class Tty:
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    assert main([]) == 5 and "no input" in capsys.readouterr().err
    assert main(["compress"]) == 5
    src = tmp_path / "a.txt"
    src.write_bytes(b"text text text\n")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["-c", str(src)]) == 5 and "terminal" in capsys.readouterr().err


@pytest.mark.slow
def test_the_subcommands_still_take_their_global_options_first(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(b"some text, some text, some more text\n")
    assert run("-q", "compress", "-1", src)[0] == 0
    assert run("-v", "decompress", "-f", Path(f"{src}.cpz"))[0] == 0


def test_suffixes_as_zstd_treats_them(tmp_path, capsys):
    from chunkpress.cli import main

    src = tmp_path / "a.txt"
    src.write_bytes(read("udhr_arb.txt"))
    assert main(["-1", "-q", str(src)]) == 0
    archive = tmp_path / "a.txt.cpz"
    assert main(["-1", "-q", str(archive)]) == 5 and "already ends in .cpz" in capsys.readouterr().err
    renamed = tmp_path / "renamed"
    archive.rename(renamed)
    assert main(["-d", str(renamed)]) == 5 and "does not end in .cpz" in capsys.readouterr().err
    assert main(["-d", str(renamed), "-o", str(tmp_path / "b.txt")]) == 0
    assert (tmp_path / "b.txt").read_bytes() == src.read_bytes()


def test_train_with_a_vocabulary_size_is_bpe_and_import_hf_names_its_output(tmp_path, capsys):
    from chunkpress.cli import main
    from chunkpress.text.tokenizer import Tokenizer

    src = tmp_path / "a.txt"
    src.write_bytes(read("alice29.txt"))
    assert main(["train", str(src), "--vocab-size", "400", "--rules", str(tmp_path / "v.rules")]) == 0
    assert capsys.readouterr().err.splitlines()[-1].startswith("repair: 144 rules")  # says which scorer
    assert main(["train", "-q", str(src), "--scorer", "repair", "--max-rules", "144",
                 "--rules", str(tmp_path / "r.rules")]) == 0
    vocab = Tokenizer.from_rules_file((tmp_path / "v.rules").read_bytes())
    bpe = Tokenizer.from_rules_file((tmp_path / "r.rules").read_bytes())
    assert (vocab.rules == bpe.rules).all()  # repair's rules, not mdl's
    assert main(["export-hf", str(tmp_path / "v.rules"), "-o", str(tmp_path / "tok.json")]) == 0
    assert main(["import-hf", str(tmp_path / "tok.json")]) == 0
    assert (tmp_path / "tok.rules").exists()


def test_a_missing_optional_coder_package_is_reported_before_learning(monkeypatch):
    """The coder is built before the dictionary is learned: a missing pyppmd costs no learning."""
    from chunkpress import ConfigError
    from chunkpress.engine import learner
    from chunkpress.pipeline import Pipeline
    from chunkpress.plugins.coders import backends

    def missing():
        raise ConfigError("the ppmd coders need the optional package pyppmd")

    learned = []
    monkeypatch.setattr(backends, "_ppmd", missing)
    monkeypatch.setattr(learner, "fit", lambda *a, **k: learned.append(1))
    with pytest.raises(ConfigError, match="pyppmd"):
        Pipeline.from_config(scorer="repair", coder="varint-ppmd", limits={"max_rules": 10}).compress(b"text text text")
    assert learned == []


@pytest.mark.slow
def test_inspect_and_list_take_several_archives_with_numbers_as_numbers(tmp_path):
    import json

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(read("udhr_arb.txt"))
    b.write_bytes(read("udhr_cmn_hans.txt"))
    assert run("-1", "-q", a, b)[0] == 0
    rc, out, _ = run("inspect", "--json", f"{a}.cpz", f"{b}.cpz")
    infos = json.loads(out)
    assert rc == 0 and [i["original_bytes"] for i in infos] == [len(a.read_bytes()), len(b.read_bytes())]
    assert all(isinstance(i["archive_bytes"], int) for i in infos)
    rc, out, _ = run("-l", f"{a}.cpz", f"{b}.cpz")
    lines = out.decode().splitlines()
    assert rc == 0 and len(lines) == 3 and lines[2].endswith(f"{b}.cpz") and "13,683" in lines[1]
    rc, out, _ = run("-lv", f"{a}.cpz", f"{b}.cpz")
    assert rc == 0 and out.decode().count("original_bytes") == 2 and f"{b}.cpz:".encode() in out


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
def test_the_owner_and_group_go_with_the_data_where_permitted(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(read("udhr_arb.txt"))
    os.chown(src, 1234, 5678)
    os.chmod(src, 0o640)
    os.utime(src, (1_600_000_000, 1_600_000_000))  # 2020
    assert run("-1", "-q", src)[0] == 0
    archive = tmp_path / "a.txt.cpz"
    st = archive.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777, int(st.st_mtime)) == (1234, 5678, 0o640, 1_600_000_000)
    src.unlink()
    assert run("-d", "-q", archive)[0] == 0
    st = src.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777, int(st.st_mtime)) == (1234, 5678, 0o640, 1_600_000_000)
