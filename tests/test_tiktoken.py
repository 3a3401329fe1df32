"""tiktoken vocabularies: a ranks file read by import-tiktoken encodes as tiktoken's
``encode_ordinary`` does, split by the cl100k or o200k pre-tokenizer, and the files that cannot
be read right are refused in one line.

``data/alice_cl100k_600.tiktoken`` holds 600 ranks that tiktoken's own trainer
(``tiktoken._educational.bpe_train``) learned from alice29's first 60,000 characters under the
cl100k pattern, the 256 bytes' ranks then shuffled among themselves (they are ids only:
tiktoken never compares them), so that an id mapped by byte value would show."""

import base64

import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from support import DATA, read

tiktoken = pytest.importorskip("tiktoken")
pytest.importorskip("regex")

RANKS = DATA / "alice_cl100k_600.tiktoken"
HELD = (read("alice29.txt").decode()[60_000:] + read("udhr_arb.txt").decode() + read("udhr_cmn_hans.txt").decode()
        + " 12345 x\r\n\r\n  y   \n'S'll THE élan\u0301 \t\u00a0end")


def _ranks() -> dict[bytes, int]:
    out = {}
    for line in RANKS.read_text().splitlines():
        token, rank = line.split()
        out[base64.b64decode(token)] = int(rank)
    return out


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_an_imported_ranks_file_gives_tiktoken_s_ids(tmp_path, pattern):
    from chunkpress.plugins.pretokenizers.patterns import CL100K_PATTERN, O200K_PATTERN

    assert main(["import-tiktoken", str(RANKS), "--pretokenizer", pattern, "-o", str(tmp_path / "t.rules"),
                 "-q"]) == 0
    ours = Tokenizer.from_file(tmp_path / "t.rules")
    theirs = tiktoken.Encoding(name="alice", pat_str=CL100K_PATTERN if pattern == "cl100k" else O200K_PATTERN,
                               mergeable_ranks=_ranks(), special_tokens={})
    lines = HELD.splitlines(keepends=True)
    assert [e.ids for e in ours.encode_batch(lines)] == [theirs.encode_ordinary(line) for line in lines]
    assert ours.encode(HELD).ids == theirs.encode_ordinary(HELD)
    assert ours.decode(theirs.encode_ordinary(HELD)) == HELD


def test_the_imported_vocabulary_compresses_the_text_it_cuts(tmp_path):
    assert main(["import-tiktoken", str(RANKS), "--pretokenizer", "cl100k", "-o", str(tmp_path / "t.rules"),
                 "-q"]) == 0
    (tmp_path / "in.txt").write_bytes(HELD.encode())
    assert main(["compress", str(tmp_path / "in.txt"), "--rules", str(tmp_path / "t.rules"), "-q"]) == 0
    assert main(["decompress", str(tmp_path / "in.txt.cpz"), "-o", str(tmp_path / "back.txt"), "--rules",
                 str(tmp_path / "t.rules"), "-q"]) == 0
    assert (tmp_path / "back.txt").read_bytes() == HELD.encode()


def _line(token: bytes, rank: int) -> str:
    return f"{base64.b64encode(token).decode()} {rank}\n"


@pytest.mark.parametrize(("text", "says"), [
    ("".join(_line(bytes([b]), b) for b in range(255)), "byte 0xff has no rank"),
    ("".join(_line(bytes([b]), b) for b in range(256)) + _line(b"abc", 256), "no pair of tokens of lower rank"),
    ("".join(_line(bytes([b]), b) for b in range(256)) + "!!! 256\n", "not base64"),
    ("".join(_line(bytes([b]), b) for b in range(256)) + _line(b"ab", 7), "second time"),
    ("".join(_line(bytes([b]), b) for b in range(256)), "none of tiktoken's published encodings"),
    ("", "no ranks"),
])
def test_a_ranks_file_that_cannot_be_read_right_is_refused_in_one_line(tmp_path, capsys, text, says):
    (tmp_path / "bad.tiktoken").write_text(text)
    extra = [] if "published" in says else ["--pretokenizer", "cl100k"]
    assert main(["import-tiktoken", str(tmp_path / "bad.tiktoken"), "-o", str(tmp_path / "t.rules"), *extra]) != 0
    err = capsys.readouterr().err
    assert says in err and "bad.tiktoken" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.rules").exists()


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_export_hf_writes_tiktoken_s_split_and_import_hf_reads_it_back(tmp_path, pattern):
    """HF's Split by the pattern, then ByteLevel: HF's ids equal tiktoken's, and the file
    imports back to the same pre-tokenizer and ids (HF's converted GPT-4 tokenizers read so)."""
    tokenizers = pytest.importorskip("tokenizers")
    assert main(["import-tiktoken", str(RANKS), "--pretokenizer", pattern, "-o", str(tmp_path / "t.rules"),
                 "-q"]) == 0
    assert main(["export-hf", str(tmp_path / "t.rules"), "-o", str(tmp_path / "tokenizer.json"), "-q"]) == 0
    ours = Tokenizer.from_file(tmp_path / "t.rules")
    lines = HELD.splitlines(keepends=True)
    expected = [e.ids for e in ours.encode_batch(lines)]
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [e.ids for e in hf.encode_batch(lines)] == expected
    back = Tokenizer.from_hf_file(tmp_path / "tokenizer.json")
    assert back.pretokenizer == pattern and [e.ids for e in back.encode_batch(lines)] == expected
