"""Learning a dictionary from files, as ``chunkpress train`` and HF's trainers do: the inputs
read piece by piece, added tokens kept out of the learning, and the result as a rules file that
records where it came from.

With a pre-tokenizer the words of every input are counted line by line and summed, as HF's
trainer reads its files (streamed shard by shard, on Dask workers when asked), and learning
runs on the distinct words. Without one, the inputs are learned as one text (held whole, within
the memory limit) with no pair across two of them or across an added token.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

import attrs
import numpy as np
from numpy.lib import recfunctions

from ..contract import BYTE_SYMBOLS, NO_PRETOKENIZER
from ..engine.learner import FitResult
from ..errors import ChunkpressError, ConfigError, InputError, PluginError
from ..fileio import file_size, files_under, open_input, read_input
from ..format.container import checksum, running_checksum
from ..format.limits import ENCODE_BYTES_PER_BYTE, FIT_BYTES_PER_BYTE, work_limit
from ..format.rulesfile import RulesFile
from ..progress import Progress
from .hf import UNKNOWN_BELOW, HFVocab
from .pretokenize import pretoken_breaks
from .pretokenizers import pretokenizer
from .unicodeclasses import unicode_version
from .vocabulary import rules_for_pieces, spellings
from .wordcounts import WordCounts, count_stream, count_words, cut_special, read_as_sentences

#: ``meter(label, total, unit=..., unit_scale=...)``: a progress meter (``update(done, **status)``,
#: ``rules(rules, n, bits)``, a context manager); the default shows nothing
Meter = Callable[..., Progress]


def _silent(label: str, total: int | None = None, **kw) -> Progress:
    return Progress(label, total, quiet=True, **kw)


def special_tokens(given: Sequence[str]) -> tuple[bytes, ...]:
    """Added tokens as UTF-8, checked: non-empty and each once."""
    tokens = tuple(t.encode("utf-8", "surrogateescape") for t in given or ())
    if any(not t for t in tokens):
        raise ConfigError("special_token (--special-token): an added token cannot be empty")
    if len(set(tokens)) != len(tokens):
        raise ConfigError("special_token (--special-token): each added token once")
    return tokens


@attrs.frozen(kw_only=True, eq=False)
class Training:
    """What :func:`train` learned: the rules file (rules, config, sources, added tokens), the
    fit (rules, counts, trace; from word counts its string is left empty: it would be the
    distinct words', not the text's) and, with held-out text, the trace with its code length at
    every step (``eval_total_bits``, ``eval_N``)."""

    rules_file: RulesFile
    result: FitResult | None
    trace: np.ndarray | None
    special: tuple[bytes, ...]
    scorer: str
    #: a top-down learner's run: (tokens, seconds); None for the merge engine's
    learned: tuple[int, float] | None = None
    #: a top-down sweep's rules files by vocabulary size (the largest is ``rules_file``)
    sweep: dict[int, RulesFile] = attrs.Factory(dict)

    def summary(self) -> str:
        """One line: the scorer, the dictionary's size, the string's length and code length,
        what stopped the run and how long it took."""
        if self.result is None:
            tokens, seconds = self.learned or (0, 0.0)
            added = f" + {len(self.special)} added tokens" if self.special else ""
            sizes = f" (and {', '.join(f'{v:,}' for v in sorted(self.sweep) if v != max(self.sweep))} on the way)" \
                if len(self.sweep) > 1 else ""
            return (f"{self.scorer}: {tokens:,} tokens{added} ({tokens - BYTE_SYMBOLS:,} beyond the bytes){sizes}, "
                    f"cut by {self.rules_file.segmenter}, {seconds:.2f}s")
        result, last = self.result, self.result.trace[-1]
        added = f" + {len(self.special)} added tokens" if self.special else ""
        if len(result.deletions):
            added += f", {len(result.deletions):,} deleted"
        return (f"{self.scorer}: {len(result.rules):,} rules (m = {BYTE_SYMBOLS + len(result.rules):,}{added}), "
                f"N = {int(last['N']):,}, total {int(last['total_bits']):,} bits, stopped by {result.stop_reason}, "
                f"{result.seconds:.2f}s")


def train(pipeline, inputs: Sequence[str], *, special: Sequence[str] = (), held_out: str | None = None,
          workers: int | None = None, scheduler: str | None = None, vocab_sizes: Sequence[int] | None = None,
          meter: Meter = _silent) -> Training:
    """Learn ``pipeline``'s dictionary from the files ``inputs`` ('-': stdin, once; a folder:
    the files in it and its folders, sorted), with the
    added tokens ``special`` (kept whole, never learned from, given the ids after the merges);
    ``held_out``: a file whose code length the trace records at every step; ``workers`` and
    ``scheduler`` count words in parallel (a pre-tokenizer is needed); ``vocab_sizes``: a
    top-down learner's sweep, each size's vocabulary from one run (``Training.sweep``)."""
    tokens = special_tokens(special)
    for folder in (path for path in inputs if path != "-" and os.path.isdir(path)):
        if not files_under(folder, compressing=True):
            raise InputError(f"{folder}: a folder with no file to learn from")
    inputs = [found for path in inputs for found in files_under(path, compressing=True)]
    if list(inputs).count("-") > 1:
        raise InputError("stdin ('-') can be read once")
    if pipeline.learns_top_down:
        if held_out:
            raise ConfigError(f"eval (--eval) records the code length at every merge: learner "
                              f"{pipeline.config.learner.name!r} learns top-down and has no merges to trace")
        return _learn_top_down(pipeline, inputs, tokens, workers, scheduler, vocab_sizes, meter)
    if vocab_sizes is not None and len(set(vocab_sizes)) > 1:
        raise ConfigError("vocab_sizes: several sizes are a top-down learner's sweep; a merge vocabulary's smaller "
                          "sizes are its prefixes")
    held = read_input(held_out, work_limit(ENCODE_BYTES_PER_BYTE)) if held_out else None
    held = pipeline.normalizer.normalize(held) if held is not None else None  # as the training text was
    if held is not None and _reads_sentences(pipeline):
        held = read_as_sentences(held)
    if pipeline.config.pretokenizer != NO_PRETOKENIZER:
        counted = [_count_words(pipeline, path, tokens, workers, scheduler, meter) for path in inputs]
        words = WordCounts.merge([w for *_, w in counted])
        sources = [c[:3] for c in counted]
        with meter("train", pipeline.config.limits.max_rules, unit="rules") as progress:
            result = pipeline.fit_words(words, trace=True, progress=progress.rules, symbols=False)
    else:
        if workers or scheduler:
            raise InputError("workers (--workers) and scheduler (--scheduler) count pre-tokens in parallel: "
                             "give a pre-tokenizer")
        sources, text, breaks = _whole_text(inputs, tokens, pipeline.normalizer)
        with meter("train", pipeline.config.limits.max_rules, unit="rules") as progress:
            result = pipeline.fit(text, trace=True, progress=progress.rules, breaks=breaks)
    trace = result.trace
    if held is not None:
        from .tokenizer import Tokenizer  # the held-out curve replays the rules with the tokenizer's engine

        boundary, _ = pipeline.policies()
        curve = Tokenizer(result.rules, pipeline.config.pretokenizer, deletions=result.deletions,
                          boundary=boundary).code_length_curve(held)
        trace = recfunctions.append_fields(trace, ["eval_total_bits", "eval_N"], [curve["total_bits"], curve["N"]],
                                           usemask=False)
    rules_file = RulesFile.learned(
        result.rules, pipeline.config.to_dict(), unicode=unicode_version(), length=sum(n for _, n, _ in sources),
        blake2b=sources[0][2] if len(sources) == 1 else checksum("".join(d for _, _, d in sources).encode()),
        sources=[{"name": name, "length": n, "blake2b": d} for name, n, d in sources] if len(sources) > 1 else None,
        learned_from=_file_name(sources[0][0]) if len(sources) == 1 else None,
        hf=_added_vocab(result.rules, tokens), deletions=result.deletions.tolist() or None,
        segmenter=None if pipeline.replays_merges else pipeline.config.segmenter.name,
        counts=result.counts.tolist())
    return Training(rules_file=rules_file, result=result, trace=trace, special=tokens, scorer=pipeline.config.scorer.name)


def _learn_top_down(pipeline, inputs, tokens, workers, scheduler, vocab_sizes, meter) -> Training:
    """A top-down learner's vocabulary (or sweep of them) from the inputs' word counts, as
    rules files."""
    pipeline.check_top_down()  # before the counting, not after
    sizes = sorted(set(vocab_sizes)) if vocab_sizes else None
    if sizes is not None and max(sizes) != pipeline.config.limits.max_rules + BYTE_SYMBOLS:
        raise ConfigError(f"vocab_sizes: the largest, {max(sizes):,}, is the config's size "
                          f"({pipeline.config.limits.max_rules + BYTE_SYMBOLS:,} tokens)")
    name = pipeline.config.learner.name
    counted = [_count_words(pipeline, path, tokens, workers, scheduler, meter) for path in inputs]
    words = WordCounts.merge([w for *_, w in counted])
    sources = [c[:3] for c in counted]
    made, seconds = learn_top_down_sizes(pipeline, words, sources, sizes, tokens, meter)
    rules_file, tokens_learned = made[-1]
    return Training(rules_file=rules_file, result=None, trace=None, special=tokens, scorer=name,
                    learned=(tokens_learned, seconds),
                    sweep={size: made_file for size, (made_file, _) in zip(sizes, made, strict=True)} if sizes else {})


def learn_top_down(pipeline, words: WordCounts, sources, tokens: tuple[bytes, ...] = (),
                   meter: Meter = _silent) -> tuple[RulesFile, int, float]:
    """(rules file, tokens, seconds) of ``pipeline``'s top-down learner on word counts;
    ``sources``: (name, length, checksum) of each input the words were counted from."""
    made, seconds = learn_top_down_sizes(pipeline, words, sources, None, tokens, meter)
    (rules_file, learned), = made
    return rules_file, learned, seconds


def learn_top_down_sizes(pipeline, words: WordCounts, sources, vocab_sizes: list[int] | None,
                         tokens: tuple[bytes, ...] = (),
                         meter: Meter = _silent) -> tuple[list[tuple[RulesFile, int]], float]:
    """([(rules file, tokens)] for each of ``vocab_sizes``, seconds) of ``pipeline``'s top-down
    learner on word counts, from one call of its ``learn_sizes`` (None: the config's size
    alone); ``sources``: (name, length, checksum) of each input the words were counted from."""
    config = pipeline.config
    pipeline.check_top_down()
    name = config.learner.name
    sizes = [config.limits.max_rules + BYTE_SYMBOLS] if vocab_sizes is None else list(vocab_sizes)
    learner = pipeline.registry.get("learner", name).build(config.learner.params)

    def bottom_up(size: int) -> list[bytes]:
        merges = type(pipeline).from_config(registry=pipeline.registry, scorer="repair", pretokenizer=config.pretokenizer,
                                      limits={"max_rules": size - BYTE_SYMBOLS})
        return spellings(merges.fit_words(words, trace=False).rules)[BYTE_SYMBOLS:]

    if words.buf.size == 0:  # every learner alike: no vocabulary is learned from nothing
        raise ConfigError("no text to learn from: the words are empty")
    started = time.perf_counter()
    with meter(f"train ({name})", None, unit="rounds"):
        counts = np.asarray(words.counts, dtype=np.int64)
        if len(sizes) == 1:
            answers = [learner.learn(words.buf, words.offsets, counts, sizes[0], bottom_up)]
        else:
            answers = learner.learn_sizes(words.buf, words.offsets, counts, sizes, bottom_up)
    seconds = time.perf_counter() - started
    if len(answers) != len(sizes):
        raise PluginError(f"learner {name!r} answered {len(answers)} vocabularies for {len(sizes)} sizes")
    segmenter = getattr(learner, "segmenter", "likelihood")
    made = []
    for vocab_size, (pieces, scores) in zip(sizes, answers, strict=True):
        vocabulary, log_probs = vocabulary_of(pieces, scores, vocab_size, name)
        rules, ids = rules_for_pieces([p for p, _ in vocabulary])
        order = np.argsort(ids, kind="stable")
        sized = config.to_dict()
        sized["limits"] = dict(sized.get("limits") or {}, max_rules=vocab_size - BYTE_SYMBOLS)
        rules_file = RulesFile.learned(
            rules, sized, unicode=unicode_version(), length=sum(n for _, n, _ in sources),
            blake2b=sources[0][2] if len(sources) == 1 else checksum("".join(d for _, _, d in sources).encode()),
            sources=[{"name": n, "length": k, "blake2b": d} for n, k, d in sources] if len(sources) > 1 else None,
            learned_from=_file_name(sources[0][0]) if len(sources) == 1 else None,
            hf=_numbered(rules, ids[order], tokens, _reads_sentences(pipeline)),
            segmenter=segmenter, vocabulary=ids[order].tolist(),
            scores=None if log_probs is None else log_probs[order].tolist())
        made.append((rules_file, len(vocabulary)))
    return made, seconds


def vocabulary_of(pieces: list[bytes], scores, vocab_size: int, learner: str):
    """[(token, log-probability or None)] of a learner's answer with every byte, checked: the
    256 bytes first (a byte the learner left out at its least log-probability, less 10, as
    sentencepiece scores its unknown), then the longer tokens, each once, at most the size."""
    if scores is not None:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != (len(pieces),) or not np.isfinite(scores).all():
            raise PluginError(f"learner {learner!r} gave {scores.size} scores for {len(pieces)} tokens, or scores "
                              "that are not finite")
    if len(set(pieces)) != len(pieces) or not all(isinstance(p, bytes) and p for p in pieces):
        raise PluginError(f"learner {learner!r} gave a token twice, an empty one or one that is not bytes")
    longer = [k for k, p in enumerate(pieces) if len(p) > 1]
    if len(longer) > vocab_size - BYTE_SYMBOLS:
        raise PluginError(f"learner {learner!r} gave {len(longer):,} tokens beyond the bytes, where the size "
                          f"allows {vocab_size - BYTE_SYMBOLS:,}")
    own = {p: (None if scores is None else float(scores[k])) for k, p in enumerate(pieces)}
    floor = None if scores is None else float(scores.min(initial=0.0)) - UNKNOWN_BELOW
    out = [(bytes([b]), own.get(bytes([b]), floor)) for b in range(BYTE_SYMBOLS)]
    out += [(pieces[k], own[pieces[k]]) for k in longer]
    return out, None if scores is None else np.array([s for _, s in out], dtype=np.float64)


def _file_name(path: str) -> str:
    """How a rules file names its one training file: the name alone, no folders of the user's."""
    return "<stdin>" if path == "-" else os.path.basename(path)


