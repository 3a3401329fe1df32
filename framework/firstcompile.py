"""What a first run compiles, and roughly how long it takes: the engine's learner, and each
coder's kernels as its descriptor states them (:class:`~chunkpress.plugin.FirstCompile`), for
built-in and third-party coders alike. Nothing here imports a kernel or numba: the program asks
before any loads."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .config import config_from_dict
from .engine import ahead
from .engine.interruptible import LEARNER, CompiledPart
from .levels import level_of
from .plugin.registry import Registry, default_registry


def coder_part(coder: str, registry: Registry | None = None) -> CompiledPart | None:
    """The kernels coder ``coder`` (a registry name) compiles on its first run, or None where
    its descriptor says nothing (or it is not installed: the run will say that)."""
    registry = registry or default_registry()
    if coder not in registry.names("coder"):
        return None
    facts = registry.get("coder", coder).first_compile
    if facts is None:
        return None
    module, _, function = facts.kernel.partition(":")
    try:  # where the module's file is, read without running it
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return None
    origin = Path(spec.origin)
    return CompiledPart(facts.kernel, origin.parent, f"{origin.stem}.{function}-", facts.seconds)


def ahead_part(coder: str, registry: Registry | None = None) -> CompiledPart | None:
    """:func:`coder_part` where the coder's descriptor says its kernels compile ahead."""
    registry = registry or default_registry()
    part = coder_part(coder, registry)
    return part if part is not None and registry.get("coder", coder).first_compile.ahead else None


def started_ahead(coder: str, registry: Registry | None = None) -> tuple[str, ...]:
    """:func:`chunkpress.engine.ahead.started` for ``coder``, with what its descriptor says."""
    return ahead.started(coder, ahead_part(coder, registry))


def config_parts(config, registry: Registry | None = None) -> tuple[CompiledPart, ...]:
    """What a pipeline's first run compiles: the learner where it learns rules, and its coder's."""
    learns = config.limits.max_rules != 0
    coder = coder_part(config.coder.name, registry)
    return tuple(p for p in ((LEARNER if learns else None), coder) if p is not None)


def level_parts(number: int, registry: Registry | None = None) -> tuple[CompiledPart, ...]:
    """What level ``number`` compiles on its first run: its pipeline's parts and those of the
    other levels it codes a text of some size with (not the small texts' trials)."""
    level = level_of(number)
    found = list(config_parts(config_from_dict(level.pipeline, registry), registry))
    for trial in level.trials:
        if trial.way == "level" and trial.level is not None:
            found += [p for p in level_parts(trial.level, registry) if p not in found]
    return tuple(found)


def run_parts(level: int | None, config, registry: Registry | None = None) -> tuple[CompiledPart, ...]:
    """What a compress run compiles: level ``level``'s parts, or those of ``config`` (None: no level)."""
    return level_parts(level, registry) if level is not None else config_parts(config, registry)


def coders_parts(registry: Registry | None = None) -> tuple[CompiledPart, ...]:
    """Every installed coder's parts, each kernel once (an archive names its coder only once read)."""
    registry = registry or default_registry()
    found: dict[str, CompiledPart] = {}
    for name in registry.names("coder"):
        part = coder_part(name, registry)
        if part is not None:
            found.setdefault(part.name, part)
    return tuple(found.values())
