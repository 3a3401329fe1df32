"""The pre-tokenizer a name stands for, and the check of a configured name: apart from the
compiled splitters, so that a config is checked before any loads. The pre-tokenizers are a
role like the others (:class:`~chunkpress.contract.PreTokenizer`), registered by plugins."""

from __future__ import annotations

import functools

from ..contract import PreTokenizer
from ..errors import ConfigError


def _registry():
    from ..plugin.registry import default_registry  # the registry imports the plugins, which import text/

    return default_registry()


def names() -> list[str]:
    """The registered pre-tokenizers' names."""
    return _registry().names("pretokenizer")


def check_name(name, where: str = "") -> str:
    """``name`` if it is a registered pre-tokenizer, else a ConfigError listing them (the one place)."""
    known = names()
    if not isinstance(name, str) or name not in known:
        prefix = f"{where}: " if where else ""
        shown = repr(name) if not isinstance(name, str) or len(name) <= 60 else f"{name[:60]!r}... ({len(name):,} characters)"
        raise ConfigError(f"{prefix}unknown pretokenizer {shown}; available: {', '.join(known)}")
    return name


def pretokenizer(name: str) -> PreTokenizer:
    """The registered pre-tokenizer ``name``, built once (it holds no state between texts)."""
    return built("pretokenizer", check_name(name))


def registered(role: str) -> list[str]:
    """The names registered for ``role`` (a normalizer's, too: both rewrite text before a model sees it)."""
    return _registry().names(role)


@functools.cache
def built(role: str, name: str):
    """The registered ``role`` component ``name``, built once with its default params."""
    return _registry().get(role, name).build()
