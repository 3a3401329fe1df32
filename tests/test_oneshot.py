"""chunkpress.compress and chunkpress.decompress take the command line's options as keywords
and give the bytes the command line writes."""

import numpy as np
import pytest

import chunkpress
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
    """One check (blockmode.check_dictionary_options) for both, each naming options its own way."""
    source, rules = tmp_path / "in.txt", tmp_path / "r.rules"
    source.write_bytes(ALICE)
    assert main(["train", str(source), "--vocab-size", "300", "--rules", str(rules), "-q"]) == 0
    for keywords, options, message in (
            ({"rules_ref": True}, ["--rules-ref"], "{rules_ref} needs {rules}"),
            ({"shared_dictionary": True}, ["--shared-dictionary"], "{shared_dictionary} is for block mode"),
            ({"rules_ref": True, "rules": rules, "block_size": 40_000}, ["--rules-ref", "--rules", str(rules),
                                                                        "--block-size", "40K"], "{rules_ref} is for single"),
            ({"shared_dictionary": True, "rules": rules}, ["--shared-dictionary", "--rules", str(rules)],
             "{rules} already shares")):
        with pytest.raises(chunkpress.ConfigError, match=message.format(rules="rules", rules_ref="rules_ref",
                                                                         shared_dictionary="shared_dictionary")):
            chunkpress.compress(ALICE, **keywords)
        assert main(["compress", str(source), "-o", str(tmp_path / "out.cpz"), "-q", *options]) == 2
        cli = message.format(rules="--rules", rules_ref="--rules-ref", shared_dictionary="--shared-dictionary")
        assert cli in capsys.readouterr().err and not (tmp_path / "out.cpz").exists()
    with pytest.raises(chunkpress.ConfigError, match="rules must be"):
        chunkpress.compress(ALICE, rules=np.zeros(3))
    with pytest.raises(chunkpress.InputError, match="no_such.rules"):
        chunkpress.compress(ALICE, rules="no_such.rules")


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
