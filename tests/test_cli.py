"""The chunkpress command: round trips, one-line errors, exit codes, no partial outputs."""

import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest
from chunkpress.cli import main
from support import DATA, ROOT


def run(*args, stdin=None):
    proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", *map(str, args)], input=stdin, capture_output=True)
    return proc.returncode, proc.stdout, proc.stderr.decode()


@pytest.fixture
def alice_copy(tmp_path):
    path = tmp_path / "alice29.txt"
    path.write_bytes((DATA / "alice29.txt").read_bytes())
    return path


def test_compress_decompress_files(tmp_path, alice_copy):
    assert main(["compress", str(alice_copy), "--scorer", "repair", "--max-rules", "300"]) == 0
    archive = tmp_path / "alice29.txt.cpz"
    out = tmp_path / "restored.txt"
    assert main(["decompress", str(archive), "-o", str(out)]) == 0
    assert out.read_bytes() == alice_copy.read_bytes()
    assert alice_copy.read_bytes() == (DATA / "alice29.txt").read_bytes()  # input untouched


@pytest.mark.slow
def test_stdin_stdout_pipeline():
    data = (DATA / "udhr_cmn_hans.txt").read_bytes()
    rc, archive, _ = run("compress", "-", "--max-rules", "50", stdin=data)
    assert rc == 0 and archive.startswith(b"CHKB")  # a stream of unknown length: block mode
    rc, restored, _ = run("decompress", "-", stdin=archive)
    assert rc == 0 and restored == data


def test_refuses_to_overwrite_without_force(tmp_path, alice_copy, capsys):
    target = tmp_path / "exists.cpz"
    target.write_bytes(b"keep me")
    assert main(["compress", str(alice_copy), "-o", str(target), "--max-rules", "5"]) != 0
    assert target.read_bytes() == b"keep me"
    assert "already exists; use --force" in capsys.readouterr().err
    assert main(["compress", str(alice_copy), "-o", str(target), "--max-rules", "5", "--force"]) == 0
    assert target.read_bytes().startswith(b"CHKP")


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("chunkpress: error: ")
    return lines[0]


def make(name, content):
    def create(folder):
        (folder / name).write_bytes(content)
        return folder / name

    return create


@pytest.mark.slow
@pytest.mark.parametrize(
    "make_input,args,needle",
    [
        (lambda d: d / "missing.txt", ["compress"], "cannot read"),
        (lambda d: d, ["compress"], "is a directory"),
        (make("a.txt", b"hello"), ["compress", "--scorer", "nope"], "unknown scorer 'nope'"),
        (make("a.txt", b"hello"), ["compress", "--coder", "gzip"], "unknown coder 'gzip'"),
        (make("bad.cpz", b"not an archive at all"), ["decompress"], "bad magic"),
        (make("empty.cpz", b""), ["decompress"], "bad magic"),
    ],
)
def test_bad_input_one_line_error_no_output(tmp_path, make_input, args, needle):
    src = make_input(tmp_path)
    out = tmp_path / "out.bin"
    rc, stdout, err = run(*args, src, "-o", out)
    assert rc != 0
    assert needle in one_line_error(err)
    assert not out.exists()
    assert not list(tmp_path.glob(".*.part"))


