"""The hostile-input corpus (tests/hostile/cases.py), each case a process under memory and
time caps: a one-line error, the expected exit status, no signal, no output left behind."""

import json
import os
import subprocess
import sys

import pytest
from hostile.cases import cases, write

CASES = cases()
MEMORY_LIMIT = 10**9
#: address-space cap of each process: the limit, plus what Python, numpy and numba map at start
ADDRESS_SPACE = MEMORY_LIMIT + (3 << 30)
#: the issue's bound on a hostile input: peak RSS at most the limit plus this
PEAK_OVER_LIMIT = 200 << 20


#: Forks, execs chunkpress and reports the child's peak RSS. Linux carries a process's
#: high-water RSS across exec, so a child forked from pytest itself would report pytest's.
_LAUNCHER = """
import os, resource, sys
cap, peak_file, *args = sys.argv[1:]
pid = os.fork()
if pid == 0:
    if int(cap):
        resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))
    os.execv(sys.executable, [sys.executable, "-m", "chunkpress.cli", *args])
_, status, usage = os.wait4(pid, 0)
open(peak_file, "w").write(str(usage.ru_maxrss * 1024))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _peak_run(args, cwd, limit, cap=0):
    """(exit status, stderr, peak RSS in bytes) of one chunkpress process under ``limit``
    (CHUNKPRESS_MAX_MEMORY) and an address-space ``cap``."""
    env = dict(os.environ, CHUNKPRESS_MAX_MEMORY=str(limit))
    peak = cwd / ".peak"
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER, str(cap), str(peak), *args], cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    result = proc.returncode, proc.stderr, int(peak.read_text())
    peak.unlink()
    return result


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The hostile corpus, written once (5 s): each case runs in its own folder of it."""
    root = tmp_path_factory.mktemp("hostile")
    write(root)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(corpus, name):
    folder = corpus / name
    case = json.loads((folder / "case.json").read_text())
    status, stderr, peak = _peak_run(case["command"], folder, MEMORY_LIMIT, cap=ADDRESS_SPACE)
    print(f"{name}: exit {status}, peak RSS {peak >> 20} MB")
    assert status == case["exit"], stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chunkpress: error: "), stderr
    assert peak <= MEMORY_LIMIT + PEAK_OVER_LIMIT
    assert not (folder / "out").exists()
    assert not [p for p in folder.iterdir() if p.name.endswith(".part")]


@pytest.mark.slow
@pytest.mark.parametrize("coder", ["raw-zstd", "varint-zstd", "combinatorial"])
def test_an_archive_just_inside_the_limit_decodes_within_it(tmp_path, coder):
    """Honest archives of 60 MB of zeros under a 600 MB limit (9 bytes per output byte fit): the
    decoder's peak RSS stays under the limit plus 200 MB (raw bytes are not widened to 8-byte
    symbols; the output is not copied)."""
    import numpy as np
    from chunkpress.pipeline import Pipeline

    n = 60_000_000
    rules = np.array([[0, 0], [256, 256], [257, 257]])  # one symbol for 8 zero bytes
    archive = Pipeline.from_config(coder=coder).encode(rules, np.full(n // 8, 258), bytes(n))
    (tmp_path / "a.cpz").write_bytes(archive)
    status, err, peak = _peak_run(["decompress", "a.cpz", "-o", "out"], tmp_path, 600_000_000)
    assert status == 0, err
    assert peak <= 600_000_000 + PEAK_OVER_LIMIT, peak
    with open(tmp_path / "out", "rb") as f:
        assert f.read(n + 1) == bytes(n)


@pytest.mark.slow
def test_an_id_file_beyond_the_limit_is_refused_before_parsing(tmp_path):
    import numpy as np
    from chunkpress.format.rulesfile import dump_rules

    (tmp_path / "r.rules").write_bytes(dump_rules(np.array([[97, 98]]), {}))
    (tmp_path / "ids.txt").write_bytes(b"256 97")
    # the first use compiles the parser (numba's compiler alone takes 300 MB): measure decoding
    assert _peak_run(["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], tmp_path, 10**9)[0] == 0
    (tmp_path / "out").unlink()
    (tmp_path / "ids.txt").write_bytes(b"256 " * 5_000_000)  # 20 MB of text: 40 MB of int64 ids
    status, err, peak = _peak_run(["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"],
                                  tmp_path, 30_000_000)
    assert status == 4 and err.startswith("chunkpress: error: ") and "ids" in err, err
    assert not (tmp_path / "out").exists()
    status, err, peak = _peak_run(["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"],
                                  tmp_path, 200_000_000)
    assert status == 0 and (tmp_path / "out").read_bytes() == b"ab" * 5_000_000
    assert peak <= 200_000_000 + PEAK_OVER_LIMIT, peak


@pytest.mark.parametrize("name", sorted(__import__("hostile.cases").cases.HUGE_INTEGERS))
def test_an_integer_beyond_range_in_a_rules_file_is_refused_by_every_command(tmp_path, capsys, monkeypatch, name):
    """An integer past any count, id or length (10^30, 2^63) in a rules file's deletions,
    boundary policy or added tokens was an OverflowError traceback: every command that reads
    the file, and Tokenizer.from_file, refuse it in one line naming the file (exit 4)."""
    from chunkpress import FormatError, Tokenizer
    from chunkpress.cli import main
    from hostile.cases import huge_integer_rules

    rules = tmp_path / "r.rules"
    rules.write_bytes(huge_integer_rules(name))
    (tmp_path / "in.txt").write_bytes(b"some words\n")
    (tmp_path / "ids.txt").write_bytes(b"97 98\n")
    with pytest.raises(FormatError, match="out of range|beyond"):
        Tokenizer.from_file(rules)
    monkeypatch.chdir(tmp_path)
    for command in (["encode", "in.txt", "--rules", "r.rules", "-o", "out"],
                    ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"],
                    ["export-hf", "r.rules", "-o", "out"], ["compress", "in.txt", "--rules", "r.rules", "-o", "out"],
                    ["evaluate", "r.rules", "in.txt"]):
        assert main(command) == 4, command
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("chunkpress: error: r.rules: "), (command, lines)
        assert not (tmp_path / "out").exists()


def test_doubling_deletions_are_refused_before_they_are_split():
    """K deletions that each split the one before again ask for 2^K pieces (a 361-byte file
    took 19 CPU s and 870 MB): 24 and 40 of them are refused at once; 12 load and encode."""
    import time

    from chunkpress import FormatError, Tokenizer
    from hostile.cases import doubling_deletions

    Tokenizer.from_rules_file(doubling_deletions(2))  # kernels loaded before the clock starts
    for count in (24, 40):
        started = time.process_time()
        with pytest.raises(FormatError, match="pieces"):
            Tokenizer.from_rules_file(doubling_deletions(count))
        assert time.process_time() - started < 1.0
    small = Tokenizer.from_rules_file(doubling_deletions(12))
    assert small.decode_bytes(small.encode(b"a" * 10_000).ids) == b"a" * 10_000
