"""A scorer's loss functions, compiled: what the engine's loops call, for every scorer alike.

The scorer writes the loss of one pair in scalar numpy/math style; :func:`compile_scorer`
turns each function into a numba first-class function (``numba.cfunc`` with a fixed
signature). The fused loop and the array evaluators below take those as arguments, so they are
compiled and cached once for all scorers, and a user's scorer runs at the built-ins' speed. A
non-split scorer whose loss ignores N and m runs as a split one (``loss_a = 0``).
"""

from __future__ import annotations

import enum

import attrs
import numba
import numpy as np
from numba import types

from ..contract import Scorer, SplitScorer
from ..errors import PluginError
from .kernels import kernel

LOSS_A = types.float64(types.int64, types.int64, types.int64)
LOSS_B = types.float64(types.int64, types.int64, types.int64, types.boolean)
#: loss_b of a scorer that reads its symbols' byte lengths (``uses_lengths``)
LOSS_B_LENGTHS = types.float64(types.int64, types.int64, types.int64, types.boolean, types.int64, types.int64)
LOSS = types.float64(types.int64, types.int64, types.int64, types.int64, types.int64, types.boolean)
STOP = types.boolean(types.float64, types.int64)
#: a deletion policy's removes(k_z, k_part)
REMOVES = types.boolean(types.int64, types.int64)

#: how the engine evaluates a scorer: grouped by k01 (split), or every candidate each step
SPLIT, FULL = 0, 1


class Strategy(enum.IntEnum):
    """How the engine finds the best pair, decided once (:func:`compile_scorer`) from what the
    scorer declares, and only read elsewhere (the index, the fused loop; kernels take the int)."""

    #: the loss reads N or m and does not split: every candidate is scored at every step
    FULL = 0
    #: split loss ignoring k0 and k1: groups by k01, a pair rescored only when its k01 changes
    SPLIT = 1
    #: split loss reading k0 and k1: also rescored when either part's count changes
    SPLIT_PARTS = 2
    #: most frequent pair first: a pointer walk over the groups, no loss evaluated
    BY_COUNT = 3


def _zero_a(N, m, k01):
    return 0.0


def _zero_b(k01, k0, k1, same):
    return 0.0


def _zero_bl(k01, k0, k1, same, n0, n1):
    return 0.0


def _zero(N, m, k01, k0, k1, same):
    return 0.0


def _never(best_loss, k01):
    return False


def _compile(fn, signature, what: str):
    # a function of a module file (no closure) is cached on disk like the kernels; closures
    # (params frozen in) compile in each process
    cache = fn.__closure__ is None and fn.__code__.co_filename.endswith(".py")
    try:
        return numba.cfunc(signature, cache=cache)(fn)
    except Exception as exc:  # a numba typing error is long; its first line says what is wrong
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PluginError(
            f"{what} could not be compiled for one pair (scalar arguments, numpy/math "
            f"functions; params through a closure or class constants): {first}"
        ) from None


_BUILTIN_CACHE: dict = {}


def _cached(fn, signature, what):
    """Compiled once per function object (module-level losses are shared by every run)."""
    key = (fn, str(signature))
    try:
        return _BUILTIN_CACHE[key]
    except (KeyError, TypeError):
        pass
    compiled = _compile(fn, signature, what)
    if fn.__closure__ is None:
        _BUILTIN_CACHE[key] = compiled
    return compiled


def _function(scorer, name: str):
    fn = getattr(scorer, name, None)
    if fn is None:
        raise PluginError(f"scorer {type(scorer).__name__} does not define {name}")
    if hasattr(fn, "__self__"):
        raise PluginError(
            f"{type(scorer).__name__}.{name} is a method; write it as a @staticmethod of one "
            "pair (or a function made in __init__ that closes over your params)"
        )
    return fn


@attrs.frozen(kw_only=True)
class CompiledScorer:
    """The compiled functions and knobs of one scorer, as the engine's kernels take them."""

    mode: int
    loss_a: object
    loss_b: object
    loss: object
    stop: object
    floor: int
    strategy: Strategy
    #: loss_b takes the byte lengths of the pair's symbols (see ``SplitScorer.uses_lengths``)
    uses_lengths: bool = False

    @property
    def split(self) -> bool:
        return self.mode == SPLIT

    def loss_b_pair(self) -> tuple:
        """(loss_b without lengths, loss_b with lengths): this scorer's in its slot, a zero
        loss in the other (the fused loop takes both signatures)."""
        if self.uses_lengths:
            return _cached(_zero_b, LOSS_B, "zero"), self.loss_b
        return self.loss_b, _cached(_zero_bl, LOSS_B_LENGTHS, "zero")

    # array forms, for the general (Python-driven) path and for settling the final candidate
    def losses_a(self, N, m, k01) -> np.ndarray:
        k01 = np.ascontiguousarray(k01, dtype=np.int64)
        out = np.empty(k01.size)
        _eval_a(self.loss_a, N, m, k01, out)
        return out

    def losses_b(self, k01, k0, k1, same, n0=None, n1=None) -> np.ndarray:
        """loss_b of each pair; ``n0``, ``n1``: the byte lengths of its symbols, for a scorer
        that reads them."""
        k01 = np.ascontiguousarray(k01, dtype=np.int64)
        out = np.empty(k01.size)
        parts = (np.ascontiguousarray(k0, dtype=np.int64), np.ascontiguousarray(k1, dtype=np.int64),
                 np.ascontiguousarray(same, dtype=np.bool_))
        if self.uses_lengths:
            _eval_b_lengths(self.loss_b, k01, *parts, np.ascontiguousarray(n0, dtype=np.int64),
                            np.ascontiguousarray(n1, dtype=np.int64), out)
        else:
            _eval_b(self.loss_b, k01, *parts, out)
        return out

    def losses(self, N, m, k01, k0, k1, same, n0=None, n1=None) -> np.ndarray:
        """The whole loss of each pair (either mode)."""
        if self.split:
            return self.losses_a(N, m, k01) + self.losses_b(k01, k0, k1, same, n0, n1)
        k01 = np.ascontiguousarray(k01, dtype=np.int64)
        out = np.empty(k01.size)
        _eval(self.loss, N, m, k01, np.ascontiguousarray(k0, dtype=np.int64),
              np.ascontiguousarray(k1, dtype=np.int64), np.ascontiguousarray(same, dtype=np.bool_), out)
        return out

    def stops(self, best_loss: float, k01: int) -> bool:
        return bool(_eval_stop(self.stop, float(best_loss), int(k01)))


