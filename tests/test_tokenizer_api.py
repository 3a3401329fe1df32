"""The Tokenizer as HF tokenizers users hold one: str out of decode, lists of ints, character
offsets, the vocabulary's lookups, batches, and a useful repr."""

from __future__ import annotations

import json

import pytest
from chunkpress.pipeline import Pipeline
from chunkpress.text.tokenizer import Tokenizer
from support import read


@pytest.fixture(scope="module")
def tokenizer():
    fit = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 2000}).fit(read("alice29.txt"))
    return Tokenizer(fit.rules, "gpt2")


def test_decode_gives_str_and_ids_are_a_json_list(tokenizer):
    text = read("udhr_arb.txt").decode() + " and " + read("alice29.txt")[:2000].decode()
    encoding = tokenizer.encode(text)
    assert isinstance(encoding.ids, list) and all(type(i) is int for i in encoding.ids)
    assert json.loads(json.dumps(encoding.ids)) == encoding.ids
    assert tokenizer.decode(encoding.ids) == text and isinstance(tokenizer.decode(encoding.ids), str)
    assert tokenizer.decode_bytes(encoding.ids) == text.encode()
    assert tokenizer.decode_batch([encoding.ids, encoding.ids[:3]]) == [text, tokenizer.decode(encoding.ids[:3])]


def test_offsets_count_characters_for_str_and_bytes_for_bytes(tokenizer):
    text = "Ünïcode: مرحبا 世界, Alice said."
    by_str, by_bytes = tokenizer.encode(text), tokenizer.encode(text.encode())
    assert by_str.ids == by_bytes.ids
    data = text.encode()
    for (a, b), (x, y), i in zip(by_str.offsets, by_bytes.offsets, by_str.ids, strict=True):
        assert data[x:y] == tokenizer.decode_bytes([i])
        assert text[a:b].encode().find(data[x:y]) >= 0  # the characters that hold the token's bytes
    assert by_str.offsets[-1][1] == len(text) and by_bytes.offsets[-1][1] == len(data)


def test_offsets_and_tokens_are_hfs(tokenizer):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_str(tokenizer.to_hf_json())
    for text in ("Alice was beginning to get very tired", "Ünïcode: مرحبا 世界, Alice said.",
                 read("udhr_cmn_hans.txt").decode()[:3000]):
        ours, theirs = tokenizer.encode(text), hf.encode(text)
        assert ours.ids == theirs.ids and ours.tokens == theirs.tokens and ours.offsets == theirs.offsets


def test_the_vocabulary_lookups(tokenizer):
    assert tokenizer.get_vocab_size() == 2256 == len(tokenizer.get_vocab())
    the = tokenizer.encode(" the").ids
    assert len(the) == 1
    token = tokenizer.id_to_token(the[0])
    assert token == "Ġthe" and tokenizer.token_to_id(token) == the[0]
    assert tokenizer.token_to_id("no such token") is None and tokenizer.id_to_token(10**6) is None
    assert "vocab_size=2256" in repr(tokenizer) and "gpt2" in repr(tokenizer)


def test_encode_batch_is_encode_of_each(tokenizer):
    lines = read("alice29.txt").decode().splitlines(keepends=True)[:400] + ["", "x"]
    lines += [read("udhr_cmn_hans.txt").decode()[:300], "héllo wörld", "héllo".encode(), b"\xe4\xb8", b""]
    batch = tokenizer.encode_batch(lines)  # str and bytes mixed: character and byte offsets
    assert [e.ids for e in batch] == [tokenizer.encode(line).ids for line in lines]
    assert [e.offsets for e in batch] == [tokenizer.encode(line).offsets for line in lines]
    assert [e.tokens for e in batch] == [tokenizer.encode(line).tokens for line in lines]
    assert tokenizer.encode_batch([]) == [] and [len(e) for e in tokenizer.encode_batch(["", b""])] == [0, 0]
