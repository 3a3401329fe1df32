"""Bounds that hold whatever the input: time linear in what is read (crafted chunk-cm archives,
archive ends, many archives), memory within the limit on streams and long lines, kernels that
stop at an interrupt."""

import io
import os
import subprocess
import sys
import textwrap
import time
import warnings

import chunkpress
import numpy as np
import pytest
from chunkpress import FormatError
from chunkpress.cli import main
from chunkpress.pipeline import Pipeline
from support import FAST, extra_peak_bytes, read
from test_hostile import PEAK_OVER_LIMIT, _peak_run

ALICE = read("alice29.txt")


def _chunk_cm_archive(rules, text: bytes) -> bytes:
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    return Pipeline.from_config(level=9).encode(rules, np.frombuffer(text, np.uint8).astype(np.int64), text)


def test_duplicated_rules_decode_in_time_linear_in_the_rules():
    """200,000 rules that all spell "aa" (a few hundred bytes of archive, two bytes of text):
    every symbol used to be spelled by its own pass over all the rules (O(R^2), minutes)."""
    archive = _chunk_cm_archive([[97, 97]] * 200_000, b"aa")
    assert len(archive) < 1000
    start = time.perf_counter()
    assert chunkpress.decompress(archive) == b"aa"
    assert time.perf_counter() - start < FAST


def test_a_chain_dictionary_with_its_text_compresses_at_9(tmp_path):
    """b^k c for k = 1..2500 with the text of its chunks: the prefix splits of equal weights
    made a tree too deep for the path (an AssertionError); it is split at the halves instead."""
    from chunkpress.format.rulesfile import RulesFile

    rules = [[98, 98]] + [[256 + k, 98] for k in range(2497)]  # b^2 ... b^2499
    powers = {1: 98, **{k: 254 + k for k in range(2, 2500)}}
    rules += [[powers[k], 99] for k in range(1, 2500)]
    (tmp_path / "r.rules").write_bytes(RulesFile.learned(np.array(rules), {}).to_bytes())
    text = b"".join(b"b" * k + b"c" for k in range(1, 2500))
    (tmp_path / "t.txt").write_bytes(text)
    assert main(["compress", "-9", "-q", "--rules", str(tmp_path / "r.rules"), str(tmp_path / "t.txt")]) == 0
    assert chunkpress.decompress((tmp_path / "t.txt.cpz").read_bytes()) == text


def test_a_tree_that_makes_every_byte_cost_many_decisions_is_refused():
    """A crafted weight-class table puts the only rank the text uses 30 levels deep (honest
    archives take 3 to 9 decisions a byte): the decoder stops at 24 a byte."""
    from unittest import mock

    from chunkpress.plugins.coders import chunk_cm
    from chunkpress.plugins.coders.chunk_cm_model.ranks import leaf_depths

    # spellings 1^m 2 for m = 1..299: sorted, their shared prefixes shrink to the right, so the
    # splits peel a tenth of the weight at a time and the byte 0 (rank 0) sits deep on the left
    rules, ones = [[1, 1]], {1: 1, 2: 256}
    for m in range(3, 300):
        rules.append([ones[m - 1], 1])
        ones[m] = 255 + len(rules)
    rules += [[ones[m], 2] for m in range(1, 300)]
    n = 300_000
    rd = chunk_cm.RankedDictionary(np.array(rules), n)
    spellings = [rd.ranks.spell[s:s + k].tobytes() for s, k in zip(rd.ranks.start, rd.ranks.length, strict=False)]
    classes = np.array([1 if w == b"\0" or (set(w) <= {1, 2} and w.endswith(b"\2")) else 0 for w in spellings])
    assert leaf_depths(rd.weighted_tree(classes, True), classes.size)[0] >= 25
    with mock.patch.object(chunk_cm, "weight_classes", lambda counts: classes.copy()):
        archive = _chunk_cm_archive(rules, bytes(n))
    with pytest.raises(FormatError, match="more than 24 coded decisions a byte"):
        chunkpress.decompress(archive)


def test_many_archives_one_after_another_decode_in_linear_time(tmp_path):
    """Finding where each archive ends hashed everything before every magic it met, and the
    rest of the input was read (and copied) again for every single archive: 20,000 tiny
    archives, 1 MB of repeated magic bytes."""
    archive = chunkpress.compress(b"a line\n", level=1)
    start = time.perf_counter()
    assert chunkpress.decompress(archive * 20_000) == b"a line\n" * 20_000
    with pytest.raises(FormatError):
        chunkpress.decompress(archive + b"CHKP" * (1 << 18))
    assert time.perf_counter() - start < FAST


@pytest.mark.slow
def test_a_single_archive_before_a_block_archive_streams_within_max_memory():
    """A small single archive, then a block archive of 12 MB: open() read the whole
    concatenation into memory (and ignored max_memory); it reads a block at a time."""
    text = b"".join(b"line %d of a long log, with words that repeat\n" % i for i in range(250_000))
    blocks = chunkpress.compress(text, level=1, block_size=1 << 20)
    both = chunkpress.compress(b"first\n", level=1) + blocks

    def read_all():
        with chunkpress.open(io.BytesIO(both), max_memory=20 << 20) as f:
            while f.read(1 << 20):
                pass

    with chunkpress.open(io.BytesIO(both), max_memory=20 << 20) as f:
        assert f.read() == b"first\n" + text
    assert extra_peak_bytes(read_all) < 120 << 20


