"""Frozen descriptors that plugins return from the ``register_*`` hooks.

A descriptor names one component and tells the framework how to build it: ``factory(params)``
returns the plain object the engine calls, ``params`` is an attrs class whose fields are the
component's config keys (validated on load). pluggy is only used to collect descriptors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from ..errors import PluginError
from .base import Coder, Rewriter, Scorer


@attrs.frozen(kw_only=True)
class NoParams:
    """Params class for components that take none."""


def _check_name(_inst, attribute, value):
    if not value or not all(c.isalnum() or c in "-_." for c in value):
        raise PluginError(f"invalid {attribute.name} {value!r}: use letters, digits, '-', '_', '.'")


def _check_text(_inst, attribute, value):
    if not isinstance(value, str):
        raise PluginError(f"{attribute.name} must be a string, not {type(value).__name__}")


def _check_callable(_inst, attribute, value):
    if not callable(value):
        raise PluginError(f"{attribute.name} must be callable (a class or function), not {type(value).__name__}")


def _check_params_class(_inst, _attribute, value):
    if not attrs.has(value):
        raise PluginError(f"params must be an attrs class, got {value!r}")


@attrs.frozen(kw_only=True)
class _Component:
    #: the role's name (``scorer``, ``rewriter``, ``coder``), set by each descriptor class
    role: ClassVar[str]

    name: str = attrs.field(validator=_check_name)
    factory: Callable[[Any], Any] = attrs.field(validator=_check_callable)
    params: type = attrs.field(default=NoParams, validator=_check_params_class)
    summary: str = attrs.field(validator=_check_text)
    #: what the plugin's author calls this component's version; studies and ``chunkpress
    #: plugins`` also record the installed distribution's (``Registry.distribution``)
    version: str = attrs.field(default="0", validator=_check_text)

    def build(self, params=None):
        """Build the component with ``params`` (an instance of ``self.params``; defaults if None).
        PluginError if the factory does not return an instance of the role's base class."""
        component = self.factory(self.params() if params is None else params)
        base = _BASES[self.role]
        if not isinstance(component, base):
            raise PluginError(
                f"{self.role} {self.name!r}: its factory returned a {type(component).__name__}, "
                f"not a {base.__module__.replace('.plugin.base', '')}.{base.__name__} subclass"
            )
        return component


@attrs.frozen(kw_only=True)
class ScorerInfo(_Component):
    """A scorer: ranks candidate pairs by a loss (lower is better) and says when to stop."""

    role = "scorer"


@attrs.frozen(kw_only=True)
class RewriterInfo(_Component):
    """A rewriter: owns the working symbol string, counts pairs and applies merges."""

    role = "rewriter"


@attrs.frozen(kw_only=True)
class CoderInfo(_Component):
    """A coder: serializes (rules, symbols) to bytes and back.

    ``codec_id`` is stable per byte format: two coders with the same id read each other's
    payloads, and a new format gets a new id (as in numcodecs).
    """

    role = "coder"
    #: defaults to the factory's ``codec_id`` class attribute (written once, on the class)
    codec_id: str = attrs.field(
        default=attrs.Factory(lambda self: getattr(self.factory, "codec_id", ""), takes_self=True),
        validator=_check_name,
    )


#: the contract each role's factory must honour
_BASES = {"scorer": Scorer, "rewriter": Rewriter, "coder": Coder}
