"""Compression honours the learner it is given: a top-down learner's vocabulary is what the
archive codes, cut by the learner's segmenter, and decompresses to the input; a learner that
cannot run with the other settings is refused when the compressor is built."""

import chunkpress
import pytest
from chunkpress.cli import main
from chunkpress.errors import ConfigError
from chunkpress.pipeline import decode_archive
from support import read

TEXT = read("alice29.txt")


@pytest.fixture(scope="module")
def archives() -> dict[str | None, bytes]:
    out: dict[str | None, bytes] = {None: chunkpress.Compressor(4).compress(TEXT)}
    for learner in ("unigram", "pathpiece", "mdl-prune"):
        out[learner] = chunkpress.Compressor(learner=learner).compress(TEXT)
    return out


@pytest.mark.parametrize("learner", ["unigram", "pathpiece", "mdl-prune"])
def test_a_top_down_learner_compresses_with_its_own_vocabulary(archives, learner):
    archive = archives[learner]
    assert chunkpress.decompress(archive) == TEXT
    others = [a for name, a in archives.items() if name != learner]
    assert all(archive != other for other in others)
    # the tokens the archive codes are the learner's: more symbols than merge rules would make
    # (its vocabulary is spelled by rules for every piece, each piece a symbol of its own)
    decoded = decode_archive(archive)
    assert decoded.data() == TEXT and len(decoded.rules) > 0


def test_the_size_given_is_the_vocabulary_learned():
    small = chunkpress.Compressor(learner="unigram", max_rules=300).compress(TEXT)
    large = chunkpress.Compressor(learner="unigram", max_rules=3000).compress(TEXT)
    assert chunkpress.decompress(small) == TEXT and chunkpress.decompress(large) == TEXT
    assert len(decode_archive(small).rules) < len(decode_archive(large).rules)


def test_a_segmenter_given_cuts_the_learned_vocabulary():
    default = chunkpress.Compressor(learner="unigram", max_rules=1000).compress(TEXT)
    fewest = chunkpress.Compressor(learner="unigram", max_rules=1000, segmenter="fewest-tokens").compress(TEXT)
    assert fewest != default and chunkpress.decompress(fewest) == TEXT


@pytest.mark.parametrize(("settings", "says"), [
    ({"pretokenizer": "none"}, "pre-tokenizer"),
    ({"boundary": "superbpe"}, "boundary"),
])
def test_a_learner_that_cannot_run_is_refused_when_built(settings, says):
    with pytest.raises(ConfigError, match=says):
        chunkpress.Compressor(learner="unigram", **settings)


def test_compress_takes_a_learner_on_the_command_line(tmp_path, archives):
    (tmp_path / "a.txt").write_bytes(TEXT)
    assert main(["compress", str(tmp_path / "a.txt"), "--learner", "mdl-prune", "-o", str(tmp_path / "a.cp"),
                 "-q"]) == 0
    assert (tmp_path / "a.cp").read_bytes() == archives["mdl-prune"]
    assert main(["decompress", str(tmp_path / "a.cp"), "-o", str(tmp_path / "back.txt"), "-q"]) == 0
    assert (tmp_path / "back.txt").read_bytes() == TEXT