def _whole_text(inputs: Sequence[str], special: tuple[bytes, ...], normalizer):
    """(sources, the inputs as one text without their added tokens, its breaks): no pair
    across two inputs or across an added token."""
    sources, texts, cuts, at = [], [], [], 0
    left = work_limit(FIT_BYTES_PER_BYTE)  # learned as one text, held whole
    for path in inputs:
        data = read_input(path, left)
        left -= len(data)
        sources.append((path, len(data), checksum(data)))
        kept, inner = cut_special(normalizer.normalize(data), special)
        texts.append(kept)
        cuts += [*(inner + at).tolist(), at + len(kept)]
        at += len(kept)
    text = b"".join(texts)
    return sources, text, pretoken_breaks(np.frombuffer(text, dtype=np.uint8), NO_PRETOKENIZER, pieces=cuts)


class _Normalized:
    """A stream's text as the pipeline's normalizer rewrites it, whole lines at a time (no
    normal form reaches across a line break)."""

    def __init__(self, stream, normalizer):
        self.stream, self.normalizer, self.pending = stream, normalizer, b""

    def read(self, n: int = -1, /) -> bytes:
        while True:
            chunk = self.stream.read(n)
            data, self.pending = self.pending + chunk, b""
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            if cut:
                self.pending = data[cut:]
                return self.normalizer.normalize(data[:cut])
            if not chunk:
                return b""
            self.pending = data


