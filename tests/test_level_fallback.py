"""A level codes its input as its record in the level table says (chunkpress.levels): its chunk
pipeline where that pays and its plain back end (zstd or xz -9e) where it does not, decided from
the data; stored data recognised from a sample; trials on small texts. A config, overrides or
a reused dictionary run exactly what they say."""

from __future__ import annotations

import lzma
import platform
import zipfile
from io import BytesIO
from pathlib import Path

import chunkpress
import numpy as np
import pytest
import zstandard
from chunkpress.format.container import unpack
from chunkpress.levels import LEVELS, LIKE_XZ, OWN, SMALL_INPUT, SMALL_TEXT, is_executable, looks_like_text, plan, text_ways
from chunkpress.levels import X86 as X86_FILTER
from chunkpress.pipeline import Pipeline
from support import read


def _codec(archive: bytes) -> str:
    return unpack(archive)[0].codec


def _binary(size: int, package=np) -> bytes:
    """A real shared library's first ``size`` bytes: the largest of ``package`` (numpy's or
    zstandard's, which every test machine has)."""
    library = max(Path(package.__path__[0]).rglob("*.so"), key=lambda p: p.stat().st_size)
    data = library.read_bytes()[:size]
    assert len(data) == size
    return data


def _word_text(size: int) -> bytes:
    """English-like text without long repeats: lines of alice29's words drawn at random (as
    often as they occur there), so word-level chunks pay and xz finds no long matches."""
    words = read("alice29.txt").split()
    rng = np.random.default_rng(1)
    lines, total = [], 0
    while total < size:
        lines.append(b" ".join(words[j] for j in rng.integers(0, len(words), 12)))
        total += len(lines[-1]) + 1
    return b"\n".join(lines)


def _zipped(text: bytes) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("alice.txt", text)
        z.writestr("notes.txt", text[::-1])
    return out.getvalue()


X86 = platform.machine() in ("x86_64", "AMD64")
ON_X86 = pytest.mark.skipif(not X86, reason="numpy's library is x86 code only on an x86 machine")


@pytest.mark.parametrize("name, data", [
    ("alice29", read("alice29.txt")),
    pytest.param("library 600 KB", _binary(600_000) if X86 else b"", marks=ON_X86),
    ("zip", _zipped(read("alice29.txt"))),
    pytest.param("library 2 MB", _binary(2_000_000) if X86 else b"", marks=ON_X86),
    # xz -9e, with or without the x86 filter, is larger than xz -9 on this one
    pytest.param("zstandard's library", _binary(600_000, zstandard) if X86 else b"", marks=ON_X86),
])
def test_the_default_is_never_larger_than_xz_9(name, data):
    archive = chunkpress.compress(data)
    assert len(archive) <= len(lzma.compress(data, preset=9)), name
    assert chunkpress.decompress(archive) == data


@ON_X86
def test_a_large_library_is_decided_by_a_sample_and_coded_plain_with_the_x86_filter():
    data = _binary(2_000_000)  # above the 1 MB that is coded every way
    header = unpack(chunkpress.compress(data, level=5))[0]
    assert header.codec == "chunkpress.raw-lzma.v1" and header.params["x86"] is True
    assert _codec(chunkpress.compress(data, level=2)) == "chunkpress.raw-zstd.v1"
    assert is_executable(data) and not is_executable(read("alice29.txt")) and not is_executable(b"\x7fELF")


@ON_X86
def test_machine_code_is_also_tried_without_the_x86_filter():
    """The x86 filter shrinks most machine code, not all of it: an executable's sample is also
    coded without it at a level whose plain back end is xz, and the smaller way is kept; a
    zstd level has one plain way."""
    data = _binary(2_000_000)
    assert plan(LEVELS[5], data).ways == (("level", 5, None), ("plain", 5, OWN), ("plain", 5, X86_FILTER))
    assert plan(LEVELS[5], data).also == (("plain", 5, LIKE_XZ),)  # in full, whatever the sample says
    assert plan(LEVELS[2], data).ways == (("level", 2, None), ("plain", 2, OWN)) and plan(LEVELS[2], data).also == ()
    text_like = plan(LEVELS[5], read("alice29.txt"))
    assert ("plain", 5, X86_FILTER) not in text_like.ways and text_like.also == ()


def test_large_text_keeps_the_level_s_chunk_pipeline():
    text = _word_text(1_300_000)
    assert _codec(chunkpress.compress(text, level=5)) == "chunkpress.bwt-cm.v1"
    assert _codec(chunkpress.compress(text, level=4)) == "chunkpress.varint-lzma.v1"
    assert _codec(chunkpress.compress(text, level=2)) == "chunkpress.varint-zstd.v1"