@pytest.mark.slow
def test_a_long_line_encodes_in_pieces_within_the_limit(tmp_path):
    """A 30 MB line of words (no newline) is encoded piece by piece, cut where GPT-2's splitter
    breaks whatever surrounds the cut, within a 200 MB limit; the ids are those of the whole."""
    rules = tmp_path / "r.rules"
    (tmp_path / "t.txt").write_bytes(ALICE)
    assert main(["train", str(tmp_path / "t.txt"), "--vocab-size", "700", "--pretokenizer", "gpt2", "--rules",
                 str(rules), "-q"]) == 0
    words = ALICE.replace(b"\n", b" ")
    line = (words * (30_000_000 // len(words) + 1))[:30_000_000]
    (tmp_path / "line.txt").write_bytes(line)
    status, err, peak = _peak_run(["encode", "line.txt", "--rules", "r.rules", "-o", "ids"], tmp_path, 200 << 20)
    assert status == 0, err
    assert peak <= (200 << 20) + PEAK_OVER_LIMIT, peak
    whole = chunkpress.Tokenizer.from_file(rules).encode(line).id_array
    assert np.array_equal(np.frombuffer((tmp_path / "ids").read_bytes(), "<u4"), whole)


@pytest.mark.slow
def test_periodic_input_at_the_default_takes_at_most_60_bytes_a_byte(tmp_path):
    """ab x 5e6 and a run of one letter peaked at 66 bytes per input byte (the whole process)."""
    for name, data in (("ab.txt", b"ab" * 5_000_000), ("a.txt", b"a" * 10_000_000)):
        (tmp_path / name).write_bytes(data)
        status, err, peak = _peak_run(["-c", name], tmp_path, 10**10)
        assert status == 0, err
        assert peak <= 60 * len(data), (name, peak / len(data))


@pytest.mark.slow
def test_an_interrupted_call_stops_its_kernel_within_a_second(tmp_path):
    """Ctrl-C in an interactive interpreter during a context-mixing compress: the kernel on its
    helper thread used to keep a core and its memory for seconds; it stops within one."""
    script = textwrap.dedent("""
        import _thread, threading, time, chunkpress
        data = open(%r, "rb").read() * 12
        chunkpress.compress(data[:20000], level=9)            # compiled and warm
        threading.Timer(1.5, _thread.interrupt_main).start()
        try:
            chunkpress.compress(data, level=9)
            print("finished")
        except KeyboardInterrupt:
            start = time.time()
            while any(t.name == "chunkpress-kernel" for t in threading.enumerate()):
                time.sleep(0.01)
            print("stopped after %%.3f s" %% (time.time() - start))
    """) % str(tmp_path / "alice.txt")
    (tmp_path / "alice.txt").write_bytes(ALICE)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.stdout.startswith("stopped after"), run.stdout + run.stderr
    assert float(run.stdout.split()[2]) < 1.0


def test_a_downgraded_block_archive_says_its_order_cannot_be_verified(tmp_path, capsys):
    """Versions 1 and 2 of the block archive carry no index: a v3 archive rewritten as v2, its
    blocks swapped, still decodes (old archives must), but says so on stderr, in -t and in
    inspect, and to a Python caller as a warning."""
    from chunkpress.errors import UnverifiedWarning
    from chunkpress.format import blocks
    from chunkpress.format.leb128 import encode_varints

    data = b"".join(b"line %d of the text\n" % i for i in range(4000))
    stream = io.BytesIO(chunkpress.compress(data, level=1, block_size=16 << 10))
    version, _ = blocks.read_start(stream)
    frames = [archive for _, archive in blocks.read_frames(stream, version)]
    frames[0], frames[1] = frames[1], frames[0]
    v2 = (blocks.MAGIC + bytes([2]) + encode_varints([0]) + b"".join(encode_varints([len(a)]) + a for a in frames)
          + encode_varints([0, len(frames)]))
    (tmp_path / "v2.cpz").write_bytes(v2)
    for command in (["-t", str(tmp_path / "v2.cpz")], ["-d", str(tmp_path / "v2.cpz"), "-o", str(tmp_path / "out")],
                    ["inspect", str(tmp_path / "v2.cpz")]):
        assert main(command) == 0
        err = capsys.readouterr().err
        assert "v2.cpz: block archive version 2 records no block order" in err and err.count("warning") == 1
    assert main(["inspect", str(tmp_path / "v2.cpz")]) == 0
    assert "not recorded (cannot be verified)" in capsys.readouterr().out
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunkpress.decompress(v2)
    assert [w.category for w in caught] == [UnverifiedWarning]


def test_many_small_files_are_decompressed_in_linear_time(tmp_path, monkeypatch):
    """-d of N archives in one folder listed the folder once per output (O(N^2): 10,000 files
    ran past 300 s): it is listed once."""
    import chunkpress.fileio as fileio

    for i in range(300):
        (tmp_path / f"f{i}.txt").write_bytes(b"file %d\n" % i)
    assert main(["-1", "-q", *map(str, sorted(tmp_path.glob("f*.txt")))]) == 0
    for path in tmp_path.glob("f*.txt"):
        path.unlink()
    archives = [str(p) for p in sorted(tmp_path.glob("*.cpz"))]
    listed = []
    real = os.scandir
    monkeypatch.setattr(fileio.os, "scandir", lambda folder: listed.append(folder) or real(folder))
    monkeypatch.setattr(fileio, "_staged_by_folder", {})
    assert main(["-d", "-q", *archives]) == 0
    assert len(listed) == 1 and (tmp_path / "f7.txt").read_bytes() == b"file 7\n"
