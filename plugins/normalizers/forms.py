"""Unicode normal forms and lower case, over the text's UTF-8 (a byte that is not UTF-8 kept as
it is, through ``surrogateescape``)."""

import unicodedata
from typing import Literal

import chunkpress.plugin as cp


def _rewritten(text: bytes, rewrite) -> bytes:
    return rewrite(text.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


class Unchanged(cp.Normalizer):
    lossless = True

    def normalize(self, text):
        return text


class _Form(cp.Normalizer):
    """A Unicode normal form (``form``), which HF's normalizer of the same name writes."""

    form: Literal["NFC", "NFD", "NFKC", "NFKD"] = "NFC"

    def __init__(self, params=None):
        super().__init__(params)
        self.hf_normalizer = {"type": self.form}

    def normalize(self, text):
        return _rewritten(text, lambda s: unicodedata.normalize(self.form, s))


class NFC(_Form):
    form = "NFC"


class NFD(_Form):
    form = "NFD"


class NFKC(_Form):
    form = "NFKC"


class NFKD(_Form):
    form = "NFKD"


class Lowercase(cp.Normalizer):
    hf_normalizer = {"type": "Lowercase"}

    def normalize(self, text):
        return _rewritten(text, str.lower)
