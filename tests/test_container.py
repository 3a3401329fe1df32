"""Archives: golden files keep decoding; corrupt, truncated or foreign archives are refused."""

import json

import pytest
from chunkpress import FormatError
from chunkpress.format.container import MAGIC, Header, pack, pack_json_header, unpack
from chunkpress.pipeline import Pipeline
from support import GOLDEN, decompress, read

GOLDEN_FILES = sorted(GOLDEN.glob("*.cpz"))


def test_there_is_a_golden_file_per_builtin_codec(registry):
    ids = {info.codec_id for info in registry.components["coder"].values()}
    assert {p.name.split(".", 1)[1].rsplit(".cpz", 1)[0] for p in GOLDEN_FILES} >= ids


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_golden_archives_decode(registry, path):
    assert decompress(path.read_bytes(), registry) == read("udhr_cmn_hans.txt")


@pytest.fixture(scope="module")
def archive(registry):
    pipe = Pipeline.from_config(registry=registry, coder="varint-zstd", scorer="repair", limits={"max_rules": 100})
    return pipe.compress(read("udhr_arb.txt"))


@pytest.mark.parametrize("coder", ["combinatorial", "varint-zlib", "varint-lzma"])
def test_extended_archive_other_codecs(registry, coder):
    archive = Pipeline.from_config(registry=registry, coder=coder, limits={"max_rules": 50}).compress(read("udhr_arb.txt"))
    for tail in (b"\x00", b"\x01", b"\x00\x01", b"xyz" * 10):
        with pytest.raises(FormatError):
            decompress(archive + tail, registry)


def test_the_header_is_compact_and_old_json_headers_still_read(registry, archive):
    """Version 3 writes the header as compact values (the codec a byte, each param two or
    three): 43 bytes here with the magic, the checksum and the check. The same archive with
    version 1's JSON header reads the same."""
    header, payload, size = unpack(archive)
    assert archive.startswith(MAGIC + b"\x03")
    assert header.codec == "chunkpress.varint-zstd.v1" and header.params == {"level": 19, "order": "frequency"}
    assert header.length == len(read("udhr_arb.txt")) and header.rules is None
    assert size == len(MAGIC) + 1 + 2 + 16 + 1 + 1 + 2 + 1 + 10 + 1 + 4  # 10: "frequency" and its length
    old = pack_json_header(header, payload)
    assert old[len(MAGIC)] == 1 and unpack(old) == (header, payload, len(old) - len(payload))
    assert json.loads(header.to_json()) == {"blake2b": header.blake2b, "codec": header.codec, "length": header.length,
                                            "params": header.params}
    assert decompress(old, registry) == decompress(archive, registry) == read("udhr_arb.txt")


def test_a_referenced_dictionary_is_named_in_the_compact_header():
    rules = {"blake2b": "ab" * 16, "count": 1234}
    header = Header(codec="example.codec.v1", params={"x": -3, "y": [1.5, None]}, length=10, blake2b="cd" * 16,
                    rules=rules)
    assert unpack(pack(header, b"payload"))[:2] == (header, b"payload")


@pytest.mark.parametrize("cut", [0, 3, 5, 6, 40, -200, -1])
def test_truncated_archive(registry, archive, cut):
    with pytest.raises(FormatError):
        decompress(archive[:cut], registry)


def test_extended_archive(registry, archive):
    with pytest.raises(FormatError):
        decompress(archive + b"\x00\x01", registry)


def test_unknown_codec_id(registry, archive):
    header, payload, _ = unpack(archive)
    forged = pack(Header(codec="someone.else.v9", params={}, length=header.length, blake2b=header.blake2b), payload)
    with pytest.raises(FormatError, match="unknown codec id 'someone.else.v9'"):
        decompress(forged, registry)


def test_wrong_length_or_checksum(registry, archive):
    header, payload, _ = unpack(archive)
    for bad in (
        Header(codec=header.codec, params=header.params, length=header.length + 1, blake2b=header.blake2b),
        Header(codec=header.codec, params=header.params, length=header.length, blake2b="0" * 32),
        Header(codec=header.codec, params={"level": 99}, length=header.length, blake2b=header.blake2b),
    ):
        with pytest.raises(FormatError):
            decompress(pack(bad, payload), registry)


def test_future_version_refused(registry, archive):
    with pytest.raises(FormatError, match="unsupported container version 4"):
        decompress(MAGIC + b"\x04" + archive[5:], registry)


def test_every_single_byte_flip_is_caught(registry, archive):
    """Flip each byte of a small archive: never wrong output, never a non-chunkpress error."""
    small = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 20}).compress(b"abracadabra " * 20)
    original = b"abracadabra " * 20
    for i in range(len(small)):
        bad = bytearray(small)
        bad[i] ^= 0x55
        try:
            out = decompress(bytes(bad), registry)
        except FormatError:
            continue
        assert out == original  # only possible if the flip hit a byte that carries no information


def test_a_boolean_length_is_refused():
    with pytest.raises(FormatError, match="wrong type"):
        unpack(pack_json_header(Header(codec="chunkpress.raw-zlib.v1", params={}, length=True, blake2b="0" * 32), b"x"))


def test_inspect_describes_a_byte_archive_from_its_header_without_decoding(monkeypatch):
    """A -5 archive (bytes, no rules) is described as zstd -l lists a frame: from the header and
    the payload's size, the coder's decoder never called."""
    import chunkpress
    from chunkpress.pipeline import inspect
    from chunkpress.plugins.coders.blocksort import BlockSortCoder

    data = read("alice29.txt")
    archive = chunkpress.compress(data, level=5)

    def refuse(*_args, **_kwargs):
        raise AssertionError("inspect decoded the payload")

    monkeypatch.setattr(BlockSortCoder, "decode", refuse)
    info = inspect(archive)
    assert info["original_bytes"] == len(data) and info["rules"] == 0 and info["symbols"] == len(data)
    assert info["string_bytes"] == info["payload_bytes"] == len(archive) - info["header_bytes"]
