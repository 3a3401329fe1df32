"""What train reads: files, folders (their files, sorted) and stdin, one corpus; an input it
cannot read stops it in one line with nothing written."""

import subprocess
import sys

from chunkpress.cli import main
from support import read


def test_a_folder_is_its_files_sorted_and_stdin_joins_them(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "b").mkdir(parents=True)
    (corpus / "a.txt").write_bytes(read("alice29.txt")[:40_000])
    (corpus / "b" / "arabic.txt").write_bytes(read("udhr_arb.txt"))
    (corpus / "old.cpz").write_bytes(b"an archive is no text to learn from")
    common = ["--pretokenizer", "gpt2", "--vocab-size", "500", "-q"]
    assert main(["train", str(corpus), "--rules", str(tmp_path / "folder.rules"), *common]) == 0
    assert main(["train", str(corpus / "a.txt"), str(corpus / "b" / "arabic.txt"), "--rules",
                 str(tmp_path / "files.rules"), *common]) == 0
    assert (tmp_path / "folder.rules").read_bytes() == (tmp_path / "files.rules").read_bytes()
    done = subprocess.run([sys.executable, "-m", "chunkpress.cli", "train", str(corpus / "a.txt"), "-", "--rules",
                           str(tmp_path / "stdin.rules"), *common], input=read("udhr_arb.txt"), capture_output=True)
    assert done.returncode == 0, done.stderr
    from chunkpress import Tokenizer

    assert Tokenizer.from_file(tmp_path / "stdin.rules").rules.tolist() == \
        Tokenizer.from_file(tmp_path / "files.rules").rules.tolist()


def test_an_input_that_cannot_be_read_stops_train_with_nothing_written(tmp_path, capsys):
    (tmp_path / "a.txt").write_bytes(read("alice29.txt")[:20_000])
    (tmp_path / "empty").mkdir()
    for bad, says in ((tmp_path / "missing.txt", "missing.txt"), (tmp_path / "empty", "no file to learn from")):
        assert main(["train", str(tmp_path / "a.txt"), str(bad), "--pretokenizer", "gpt2", "--vocab-size", "400",
                     "--rules", str(tmp_path / "out.rules")]) != 0
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out.rules").exists()
