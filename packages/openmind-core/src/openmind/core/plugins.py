"""The plugin manager: load the ``openmind`` entry points and build the registry.

* ``OPENMIND_PLUGINS=a,b`` loads only the named entry-point plugins (core's built-ins always load).
* ``OPENMIND_DISABLE_PLUGINS=a,b`` blocks the named plugins.

Each registration hook implementation is called on its own, with a ``register`` callback that
stamps every spec with the plugin's component (distribution, version, plugin name), so every
problem found later names the plugin at fault.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from openmind.core import errors as E
from openmind.core.entrypoints import DEFAULT_PLUGINS
from openmind.core.errors import Component, OpenMindError
from openmind.core.registry import Registry
from openmind.core.version import __version__

ENTRY_POINT_GROUP = "openmind"
CORE_COMPONENT = Component("openmind", __version__, "core")

#: registration hook name -> spec kind it registers
REGISTRATION_HOOKS = (
    "openmind_register_frameworks",
    "openmind_register_tasks",
    "openmind_register_pipeline_wrappers",
    "openmind_register_pipelines",
    "openmind_register_trainer_wrappers",
    "openmind_register_trainers",
    "openmind_register_model_groups",
    "openmind_register_templates",
    "openmind_register_datasets",
    "openmind_register_hubs",
    "openmind_register_commands",
    "openmind_register_argument_groups",
    "openmind_register_routes",
    "openmind_register_eval_kinds",
    "openmind_register_rewards",
    "openmind_register_dataset_formats",
    "openmind_register_config_dialects",
)


@dataclass(frozen=True)
class PluginInfo:
    name: str
    module: str
    component: Component
    loaded: bool
    error: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.component.distribution,
            "version": self.component.version,
            "loaded": self.loaded,
            "error": self.error,
        }


def _names(env: str) -> set[str] | None:
    value = os.environ.get(env)
    if value is None or value.strip() in ("", "*"):
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


class PluginHost:
    """Owns the pluggy manager, the loaded plugins and the registry built from them."""

    def __init__(self, load_entry_points: bool = True, extra: dict[str, Any] | None = None) -> None:
        import pluggy  # imported here: a registry served from the snapshot needs no pluggy

        from openmind.core import hookspecs

        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        self.components: dict[str, Component] = {}
        self.registry = Registry()
        self.registry.plugin_infos = self.plugins
        self._load(load_entry_points, extra or {})
        self._build()

    # ---- loading ---------------------------------------------------------------------
    def _register(self, name: str, module_or_obj: Any, component: Component, module: str) -> None:
        import importlib

        try:
            obj = importlib.import_module(module_or_obj) if isinstance(module_or_obj, str) else module_or_obj
            self.pm.register(obj, name=name)
        except Exception as exc:  # a broken plugin is reported, not fatal
            self.plugins.append(PluginInfo(name, module, component, False, f"{type(exc).__name__}: {exc}"))
            self.registry.problems.append(
                E.P_LOAD.error(f"plugin {name!r} failed to load: {type(exc).__name__}: {exc}", component=component)
            )
            return
        self.components[name] = component
        self.registry.plugins[name] = component
        self.plugins.append(PluginInfo(name, module, component, True))

    def _load(self, load_entry_points: bool, extra: dict[str, Any]) -> None:
        for name, module in DEFAULT_PLUGINS.items():
            self._register(name, module, Component(CORE_COMPONENT.distribution, CORE_COMPONENT.version, name), module)
        allow = _names("OPENMIND_PLUGINS")
        block = _names("OPENMIND_DISABLE_PLUGINS") or set()
        if load_entry_points:
            from openmind.core.entrypoints import discover

            seen: set[str] = set()
            for ep in discover(ENTRY_POINT_GROUP):
                if ep.name in seen or ep.name in block or (allow is not None and ep.name not in allow):
                    continue
                seen.add(ep.name)
                component = Component(ep.distribution, ep.version, ep.name)
                self._register(ep.name, ep.value.partition(":")[0], component, ep.value)
        for name, obj in extra.items():
            if name in block:
                continue
            component = Component(getattr(obj, "__name__", name), "", name)
            self._register(name, obj, component, getattr(obj, "__name__", name))

    def _build(self) -> None:
        for hook_name in REGISTRATION_HOOKS:
            caller = getattr(self.pm.hook, hook_name)
            for impl in caller.get_hookimpls():  # registration order: core first, then entry points by name
                component = self.components.get(impl.plugin_name, Component(impl.plugin_name))

                def register(spec: Any, _component: Component = component) -> None:
                    self.registry.add(spec, _component)

                try:
                    impl.function(**{arg: register for arg in impl.argnames})
                except OpenMindError as exc:
                    exc.component = exc.component or component
                    self.registry.problems.append(exc)
                except Exception as exc:
                    self.registry.problems.append(
                        E.P_HOOK.error(
                            f"{hook_name} of plugin {impl.plugin_name!r} raised {type(exc).__name__}: {exc}",
                            component=component,
                        )
                    )
        import pluggy

        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            plugin_name = self.pm.get_name(exc.plugin) if exc.plugin is not None else "?"
            self.registry.problems.append(
                E.P_UNKNOWN_HOOK.error(
                    str(exc), component=self.components.get(plugin_name or "", Component(str(plugin_name)))
                )
            )
        self.registry.validate()

    # ---- other hooks -----------------------------------------------------------------
    def env_info(self) -> list[tuple[str, dict[str, Any]]]:
        results = []
        for impl in self.pm.hook.openmind_env_info.get_hookimpls():
            try:
                value = impl.function()
            except Exception as exc:
                value = {"error": f"{type(exc).__name__}: {exc}"}
            if value:
                results.append((impl.plugin_name, value))
        return results


_HOST: PluginHost | None = None
_REGISTRY: Registry | None = None
_LOCK = threading.RLock()


def get_host() -> PluginHost:
    """The process-wide plugin host (imports every allowed plugin module)."""
    global _HOST, _REGISTRY
    with _LOCK:
        if _HOST is None:
            from openmind.core import snapshot

            with snapshot.recording() as recorded:
                _HOST = PluginHost()
            snapshot.save(_HOST.registry, recorded, DEFAULT_PLUGINS)
            _REGISTRY = _HOST.registry
        return _HOST


def get_registry() -> Registry:
    """The process-wide registry, built on first use from every allowed plugin.

    Served from an on-disk snapshot when nothing it was built from has changed (see
    :mod:`openmind.core.snapshot`), so ``openmind list`` / ``--help`` import no plugin module.
    """
    global _REGISTRY
    with _LOCK:
        if _REGISTRY is None:
            from openmind.core import snapshot

            _REGISTRY = snapshot.load(DEFAULT_PLUGINS)
        if _REGISTRY is None:
            return get_host().registry
        return _REGISTRY


def reset() -> None:
    """Forget the loaded plugins (tests; after installing a plugin in-process)."""
    global _HOST, _REGISTRY
    from openmind.core.requirements import refresh

    with _LOCK:
        _HOST = None
        _REGISTRY = None
    refresh()


@contextlib.contextmanager
def attributed(component: Component | None) -> Iterator[None]:
    """Attribute exceptions escaping plugin code to ``component``.

    An :class:`OpenMindError` keeps its code and gains the component if it had none; any other
    exception becomes OM-P004 naming the component, chained to the original.
    """
    try:
        yield
    except OpenMindError as exc:
        if exc.component is None:
            exc.component = component
        raise
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except Exception as exc:
        raise E.P_RAISED.error(f"{type(exc).__name__}: {exc}", component=component) from exc