@pytest.mark.slow
def test_truncated_archive_cli(tmp_path, alice_copy):
    assert main(["compress", str(alice_copy), "--max-rules", "100"]) == 0
    archive = (tmp_path / "alice29.txt.cpz").read_bytes()
    cut = tmp_path / "cut.cpz"
    cut.write_bytes(archive[: len(archive) // 2])
    rc, _, err = run("decompress", cut, "-o", tmp_path / "x.txt")
    assert rc == 4 and "chunkpress: error:" in one_line_error(err)
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.slow
def test_bad_config_key_cli(tmp_path, alice_copy):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[limits]\nmax_rule = 5\n")
    rc, _, err = run("compress", alice_copy, "--config", cfg, "-o", tmp_path / "o.cpz")
    assert rc == 2 and "unknown key limits.'max_rule'" in one_line_error(err)
    assert not (tmp_path / "o.cpz").exists()


def test_train_writes_rules_and_trace(tmp_path, alice_copy):
    trace, rules = tmp_path / "t.csv", tmp_path / "a.rules"
    assert main(["train", str(alice_copy), "--scorer", "mdl", "--trace", str(trace), "--rules", str(rules)]) == 0
    lines = trace.read_text().splitlines()
    assert lines[0].startswith("m,total_bits,m_bits,rules_bits,n_bits,counts_bits,string_bits,s0,s1,k01,loss")
    reference = (DATA / "alice29.mdl.csv").read_text().splitlines()
    assert len(lines) == len(reference)
    assert lines[-1].split(",")[:11] == reference[-1].split(",")
    from chunkpress.format.rulesfile import load_rules

    loaded, meta = load_rules(rules.read_bytes())
    assert len(loaded) == 2651 and meta["config"]["scorer"]["name"] == "mdl"


def test_inspect_and_plugins(tmp_path, alice_copy, capsys):
    paper = str(ROOT / "examples" / "paper" / "mdl.toml")
    assert main(["compress", str(alice_copy), "--max-rules", "50", "--config", paper]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "alice29.txt.cpz")]) == 0
    out = capsys.readouterr().out
    assert "chunkpress.combinatorial.v1" in out and "rules" in out and "string_bits (model / written)" in out
    # without a level or config: the default level, which codes an input under 1 MB three ways
    # (the block sort, xz alone, -6's light context mixing) and keeps the smallest
    assert main(["compress", str(alice_copy), "-o", str(tmp_path / "default.cpz")]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "default.cpz")]) == 0
    assert "chunkpress.bwt-cm.v1" in capsys.readouterr().out
    assert (tmp_path / "default.cpz").stat().st_size < len(lzma.compress(alice_copy.read_bytes(), preset=9))
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "scorer    mdl" in out and "coder     varint-zstd" in out
    from importlib.metadata import version

    # the installed distribution's version beside the plugin's own, in text and in JSON
    assert f"(chunkpress.plugins.scorers.mdl; chunkpress {version('chunkpress')})" in out
    assert main(["plugins", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"distribution": "chunkpress", "version": version("chunkpress")} in [r.get("installed") for r in listed]


@pytest.mark.slow
def test_a_reader_that_quits_early_gets_no_traceback(tmp_path):
    # `chunkpress plugins | head -1`: the pipe closes while chunkpress still writes
    proc = subprocess.Popen([sys.executable, "-m", "chunkpress.cli", "plugins"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait() == 141
    assert "Traceback" not in err and err == ""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_an_error_not_a_cut_file(tmp_path, alice_copy):
    assert run("compress", alice_copy, "--scorer", "repair", "--max-rules", "50")[0] == 0
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", "decompress", f"{alice_copy}.cpz", "-o", "-"],
                              stdout=full, stderr=subprocess.PIPE)
    assert proc.returncode != 0 and b"No space left" in proc.stderr and b"Traceback" not in proc.stderr
    closed = subprocess.run(f"'{sys.executable}' -m chunkpress.cli decompress '{alice_copy}.cpz' -o - >&-",
                            shell=True, stderr=subprocess.PIPE)
    assert closed.returncode != 0 and b"standard output" in closed.stderr and b"Traceback" not in closed.stderr


def small_input(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes((DATA / "udhr_arb.txt").read_bytes())
    return src


def test_dev_null_is_written_through_not_replaced(tmp_path):
    """As with zstd: no --force needed, and /dev/null stays a device."""
    import stat

    assert main(["compress", str(small_input(tmp_path)), "-o", "/dev/null", "--max-rules", "20"]) == 0
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


def test_a_fifo_is_written_through(tmp_path):
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert main(["compress", str(small_input(tmp_path)), "-o", str(fifo), "--max-rules", "20"]) == 0
    reader.join(10)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and got and got[0][:4] == b"CHKP"


def test_an_output_that_is_a_symlink_is_replaced_and_its_target_never_written(tmp_path):
    """As zstd and gzip do: ``-f`` and ``-d -f`` replace a link named as the output (to a file
    of the user's, or dangling) with the output itself; what it pointed at is untouched and a
    dangling link's target is never created."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    source = tmp_path / "s"
    source.write_bytes(b"data\n")
    link = tmp_path / "s.cpz"
    link.symlink_to(victim)
    assert main(["-f", "-q", str(source)]) == 0
    assert not link.is_symlink() and link.read_bytes()[:4] == b"CHKP" and victim.read_bytes() == b"precious\n"
    source.unlink()
    source.symlink_to(victim)  # decompressing -f over a link: the link goes, the victim stays
    assert main(["-d", "-f", "-q", str(link)]) == 0
    assert not source.is_symlink() and source.read_bytes() == b"data\n" and victim.read_bytes() == b"precious\n"
    dangling = tmp_path / "d.cpz"
    dangling.symlink_to(tmp_path / "nowhere" / "made")
    assert main(["compress", str(source), "-o", str(dangling), "-f", "-q", "-1"]) == 0
    assert not dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_directory_as_output_is_refused_and_leaves_nothing(tmp_path, capsys):
    out = tmp_path / "adir"
    out.mkdir()
    assert main(["compress", str(small_input(tmp_path)), "-o", str(out), "--force"]) != 0
    assert "is a directory" in one_line_error(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "in.txt"] and not list(out.iterdir())


@pytest.mark.slow
def test_binary_output_to_a_terminal_is_refused(tmp_path):
    import os

    primary, secondary = os.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", "compress", str(small_input(tmp_path)), "-o", "-"],
                              stdout=secondary, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(secondary)
        os.close(primary)
    assert proc.returncode != 0 and "terminal" in proc.stderr


@pytest.mark.slow
def test_zstd_style_options(tmp_path, capsys):
    """--stdout, -k, -q/-v and --debug before or after the command, --config, and -t."""
    src = small_input(tmp_path)
    assert main(["compress", str(src), "-k", "-q", "--max-rules", "20", "--config", str(write_config(tmp_path))]) == 0
    archive = tmp_path / "in.txt.cpz"
    assert archive.exists() and src.exists()
    assert main(["--debug", "decompress", "-t", "-v", str(archive)]) == 0
    assert "in.txt.cpz: OK (" in capsys.readouterr().err
    assert not (tmp_path / "in.txt").with_suffix(".txt.out").exists()
    code, out, _ = run("decompress", "--stdout", archive)
    assert code == 0 and out == src.read_bytes()
    code, _, err = run("decompress", "--debug", "-t", tmp_path / "missing.cpz")
    assert code != 0 and "Traceback" in err  # --debug after the command shows the traceback


def write_config(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[scorer]\nname = 'repair'\n")
    return cfg


def test_several_inputs_each_get_their_archive_and_an_error_does_not_stop_the_others(tmp_path, capsys):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"first file, first file")
    b.write_bytes(b"second file, second file")
    assert main(["compress", str(a), str(tmp_path / "missing.txt"), str(b), "--max-rules", "5"]) == 5
    assert "missing.txt" in capsys.readouterr().err
    assert (tmp_path / "a.txt.cpz").exists() and (tmp_path / "b.txt.cpz").exists()
    (tmp_path / "a.txt").unlink()
    (tmp_path / "b.txt").unlink()
    assert main(["decompress", str(tmp_path / "a.txt.cpz"), str(tmp_path / "b.txt.cpz")]) == 0
    assert a.read_bytes() == b"first file, first file" and b.read_bytes() == b"second file, second file"
    assert main(["compress", str(a), str(b), "-o", str(tmp_path / "one.cpz")]) == 5  # one -o, two inputs


def test_a_corrupt_archive_fails_the_test_option(tmp_path, capsys):
    src = small_input(tmp_path)
    assert main(["compress", str(src), "--max-rules", "20"]) == 0
    archive = tmp_path / "in.txt.cpz"
    raw = bytearray(archive.read_bytes())
    raw[len(raw) // 2] ^= 1
    archive.write_bytes(bytes(raw))
    assert main(["decompress", "-t", str(archive)]) == 4
    assert "corrupt" in one_line_error(capsys.readouterr().err)


@pytest.mark.slow
def test_a_staging_file_left_by_a_killed_writer_is_cleaned_up(tmp_path):
    """A process killed between linking its staging file and renaming it leaves
    .NAME.PID.part; the next --force write of NAME removes it (its PID is gone)."""
    src = small_input(tmp_path)
    out = tmp_path / "x.cpz"
    out.write_bytes(b"old")
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = tmp_path / f".x.cpz.{proc.stdout.strip()}.part"  # a PID that has exited
    orphan.write_bytes(b"half")
    assert main(["compress", str(src), "-o", str(out), "--max-rules", "10", "--force"]) == 0
    assert not orphan.exists() and out.read_bytes()[:4] == b"CHKP"


def test_an_error_names_the_file_it_is_about(tmp_path, capsys):
    """decompress -t good.cpz broken.cpz: the broken one is named, the good one checked."""
    good, broken = tmp_path / "good.cpz", tmp_path / "broken.cpz"
    src = tmp_path / "in.txt"
    src.write_bytes(b"some words and more words\n" * 40)
    assert main(["compress", str(src), "-o", str(good)]) == 0
    raw = bytearray(good.read_bytes())
    raw[len(raw) // 2] ^= 1
    broken.write_bytes(bytes(raw))
    capsys.readouterr()
    assert main(["decompress", "-t", str(good), str(broken)]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"chunkpress: error: {broken}: "), err
    assert main(["decompress", "-t", str(broken)]) == 4
    assert f"error: {broken}: " in capsys.readouterr().err
