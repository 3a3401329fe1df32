"""The built-in pre-tokenizers, registered by reference: ``none`` (the text is one word),
``gpt2`` (GPT-2's pattern, as HF's ByteLevel splits), ``whitespace`` (runs of white space and
runs of the rest), ``metaspace`` (a word starts at every space, as sentencepiece cuts text),
and tiktoken's ``cl100k`` and ``o200k`` patterns (GPT-4's and GPT-4o's; they need the ``regex``
package, as their possessive quantifiers and Unicode classes do)."""

from chunkpress.plugin import NO_PRETOKENIZER, PreTokenizerInfo, hookimpl

_HERE = "chunkpress.plugins.pretokenizers"


@hookimpl
def register_pretokenizers():
    return [
        PreTokenizerInfo(name=NO_PRETOKENIZER, factory=f"{_HERE}.splitters:Nothing", version="1",
                         summary="no cut: the text (each piece read on its own) is one word"),
        PreTokenizerInfo(name="gpt2", factory=f"{_HERE}.splitters:GPT2", version="1",
                         summary="GPT-2's pattern: letters, digits and other runs, a space before each kept with "
                                 "it (HF's ByteLevel)"),
        PreTokenizerInfo(name="whitespace", factory=f"{_HERE}.splitters:Whitespace", version="1",
                         summary="runs of white space and runs of the rest, each a word"),
        PreTokenizerInfo(name="metaspace", factory=f"{_HERE}.splitters:Metaspace", version="1",
                         summary="a word starts at every space, which it keeps (sentencepiece's ▁)"),
        PreTokenizerInfo(name="cl100k", factory=f"{_HERE}.patterns:CL100K", version="1",
                         summary="tiktoken's cl100k_base pattern (GPT-4): up to three digits a word"),
        PreTokenizerInfo(name="o200k", factory=f"{_HERE}.patterns:O200K", version="1",
                         summary="tiktoken's o200k_base pattern (GPT-4o): case runs, marks kept with letters"),
    ]
