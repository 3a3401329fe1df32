"""Frozen descriptors that plugins return from the ``register_*`` hooks.

A descriptor names one component and tells the framework how to build it: ``factory(params)``
returns the plain object the engine calls, ``params`` is an attrs class whose fields are the
component's config keys (validated on load). pluggy is only used to collect descriptors.

``factory`` and ``params`` may also be references, ``"package.module:Name"`` as entry points
write them: the module is then imported when a job first needs the component, so a registry
lists every plugin without importing one (and numba's kernels load only for the plugins a job
uses). A coder given by reference names its ``codec_id`` in the descriptor, and building it
checks that the class agrees.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from ..errors import PluginError
from .base import BoundaryPolicy, Coder, DeletionPolicy, Learner, Normalizer, PreTokenizer, Rewriter, Scorer, Segmenter


@attrs.frozen(kw_only=True)
class NoParams:
    """Params class for components that take none."""


def _check_name(_inst, attribute, value):
    if not value or not all(c.isalnum() or c in "-_." for c in value):
        raise PluginError(f"invalid {attribute.name} {value!r}: use letters, digits, '-', '_', '.'")


def _check_text(_inst, attribute, value):
    if not isinstance(value, str):
        raise PluginError(f"{attribute.name} must be a string, not {type(value).__name__}")


def _check_reference(name: str, value: str) -> None:
    module, colon, attribute = value.partition(":")
    if not colon or not all(part.isidentifier() for part in (*module.split("."), *attribute.split("."))):
        raise PluginError(f"{name} {value!r} is not a reference: write 'package.module:Name'")


def _check_callable(_inst, attribute, value):
    if isinstance(value, str):
        _check_reference(attribute.name, value)
    elif not callable(value):
        raise PluginError(f"{attribute.name} must be callable (a class or function), not {type(value).__name__}")


def _check_params_class(_inst, attribute, value):
    if isinstance(value, str):
        _check_reference(attribute.name, value)
    elif not attrs.has(value):
        raise PluginError(f"params must be an attrs class, got {value!r}")


_resolved: dict[str, Any] = {}


def resolve(reference: str):
    """The object a ``"package.module:Name"`` reference names, imported on first use."""
    if reference not in _resolved:
        module, _, attribute = reference.partition(":")
        try:
            found: Any = importlib.import_module(module)
            for part in attribute.split("."):
                found = getattr(found, part)
        except Exception as exc:  # a plugin's own import error, reported as the plugin's
            raise PluginError(f"{reference} cannot be loaded: {type(exc).__name__}: {exc}") from None
        _resolved[reference] = found
    return _resolved[reference]


@attrs.frozen(kw_only=True)
class _Component:
    #: the role's name (``scorer``, ``rewriter``, ``coder``), set by each descriptor class
    role: ClassVar[str]

    name: str = attrs.field(validator=_check_name)
    #: the class or function that builds the component, or a reference to it
    factory: Callable[[Any], Any] | str = attrs.field(validator=_check_callable)
    #: the attrs class of its params, or a reference to it
    params: type | str = attrs.field(default=NoParams, validator=_check_params_class)
    summary: str = attrs.field(validator=_check_text)
    #: what the plugin's author calls this component's version; studies and ``chunkpress
    #: plugins`` also record the installed distribution's (``Registry.distribution``)
    version: str = attrs.field(default="0", validator=_check_text)

    def implementation(self) -> Callable[[Any], Any]:
        """The factory itself (a reference is imported now)."""
        return resolve(self.factory) if isinstance(self.factory, str) else self.factory

    @property
    def module(self) -> str:
        """The module that implements the component (read off a reference: nothing imported)."""
        if isinstance(self.factory, str):
            return self.factory.partition(":")[0]
        return getattr(self.factory, "__module__", "") or ""

    def params_class(self) -> type:
        """The params class (a reference is imported now)."""
        if not isinstance(self.params, str):
            return self.params
        found = resolve(self.params)
        if not attrs.has(found):
            raise PluginError(f"{self.role} {self.name!r}: params {self.params!r} is not an attrs class")
        return found

    def build(self, params=None):
        """Build the component with ``params`` (an instance of its params class; defaults if
        None). PluginError if the factory does not return an instance of the role's base class."""
        component = self.implementation()(self.params_class()() if params is None else params)
        self._check_built(component)
        return component

    def _check_built(self, component) -> None:
        base = _BASES[self.role]
        if not isinstance(component, base):
            raise PluginError(
                f"{self.role} {self.name!r}: its factory returned a {type(component).__name__}, "
                f"not a chunkpress.plugin.{base.__name__} subclass"
            )


