"""The pre-tokenizers by name, and the check of a configured one: apart from the compiled
splitters (:mod:`.pretokenize`), so that a config is checked before they load."""

from __future__ import annotations

from ..errors import ConfigError

#: "none" (the text is one word) and the splitters of :mod:`.pretokenize`
NAMES = ("none", "gpt2", "whitespace", "metaspace")


def check_name(name, where: str = "") -> str:
    """``name`` if it is a pre-tokenizer, else a ConfigError listing them (the one place)."""
    if name not in NAMES:
        prefix = f"{where}: " if where else ""
        raise ConfigError(f"{prefix}unknown pretokenizer {name!r}; available: {', '.join(NAMES)}")
    return name
