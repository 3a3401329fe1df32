"""chunkpress.testing, the kit plugin authors run on their own components, run on every
built-in and on the example plugin; and it catches what it is there to catch."""

import chunkpress
import numpy as np
import pytest
from chunkpress.plugin.registry import build_registry
from chunkpress.testing import check_coder, check_golden, check_scorer, sample_inputs

#: settings that make the slow coders quick (the kit is about correctness, not ratio)
FAST = {"varint-lzma": {"preset": 0, "extreme": False}, "raw-lzma": {"preset": 0}, "cm": {"memory": 16},
        "chunk-cm": {"memory": 16}, "raw-ppmd": {"model_order": 4, "memory_mb": 1},
        "varint-ppmd": {"model_order": 4, "memory_mb": 1}}


def _coders(registry):
    return registry.names("coder")


@pytest.mark.parametrize("name", _coders(build_registry(autoload=False)))
def test_every_builtin_coder_passes_the_kit(registry, name):
    if "ppmd" in name:
        pytest.importorskip("pyppmd")
    check_coder(name, FAST.get(name), registry=registry)


@pytest.mark.parametrize("name", build_registry(autoload=False).names("scorer"))
def test_every_builtin_scorer_passes_the_kit(registry, name):
    check_scorer(name, registry=registry)


# the example plugin's scorers pass the kit too: tests/test_plugins.py, installed through an entry point


def test_golden_files_are_written_once_then_checked(tmp_path, registry):
    path = check_golden("varint-zstd", tmp_path, registry=registry)
    assert path.name == "golden.chunkpress.varint-zstd.v1.cpz"
    written = path.read_bytes()
    check_golden("varint-zstd", tmp_path, registry=registry)  # reads it back, leaves it as it was
    assert path.read_bytes() == written
    other = chunkpress.compress(b"other text " * 50, coder="varint-zstd")
    path.write_bytes(other)
    with pytest.raises(AssertionError, match="no longer decodes"):
        check_golden("varint-zstd", tmp_path, registry=registry)


class _Fragile(chunkpress.Coder):
    """A length prefix, then the bytes; a damaged payload raises ValueError, not FormatError."""

    codec_id = "test.fragile.v1"

    def encode(self, rules, symbols, *, dictionary_size=None):
        from chunkpress.format.expand import expand

        data = bytes(expand(rules, symbols))
        return len(data).to_bytes(4, "little") + data

    def decode(self, payload, *, dictionary_size=None, max_symbols=None):
        size = int.from_bytes(payload[:4], "little")
        if len(payload) != 4 + size:
            raise ValueError("payload of the wrong size")
        return np.zeros((0, 2), dtype=np.int64), np.frombuffer(payload[4:], dtype=np.uint8)


class _Primed(_Fragile):
    """Round-trips, but writes another archive where it was told the length first (a flag byte
    the decoder skips): what a coder's ``prepare`` must never do."""

    codec_id = "test.primed.v1"
    prepared = False

    def prepare(self, length):
        self.prepared = True

    def encode(self, rules, symbols, *, dictionary_size=None):
        return bytes([self.prepared]) + super().encode(rules, symbols)

    def decode(self, payload, *, dictionary_size=None, max_symbols=None):
        return super().decode(payload[1:])


class _Shrinking(_Fragile):
    """Says it holds less for a longer text (a fixed budget spread over the input): the
    compressor's search for the largest block that fits would go wrong."""

    codec_id = "test.shrinking.v1"

    def working_bytes(self, length):
        return max(0, (1 << 28) - 64 * length)


class _Stale(chunkpress.Scorer):
    """Declares that its loss ignores the parts' counts (so the engine never rescores a pair when
    they change) but reads k0: the engine works from stale scores."""

    uses_parts = False
    uses_totals = False

    @staticmethod
    def loss(N, m, k01, k0, k1, same):
        return -k01 / k0


class _Broken:
    @staticmethod
    @chunkpress.hookimpl
    def register_coders():
        return [chunkpress.CoderInfo(name="fragile", codec_id=_Fragile.codec_id, factory=_Fragile, summary="fragile"),
                chunkpress.CoderInfo(name="primed", codec_id=_Primed.codec_id, factory=_Primed, summary="primed"),
                chunkpress.CoderInfo(name="shrinking", codec_id=_Shrinking.codec_id, factory=_Shrinking,
                                     summary="shrinking")]

    @staticmethod
    @chunkpress.hookimpl
    def register_scorers():
        return [chunkpress.ScorerInfo(name="stale", factory=lambda p: _Stale(), summary="stale")]


def test_the_kit_fails_a_coder_that_crashes_on_damage():
    broken = build_registry(extra_plugins=[_Broken], autoload=False)
    with pytest.raises(AssertionError, match="coder 'fragile'.*damaged payload raised ValueError"):
        check_coder("fragile", registry=broken, inputs={"text": sample_inputs()["text"]})


def test_the_kit_fails_a_coder_whose_prepare_changes_the_archive():
    broken = build_registry(extra_plugins=[_Broken], autoload=False)
    with pytest.raises(AssertionError, match="coder 'primed'.*differs where prepare was not called"):
        check_coder("primed", registry=broken, inputs={"text": sample_inputs()["text"]})


def test_the_kit_fails_a_coder_whose_working_bytes_fall_as_the_text_grows():
    broken = build_registry(extra_plugins=[_Broken], autoload=False)
    with pytest.raises(AssertionError, match="coder 'shrinking': working_bytes must .* never fall"):
        check_coder("shrinking", registry=broken, inputs={"text": sample_inputs()["text"]})


def test_the_kit_fails_a_scorer_that_is_not_what_it_declares():
    broken = build_registry(extra_plugins=[_Broken], autoload=False)
    with pytest.raises(AssertionError, match="scorer 'stale'"):
        check_scorer("stale", registry=broken)


@pytest.mark.parametrize("name", ["linked", "scan"])
def test_every_builtin_rewriter_passes_the_kit(name):
    from chunkpress.testing import check_rewriter

    check_rewriter(name)


def test_the_kit_fails_a_rewriter_that_loses_a_merge(registry):
    """A rewriter whose tenth merge merges the pair the other way round is caught there."""
    import chunkpress
    from chunkpress.plugin.registry import build_registry
    from chunkpress.plugins.rewriters.scan import ScanRewriter
    from chunkpress.testing import check_rewriter

    class Sloppy(ScanRewriter):
        def apply(self, s0, s1):
            self.merges = getattr(self, "merges", 0) + 1
            return super().apply(s1, s0) if self.merges == 10 else super().apply(s0, s1)

    class Plugin:
        @staticmethod
        @chunkpress.hookimpl
        def register_rewriters():
            return [chunkpress.RewriterInfo(name="sloppy", factory=lambda params: Sloppy(), summary="drops", version="1")]

    with pytest.raises(AssertionError, match="sloppy"):
        check_rewriter("sloppy", registry=build_registry([Plugin], autoload=False))
