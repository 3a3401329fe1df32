"""The plugin registry: collects descriptors from built-ins and entry points once, at load time.

Built-in plugin modules are registered through exactly the same function as third-party ones
(pytest's ``default_plugins``). A plugin that fails to import or whose hook raises is recorded
in ``Registry.failures`` and skipped; a component name provided twice is an error naming both.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
from collections.abc import Iterable

import attrs
import pluggy

from ..errors import ConfigError, PluginError
from . import hookspecs
from .descriptors import (
    BoundaryInfo,
    CoderInfo,
    DeletionInfo,
    LearnerInfo,
    NormalizerInfo,
    PreTokenizerInfo,
    RewriterInfo,
    ScorerInfo,
    SegmenterInfo,
)

ENTRY_POINT_GROUP = "chunkpress"
AUTOLOAD_ENV = "CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD"



def builtin_plugins() -> list:
    """The built-in plugin modules, registered exactly like entry-point ones (pytest's
    ``default_plugins``): one per role, each listing its components by reference, so that
    building a registry imports none of their implementations (or numba)."""
    # the plugins import this framework's plugin API: loaded when a registry is first built
    from ..plugins import (
        boundaries,
        coders,
        deletions,
        learners,
        normalizers,
        pretokenizers,
        rewriters,
        scorers,
        segmenters,
    )

    return [scorers, rewriters, coders, boundaries, deletions, segmenters, learners, pretokenizers, normalizers]


ROLES = {
    "scorer": ("register_scorers", ScorerInfo),
    "rewriter": ("register_rewriters", RewriterInfo),
    "coder": ("register_coders", CoderInfo),
    "boundary": ("register_boundary_policies", BoundaryInfo),
    "deletion": ("register_deletion_policies", DeletionInfo),
    "segmenter": ("register_segmenters", SegmenterInfo),
    "learner": ("register_learners", LearnerInfo),
    "pretokenizer": ("register_pretokenizers", PreTokenizerInfo),
    "normalizer": ("register_normalizers", NormalizerInfo),
}


def _shown(name: str) -> str:
    """A name as an error quotes it: its first 60 characters and its length where longer (a
    crafted config or archive may name anything)."""
    return name if len(name) <= 60 else f"{name[:60]}... ({len(name):,} characters)"


@attrs.frozen(kw_only=True)
class PluginFailure:
    """A plugin that could not be loaded, and why."""

    plugin: str
    error: str


@attrs.frozen(kw_only=True)
class Registry:
    """Name -> descriptor per role, built once; the engine looks components up here."""

    components: dict  # role -> {name: descriptor}
    providers: dict  # (role, name) -> plugin name
    failures: tuple = ()
    #: (role, name) -> every plugin that provides it, for names provided more than once: the
    #: name is unusable until one is uninstalled, but nothing else is affected
    conflicts: dict = attrs.field(factory=dict)

    def get(self, role: str, name: str):
        table = self.components[role]
        if (role, name) in self.conflicts:
            raise PluginError(f"{role} {name!r} is provided twice: by {' and by '.join(self.conflicts[(role, name)])}; "
                              "uninstall one of them")
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            raise PluginError(f"unknown {role} {_shown(name)!r}; available: {known}")
        return table[name]

    def coder_for_id(self, codec_id: str) -> CoderInfo:
        for info in self.components["coder"].values():
            if info.codec_id == codec_id:
                return info
        known = ", ".join(sorted(i.codec_id for i in self.components["coder"].values()))
        raise PluginError(f"unknown codec id {_shown(codec_id)!r}; this installation reads: {known}")

    def distribution(self, role: str, name: str) -> dict:
        """The installed distribution that provides a component and its version, from package
        metadata (what a study records: a plugin's own ``version`` is whatever its author wrote).
        ``distribution`` is None for one defined outside any installed package (a test's)."""
        info = self.components[role][name]  # listed even when its name is in conflict
        top = info.module.partition(".")[0]
        names = _packages_distributions().get(top, [])
        if not names:
            return {"distribution": None, "version": info.version}
        try:
            return {"distribution": names[0], "version": importlib.metadata.version(names[0])}
        except importlib.metadata.PackageNotFoundError:
            return {"distribution": names[0], "version": info.version}

    def names(self, role: str) -> list[str]:
        return sorted(self.components[role])

    def rows(self):
        """(role, name, summary, version, module) for every registered component: the module
        that implements it (read off a reference: nothing is imported), else its plugin's."""
        for role in ROLES:
            for name in sorted(self.components[role]):
                d = self.components[role][name]
                yield role, name, d.summary, d.version, d.module or self.providers[(role, name)]


    def listing(self) -> list[dict]:
        """Every component (role, name, summary, version, module, the installed distribution)
        and every failed plugin, as ``chunkpress plugins --json`` prints them."""
        keys = ("role", "name", "summary", "version", "provider")
        return ([{**dict(zip(keys, row, strict=True)), "installed": self.distribution(row[0], row[1])}
                 for row in self.rows()] + [{"failed": f.plugin, "error": f.error} for f in self.failures])

    def listing_text(self) -> str:
        """:meth:`listing` as lines (a coder with its codec id), failures last."""
        lines = []
        for role, name, summary, version, provider in self.rows():
            extra = f" [{self.components[role][name].codec_id}]" if role == "coder" else ""
            dist = self.distribution(role, name)
            installed = f"{dist['distribution']} {dist['version']}" if dist["distribution"] else "not installed"
            lines.append(f"{role:<9} {name:<14} v{version:<5} {summary}{extra}  ({provider}; {installed})")
        return "\n".join(lines + [f"FAILED    {f.plugin}: {f.error}" for f in self.failures])


@functools.cache
def _packages_distributions() -> dict:
    return dict(importlib.metadata.packages_distributions())


def _entry_point_plugins(failures: list) -> Iterable[tuple[str, object]]:
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            yield f"{ep.name} ({ep.value})", ep.load()
        except Exception as exc:  # a broken plugin is reported, never fatal
            failures.append(PluginFailure(plugin=f"{ep.name} ({ep.value})", error=_describe(exc)))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def build_registry(extra_plugins: Iterable = (), autoload: bool | None = None) -> Registry:
    """Build a registry from the built-ins, entry points (unless disabled) and ``extra_plugins``.

    ``extra_plugins`` are objects or modules with hook implementations (tests use this to add a
    temporary plugin); ``autoload=None`` reads ``CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD``.
    """
    if autoload is None:
        autoload = os.environ.get(AUTOLOAD_ENV, "") in ("", "0")
    pm = pluggy.PluginManager("chunkpress")
    pm.add_hookspecs(hookspecs)
    failures: list[PluginFailure] = []

    def register(name: str, plugin) -> None:
        try:
            pm.register(plugin, name=name)
        except Exception as exc:
            failures.append(PluginFailure(plugin=name, error=_describe(exc)))

    for module in builtin_plugins():
        register(module.__name__, module)
    if autoload:
        for name, plugin in _entry_point_plugins(failures):
            register(name, plugin)
    for i, plugin in enumerate(extra_plugins):
        register(getattr(plugin, "__name__", f"extra-{i}"), plugin)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"a plugin implements an unknown hook: {exc}") from None

    components: dict = {role: {} for role in ROLES}
    providers: dict = {}
    conflicts: dict = {}
    for role, (hook_name, info_class) in ROLES.items():
        for impl in reversed(getattr(pm.hook, hook_name).get_hookimpls()):
            try:
                found = list(impl.function() or [])
                bad = [d for d in found if not isinstance(d, info_class)]
                if bad:
                    raise PluginError(f"{hook_name} returned {bad[0]!r}, not a {info_class.__name__}")
            except Exception as exc:
                failures.append(PluginFailure(plugin=impl.plugin_name, error=_describe(exc)))
                continue
            for info in found:
                if info.name in components[role]:
                    first = conflicts.setdefault((role, info.name), [providers[(role, info.name)]])
                    first.append(impl.plugin_name)
                    continue
                components[role][info.name] = info
                providers[(role, info.name)] = impl.plugin_name
    ids: dict = {}
    for info in list(components["coder"].values()):
        if info.codec_id in ids:  # an archive could not say which coder reads it
            first = ids[info.codec_id]
            for name in (first, info.name):
                conflicts.setdefault(("coder", name), [providers[("coder", first)], providers[("coder", info.name)]])
            failures.append(PluginFailure(plugin=providers[("coder", info.name)],
                                          error=f"codec id {info.codec_id!r} is used by coders {first!r} and {info.name!r}"))
            continue
        ids[info.codec_id] = info.name
    for role, name in conflicts:
        failures.append(PluginFailure(plugin=" and ".join(dict.fromkeys(conflicts[(role, name)])),
                                      error=f"{role} {name!r} is provided more than once; it cannot be used"))
    return Registry(components=components, providers=providers, failures=tuple(failures), conflicts=conflicts)


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry (built on first use)."""
    global _default
    if _default is None:
        _default = build_registry()
    return _default


def build_params(registry: Registry, role: str, name: str, params: dict | None, where: str = "config"):
    """An instance of the params class of ``role`` ``name`` from ``params`` (a config's, an archive
    header's or a rules file's table), or a ConfigError saying why not, naming ``where``."""
    try:
        info = registry.get(role, name)
    except PluginError as exc:  # exit 3, naming where the name came from and what is installed
        raise PluginError(f"{where}: {exc}") from None
    params = dict(params or {})
    fields = {f.name for f in attrs.fields(info.params_class())}
    unknown = sorted(set(params) - fields)
    if unknown:
        allowed = ", ".join(sorted(fields)) or "none"
        raise ConfigError(f"{where}: unknown {role}.params key {unknown[0]!r} for {name!r}; allowed: {allowed}")
    try:
        return info.params_class()(**params)
    except (TypeError, ValueError) as exc:
        # attrs' type validators put (message, attribute, type, value) in args: keep the message
        reason = exc.args[0] if len(exc.args) > 1 and isinstance(exc.args[0], str) else exc
        raise ConfigError(f"{where}: bad {role}.params for {name!r}: {reason}") from None