@attrs.frozen(kw_only=True)
class ScorerInfo(_Component):
    """A scorer: ranks candidate pairs by a loss (lower is better) and says when to stop."""

    role = "scorer"


@attrs.frozen(kw_only=True)
class RewriterInfo(_Component):
    """A rewriter: owns the working symbol string, counts pairs and applies merges."""

    role = "rewriter"


def _check_kernel(_inst, attribute, value):
    if not isinstance(value, str):
        raise PluginError(f"{attribute.name} must be a reference 'package.module:function', not {value!r}")
    _check_reference(attribute.name, value)


@attrs.frozen(kw_only=True)
class FirstCompile:
    """What a component's first run compiles, so that the ``chunkpress`` program can say so on
    a terminal before it starts (a first run otherwise looks hung) and, with ``ahead``, compile
    it on a spare core meanwhile (:meth:`Coder.ahead_parts`; the coder then calls
    ``await_compiled_ahead(kernel)`` right before its first call of them).

    ``kernel``: a reference to the main kernel, ``"package.module:function"`` (nothing is
    imported to read it: numba's cache file for it says whether the cache is warm);
    ``seconds``: roughly how long two cores take to compile everything the first call does."""

    kernel: str = attrs.field(validator=_check_kernel)
    seconds: int = attrs.field(validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)])
    ahead: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))


@attrs.frozen(kw_only=True)
class CoderInfo(_Component):
    """A coder: serializes (rules, symbols) to bytes and back.

    ``codec_id`` is stable per byte format: two coders with the same id read each other's
    payloads, and a new format gets a new id (as in numcodecs).
    """

    role = "coder"
    #: defaults to the factory's ``codec_id`` class attribute (written once, on the class); a
    #: factory given by reference names it here
    codec_id: str = attrs.field(
        default=attrs.Factory(lambda self: getattr(self.factory, "codec_id", ""), takes_self=True),
        validator=_check_name,
    )
    #: what its first run compiles (None: nothing worth a word, or not said)
    first_compile: FirstCompile | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(FirstCompile)))

    def _check_built(self, component) -> None:
        super()._check_built(component)
        if component.codec_id != self.codec_id:
            raise PluginError(f"coder {self.name!r} is registered as codec {self.codec_id!r} but writes "
                              f"{component.codec_id!r}")


@attrs.frozen(kw_only=True)
class BoundaryInfo(_Component):
    """A boundary policy: from which step pairs across each pre-token boundary may merge."""

    role = "boundary"


@attrs.frozen(kw_only=True)
class DeletionInfo(_Component):
    """A deletion policy: which parts of a merged pair leave the vocabulary."""

    role = "deletion"


@attrs.frozen(kw_only=True)
class SegmenterInfo(_Component):
    """A segmenter: how a vocabulary cuts text into tokens (a tokenizer's inference)."""

    role = "segmenter"


@attrs.frozen(kw_only=True)
class LearnerInfo(_Component):
    """A learner: how a vocabulary is learned top-down from a text's word counts."""

    role = "learner"


@attrs.frozen(kw_only=True)
class PreTokenizerInfo(_Component):
    """A pre-tokenizer: where text is cut into the words that no merge or token crosses."""

    role = "pretokenizer"


@attrs.frozen(kw_only=True)
class NormalizerInfo(_Component):
    """A normalizer: how text is rewritten before it is cut."""

    role = "normalizer"


#: the contract each role's factory must honour
_BASES = {"scorer": Scorer, "rewriter": Rewriter, "coder": Coder, "boundary": BoundaryPolicy,
          "deletion": DeletionPolicy, "segmenter": Segmenter,
          "learner": Learner, "pretokenizer": PreTokenizer, "normalizer": Normalizer}