def test_small_text_at_minus_4_and_6_is_the_smallest_of_two_ways_and_minus_5_codes_one():
    """-4 also tries its plain back end (xz) on a text up to SMALL_INPUT, -6 the block sort (-5)
    up to a megabyte; -5 codes a text with its block sort alone (no trial, so that its first
    run compiles one coder and its time stays bzip3's)."""
    data = read("alice29.txt")
    alone = {4: {"max_rules": 16000 - 256, "min_count": 16}, 5: {"coder": "bwt-cm", "max_rules": 0},
             6: {"max_rules": 8000 - 256, "min_count": 40}}
    pipeline = {level: len(chunkpress.compress(data, level=level, **settings)) for level, settings in alone.items()}
    xz = len(chunkpress.compress(data, coder={"name": "raw-lzma", "params": {"preset": 9, "extreme": True}}, max_rules=0))
    assert len(chunkpress.compress(data, level=4)) == min(pipeline[4], xz)
    assert len(chunkpress.compress(data, level=5)) == pipeline[5]
    assert len(chunkpress.compress(data, level=6)) == min(pipeline[6], pipeline[5])
    assert pipeline[5] < pipeline[6] < pipeline[4]  # the block sort wins at -6 on alice29


def test_a_small_text_at_minus_7_8_and_9_is_never_larger_than_at_the_level_below():
    """Up to SMALL_TEXT bytes, -7 ... -9 also compress as the level below does: the UDHR files'
    -9 pipeline alone is larger than -8's, and -8's (cmn) than -7's; with the trial no level
    from -6 up is larger than the one below. An input past SMALL_TEXT keeps its level's own."""
    for name in ("udhr_arb.txt", "udhr_cmn_hans.txt"):
        data = read(name)
        assert len(data) <= SMALL_TEXT
        sizes = {level: len(chunkpress.compress(data, level=level)) for level in range(6, 10)}
        assert sizes[6] >= sizes[7] >= sizes[8] >= sizes[9], (name, sizes)
        alone = len(Pipeline.from_config(level=9).compress(data))
        assert _codec(chunkpress.compress(data, level=9)) in ("chunkpress.chunk-cm.v5", "chunkpress.chunk-cm.v6")
        if name == "udhr_arb.txt":
            assert alone > sizes[9]  # the trial is what keeps -9 down to -8's size here
    larger = read("alice29.txt")[: SMALL_TEXT + 1000]
    assert unpack(chunkpress.compress(larger, level=9))[0].codec == "chunkpress.chunk-cm.v6"  # -9's own pipeline


def test_a_text_up_to_a_megabyte_at_minus_7_to_9_also_tries_runs_of_non_space_as_pre_tokens():
    """GPL-3's text (a licence: numbered sections, quoted terms): with runs of non-space as
    pre-tokens -7 is about 1% smaller than with GPT-2's, and the level keeps the smaller; a
    pre-tokenizer given runs as given. A text past a megabyte keeps GPT-2's, untried (-6: past
    SMALL_INPUT)."""
    data = read("gpl3.txt")
    assert [t.up_to for t in LEVELS[6].trials if t.way == "pretokenizer"] == [SMALL_INPUT]
    assert all([t.up_to for t in LEVELS[n].trials if t.way == "pretokenizer"] == [1 << 20] for n in (7, 8, 9))
    gpt2 = Pipeline.from_config(level=7).compress(data)
    runs = Pipeline.from_config(level=7, pretokenizer="whitespace").compress(data)
    assert len(runs) < 0.995 * len(gpt2)
    archive = chunkpress.compress(data, level=7)
    assert archive == runs and chunkpress.decompress(archive) == data
    assert chunkpress.compress(data, level=7, pretokenizer="gpt2") == gpt2
    compressor = chunkpress.Compressor(level=7)
    large = _word_text(1_100_000)
    assert len(large) > 1 << 20 and chunkpress.decompress(compressor.compress(large)) == large
    assert ("level", 7, "whitespace") not in compressor._ways  # never built: text past a megabyte is not tried