def compile_scorer(scorer: Scorer) -> CompiledScorer:
    """Compile ``scorer``'s functions (a PluginError says which one numba refused, and why)."""
    if not isinstance(scorer, Scorer):
        raise PluginError(f"{type(scorer).__name__} is not a chunkpress Scorer (subclass chunkpress.plugin.Scorer)")
    name = type(scorer).__name__
    stop = _cached(_function(scorer, "stop") if scorer.stop is not None else _never, STOP, f"{name}.stop")
    floor = max(1, int(scorer.min_merge_count))
    lengths = bool(getattr(scorer, "uses_lengths", False))
    if isinstance(scorer, SplitScorer):
        mode = SPLIT
        loss_a = _cached(_function(scorer, "loss_a"), LOSS_A, f"{name}.loss_a")
        loss_b = _cached(_function(scorer, "loss_b"), LOSS_B_LENGTHS if lengths else LOSS_B, f"{name}.loss_b")
        loss = _cached(_zero, LOSS, "zero")
    else:
        if lengths:
            raise PluginError(f"{name}: uses_lengths needs a SplitScorer (its loss_b reads the lengths)")
        user = _function(scorer, "loss")
        loss = _cached(user, LOSS, f"{name}.loss")
        if scorer.uses_totals:
            mode = FULL
            loss_a = _cached(_zero_a, LOSS_A, "zero")
            loss_b = _cached(_zero_b, LOSS_B, "zero")
        else:  # a loss of the pair alone: grouped by k01 like a split one, with loss_a = 0
            mode = SPLIT
            inner = numba.njit(user)

            def pair_loss(k01, k0, k1, same):
                return inner(0, 0, k01, k0, k1, same)

            loss_a = _cached(_zero_a, LOSS_A, "zero")
            loss_b = _compile(pair_loss, LOSS_B, f"{name}.loss")
    if mode == FULL:
        strategy = Strategy.FULL
    elif scorer.by_count and not scorer.uses_parts and not lengths:
        strategy = Strategy.BY_COUNT
    else:
        strategy = Strategy.SPLIT_PARTS if scorer.uses_parts else Strategy.SPLIT
    return CompiledScorer(mode=mode, loss_a=loss_a, loss_b=loss_b, loss=loss, stop=stop, floor=floor,
                          strategy=strategy, uses_lengths=lengths)


def compile_removes(policy):
    """A deletion policy's ``removes`` compiled (a PluginError says why not), or None when it
    removes nothing."""
    fn = getattr(policy, "removes", None)
    if fn is None:
        return None
    if hasattr(fn, "__self__"):
        raise PluginError(f"{type(policy).__name__}.removes is a method; write it as a @staticmethod "
                          "(or a function made in __init__ that closes over your params)")
    return _cached(fn, REMOVES, f"{type(policy).__name__}.removes")


@kernel
def removes(f, k_z, k_part):
    """``f(k_z, k_part)`` for a compiled ``removes``, from Python."""
    return f(k_z, k_part)


@kernel
def _eval_a(f, N, m, k01, out):
    for i in range(k01.size):
        out[i] = f(N, m, k01[i])


@kernel
def _eval_b(f, k01, k0, k1, same, out):
    for i in range(k01.size):
        out[i] = f(k01[i], k0[i], k1[i], same[i])


@kernel
def _eval_b_lengths(f, k01, k0, k1, same, n0, n1, out):
    for i in range(k01.size):
        out[i] = f(k01[i], k0[i], k1[i], same[i], n0[i], n1[i])


@kernel
def _eval(f, N, m, k01, k0, k1, same, out):
    for i in range(k01.size):
        out[i] = f(N, m, k01[i], k0[i], k1[i], same[i])


@kernel
def _eval_stop(f, best_loss, k01):
    return f(best_loss, k01)
