"""The compact header values: every JSON value round-trips in one canonical form, and bytes
that are not a value are refused with a FormatError, never another exception."""

import random

import pytest
from chunkpress import FormatError
from chunkpress.format import compactvalue
from chunkpress.format.compactvalue import WORDS, dumps, loads

VALUES = [
    False, True, None, 0, 30, 31, 32, 2**62, -1, -31, -33, -(2**62), 1.5, -0.0, 1e300, "", "x", "é中文",
    "a" * 31, "b" * 300, [], {}, [1, [2, [3]]], {"memory": 28, "light": False, "contexts": 18},
    {"level": 19, "order": "frequency", "nested": {"k": [True, None, "v"]}}, WORDS[0], list(range(40)),
    {f"key{i}": i for i in range(40)},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_values_round_trip_and_their_form_is_canonical(value):
    data = dumps(value)
    back, end = loads(data)
    assert back == value and type(back) is type(value) and end == len(data)
    assert dumps(back) == data
    assert loads(b"\xff" + data + b"tail", 1) == (value, len(data) + 1)


def test_known_strings_and_small_numbers_take_a_byte():
    light, memory = WORDS.index("light"), WORDS.index("memory")
    assert dumps({"memory": 28, "light": False}) == bytes([5 | 2 << 3, 4 | light << 3, 0, 4 | memory << 3, 1 | 28 << 3])
    assert all(len(dumps(word)) == 1 for word in WORDS[:31]) and len(dumps(WORDS[31])) == 2
    assert len(dumps("chunkpress.chunk-cm.v5")) == 1 and len(dumps(30)) == 1 and len(dumps(31)) == 2
    assert dumps({"b": 1, "a": 2}) == dumps({"a": 2, "b": 1})  # keys sorted


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1: 2}, b"bytes", {"set": {1}}], ids=repr)
def test_what_json_cannot_hold_is_not_written(value):
    with pytest.raises(TypeError):
        dumps(value)


@pytest.mark.parametrize("data, message", [
    (b"", "ends inside a value"),
    (bytes([0 | 3 << 3]), "no atom 3"),
    (bytes([4 | 30 << 3]) if len(WORDS) <= 30 else bytes([4 | 31 << 3, len(WORDS) - 31]), "no word"),
    (bytes([3 | 5 << 3]) + b"ab", "ends inside a string"),
    (bytes([3 | 2 << 3]) + b"\xff\xfe", "not UTF-8"),
    (bytes([7]) + b"\x00" * 7, "cut or malformed float"),
    (bytes([5 | 1 << 3, 1 | 1 << 3, 1]), "key is not a string"),
    (bytes([5 | 2 << 3, 3 | 1 << 3]) + b"a" + bytes([1, 3 | 1 << 3]) + b"a" + bytes([1]), "'a' is repeated"),
    (bytes([6 | 31 << 3]) + b"\xff\xff\xff\x7f", "more entries than bytes"),
    (bytes([6 | 1 << 3]) * (compactvalue.MAX_DEPTH + 1) + bytes([1]), "nested too deeply"),
])
def test_bytes_that_are_not_a_value_are_refused(data, message):
    with pytest.raises(FormatError, match=message):
        loads(data)


def test_every_cut_and_random_bytes_give_a_value_or_a_format_error():
    rng = random.Random(5)
    data = dumps(VALUES)
    for cut in range(len(data)):
        with pytest.raises(FormatError):
            loads(data[:cut])
    for _ in range(3000):
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 24)))
        try:
            loads(noise)
        except FormatError:
            pass
