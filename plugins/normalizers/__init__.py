"""The built-in normalizers, registered by reference: ``none`` (the text as it is, the default
and the only one an archive takes), the Unicode normal forms ``nfc``, ``nfd``, ``nfkc`` and
``nfkd``, ``lowercase``, ``sentencepiece`` (a model's own character map and white-space
rules, which ``import-spm`` configures) and ``bert`` (BERT's normalizer and word split). The
forms use the running Python's Unicode tables (``unicodedata``), as HF's use those of its
Rust crates: a character added in a later Unicode version may normalize differently between
the two; sentencepiece's map is the model's own."""

from chunkpress.plugin import NO_NORMALIZER, NormalizerInfo, hookimpl

_HERE = "chunkpress.plugins.normalizers"


@hookimpl
def register_normalizers():
    return [
        NormalizerInfo(name=NO_NORMALIZER, factory=f"{_HERE}.forms:Unchanged", version="1",
                       summary="the text as it is (the default; archives take no other)"),
        *(NormalizerInfo(name=form.lower(), factory=f"{_HERE}.forms:{form}", version="1",
                         summary=f"Unicode normal form {form} (HF's {form})") for form in ("NFC", "NFD", "NFKC", "NFKD")),
        NormalizerInfo(name="lowercase", factory=f"{_HERE}.forms:Lowercase", version="1",
                       summary="lower case, as Python's str.lower (HF's Lowercase)"),
        NormalizerInfo(name="sentencepiece", factory=f"{_HERE}.sentencepiece:Sentencepiece",
                       params=f"{_HERE}.sentencepiece:SentencepieceParams", version="1",
                       summary="a sentencepiece model's precompiled map and white-space rules (import-spm sets it)"),
        NormalizerInfo(name="bert", factory=f"{_HERE}.bert:Bert", params=f"{_HERE}.bert:BertParams", version="1",
                       summary="HF's BertNormalizer and BertPreTokenizer: each word after one space"),
    ]