def _count_words(pipeline, path: str, special, workers, scheduler, meter):
    """(path, length, checksum, word counts) of one training input, read shard by shard."""
    digest = running_checksum()
    length = 0

    class Hashed:
        def __init__(self, stream):
            self.stream = stream

        def read(self, n: int = -1, /) -> bytes:
            nonlocal length
            data = self.stream.read(n)
            digest.update(data)
            length += len(data)
            return data

    stream = open_input(path)
    try:
        with meter("count words", file_size(path), unit="B", unit_scale=True) as progress:
            read = Hashed(stream) if pipeline.normalizer.lossless else _Normalized(Hashed(stream), pipeline.normalizer)
            words = count_stream(read, pipeline.config.pretokenizer, workers=workers, scheduler=scheduler,
                                 progress=progress.update, lines=True, special=special,
                                 boundary=pipeline.policies()[0],
                                 sentences=_reads_sentences(pipeline))
    except ChunkpressError as exc:
        raise type(exc)(f"{'<stdin>' if path == '-' else path}: {exc}") from None
    finally:
        if path != "-":
            stream.close()
    return path, length, digest.hexdigest(), words


def merges_of_text(pipeline, data: bytes, trace: bool = False, progress: Callable | None = None) -> FitResult:
    """The merge engine's rules for one text, as :func:`train` learns them from a file of it:
    with a pre-tokenizer, from its words counted line by line, as HF's trainer reads files (the
    result's ``symbols`` left empty: cut the text with a tokenizer); without, from the whole."""
    if pipeline.config.pretokenizer == NO_PRETOKENIZER:
        return pipeline.fit(data, trace=trace, progress=progress)
    return pipeline.fit_words(text_words(pipeline, data), trace=trace, progress=progress, symbols=False)


