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
from collections.abc import Callable, Sequence

import attrs
import numpy as np
from numpy.lib import recfunctions

from ..contract import BYTE_SYMBOLS, REPLAYS_MERGES
from ..engine.learner import FitResult
from ..errors import ChunkpressError, ConfigError, InputError
from ..fileio import file_size, open_input, read_input
from ..format.container import checksum, running_checksum
from ..format.limits import ENCODE_BYTES_PER_BYTE, FIT_BYTES_PER_BYTE, work_limit
from ..format.rulesfile import RulesFile
from ..progress import Progress
from .hf import HFVocab
from .pretokenize import pretoken_breaks
from .unicodeclasses import unicode_version
from .wordcounts import WordCounts, count_stream, cut_special

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
    fit (rules, symbols, trace) and, with held-out text, the trace with its code length at
    every step (``eval_total_bits``, ``eval_N``)."""

    rules_file: RulesFile
    result: FitResult
    trace: np.ndarray
    special: tuple[bytes, ...]
    scorer: str

    def summary(self) -> str:
        """One line: the scorer, the dictionary's size, the string's length and code length,
        what stopped the run and how long it took."""
        result, last = self.result, self.result.trace[-1]
        added = f" + {len(self.special)} added tokens" if self.special else ""
        if len(result.deletions):
            added += f", {len(result.deletions):,} deleted"
        return (f"{self.scorer}: {len(result.rules):,} rules (m = {BYTE_SYMBOLS + len(result.rules):,}{added}), "
                f"N = {int(last['N']):,}, total {int(last['total_bits']):,} bits, stopped by {result.stop_reason}, "
                f"{result.seconds:.2f}s")


def train(pipeline, inputs: Sequence[str], *, special: Sequence[str] = (), held_out: str | None = None,
          workers: int | None = None, scheduler: str | None = None, meter: Meter = _silent) -> Training:
    """Learn ``pipeline``'s dictionary from the files ``inputs`` ('-': stdin, once), with the
    added tokens ``special`` (kept whole, never learned from, given the ids after the merges);
    ``held_out``: a file whose code length the trace records at every step; ``workers`` and
    ``scheduler`` count words in parallel (a pre-tokenizer is needed)."""
    tokens = special_tokens(special)
    if list(inputs).count("-") > 1:
        raise InputError("stdin ('-') can be read once")
    held = read_input(held_out, work_limit(ENCODE_BYTES_PER_BYTE)) if held_out else None
    if pipeline.config.pretokenizer != "none":
        counted = [_count_words(pipeline, path, tokens, workers, scheduler, meter) for path in inputs]
        words = WordCounts.merge([w for *_, w in counted])
        sources = [c[:3] for c in counted]
        with meter("train", pipeline.config.limits.max_rules, unit="rules") as progress:
            result = pipeline.fit_words(words, trace=True, progress=progress.rules)
        weights = words.counts[np.searchsorted(words.offsets, _symbol_starts(result), side="right") - 1]
    else:
        if workers or scheduler:
            raise InputError("workers (--workers) and scheduler (--scheduler) count pre-tokens in parallel: "
                             "give a pre-tokenizer")
        sources, text, breaks = _whole_text(inputs, tokens)
        with meter("train", pipeline.config.limits.max_rules, unit="rules") as progress:
            result = pipeline.fit(text, trace=True, progress=progress.rules, breaks=breaks)
        weights = None
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
        segmenter=None if pipeline.config.segmenter.name == REPLAYS_MERGES else pipeline.config.segmenter.name,
        counts=np.bincount(result.symbols, weights=weights, minlength=BYTE_SYMBOLS + len(result.rules))
        .astype(np.int64).tolist())
    return Training(rules_file=rules_file, result=result, trace=trace, special=tokens, scorer=pipeline.config.scorer.name)


def _symbol_starts(result: FitResult) -> np.ndarray:
    """Where each of a word-count training's final symbols starts in its words' bytes."""
    from ..format.expand import symbol_lengths  # numba: the rules' lengths

    lengths = symbol_lengths(result.rules)[result.symbols]
    return np.cumsum(lengths) - lengths


def _file_name(path: str) -> str:
    """How a rules file names its one training file: the name alone, no folders of the user's."""
    return "<stdin>" if path == "-" else os.path.basename(path)


def _whole_text(inputs: Sequence[str], special: tuple[bytes, ...]):
    """(sources, the inputs as one text without their added tokens, its breaks): no pair
    across two inputs or across an added token."""
    sources, texts, cuts, at = [], [], [], 0
    left = work_limit(FIT_BYTES_PER_BYTE)  # learned as one text, held whole
    for path in inputs:
        data = read_input(path, left)
        left -= len(data)
        sources.append((path, len(data), checksum(data)))
        kept, inner = cut_special(data, special)
        texts.append(kept)
        cuts += [*(inner + at).tolist(), at + len(kept)]
        at += len(kept)
    text = b"".join(texts)
    return sources, text, pretoken_breaks(np.frombuffer(text, dtype=np.uint8), "none", pieces=cuts)


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
            words = count_stream(Hashed(stream), pipeline.config.pretokenizer, workers=workers, scheduler=scheduler,
                                 progress=progress.update, lines=True, special=special,
                                 boundary=pipeline.policies()[0])
    except ChunkpressError as exc:
        raise type(exc)(f"{'<stdin>' if path == '-' else path}: {exc}") from None
    finally:
        if path != "-":
            stream.close()
    return path, length, digest.hexdigest(), words


def _added_vocab(rules, special: tuple[bytes, ...]):
    """The rules file's ``hf`` entry for added tokens: our ids for the symbols, the added tokens
    after them (as HF's trainer numbers them after the alphabet and merges)."""
    if not special:
        return None
    size = BYTE_SYMBOLS + len(rules)
    return HFVocab(ids=np.arange(size, dtype=np.int64),
                   special=tuple((t.decode("utf-8", "surrogateescape"), size + k) for k, t in enumerate(special))
                   ).to_meta()
