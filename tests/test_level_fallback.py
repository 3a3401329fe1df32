"""A level codes its input with its chunk pipeline where that pays and with its plain back end
(zstd or xz -9e) where it does not, decided from the data; -4 and -5 also try -6's pipeline on
inputs up to 1 MB. A config, overrides or a reused dictionary run exactly what they say."""

from __future__ import annotations

import lzma
import platform
import zipfile
from io import BytesIO
from pathlib import Path

import chunkpress
import numpy as np
import pytest
from chunkpress.compressor import is_executable, looks_like_text
from chunkpress.format.container import unpack
from chunkpress.pipeline import Pipeline
from support import read


def _codec(archive: bytes) -> str:
    return unpack(archive)[0].codec


def _binary(size: int) -> bytes:
    """A real shared library's first ``size`` bytes: numpy's own, which every test machine has."""
    library = max(Path(np.__path__[0]).rglob("*.so"), key=lambda p: p.stat().st_size)
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


def test_large_text_keeps_the_level_s_chunk_pipeline():
    text = _word_text(1_300_000)
    assert _codec(chunkpress.compress(text, level=5)) == "chunkpress.bwt-cm.v1"
    assert _codec(chunkpress.compress(text, level=4)) == "chunkpress.varint-lzma.v1"
    assert _codec(chunkpress.compress(text, level=2)) == "chunkpress.varint-zstd.v1"


def test_small_text_at_minus_4_5_and_6_is_the_smallest_of_three_ways():
    data = read("alice29.txt")
    alone = {4: {"max_rules": 16000 - 256, "min_count": 16}, 5: {"coder": "bwt-cm", "max_rules": 0},
             6: {"max_rules": 8000 - 256, "min_count": 40}}
    pipeline = {level: len(chunkpress.compress(data, level=level, **settings)) for level, settings in alone.items()}
    xz = len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    for level, other in ((4, 6), (5, 6), (6, 5)):  # each level's pipeline, and the one it also tries
        assert len(chunkpress.compress(data, level=level)) == min(pipeline[level], pipeline[other]) <= xz
    # -6's light context mixing wins at -4, the block sort at -5 and -6: -6 is never larger than -5
    assert pipeline[6] < pipeline[4] and pipeline[5] < pipeline[6]


def test_a_small_text_at_minus_7_8_and_9_is_never_larger_than_at_the_level_below():
    """Up to SMALL_TEXT bytes, -7 ... -9 also compress as the level below does: the UDHR files'
    -9 pipeline alone is larger than -8's, and -8's (cmn) than -7's; with the trial no level
    from -6 up is larger than the one below. An input past SMALL_TEXT keeps its level's own."""
    from chunkpress.config import SMALL_TEXT

    for name in ("udhr_arb.txt", "udhr_cmn_hans.txt"):
        data = read(name)
        assert len(data) <= SMALL_TEXT
        sizes = {level: len(chunkpress.compress(data, level=level)) for level in range(6, 10)}
        assert sizes[6] >= sizes[7] >= sizes[8] >= sizes[9], (name, sizes)
        alone = len(Pipeline.from_config(level=9).compress(data))
        assert _codec(chunkpress.compress(data, level=9)) == "chunkpress.chunk-cm.v5"
        if name == "udhr_arb.txt":
            assert alone > sizes[9]  # the trial is what keeps -9 down to -8's size here
    larger = read("alice29.txt")[: SMALL_TEXT + 1000]
    assert unpack(chunkpress.compress(larger, level=9))[0].params.get("scoped") is True  # -9's own pipeline


def test_a_text_up_to_a_megabyte_at_minus_6_to_9_also_tries_runs_of_non_space_as_pre_tokens():
    """GPL-3's text (a licence: numbered sections, quoted terms): with runs of non-space as
    pre-tokens -7 is about 1% smaller than with GPT-2's, and the level keeps the smaller; a
    pre-tokenizer given runs as given. A text past a megabyte keeps GPT-2's, untried."""
    from chunkpress.config import PRETOKENIZER_TRIED

    data = read("gpl3.txt")
    assert PRETOKENIZER_TRIED == {6: "whitespace", 7: "whitespace", 8: "whitespace", 9: "whitespace"}
    gpt2 = Pipeline.from_config(level=7).compress(data)
    runs = Pipeline.from_config(level=7, pretokenizer="whitespace").compress(data)
    assert len(runs) < 0.995 * len(gpt2)
    archive = chunkpress.compress(data, level=7)
    assert archive == runs and chunkpress.decompress(archive) == data
    assert chunkpress.compress(data, level=7, pretokenizer="gpt2") == gpt2
    compressor = chunkpress.Compressor(level=7)
    large = _word_text(1_100_000)
    assert len(large) > 1 << 20 and chunkpress.decompress(compressor.compress(large)) == large
    assert "other_pretokens" not in vars(compressor)  # never built: text past a megabyte is not tried


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