def test_each_input_gets_one_list_of_ways_each_coded_once(monkeypatch):
    """The level table turns a level and an input into one list of ways: -9 on a small text
    takes every way of -8, -7 and -6 too (never larger than the level below), each way coded
    once; data no coder shortens is stored, recognised on a sample before any coder runs."""
    ways = text_ways(LEVELS[9], 10_000)
    assert len(ways) == len(set(ways)) and ways[0] == ("level", 9, None)
    assert {("level", n, None) for n in (5, 6, 7, 8)} <= set(ways)
    assert text_ways(LEVELS[9], SMALL_TEXT + 1) == [("level", 9, None), ("level", 9, "whitespace")]
    assert text_ways(LEVELS[5], 1000) == [("level", 5, None)]
    coded = []
    original = Pipeline.compress
    monkeypatch.setattr(Pipeline, "compress", lambda self, data, progress=None: coded.append(1) or
                        original(self, data, progress))
    noise = np.random.default_rng(3).integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    assert plan(LEVELS[9], noise).ways == (("stored",),)
    archive = chunkpress.compress(noise, level=9)
    assert not coded and _codec(archive) == "chunkpress.stored.v1" and len(archive) <= len(noise) + 33


def test_one_byte_either_side_of_a_megabyte_is_coded_the_same_way():
    """The decision is smooth in the input's size: text of 1,048,575 and 1,048,577 bytes gets
    the same ways at -4 and -5 (no trial ends at a megabyte there), so their sizes differ by
    about what two more bytes cost."""
    text = _word_text(1_100_000)
    for level in (4, 5):
        assert text_ways(LEVELS[level], (1 << 20) - 1) == text_ways(LEVELS[level], (1 << 20) + 1)
        under = len(chunkpress.compress(text[: (1 << 20) - 1], level=level))
        over = len(chunkpress.compress(text[: (1 << 20) + 1], level=level))
        assert over <= 1.02 * under, (level, under, over)


@pytest.mark.slow
def test_a_misspelt_setting_is_a_type_error_and_workers_change_no_byte():
    """As python-zstandard: an unknown keyword is the caller's error. Workers code a block
    archive's blocks; an input that is one archive is the same bytes with them or without."""
    with pytest.raises(TypeError, match="levle"):
        chunkpress.Compressor(levle=3)
    data = read("alice29.txt")
    assert chunkpress.compress(data, level=1, workers=2) == chunkpress.compress(data, level=1)


def test_settings_given_run_as_given():
    data = _binary(300_000)
    assert _codec(chunkpress.compress(data, level=4, max_rules=100)) == "chunkpress.varint-lzma.v1"
    assert _codec(chunkpress.compress(data, coder="varint-zstd")) == "chunkpress.varint-zstd.v1"


def test_dictionary_settings_at_a_level_without_one_run_its_dictionary_counterpart():
    """-1 and -5 learn no dictionary: settings that shape one run -2's and -4's pipelines."""
    data = read("alice29.txt")
    assert _codec(chunkpress.compress(data, max_rules=300)) == "chunkpress.varint-lzma.v1"
    assert _codec(chunkpress.compress(data, level=5, pretokenizer="none", max_rules=300)) == "chunkpress.varint-lzma.v1"
    assert _codec(chunkpress.compress(data, level=1, scorer="repair", max_rules=300)) == "chunkpress.varint-zstd.v1"
    assert _codec(chunkpress.compress(data, level=1, max_rules=0)) == "chunkpress.raw-zstd.v1"
    assert _codec(chunkpress.compress(data, coder="bwt-cm", max_rules=0)) == "chunkpress.bwt-cm.v1"
    shared = chunkpress.compress(data, block_size=50_000, shared_dictionary=True)
    assert chunkpress.decompress(shared) == data


def test_text_is_told_from_binary_data():
    assert looks_like_text(read("alice29.txt")) and looks_like_text(read("udhr_cmn_hans.txt")[:1001])  # a cut character
    assert not looks_like_text(_zipped(read("alice29.txt"))) and not looks_like_text(bytes(range(256)) * 100)


def test_a_small_text_at_minus_4_is_never_larger_than_at_minus_3():
    """-4's 16,000-rule dictionary does not pay on a few kilobytes of Chinese: up to SMALL_TEXT
    bytes -4 also compresses as -3 does, the smaller kept, so the levels never grow."""
    for name in ("udhr_arb.txt", "udhr_cmn_hans.txt"):
        data = read(name)
        three, four = (chunkpress.compress(data, level=level) for level in (3, 4))
        assert len(four) <= len(three) and chunkpress.decompress(four) == data
    alone = len(Pipeline.from_config(level=4).compress(read("udhr_cmn_hans.txt")))
    assert alone > len(chunkpress.compress(read("udhr_cmn_hans.txt"), level=4))  # the trial is what keeps -4 down
