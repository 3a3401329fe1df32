"""The front door: one Compressor and one Decompressor; chunkpress.compress, decompress and
open, and the command line, are adapters over them that take the same settings and give the
same bytes."""

import io
import re

import chunkpress
import numpy as np
import pytest
from chunkpress.cli import main
from support import read

ALICE = read("alice29.txt")


def _cli_archive(tmp_path, *options) -> bytes:
    source = tmp_path / "in.txt"
    source.write_bytes(ALICE)
    out = tmp_path / "cli.cpz"
    assert main(["compress", str(source), "-o", str(out), "-f", "-q", *options]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("keywords, options", [
    ({"level": 2}, ["-2"]),
    ({"scorer": "repair", "max_rules": 300, "pretokenizer": "gpt2"},
     ["--scorer", "repair", "--max-rules", "300", "--pretokenizer", "gpt2"]),
    ({"coder": "varint-zstd", "min_count": 3, "level": 3}, ["--coder", "varint-zstd", "--min-count", "3", "-3"]),
    ({"block_size": 40 << 10, "scorer": "repair", "max_rules": 200}, ["--block-size", "40K", "--scorer", "repair",
                                                                      "--max-rules", "200"]),
    ({"block_size": 50_000, "shared_dictionary": True, "level": 1}, ["--block-size", "50000", "--shared-dictionary",
                                                                      "-1"]),
])
def test_keywords_give_the_command_line_s_archive(tmp_path, keywords, options):
    archive = chunkpress.compress(ALICE, **keywords)
    assert archive == _cli_archive(tmp_path, *options)
    assert chunkpress.decompress(archive) == ALICE


@pytest.mark.parametrize("settings, options", [({"level": 1}, ["-1"]), ({"level": 5}, []), ({"level": 9}, ["-9"]),
                                               ({"block_size": 16 << 10}, ["--block-size", "16K"])])
def test_the_compressor_is_what_every_adapter_writes(tmp_path, settings, options):
    """Compressor(...).compress equals chunkpress.compress and the command line's archive, in
    both of its forms, and the Decompressor, chunkpress.open and the command line read it."""
    archive = chunkpress.Compressor(**settings).compress(ALICE)
    assert archive == chunkpress.compress(ALICE, **settings) == _cli_archive(tmp_path, *options)
    source = tmp_path / "in.txt"
    assert main([*options, "-q", "-f", "-c", str(source)]) == 0  # the zstd form, same options
    assert chunkpress.Decompressor().decompress(archive) == ALICE
    with chunkpress.open(io.BytesIO(archive)) as f:
        assert f.read() == ALICE and f.tell() == len(ALICE)
    copied = io.BytesIO()
    assert chunkpress.Decompressor().copy_stream(io.BytesIO(archive * 2), copied) == 2 * len(ALICE)
    assert copied.getvalue() == ALICE * 2


def test_a_reused_dictionary_by_path_bytes_or_tokenizer(tmp_path):
    rules = tmp_path / "r.rules"
    (tmp_path / "t.txt").write_bytes(ALICE[:60_000])
    assert main(["train", str(tmp_path / "t.txt"), "--vocab-size", "700", "--rules", str(rules), "-q"]) == 0
    cli = _cli_archive(tmp_path, "--rules", str(rules))
    tokenizer = chunkpress.Tokenizer.from_file(rules)
    for given in (rules, str(rules), rules.read_bytes(), tokenizer):
        assert chunkpress.compress(ALICE, rules=given) == cli
    blocks = _cli_archive(tmp_path, "--rules", str(rules), "--block-size", "40K")  # the file stored once
    for given in (rules, rules.read_bytes()):
        assert chunkpress.compress(ALICE, rules=given, block_size=40 << 10) == blocks
    referencing = chunkpress.compress(ALICE, rules=rules, rules_ref=True)
    assert referencing == _cli_archive(tmp_path, "--rules", str(rules), "--rules-ref")
    assert len(referencing) < len(cli)
    with pytest.raises(chunkpress.FormatError):
        chunkpress.decompress(referencing)
    assert chunkpress.decompress(referencing, rules=rules) == ALICE
    assert chunkpress.decompress(referencing, rules=tokenizer) == ALICE


def test_what_the_command_line_refuses_the_keywords_refuse(tmp_path, capsys):
    """One check (the Compressor's) for both; its message names the keyword and the option."""
    source, rules = tmp_path / "in.txt", tmp_path / "r.rules"
    source.write_bytes(ALICE)
    assert main(["train", str(source), "--vocab-size", "300", "--rules", str(rules), "-q"]) == 0
    for keywords, options, message in (
            ({"rules_ref": True}, ["--rules-ref"], "rules_ref (--rules-ref) needs rules (--rules)"),
            ({"shared_dictionary": True}, ["--shared-dictionary"], "shared_dictionary (--shared-dictionary) is for "
                                                                   "block mode"),
            ({"rules_ref": True, "rules": rules, "block_size": 40_000}, ["--rules-ref", "--rules", str(rules),
                                                                        "--block-size", "40K"],
             "rules_ref (--rules-ref) is for single"),
            ({"shared_dictionary": True, "rules": rules}, ["--shared-dictionary", "--rules", str(rules)],
             "rules (--rules) already share")):
        with pytest.raises(chunkpress.ConfigError, match=re.escape(message)):
            chunkpress.compress(ALICE, **keywords)
        assert main(["compress", str(source), "-o", str(tmp_path / "out.cpz"), "-q", *options]) == 2
        assert message in capsys.readouterr().err and not (tmp_path / "out.cpz").exists()
    with pytest.raises(chunkpress.ConfigError, match="rules must be"):
        chunkpress.compress(ALICE, rules=np.zeros(3))
    with pytest.raises(chunkpress.InputError, match="no_such.rules"):
        chunkpress.compress(ALICE, rules="no_such.rules")


@pytest.mark.slow
def test_workers_on_a_one_block_input_start_no_cluster(tmp_path, monkeypatch):
    """--workers 2 on an input of one block used to add seconds of cluster start-up and print
    Dask's warnings; the archive is the serial one."""
    import chunkpress.parallel as parallel

    def no_cluster(*args, **kwargs):
        raise AssertionError("a Dask cluster was started for one block")

    monkeypatch.setattr(parallel, "dask_client", no_cluster)
    serial = _cli_archive(tmp_path, "--block-size", "1M", "-1")
    assert _cli_archive(tmp_path, "--block-size", "1M", "-1", "--workers", "2") == serial
    assert chunkpress.compress(ALICE, block_size=1 << 20, level=1, workers=2) == serial


@pytest.mark.parametrize("name", ["random", "empty", "one byte", "a zip", "alice29"])
@pytest.mark.parametrize("level", [1, 5, 6, 9])
def test_no_input_grows_past_a_small_bound(name, level):
    """Where the chunk pipeline does not pay (random or already compressed bytes, tiny inputs),
    the bytes are stored as they are: no archive exceeds the input + 33 bytes (1.001 x the input
    + 400 is the bound asked for), and the empty input takes 26. Text is still coded."""
    import zipfile

    rng = np.random.default_rng(5)
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("alice29.txt", ALICE)
    data = {"random": rng.integers(0, 256, 200_000, dtype=np.uint8).tobytes(), "empty": b"", "one byte": b"x",
            "a zip": zipped.getvalue(), "alice29": ALICE[:40_000]}[name]
    archive = chunkpress.compress(data, level=level)
    assert len(archive) <= len(data) + 33 and chunkpress.decompress(archive) == data
    if name == "alice29":
        assert len(archive) < len(data) / 2
    if name == "empty":
        assert len(archive) == 26
    blocks = chunkpress.compress(data, level=level, block_size=64 << 10)  # stored block by block
    assert len(blocks) <= len(data) + 400 + len(data) // 1000 and chunkpress.decompress(blocks) == data


def test_a_stored_archive_is_verified_and_described():
    """A stored archive (container version 2) checks its bytes like any other, and inspect
    names its codec."""
    from chunkpress.format import container
    from chunkpress.pipeline import inspect

    archive = container.pack_stored(b"some bytes")
    assert inspect(archive)["codec"] == container.STORED_CODEC and chunkpress.decompress(archive) == b"some bytes"
    for at in range(len(archive)):
        bad = bytearray(archive)
        bad[at] ^= 1
        with pytest.raises(chunkpress.FormatError):
            chunkpress.decompress(bytes(bad))
