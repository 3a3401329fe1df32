"""The hostile-input corpus: crafted archives, id files, rules files, configs and inputs.

Each case builds its files in a folder and names the chunkpress command to run on them and the
exit status it must end with. ``tests/test_hostile.py`` runs every case as its own process
under a memory cap (``CHUNKPRESS_MAX_MEMORY`` = 1e9 and an address-space limit) and a time cap,
and checks for a one-line error, the exit status, and no output file left behind.

    python tests/hostile/cases.py OUT_DIR    # writes the corpus, one folder per case
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chunkpress.format import container
from chunkpress.format.leb128 import encode_varints
from chunkpress.format.rulesfile import MAGIC as RULES_MAGIC


def _archive(codec: str, params: dict, length: int, payload: bytes, raw_header: bytes | None = None) -> bytes:
    header = container.Header(codec=codec, params=params, length=length, blake2b=container.checksum(b"x" * length))
    good = container.pack(header, payload)
    if raw_header is None:
        return good
    # a hand-made header, with valid check bytes so that the header itself is what is tested
    body = container.MAGIC + bytes([container.VERSION]) + encode_varints([len(raw_header)]) + raw_header + payload
    return body + container.check_bytes(body)


def _rules_file(meta_json: bytes, rules: list[int]) -> bytes:
    """A version-2 rules file with valid check bytes, so that its content is what is tested."""
    body = (RULES_MAGIC + bytes([2]) + encode_varints([len(meta_json)]) + meta_json
            + encode_varints([len(rules) // 2]) + encode_varints(rules))
    return body + container.check_bytes(body)


#: name -> (files to write, command after `chunkpress`, expected exit status: 2 a config error,
#: 4 a corrupt archive or rules file, 5 a bad input file)
def cases() -> dict:
    out = {}
    nested = b'{"codec": ' + b"[" * 30000 + b"]" * 30000 + b"}"
    out["header-nested-30000"] = ({"a.cpz": _archive("x", {}, 1, b"", raw_header=nested)},
                                  ["decompress", "a.cpz", "-o", "out"], 4)
    bool_length = json.dumps({"codec": "chunkpress.combinatorial.v1", "params": {}, "length": True,
                              "blake2b": "0" * 32}).encode()
    out["header-bool-length"] = ({"a.cpz": _archive("x", {}, 1, b"", raw_header=bool_length)},
                                 ["decompress", "a.cpz", "-o", "out"], 4)
    import zstandard

    bomb = zstandard.ZstdCompressor(level=3).compress(bytes(400 << 20))
    out["raw-zstd-frame-beyond-header"] = ({"a.cpz": _archive("chunkpress.raw-zstd.v1", {"level": 19}, 1, bomb)},
                                           ["decompress", "a.cpz", "-o", "out"], 4)
    import zlib

    model = encode_varints([0, 1, 1]) + encode_varints([97])
    first = zlib.compress(model)
    zbomb = encode_varints([len(first)]) + first + zlib.compress(bytes(400 << 20), 9)
    zlib9 = {"level": 9, "order": "frequency"}
    out["varint-zlib-string-bomb"] = ({"a.cpz": _archive("chunkpress.varint-zlib.v1", zlib9, 1, zbomb)},
                                      ["decompress", "a.cpz", "-o", "out"], 4)
    # 48 doubling rules, then 2^16 copies of the 2^48-byte symbol: the length sum wraps int64
    rules = [97, 97] + sum(([256 + i, 256 + i] for i in range(47)), [])
    model = encode_varints([48, 1, 1 << 16]) + encode_varints(rules) + encode_varints([256 + 47])
    first = zlib.compress(model)
    wrap = encode_varints([len(first)]) + first + zlib.compress(bytes(1 << 16))
    out["expanded-length-wraps"] = ({"a.cpz": _archive("chunkpress.varint-zlib.v1", zlib9, 16, wrap)},
                                    ["decompress", "a.cpz", "-o", "out"], 4)
    good_rules = _rules_file(b"{}", [97, 98])
    out["id-file-huge-text-id"] = ({"r.rules": good_rules, "ids.txt": b"5 99999999999999999999999\n"},
                                   ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 5)
    out["rules-meta-list"] = ({"r.rules": _rules_file(b"[1, 2]", [97, 98]), "ids.txt": b"97\n"},
                              ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 4)
    out["rules-meta-nested"] = ({"r.rules": _rules_file(b"[" * 30000 + b"]" * 30000, [97, 98]), "ids.txt": b"97\n"},
                                ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 4)
    hf_bool_ids = json.dumps({"hf": {"ids": [True] * 258, "special": [], "add_prefix_space": False}}).encode()
    out["rules-hf-bool-ids"] = ({"r.rules": _rules_file(hf_bool_ids, [97, 98, 256, 99]), "ids.txt": b"97\n"},
                                ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 4)
    hf_shared = json.dumps({"hf": {"ids": [5] * 257, "special": [], "add_prefix_space": False}}).encode()
    out["rules-hf-shared-ids"] = ({"r.rules": _rules_file(hf_shared, [97, 98]), "in.txt": b"ab"},
                                  ["encode", "in.txt", "--rules", "r.rules", "-o", "out"], 4)
    out["rules-config-not-object"] = ({"r.rules": _rules_file(b'{"config": [1]}', [97, 98]), "in.txt": b"ab"},
                                      ["encode", "in.txt", "--rules", "r.rules", "-o", "out"], 4)
    out["rules-cyclic"] = ({"r.rules": _rules_file(b"{}", [97, 257]), "ids.txt": b"97\n"},
                           ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 4)
    out["config-not-utf8"] = ({"c.toml": b"[scorer]\nname = '\xff'\n", "in.txt": b"hello hello"},
                              ["compress", "in.txt", "--config", "c.toml", "-o", "out"], 2)
    out["config-bool-max-rules"] = ({"c.toml": b"[limits]\nmax_rules = true\n", "in.txt": b"hello hello"},
                                    ["compress", "in.txt", "--config", "c.toml", "-o", "out"], 2)
    out["import-hf-not-utf8"] = ({"tok.json": b'{"model": "\xff\xfe"}'}, ["import-hf", "tok.json", "-o", "out"], 5)
    flipped = bytearray(good_rules)
    flipped[-6] ^= 1  # a rule part: without the check it decoded to other text, exit 0
    out["rules-flipped-byte"] = ({"r.rules": bytes(flipped), "ids.txt": b"97 256\n"},
                                 ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 4)
    out["compress-missing-input"] = ({}, ["compress", "missing.txt", "-o", "out"], 5)
    out.update(second_round())
    out.update(third_round())
    out.update(fourth_round())
    return out


def _tokenizer_json(merge_id, added_id=None) -> bytes:
    """A byte-level BPE tokenizer.json with one merge (a b) of id ``merge_id``."""
    from chunkpress.text.hf import byte_to_unicode

    t = byte_to_unicode()
    vocab = {t[b]: b for b in range(256)}
    vocab[t[97] + t[98]] = merge_id
    added = [] if added_id is None else [{"id": added_id, "content": "<s>", "single_word": False, "lstrip": False,
                                          "rstrip": False, "normalized": False, "special": True}]
    doc = {"version": "1.0", "added_tokens": added, "normalizer": None, "post_processor": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
           "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": vocab, "merges": [t[97] + " " + t[98]]}}
    return json.dumps(doc).encode()


def second_round() -> dict:
    """The second adversarial review's cases: each was a traceback, a CPU or memory bomb, or a
    file that imported with exit 0 and failed on every later use."""
    out = {}
    out["block-archive-magic-only"] = ({"a.cpz": b"CHKB"}, ["decompress", "a.cpz", "-o", "out"], 4)
    out["block-archive-claims-2^34-cut-short"] = (
        {"a.cpz": b"CHKB" + bytes([3, 0]) + encode_varints([(1 << 34) - 1, 0]) + b"x" * 100},
        ["decompress", "a.cpz", "-o", "out"], 4)
    out["import-hf-id-1e30"] = ({"tok.json": _tokenizer_json(10**30)}, ["import-hf", "tok.json", "-o", "out"], 4)
    out["import-hf-added-id-1e30"] = ({"tok.json": _tokenizer_json(256, 10**30)}, ["import-hf", "tok.json", "-o", "out"], 4)
    out["import-hf-negative-merge-id"] = ({"tok.json": _tokenizer_json(-5)}, ["import-hf", "tok.json", "-o", "out"], 4)
    doubling = [97, 97] + sum(([256 + i, 256 + i] for i in range(47)), [])
    out["export-hf-doubling-rules"] = ({"r.rules": _rules_file(b"{}", doubling)}, ["export-hf", "r.rules", "-o", "out"], 4)
    hf_far = json.dumps({"hf": {"ids": list(range(256)) + [1 << 28], "special": [], "add_prefix_space": False}}).encode()
    out["decode-hf-id-2^28-unknown"] = ({"r.rules": _rules_file(hf_far, [97, 98]), "ids.txt": b"97 268435455\n"},
                                        ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 5)
    from hostile.cm_bombs import parse_bomb_archive

    out["cm-parse-bomb"] = ({"a.cpz": parse_bomb_archive(50_000)}, ["decompress", "a.cpz", "-o", "out"], 4)
    return out


def write(folder: Path) -> None:
    for name, (files, command, status) in cases().items():
        d = folder / name
        d.mkdir(parents=True, exist_ok=True)
        for fname, content in files.items():
            (d / fname).write_bytes(content)
        (d / "case.json").write_text(json.dumps({"command": command, "exit": status}) + "\n")


def third_round() -> dict:
    """The third review's refusals: reads with no end outside compress and decompress, a CPU
    bomb in finding where an archive ends, a study grid too large to hold, added tokens that
    spell gigabytes. Each is refused at the limit, in a line, in seconds."""
    import numpy as np
    from chunkpress.format.rulesfile import dump_rules

    out = {}
    rules = dump_rules(np.array([[97, 98]]), {"config": {"pretokenizer": {"name": "gpt2"}}, "unicode": _unicode()})
    for name, command in (
            ("encode-dev-zero", ["encode", "/dev/zero", "--rules", "r.rules", "-o", "out"]),
            ("encode-a-100MB-run-of-one-letter", ["encode", "a.txt", "--rules", "r.rules", "-o", "out"]),
            ("train-dev-zero", ["train", "/dev/zero", "--max-rules", "5", "--rules", "out"]),
            ("train-dev-zero-pretokenized", ["train", "/dev/zero", "--pretokenizer", "gpt2", "--vocab-size", "300",
                                             "--rules", "out"]),
            ("import-hf-dev-zero", ["import-hf", "/dev/zero", "-o", "out"]),
            ("compress-rules-dev-zero", ["compress", "in.txt", "--rules", "/dev/zero", "-o", "out"]),
            ("config-dev-zero", ["compress", "in.txt", "--config", "/dev/zero", "-o", "out"])):
        files = {"r.rules": rules, "in.txt": b"some words\n"}
        if "100MB" in name:
            files["a.txt"] = b"a" * 100_000_000
        out[name] = (files, command, 2 if name.startswith("config") else 5)
    out["repeated-magic-4MB"] = ({"a.cpz": b"CHKP\x01" + b"CHKP" * (1 << 20)}, ["decompress", "a.cpz", "-o", "out"], 4)
    keys = ("limits.min_count", "limits.max_rules", "coder.params.level", "scorer.name", "pretokenizer.name")
    grid = "\n".join(f'"{key}" = {list(range(2, 52))}' for key in keys)
    out["study-grid-of-312M-variants"] = ({"s.toml": f'[datasets]\na = "in.txt"\n[grid]\n{grid}\n'.encode(),
                                            "in.txt": b"words"}, ["study", "s.toml", "--out", "out"], 2)
    added = json.dumps({"hf": {"ids": list(range(257)), "special": [["x" * (1 << 20), 257]],
                               "add_prefix_space": False}}).encode()
    out["decode-added-tokens-of-2GB"] = ({"r.rules": _rules_file(added, [97, 98]), "ids.txt": b"257 " * 2000},
                                         ["decode", "ids.txt", "--rules", "r.rules", "--format", "text", "-o", "out"], 5)
    return out


def _unicode() -> str:
    from chunkpress.text.unicodeclasses import unicode_version

    return unicode_version()


def doubling_deletions(count: int) -> bytes:
    """A valid rules file whose ``count`` deletions each split the symbol deleted before it
    again: rule k joins two copies of the symbol rule k - 1 made, which is deleted after it, so
    the k-th deletion splits into 2^k pieces (a CPU and memory bomb of a few hundred bytes)."""
    rules, deletions = [97, 97], []
    for k in range(1, count + 1):
        rules += [256 + k - 1, 256 + k - 1]
        deletions.append([k, 256 + k - 1])
    return _rules_file(json.dumps({"deletions": deletions}).encode(), rules)


#: rules files with an integer too large for any count, id or length, in each place one is read
HUGE_INTEGERS = {
    "deletion-symbol-1e30": ({"deletions": [[1, 10**30]]}, [97, 98, 256, 99]),
    "superbpe-after-1e30": ({"config": {"pretokenizer": {"name": "gpt2"}, "boundary": {"name": "superbpe",
                                                                                     "params": {"after": 10**30}}}},
                            [97, 98]),
    "superbpe-after-2^63": ({"config": {"pretokenizer": {"name": "gpt2"}, "boundary": {"name": "superbpe",
                                                                                     "params": {"after": 1 << 63}}}},
                            [97, 98]),
    "hf-added-id-1e30": ({"hf": {"ids": list(range(257)), "special": [["<s>", 10**30]], "add_prefix_space": False}},
                         [97, 98]),
}


def huge_integer_rules(name: str) -> bytes:
    meta, rules = HUGE_INTEGERS[name]
    return _rules_file(json.dumps(meta).encode(), rules)


def tiny_bwt_blocks_archive(blocks: int, size: int = 4) -> bytes:
    """A -5 archive whose bwt-cm payload holds ``blocks`` valid blocks of ``size`` bytes, where
    the encoder makes one: each would cost a model's set-up. One block is coded, then repeated."""
    import numpy as np
    from chunkpress.plugins.coders.blocksort import BlockSortCoder, BlockSortParams

    block = (b"tiny" * size)[:size]
    one = BlockSortCoder(BlockSortParams()).encode(np.zeros((0, 2), dtype=np.int64),
                                                   np.frombuffer(block, dtype=np.uint8))
    assert one[0] == 1  # the block count, then the block
    data = block * blocks
    header = container.Header(codec="chunkpress.bwt-cm.v1", params={}, length=len(data),
                              blake2b=container.checksum(data))
    return container.pack(header, encode_varints([blocks]) + one[1:] * blocks)


def fourth_round() -> dict:
    """The fourth review's refusals: deletions that double, integers past any range in a rules
    file's metadata, an archive of thousands of tiny bwt-cm blocks. Each is refused in a line."""
    out = {}
    for count in (24, 40):
        out[f"rules-{count}-doubling-deletions-encode"] = (
            {"r.rules": doubling_deletions(count), "in.txt": b"a" * 1000},
            ["encode", "in.txt", "--rules", "r.rules", "-o", "out"], 4)
    out["rules-24-doubling-deletions-evaluate"] = ({"r.rules": doubling_deletions(24), "in.txt": b"a" * 1000},
                                                   ["evaluate", "r.rules", "in.txt"], 4)
    out["rules-24-doubling-deletions-compress"] = ({"r.rules": doubling_deletions(24), "in.txt": b"a" * 1000},
                                                   ["compress", "in.txt", "--rules", "r.rules", "-o", "out"], 4)
    out["bwt-cm-5000-tiny-blocks"] = ({"a.cpz": tiny_bwt_blocks_archive(5000)}, ["decompress", "a.cpz", "-o", "out"], 4)
    return out


if __name__ == "__main__":
    write(Path(sys.argv[1]))