def _reads_sentences(pipeline) -> bool:
    """Whether the pipeline's pre-tokenizer reads a file a sentence a line (PreTokenizer.sentences)."""
    return pretokenizer(pipeline.config.pretokenizer).sentences


def text_words(pipeline, data: bytes) -> WordCounts:
    """The word counts of one text, as :func:`train` counts a file of it: line by line, as
    HF's trainer reads files, and a sentence a line where the pre-tokenizer reads so. Every
    learner's counts of a text come from here (a study's, ``compress --learner``'s)."""
    if _reads_sentences(pipeline):
        data = read_as_sentences(data)
    return count_words(data, pipeline.config.pretokenizer, lines=True, boundary=pipeline.policies()[0])


def _numbered(rules, vocabulary: np.ndarray, special: tuple[bytes, ...], prefixed: bool = False):
    """The rules file's ``hf`` entry for a vocabulary learned top-down: its tokens numbered
    0, 1, ... in symbol order (the symbols that only spell a longer token get none), the added
    tokens after them, so that ids run as an embedding table's rows; ``prefixed``: learned a
    sentence a line, it puts a space before each text it encodes (sentencepiece's dummy prefix)."""
    ids = np.full(BYTE_SYMBOLS + len(rules), -1, dtype=np.int64)
    ids[vocabulary] = np.arange(vocabulary.size)
    return HFVocab(ids=ids, special=tuple((t.decode("utf-8", "surrogateescape"), vocabulary.size + k)
                                          for k, t in enumerate(special)),
                   add_prefix_space=prefixed, prefix_always=prefixed).to_meta()


def _added_vocab(rules, special: tuple[bytes, ...]):
    """The rules file's ``hf`` entry for added tokens: our ids for the symbols, the added tokens
    after them (as HF's trainer numbers them after the alphabet and merges)."""
    if not special:
        return None
    size = BYTE_SYMBOLS + len(rules)
    return HFVocab(ids=np.arange(size, dtype=np.int64),
                   special=tuple((t.decode("utf-8", "surrogateescape"), size + k) for k, t in enumerate(special))
                   ).to_meta()
