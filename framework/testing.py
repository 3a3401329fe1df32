"""A test kit for plugin authors, as numcodecs ships ``numcodecs.tests.common``: the checks
chunkpress runs on its own coders and scorers, callable on yours::

    from chunkpress.testing import check_coder, check_golden, check_rewriter, check_scorer

    def test_my_coder():
        check_coder("my-coder")                  # round trips, damaged payloads refused

    def test_my_coder_keeps_decoding_old_archives():
        check_golden("my-coder", "tests/golden")  # writes the file once, then checks it

    def test_my_scorer():
        check_scorer("my-scorer")                # compiled engine == plain scan == brute force

    def test_my_rewriter():
        check_rewriter("my-rewriter")            # the same string as the reference scan, merge by merge

    def test_my_segmenter():
        check_segmenter("my-segmenter", my_plain_python_reference)   # the same tokens on random vocabularies

    def test_my_pretokenizer():
        check_pretokenizer("my-pretokenizer", my_reference)   # each line cut alone, as the reference cuts it

Each check raises AssertionError naming the input and what differed; the inputs are built
here (no data files needed), or pass your own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .decompressor import Decompressor
from .errors import FormatError
from .format.container import pack, unpack
from .pipeline import Pipeline
from .plugin.registry import Registry, default_registry
from .text.pretokenize import pretoken_breaks
from .text.wordcounts import count_words


def _decompress(archive: bytes, registry: Registry) -> bytes:
    return Decompressor(registry=registry).decompress(archive)

__all__ = ["sample_inputs", "mutated", "check_coder", "check_golden", "check_scorer", "check_rewriter",
           "check_segmenter", "REFERENCES"]

_WORDS = ("the", "of", "and", "a", "to", "in", "is", "was", "that", "it", "Alice", "Queen", "said", "very",
          "little", "rabbit", "time", "hatter", "mock", "turtle", "tea", "party", "garden", "croquet")


def sample_inputs(seed: int = 1234) -> dict[str, bytes]:
    """Inputs every coder must round-trip: empty, one byte, English-like text, UTF-8 in three
    scripts, random bytes, a long run and every byte value. Deterministic for a seed."""
    rng = np.random.default_rng(seed)
    words = rng.choice(np.array(_WORDS), size=4000)
    text = " ".join(words.tolist()).replace(" the ", ".\nThe ").encode()
    utf8 = ("Всеобщая декларация прав человека. 世界人权宣言 第一条 人人生而自由. "
            "الإعلان العالمي لحقوق الإنسان ") * 40
    return {
        "empty": b"",
        "one_byte": b"x",
        "text": text,
        "utf8": utf8.encode(),
        "random_8k": rng.integers(0, 256, 8192, dtype=np.uint8).tobytes(),
        "run_20k": b"a" * 20_000,
        "all_bytes": bytes(range(256)) * 3,
    }


def mutated(payload: bytes, cases: int = 150, seed: int = 7):
    """Damaged copies of ``payload``, in turn cut short, with one bit flipped, and extended by
    1-8 random bytes: what a decoder must refuse (or decode exactly), never crash on."""
    rng = np.random.default_rng(seed)
    for case in range(cases):
        bad = bytearray(payload)
        if case % 3 == 0:
            bad = bad[: int(rng.integers(0, len(bad)))]
        elif case % 3 == 1 and bad:
            bad[int(rng.integers(0, len(bad)))] ^= 1 << int(rng.integers(0, 8))
        else:
            bad += bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8))
        yield bytes(bad)


def _pipeline(coder: str, params: dict | None, registry: Registry, max_rules: int = 200):

    return Pipeline.from_config(None, registry=registry, scorer="repair", limits={"max_rules": max_rules},
                                coder={"name": coder, "params": params or {}})


def check_coder(name: str, params: dict | None = None, *, registry: Registry | None = None,
                inputs: dict[str, bytes] | None = None, mutations: int = 90) -> None:
    """The coder ``name`` (registered in ``registry``) round-trips every input through a whole
    archive, learned with 200 BPE rules and without any. Its ``decode`` given a payload cut
    short, with a bit flipped or extended raises FormatError or returns at most
    ``max_symbols`` symbols (never another exception: the framework would report it as a
    corrupt archive, but it is a bug in the coder); a whole archive so damaged decodes exactly
    or is refused; an archive cut in half is refused. Announcing the text's length first
    (``prepare``, as a pipeline's compress does) changes no byte of the archive. What it says
    it holds while it codes (``working_bytes``) and while it prepares (``prepared_bytes``, a
    part of it) are whole numbers that never fall as the text grows (the compressor searches
    them for the largest block that fits the memory limit)."""

    registry = registry or default_registry()
    info = registry.get("coder", name)
    coder = info.build(info.params_class()(**(params or {})))
    lengths = (0, 1, 1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 30)
    for method in ("working_bytes", "prepared_bytes"):
        needs = [getattr(coder, method)(n) for n in lengths]
        assert all(isinstance(b, int) and b >= 0 for b in needs) and needs == sorted(needs), \
            f"coder {name!r}: {method} must be whole numbers of bytes that never fall as the text grows: {needs}"
    assert all(coder.prepared_bytes(n) <= coder.working_bytes(n) for n in lengths), \
        f"coder {name!r}: what prepare holds (prepared_bytes) is part of what coding holds (working_bytes)"
    archives = []
    for max_rules in (200, 0):
        pipe = _pipeline(name, params, registry, max_rules)
        for label, data in (inputs or sample_inputs()).items():
            archive = pipe.compress(data)
            assert _decompress(archive, registry) == data, \
                f"coder {name!r}, input {label!r}, {max_rules} rules: decoded bytes differ"
            archives.append((label, data, archive))
    label, data, archive = max(archives[: len(archives) // 2], key=lambda a: len(a[1]))  # 200 rules
    pipe = _pipeline(name, params, registry, 200)
    fitted = pipe.fit(data, trace=False)
    assert pipe.encode(fitted.rules, fitted.symbols, data) == archive, \
        f"coder {name!r}, input {label!r}: the archive differs where prepare was not called"
    for label, data, archive in archives:
        if not data:
            continue
        header, payload, _ = unpack(archive)
        for bad in mutated(payload, cases=mutations // len(archives) + 1):
            if bad == payload:
                continue
            _decode_damaged(coder, name, label, bad, len(data))
            try:
                out = _decompress(pack(header, bad), registry)
            except FormatError:
                continue
            assert out == data, f"coder {name!r}, input {label!r}: a damaged archive decoded to other bytes"
        try:
            _decompress(archive[: len(archive) // 2], registry)
        except FormatError:
            pass
        else:
            raise AssertionError(f"coder {name!r}, input {label!r}: an archive cut in half was not refused")


def _decode_damaged(coder, name: str, label: str, payload: bytes, max_symbols: int) -> None:
    try:
        _, symbols = coder.decode(payload, max_symbols=max_symbols)
    except FormatError:
        return
    except Exception as exc:  # noqa: BLE001 - what the check reports
        raise AssertionError(f"coder {name!r}, input {label!r}: decoding a damaged payload raised "
                             f"{type(exc).__name__}: {exc} (expected FormatError)") from exc
    assert len(symbols) <= max_symbols, \
        f"coder {name!r}, input {label!r}: decoded {len(symbols)} symbols past max_symbols = {max_symbols}"


def check_golden(name: str, folder, params: dict | None = None, *, registry: Registry | None = None,
                 data: bytes | None = None) -> Path:
    """Old archives keep decoding: ``folder/golden.<codec id>.cpz`` is written the first time
    (commit it), and from then on must decode to the same input. Returns the file's path."""

    registry = registry or default_registry()
    data = sample_inputs()["utf8"] if data is None else data
    codec = registry.get("coder", name).codec_id
    path = Path(folder) / f"golden.{codec}.cpz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_pipeline(name, params, registry).compress(data))
    assert _decompress(path.read_bytes(), registry) == data, f"{path}: the golden archive no longer decodes"
    return path


def _brute_force_best(rewriter, scorer, step: int, floor: int, lengths: list[int]):
    """The pair a scan of every pair picks, by the selection rule in ``chunkpress.contract``
    (``lengths``: bytes per symbol, for a scorer that reads them)."""
    s0, s1, k = rewriter.pairs()
    keep = k >= floor
    s0, s1, k = s0[keep], s1[keep], k[keep]
    if not k.size:
        return None
    counts = rewriter.symbol_counts()
    n, m = rewriter.length, 256 + step
    if getattr(scorer, "loss_a", None) is not None:
        def loss_b(kk, a, b):
            extra = (lengths[a], lengths[b]) if getattr(scorer, "uses_lengths", False) else ()
            return scorer.loss_b(kk, int(counts[a]), int(counts[b]), a == b, *extra)

        total = [scorer.loss_a(n, m, int(kk)) + loss_b(int(kk), a, b)
                 for a, b, kk in zip(s0.tolist(), s1.tolist(), k.tolist(), strict=False)]
    else:
        total = [scorer.loss(n, m, int(kk), int(counts[a]), int(counts[b]), a == b)
                 for a, b, kk in zip(s0.tolist(), s1.tolist(), k.tolist(), strict=False)]
    best = np.lexsort((s1, s0, k, np.array(total)))[0]
    return int(s0[best]), int(s1[best])


def check_scorer(name: str, params: dict | None = None, *, registry: Registry | None = None,
                 data: bytes | None = None, steps: int = 40) -> None:
    """The scorer ``name`` merges the same pairs in the engine's compiled loop (``linked``)
    and through the plain ``scan`` rewriter, and at every step the pair a brute-force scan of
    all pairs picks with its loss evaluated in Python (ties as the selection rule says)."""
    from .plugins.rewriters.scan import ScanRewriter  # the reference rewriter, a plugin: loaded for this check

    registry = registry or default_registry()
    data = sample_inputs()["text"][:20_000] if data is None else data
    scorer = {"name": name, "params": params or {}}
    fits = [Pipeline.from_config(None, registry=registry, scorer=scorer, rewriter=rewriter,
                                 limits={"max_rules": steps, "min_count": 1}).fit(data, trace=False)
            for rewriter in ("linked", "scan")]
    linked, scanned = (f.rules.tolist() for f in fits)
    if linked != scanned:
        step = next((i for i, (a, b) in enumerate(zip(linked, scanned, strict=False)) if a != b), min(len(linked), len(scanned)))
        raise AssertionError(f"scorer {name!r}: the compiled loop and the scan merged different pairs from step {step}")
    built = registry.get("scorer", name).build(registry.get("scorer", name).params_class()(**(params or {})))
    floor = max(1, built.min_merge_count)
    rewriter = ScanRewriter()
    rewriter.load(np.frombuffer(data, np.uint8))
    lengths = [1] * 256
    for step, (s0, s1) in enumerate(linked):
        best = _brute_force_best(rewriter, built, step, floor, lengths)
        assert best == (s0, s1), f"scorer {name!r}, step {step}: merged {(s0, s1)}, a scan of all pairs picks {best}"
        rewriter.apply(s0, s1)
        lengths.append(lengths[s0] + lengths[s1])


def check_rewriter(name: str, params: dict | None = None, *, registry: Registry | None = None,
                   data: bytes | None = None, steps: int = 60) -> None:
    """The rewriter ``name`` keeps the same string as the reference ``scan`` rewriter through
    ``steps`` merges (the most frequent pair each time, ties to the smallest, on a text with
    pre-token boundaries): the same symbols, length, symbol counts and pair counts after every
    merge, a report whose pairs are exactly those whose counts changed, and ``replay`` of the
    rules giving the same string. With ``supports_weights``, a word list weighted by its counts
    trains as the text it counts."""
    from .plugins.rewriters.scan import ScanRewriter  # the reference rewriter, a plugin: loaded for this check

    registry = registry or default_registry()
    info = registry.get("rewriter", name)
    text = np.frombuffer(sample_inputs()["text"][:20_000] if data is None else data, np.uint8)
    breaks = pretoken_breaks(text, "whitespace")
    made = [info.build(info.params_class()(**(params or {}))), ScanRewriter()]
    for rewriter in made:
        rewriter.load(text, breaks)
    ours, reference = made
    rules = []
    for step in range(steps):
        s0, s1, k = reference.pairs()
        if not k.size:
            break
        best = int(np.lexsort((s1, s0, -k))[0])
        pair = int(s0[best]), int(s1[best])
        before = _pair_counts(ours)
        report, expected = ours.apply(*pair), reference.apply(*pair)
        rules.append(pair)
        where = f"rewriter {name!r}, step {step}, merge {pair}"
        assert np.array_equal(ours.symbols(), reference.symbols()), f"{where}: the strings differ"
        assert ours.length == reference.length and report.sites == expected.sites, f"{where}: the lengths differ"
        counts = ours.symbol_counts()[: 257 + step]
        assert np.array_equal(counts, reference.symbol_counts()[: 257 + step]), f"{where}: symbol counts differ"
        after = _pair_counts(ours)
        assert after == _pair_counts(reference), f"{where}: pair counts differ"
        changed = {(a, b): k for a, b, k in zip(report.s0.tolist(), report.s1.tolist(), report.k01.tolist(),
                                               strict=True)}
        moved = {p for p in set(before) | set(after) if before.get(p, 0) != after.get(p, 0)}
        assert set(changed) >= moved and all(after.get(p, 0) == k for p, k in changed.items()), \
            f"{where}: the report does not list the pairs whose counts changed"
    replayed = info.build(info.params_class()(**(params or {})))
    replayed.load(text, breaks)
    replayed.replay(np.array(rules, dtype=np.int64).reshape(-1, 2))
    assert np.array_equal(replayed.symbols(), ours.symbols()), f"rewriter {name!r}: replay gives another string"
    if ours.supports_weights:
        words = count_words(text.tobytes(), "whitespace")
        weighted = info.build(info.params_class()(**(params or {})))
        weighted.load(words.buf, words.breaks, words.position_weights())
        whole = info.build(info.params_class()(**(params or {})))
        whole.load(text, breaks)
        assert weighted.length == whole.length and _pair_counts(weighted) == _pair_counts(whole), \
            f"rewriter {name!r}: a weighted word list does not count as its text"


def _pair_counts(rewriter) -> dict:
    s0, s1, k = rewriter.pairs()
    return {(a, b): c for a, b, c in zip(s0.tolist(), s1.tolist(), k.tolist(), strict=True) if c}


def longest_prefix_reference(tokens: dict, unit: bytes) -> list[bytes]:
    """Greedy longest match, in plain Python: ``tokens`` maps a spelling to its log-probability."""
    out, pos = [], 0
    while pos < len(unit):
        end = max(k for k in range(pos + 1, len(unit) + 1) if unit[pos:k] in tokens)
        out.append(unit[pos:end])
        pos = end
    return out


def best_path_reference(tokens: dict, unit: bytes, by_likelihood: bool) -> list[bytes]:
    """Every segmentation of ``unit`` into ``tokens``, by brute force: the fewest tokens (or the
    highest sum of log-probabilities), ties to the one whose tokens are longest from the end
    (at each end position, the longest last token)."""
    def ways(text: bytes):
        if not text:
            yield []
            return
        for k in range(1, len(text) + 1):
            if text[:k] in tokens:
                for rest in ways(text[k:]):
                    yield [text[:k], *rest]

    def key(parse):  # the best score, then the longest tokens read from the end
        score = sum(tokens[t] for t in parse) if by_likelihood else -len(parse)
        return (round(score, 9), [len(t) for t in reversed(parse)])

    return max(ways(unit), key=key)


def best_pair_reference(tokens: dict[bytes, float], unit: bytes) -> list[bytes]:
    """sentencepiece's BPE inference in plain Python: from the characters (ASCII here, each a
    token), join the adjacent pair spelling the best-scored token, the leftmost among equals."""
    parts = [bytes([b]) for b in unit]
    while True:
        joins = [(tokens[a + b], -k) for k, (a, b) in enumerate(zip(parts, parts[1:], strict=False)) if a + b in tokens]
        if not joins:
            return parts
        k = -max(joins)[1]
        parts[k:k + 2] = [parts[k] + parts[k + 1]]


#: the built-in segmenters' references, for :func:`check_segmenter`
REFERENCES = {"best-pair": best_pair_reference,"longest-prefix": longest_prefix_reference,
              "fewest-tokens": lambda tokens, unit: best_path_reference(tokens, unit, False),
              "likelihood": lambda tokens, unit: best_path_reference(tokens, unit, True)}


def check_segmenter(name: str, reference=None, *, registry: Registry | None = None, cases: int = 60,
                    seed: int = 11) -> None:
    """A segmenter against a plain Python ``reference(tokens, unit) -> list of token
    spellings`` (``tokens``: spelling -> log-probability; the built-ins' are :data:`REFERENCES`)
    on random vocabularies over a small alphabet and random units: the same tokens, each in
    the vocabulary, and spelling the unit."""
    from .text.vocabulary import Vocabulary  # numba: the search kernels' trie

    registry = registry or default_registry()
    segmenter = registry.get("segmenter", name).build()
    reference = reference or REFERENCES[name]
    rng = np.random.default_rng(seed)
    for case in range(cases):
        alphabet = rng.choice(np.frombuffer(b"abcde", dtype=np.uint8), size=3, replace=False)
        rules: list[tuple[int, int]] = []
        spelled: dict[int, bytes] = {}
        while len(rules) < 20:  # rules joining random earlier symbols: a vocabulary of their spellings
            a, b = (int(v) for v in rng.integers(0, 256 + len(rules), 2))
            if a >= 256 and a - 256 not in spelled or b >= 256 and b - 256 not in spelled:
                continue
            left = spelled[a - 256] if a >= 256 else bytes([int(alphabet[a % 3])])
            right = spelled[b - 256] if b >= 256 else bytes([int(alphabet[b % 3])])
            if len(left + right) > 6 or left + right in spelled.values():
                continue
            rules.append((a if a >= 256 else int(alphabet[a % 3]), b if b >= 256 else int(alphabet[b % 3])))
            spelled[len(rules) - 1] = left + right
        keep = np.sort(256 + rng.choice(len(rules), size=12, replace=False))
        scores = rng.normal(-3.0, 1.5, keep.size)
        vocabulary = Vocabulary.of(np.array(rules, dtype=np.int64), keep, scores)
        tokens = {bytes([b]): float(np.min(scores) - 1.0) for b in range(256)}
        tokens.update({spelled[s - 256]: float(v) for s, v in zip(keep.tolist(), scores, strict=True)})
        symbol_of = {bytes([b]): b for b in range(256)} | {spelled[s - 256]: s for s in keep.tolist()}
        units = [bytes(alphabet[rng.integers(0, 3, int(rng.integers(1, 11)))]) for _ in range(8)]
        buf = np.frombuffer(b"".join(units), dtype=np.uint8)
        offsets = np.concatenate([[0], np.cumsum([len(u) for u in units])]).astype(np.int64)
        out = np.full(buf.size, -1, dtype=np.int64)
        counts = np.asarray(segmenter.segment(vocabulary, buf, offsets, out))
        for u, unit in enumerate(units):
            got = out[offsets[u]: offsets[u] + counts[u]].tolist()
            want = [symbol_of[t] for t in reference(tokens, unit)]
            assert got == want, f"segmenter {name!r}, case {case}: {unit!r} cut as {got}, the reference cuts {want}"


#: texts a pre-tokenizer must cut: scripts, digits, contractions, runs and kinds of white space,
#: a combining mark, and bytes that are not UTF-8
PRETOKENIZER_TEXTS = {
    "english": "Alice's cat didn't SLEEP, it'll purr: 12,345.67 times!\r\n  Next   line\t\there...\n\n",
    "arabic": "\u0627\u0644\u0645\u0627\u062f\u0629 1 \u0644\u0643\u0644 \u0634\u062e\u0635 \u062d\u0642.\n",
    "chinese": "\u4eba\u4eba\u751f\u800c\u81ea\u7531\uff0c\u5728\u5c0a\u4e25\u548c\u6743\u5229"
               "\u4e0a\u4e00\u5f8b\u5e73\u7b49\u3002 2024\u5e74\n",
    "marks": "cafe\u0301 \u00e9lan na\u0308ive \u00a0nbsp\u2003em   \n",
    "spaces": "   \n \n\t\t \r\n\r\n    end ",
}


def check_pretokenizer(name: str, reference=None, *, registry: Registry | None = None,
                       texts: dict[str, str] | None = None) -> None:
    """A pre-tokenizer on :data:`PRETOKENIZER_TEXTS` (or ``texts``): it marks breaks in place
    and nothing else; a text given in pieces (its lines) is cut as each piece alone is, so
    nothing looks past a piece's end; bytes that are not UTF-8 are cut without error; and, with
    ``reference(text) -> list of words`` (a str each, as HF's ``pre_tokenize_str`` or
    ``regex.findall`` give them), each line's words are the reference's."""
    registry = registry or default_registry()
    pretokenizer = registry.get("pretokenizer", name).build()
    texts = dict(texts or PRETOKENIZER_TEXTS)
    for label, text in [*texts.items(), ("invalid UTF-8", None)]:
        data = text.encode() if text is not None else b"\xff\xfeok \xc3( caf\xc3\xa9\xe2\x82 \xf0\x9f\x98\x80!\n\x80x"
        arr = np.frombuffer(data, dtype=np.uint8)
        ends = np.unique(np.concatenate([np.flatnonzero(arr == 10) + 1, [arr.size]])).astype(np.int64)
        breaks = np.zeros(arr.size, dtype=np.bool_)
        pretokenizer.split(arr, ends, breaks)
        assert breaks.dtype == np.bool_ and breaks.shape == arr.shape, f"{name!r}: breaks replaced, not marked"
        lo = 0
        for hi in ends.tolist():
            alone = np.zeros(hi - lo, dtype=np.bool_)
            pretokenizer.split(arr[lo:hi].copy(), np.array([hi - lo], dtype=np.int64), alone)
            # a piece's last byte is the framework's break either way
            assert np.array_equal(alone[:-1], breaks[lo:hi - 1]), \
                f"{name!r}, {label}: piece {data[lo:hi]!r} cut otherwise alone than among the others"
            if reference is not None and text is not None:
                cuts = np.concatenate([[lo], lo + np.flatnonzero(alone[:-1]) + 1, [hi]])
                words = [data[a:b].decode() for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
                want = list(reference(data[lo:hi].decode()))
                assert words == want, f"{name!r}, {label}: {data[lo:hi]!r} cut as {words}, the reference as {want}"
            lo = hi
