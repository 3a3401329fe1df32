"""Pre-tokenizers are a role like the others: the built-ins registered as a third party's would
be, each passing the plugin kit against an independent reference (HF's pre-tokenizers), the
hook spec's example passing it too, and a pre-tokenizer from another package training,
encoding and compressing from the command line."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from chunkpress.cli import main
from chunkpress.plugin.registry import build_registry
from chunkpress.testing import check_pretokenizer
from support import read

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _hf_split(pattern: str):
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated", invert=False)
    return lambda text: [word for word, _ in split.pre_tokenize_str(text)]


def _metaspace(text: str) -> list[str]:
    cuts = [0, *[i for i in range(1, len(text)) if text[i] == " "], len(text)]
    return [text[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


@pytest.mark.parametrize("name", ["none", "gpt2", "whitespace", "metaspace", "cl100k", "o200k"])
def test_each_built_in_pretokenizer_passes_the_kit_against_hf(name):
    from chunkpress.plugins.pretokenizers.patterns import CL100K, O200K

    references = {"none": lambda text: [text], "gpt2": _hf_split(GPT2), "whitespace": _hf_split(r"\s+"),
                  "metaspace": _metaspace}
    if name in ("cl100k", "o200k"):
        pytest.importorskip("regex")
        references[name] = _hf_split((CL100K if name == "cl100k" else O200K).hf_pattern)
    check_pretokenizer(name, references[name])


def test_the_hook_spec_example_passes_the_kit(tmp_path, monkeypatch):
    import importlib

    import chunkpress.plugin.hookspecs as hookspecs

    example = hookspecs.register_pretokenizers.__doc__.split("one word::")[1].split("Test it")[0]
    (tmp_path / "cp_test_lines_example.py").write_text(textwrap.dedent(example))  # a file: numba caches its kernel
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("cp_test_lines_example")
    registry = build_registry(extra_plugins=[module], autoload=False)
    assert "lines" in registry.names("pretokenizer")

    def lines(text):
        words, start = [], 0
        for i, c in enumerate(text):
            if c == "\n" or (i + 1 < len(text) and text[i + 1] == "\n"):
                words.append(text[start:i + 1])
                start = i + 1
        return words + ([text[start:]] if start < len(text) else [])

    check_pretokenizer("lines", lines, registry=registry)


PLUGIN = '''
import numpy as np
import chunkpress.plugin as cp

@cp.kernel
def _digits_apart(data, breaks):
    for i in range(data.size - 1):
        if (48 <= data[i] <= 57) != (48 <= data[i + 1] <= 57) or data[i + 1] == 32:
            breaks[i] = True

class DigitsApart(cp.PreTokenizer):
    def split(self, data, ends, breaks):
        _digits_apart(data, breaks)

@cp.hookimpl
def register_pretokenizers():
    return [cp.PreTokenizerInfo(name="digits-apart", factory=DigitsApart, version="1",
                                summary="runs of digits apart from the rest, a word at every space")]
'''


@pytest.mark.slow
def test_a_third_party_pretokenizer_trains_encodes_and_compresses(tmp_path):
    """Installed as its own distribution (an entry point), a pre-tokenizer is named on the
    command line like a built-in: train records it, encode and compress --rules cut by it,
    and `plugins --json` lists it under its role."""
    dist = tmp_path / "cp_test_digits-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cp_test_digits\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[chunkpress]\ndigits = cp_test_digits\n")
    (tmp_path / "cp_test_digits.py").write_text(PLUGIN)
    (tmp_path / "t.txt").write_bytes(read("alice29.txt")[:40_000] + b"1865 and 20191 and 3\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD="0")  # the suite's own runs load none

    def cli(*args):
        command = [sys.executable, *args] if args[0] == "-c" else [sys.executable, "-m", "chunkpress.cli", *args]
        done = subprocess.run(command, cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("train", "t.txt", "--pretokenizer", "digits-apart", "--vocab-size", "400", "--rules", "d.rules", "-q")
    ids = cli("encode", "t.txt", "--rules", "d.rules", "--format", "text", "-o", "-")
    assert len(ids.split()) > 0
    cli("compress", "t.txt", "--rules", "d.rules", "-o", "t.cpz", "-q")
    cli("decompress", "t.cpz", "--rules", "d.rules", "-o", "back.txt", "-q")
    assert (tmp_path / "back.txt").read_bytes() == (tmp_path / "t.txt").read_bytes()
    listing = json.loads(cli("plugins", "--json"))
    assert {"role": "pretokenizer", "name": "digits-apart"}.items() <= next(
        row for row in listing if row["name"] == "digits-apart").items()
    # no rule joins a digit to a letter: the pre-tokenizer cut them apart in training
    mixed = cli("-c", "from chunkpress import Tokenizer; tokens = Tokenizer.from_file('d.rules').get_vocab(); "
                "print(sum(any(c.isdigit() for c in t) and any(c.isalpha() for c in t) for t in tokens))")
    assert mixed.strip() == "0"


def test_an_unknown_pretokenizer_names_the_registered_ones(tmp_path, capsys):
    (tmp_path / "t.txt").write_bytes(b"some text\n")
    assert main(["train", str(tmp_path / "t.txt"), "--pretokenizer", "cl100", "--vocab-size", "300", "--rules",
                 str(tmp_path / "t.rules")]) != 0
    err = capsys.readouterr().err
    assert "unknown pretokenizer 'cl100'" in err and "cl100k" in err and "o200k" in err
