"""BERT's text handling before its WordPiece model, as HF's ``BertNormalizer`` and
``BertPreTokenizer`` do it, in one normalizer:

* ``clean_text``: NUL, U+FFFD and every control, format, unassigned, private-use and surrogate
  character (Unicode's "other", tab, line feed and carriage return aside) go; white space
  becomes a space;
* ``handle_chinese_chars``: a space on each side of every CJK ideograph;
* ``strip_accents``: each character decomposed (NFD) and its non-spacing marks dropped;
* ``lowercase``: each character lowered on its own, as Rust's ``char::to_lowercase``;
* then the words: white space splits and goes, and each punctuation character (ASCII's, and
  Unicode's P* categories) is a word of its own.

The text comes out as its words, each after one space (`` hello , world``), so that the
``metaspace`` pre-tokenizer cuts the same words and a word's first piece is told from its
continuations by that space. Each byte keeps the span of the character it came from, so
offsets point into the text as given. Character classes are the running Python's
(``unicodedata``); HF's are those of its Rust crates.
"""

import unicodedata

import attrs
import chunkpress.plugin as cp
import numpy as np

#: Rust's ``char::is_whitespace`` (Unicode's White_Space), which both HF steps use
_WHITE_SPACE = frozenset([*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                          0x202F, 0x205F, 0x3000])
#: the CJK ideograph blocks BERT spaces out
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _bool(default: bool):
    return attrs.field(default=default, validator=attrs.validators.instance_of(bool))


@attrs.frozen(kw_only=True)
class BertParams:
    clean_text: bool = _bool(True)
    handle_chinese_chars: bool = _bool(True)
    #: HF's ``strip_accents``; its null (follow ``lowercase``) is resolved when the model is read
    strip_accents: bool = _bool(True)
    lowercase: bool = _bool(True)


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


class Bert(cp.Normalizer):
    def __init__(self, params=None):
        super().__init__(params or BertParams())
        self._table: dict[int, str] = {}  # each character's rewrite, made once
        self._grown = np.zeros(0x110000, dtype=np.int64)  # how many characters it becomes
        self._kind = np.full(0x110000, -1, dtype=np.int8)  # its part in the word split (-1: not met)
        # HF's, which with BertPreTokenizer (this normalizer's word split) rewrites text as this does
        self.hf_normalizer = {"type": "BertNormalizer", **attrs.asdict(self.params)}

    def _rewrite(self, char: str) -> str:
        """What BertNormalizer makes of one character."""
        code = ord(char)
        p = self.params
        if p.clean_text:
            if code in (0, 0xFFFD) or (char not in "\t\n\r" and unicodedata.category(char).startswith("C")):
                return ""
            if code in _WHITE_SPACE:
                return " "
        if p.handle_chinese_chars and any(lo <= code <= hi for lo, hi in _CJK):
            return f" {char} "
        out = char
        if p.strip_accents:
            out = "".join(c for c in unicodedata.normalize("NFD", out) if unicodedata.category(c) != "Mn")
        if p.lowercase:
            out = "".join(c.lower() for c in out)
        return out

    def _rewritten(self, text: str, codes: np.ndarray) -> tuple[str, np.ndarray]:
        """The text rewritten character by character (str.translate), and how many characters
        each of its characters (``codes``) became."""
        self._learn(codes)
        return text.translate(self._table), self._grown[codes]

    def _kinds(self, codes: np.ndarray) -> np.ndarray:
        """Each character's part in BERT's word split: 0 white space (splits, goes), 1
        punctuation (a word alone), 2 the rest."""
        self._learn(codes)
        return self._kind[codes]

    def _learn(self, codes: np.ndarray) -> None:
        """Each character's rewrite and part, for those not met before (tables by code point)."""
        new = np.unique(codes[self._kind[codes] < 0]).tolist()
        for code in new:
            self._table[code] = self._rewrite(chr(code))
            self._grown[code] = len(self._table[code])
            self._kind[code] = 0 if code in _WHITE_SPACE else 1 if _is_punctuation(chr(code)) else 2

    def normalize(self, text):
        return self.normalize_batch([bytes(text)])[0][0]

    def normalize_aligned(self, text):
        return self.normalize_batch([bytes(text)])[0]

    def normalize_batch(self, texts):
        """All texts in one pass over their characters, joined by line breaks (white space to
        BERT, so no word crosses two); each output byte keeps its source character's span."""
        given = [bytes(t).decode("utf-8", "surrogateescape") for t in texts]
        joined = "\n".join(given)
        codes = _code_points(joined)
        rewritten, grown = self._rewritten(joined, codes)
        new = _code_points(rewritten)
        source = np.repeat(np.arange(codes.size), grown)  # each rewritten character's source
        kind = self._kinds(new)
        starts = (kind == 1) | ((kind == 2) & (np.concatenate([[0], kind[:-1]]) != 2))
        kept = np.flatnonzero(kind != 0)
        spaced = starts[kept].astype(np.int64)  # a space before each word
        at = np.arange(kept.size) + np.cumsum(spaced)
        out = np.full(kept.size + int(spaced.sum()), 32, dtype=np.int64)
        out[at] = new[kept]
        out_source = np.zeros(out.size, dtype=np.int64)
        out_source[at] = source[kept]
        out_source[at[spaced == 1] - 1] = source[kept[spaced == 1]]  # the space stands for the word's first character
        widths = _utf8_widths(codes)
        byte_end = np.cumsum(widths)
        text_chars = np.cumsum([0] + [len(t) + 1 for t in given])  # each text's first character in ``joined``
        text_bytes = np.concatenate([[0], byte_end])[text_chars[:-1]]
        cuts = np.searchsorted(out_source, text_chars).tolist()
        per_byte = np.repeat(out_source, _utf8_widths(out))
        byte_cuts = np.concatenate([[0], np.cumsum(_utf8_widths(out))])[cuts].tolist()
        spans = np.stack([byte_end[per_byte] - widths[per_byte], byte_end[per_byte]], axis=1)
        whole = out.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
        return [(whole[cuts[k]:cuts[k + 1]].encode("utf-8", "surrogateescape"),
                 spans[byte_cuts[k]:byte_cuts[k + 1]] - text_bytes[k]) for k in range(len(given))]


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)


def _utf8_widths(codes: np.ndarray) -> np.ndarray:
    """Each code point's bytes in UTF-8 (a byte that was not UTF-8, held as U+DC80-U+DCFF, one)."""
    widths = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
    widths[(codes >= 0xDC80) & (codes <= 0xDCFF)] = 1
    return widths
