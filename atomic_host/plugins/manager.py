"""The one PluginManager: loading built-ins, entry points and local files, isolated hook calls.

Every plugin is loaded on its own (a failure is recorded and reported, the rest load), and every
hook implementation is called on its own (an exception is reported as ``extension_error`` naming
the plugin, the hook and the error; the other implementations still run). An async implementation
also gets a time bound (``hook_timeout_s``): past it, it is cancelled, skipped and reported the same way.
"Exception" means any ``BaseException`` but the host's own cancellation (``faults.py``).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.machinery
import importlib.util
import inspect
import itertools
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from atomic_host import __version__
from atomic_host.contract import hookspecs
from atomic_host.contract.hookspecs import DISPATCH_RULES
from atomic_host.contract.markers import FAIL_CLOSED, PROJECT_NAME
from atomic_host.contract.records import field, record
from atomic_host.kit import _fast
from atomic_host.kit._fast.dist_info import group_declared
from atomic_host.kit._fast.pluggy_register import QuickPluginManager
from atomic_host.kit.log import plugin_log
from atomic_host.plugins.faults import (
    HookFailed,
    contained,
    debug_traceback,
    fault_report,
    plugin_roots,
    traceback_text,
)

ErrorSink = Callable[[str, str, str], None]
"""``(extension_path, hook_or_phase, message)``: how failures reach the client."""

_module_counter = itertools.count(1)
DEFAULT_HOOK_TIMEOUT_S = 30.0
_TIMED_OUT = object()
_SKIPPED = object()
"""What a skipped implementation (failed and failing open) stands for."""


@record
class PluginRecord:
    """What the host knows about one plugin, loaded or not."""

    name: str
    source: str
    """builtin | entrypoint | local"""
    path: str
    """Shown as ``extensionPath`` in errors: a file path, ``builtin:<module>`` or ``entrypoint:<name>``."""
    version: str | None = None
    status: str = "pending"
    """loaded | failed | disabled | untrusted"""
    error: str | None = None
    fail_closed: bool = False
    """It failed after declaring a fail-closed gate: tool calls stay blocked (see ``not_loaded_gates``)."""
    module: ModuleType | None = field(default=None, repr=False)
    file: Path | None = None

    def hooks(self, pm: pluggy.PluginManager) -> list[str]:
        if self.module is None or pm.get_plugin(self.name) is None:
            return []
        return sorted(h.name for h in pm.get_hookcallers(self.module) or [])


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles a local extension from its source on every load. The bytecode cache is keyed on
    the file's mtime in whole seconds and its size, so a hot-reload edit made within the same
    second that keeps the size (``VERSION = 1`` → ``2``) would otherwise run the old code."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


HELPERS_ATTR = "__atomic_helpers__"
"""On a local extension's module: the helper files it imported (a change reloads it)."""


def _source_spec(fullname: str, directory: Path, leaf: str) -> Any:
    """The spec of module ``fullname`` as ``leaf.py`` or ``leaf/__init__.py`` in ``directory``,
    compiled from source (:class:`_FreshSourceLoader`); None when neither file is there."""
    package, single = directory / leaf / "__init__.py", directory / f"{leaf}.py"
    for file, locations in ((package, [str(package.parent)]), (single, None)):
        if file.is_file():
            loader = _FreshSourceLoader(fullname, str(file))
            return importlib.util.spec_from_file_location(
                fullname, file, loader=loader, submodule_search_locations=locations
            )
    return None


class _SiblingFinder:
    """A ``sys.meta_path`` finder, last in line while one local extension is imported: a top-level
    module found nowhere else (the standard library and installed packages come first) is looked up
    in the extension's directory, as ``name.py`` or ``name/__init__.py``, compiled from source."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.prefix = f"{directory}{os.sep}"

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if path is not None or "." in fullname:
            return None  # submodules of a helper package: _HelperSubmodules
        return _source_spec(fullname, self.directory, fullname)

    def forget_helpers(self, before: set[str]) -> list[Path]:
        """Drop from ``sys.modules`` the modules from this directory imported since ``before``
        (the extension keeps its references); their files."""
        files = []
        for name in [n for n in sys.modules if n not in before]:
            file = getattr(sys.modules.get(name), "__file__", None)
            if isinstance(file, str) and file.startswith(self.prefix):
                del sys.modules[name]
                files.append(Path(file))
        return files


class _HelperSubmodules:
    """A ``sys.meta_path`` finder, first in line while one local extension is imported: a submodule
    of a helper package (one :class:`_SiblingFinder` compiled from source) is compiled from source
    too. The path finder's loader would reuse a ``.pyc`` keyed on the file's mtime in whole seconds
    and its size: a hot-reload edit of ``_pkg/deep.py`` within the same second that keeps the size
    would run the old code. Submodules of other packages (installed ones, even in a virtualenv inside
    the extension's directory) are left to the path finder."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parent = sys.modules.get(fullname.rpartition(".")[0]) if path is not None else None
        if not isinstance(getattr(getattr(parent, "__spec__", None), "loader", None), _FreshSourceLoader):
            return None
        leaf = fullname.rpartition(".")[2]
        for directory in path:
            spec = _source_spec(fullname, Path(directory), leaf)
            if spec is not None:
                return spec
        return None


class PluginHost:
    """Owns the pluggy PluginManager and the loading pipeline."""

    def __init__(self, on_error: ErrorSink) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME) if _fast.PLAIN else QuickPluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.on_error = on_error
        self.hook_timeout_s = DEFAULT_HOOK_TIMEOUT_S
        """Longest an async hook implementation may take (0: unbounded); the host sets it from settings."""
        self.fail_closed_all = False
        """``hooks.failClosed``: every gate fails closed, and so does a plugin that failed to load."""
        self.waiting_on_user: Callable[[], bool] = lambda: False
        """True while an extension UI dialog waits for the client: that time does not count."""
        self.module_owners: dict[str, str] = {}
        """Plugin module name → extensionPath. Replaced, never mutated, so another thread (the loop
        watchdog) can read it without a lock."""

    # --- loading ---

    def _register(self, record: PluginRecord, module: ModuleType) -> None:
        try:
            self.pm.register(module, name=record.name)
        except BaseException as exc:  # a module's __getattr__ runs here: even sys.exit() is the plugin's (faults.py)
            # pluggy may leave a half-registered plugin behind: undo it.
            if self.pm.get_plugin(record.name) is not None:
                self.pm.unregister(name=record.name)
            self._fail(record, "register", exc)
            return
        wrappers = sorted(
            caller.name
            for caller in self.pm.get_hookcallers(module) or ()
            for impl in caller.get_hookimpls()
            if impl.plugin is module and (impl.wrapper or impl.hookwrapper)
        )
        if wrappers:
            # Each implementation is called on its own, isolated and time-bounded (dispatch.py):
            # there is no call chain for a wrapper to wrap, so it would load and never run.
            self.pm.unregister(name=record.name)
            refused = TypeError(
                f"hook wrappers are not supported ({', '.join(wrappers)}: wrapper=True/hookwrapper=True); "
                "each implementation is called on its own: implement the hook plainly"
            )
            self._fail(record, "register", refused)
            return
        record.module = module
        record.status = "loaded"
        record.error = None
        name = getattr(module, "__name__", None)
        if isinstance(name, str):
            self.module_owners = {**self.module_owners, name: record.path}

    def _fail(self, record: PluginRecord, phase: str, exc: BaseException) -> None:
        record.status = "failed"
        record.error = fault_report(exc, self.roots(record))
        plugin_log.warning(f"plugin {record.name} failed ({phase}): {record.error}")
        if phase == "import" and exc.__traceback__ is not None:  # down to the raising line; else at DEBUG
            print(traceback_text(exc), file=sys.stderr)
        else:
            debug_traceback(exc)
        self.on_error(record.path, phase, record.error)

    def failed_in(self, plugin: str, hook_name: str, error: str) -> None:
        """A contribution hook (``register_*``) of ``plugin`` raised: the plugin is failed, as if its
        import had (the runtime then unloads it and forgets what it registered)."""
        record = self.records.get(plugin)
        if record is not None and record.status == "loaded":
            record.status, record.error = "failed", error
            record.fail_closed = self.has_fail_closed_gate(plugin)

    def roots(self, record: PluginRecord | None) -> list[Path]:
        """Where the plugin's own code lives (see :func:`~atomic_host.plugins.faults.plugin_roots`)."""
        if record is None:
            return []
        return plugin_roots(record.module, record.file)

    def add_record(self, record: PluginRecord) -> PluginRecord:
        self.records[record.name] = record
        return record

    def load_module(
        self, name: str, source: str = "builtin", blocked: set[str] | frozenset[str] = frozenset()
    ) -> PluginRecord:
        """Import a module by name and register it as a plugin."""
        builtin = source == "builtin"
        record = self.add_record(
            PluginRecord(name, source, f"builtin:{name}" if builtin else name, version=__version__ if builtin else None)
        )
        if name in blocked:
            record.status = "disabled"
            return record
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # a plugin may even call sys.exit on import
            self._fail(record, "import", exc)
            return record
        self._register(record, module)
        return record

    def load_entry_points(self, blocked: set[str] | frozenset[str] = frozenset()) -> list[PluginRecord]:
        """Load installed packages that declare the ``atomic_host`` entry-point group."""
        if not _fast.PLAIN and not group_declared(PROJECT_NAME):
            return []  # skips importing importlib_metadata when nothing is installed (kit/_fast/dist_info.py)
        # lazy: importlib_metadata (~50 ms) only when some distribution declares the entry-point group
        import importlib_metadata

        loaded = []
        for ep in importlib_metadata.entry_points(group=PROJECT_NAME):
            dist = ep.dist
            record = self.add_record(
                PluginRecord(
                    ep.name,
                    "entrypoint",
                    f"entrypoint:{ep.name} ({ep.value})",
                    version=dist.version if dist else None,
                )
            )
            loaded.append(record)
            if ep.name in blocked or (dist and dist.name in blocked):
                record.status = "disabled"
                continue
            try:
                module = ep.load()
            except BaseException as exc:
                self._fail(record, "import", exc)
                continue
            if not isinstance(module, ModuleType):
                # An entry point may name an object; register it as is.
                module = module  # pluggy accepts any namespace object
            self._register(record, module)
        return loaded

    def import_file(self, path: Path) -> ModuleType:
        """Execute a local extension file into a fresh module under a unique name (never reload).

        While it runs, a module it imports that is found nowhere else is looked up beside it
        (``from _helper import X``: :class:`_SiblingFinder`). Such helpers are the extension's own:
        they leave ``sys.modules`` once it is imported (the next import, a hot reload, runs them
        fresh), and their files are noted on the module (``HELPERS_ATTR``) for the watcher."""
        mod_name = f"atomic_host_ext.{path.stem}_{next(_module_counter)}"
        spec = importlib.util.spec_from_file_location(mod_name, path, loader=_FreshSourceLoader(mod_name, str(path)))
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        before = set(sys.modules)
        finder = _SiblingFinder(path.parent)
        submodules = _HelperSubmodules()
        sys.meta_path.append(finder)
        sys.meta_path.insert(0, submodules)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
        finally:
            sys.meta_path.remove(finder)
            sys.meta_path.remove(submodules)
            helpers = finder.forget_helpers(before)
        setattr(module, HELPERS_ATTR, helpers)
        return module

    def load_file(self, path: Path) -> PluginRecord:
        """Load a local extension file (``~/.atomic/agent/extensions``, project, ``-e``)."""
        path = path.resolve()
        name = f"local:{path}"
        record = self.add_record(PluginRecord(name, "local", str(path), file=path))
        if not path.is_file():  # a typo in a setting: one line, not the import machinery's traceback
            self._fail(record, "import", FileNotFoundError(f"no such file: {path}"))
            return record
        try:
            module = self.import_file(path)
        except BaseException as exc:
            self._fail(record, "import", exc)
            return record
        self._register(record, module)
        return record

    def unload(self, name: str, before_unload: Callable[[str], None] | None = None) -> None:
        """Unregister the plugin and drop its module. ``before_unload(name)`` runs first: the
        runtime calls the plugin's ``plugin_unload`` hook there (through the dispatcher)."""
        record = self.records.get(name)
        if self.pm.get_plugin(name) is not None:
            if before_unload is not None:
                before_unload(name)
            self.pm.unregister(name=name)
        if record and record.module is not None:
            sys.modules.pop(record.module.__name__, None)
            self.module_owners = {k: v for k, v in self.module_owners.items() if k != record.module.__name__}
            record.module = None

    def replace_file(self, path: Path, before_unload: Callable[[str], None] | None = None) -> PluginRecord | None:
        """Hot reload: import the new version first; only if that works, swap it in.

        Returns the new record, or None when the edit is broken (the old version stays).
        """
        path = path.resolve()
        name = f"local:{path}"
        old = self.records.get(name)
        try:
            module = self.import_file(path)
        except BaseException as exc:
            msg = fault_report(exc, [path.parent])
            plugin_log.warning(f"reload of {path} failed, keeping the previous version: {msg}")
            self.on_error(str(path), "reload", msg)
            return None
        if old is not None:
            self.unload(name, before_unload)
        record = self.add_record(PluginRecord(name, "local", str(path), file=path))
        self._register(record, module)
        return record if record.status == "loaded" else None

    # --- calling hooks in isolation ---

    def impls(self, hook_name: str, plugin: str | None = None) -> list[pluggy.HookImpl]:
        """Implementations in pluggy's call order (tryfirst first, LIFO registration)."""
        hook = getattr(self.pm.hook, hook_name)
        impls = list(reversed(hook.get_hookimpls()))
        if plugin is not None:
            impls = [i for i in impls if i.plugin_name == plugin]
        return impls

    def implemented(self, plugin: str, hook_names: Iterable[str]) -> set[str]:
        """Those of ``hook_names`` that ``plugin`` implements."""
        hooks = self.pm.hook
        return {h for h in hook_names if any(i.plugin_name == plugin for i in getattr(hooks, h).get_hookimpls())}

    def implementers(self, hook_names: Iterable[str]) -> dict[str, set[str]]:
        """Plugin name → those of ``hook_names`` it implements (plugins implementing none are
        absent): :meth:`implemented` for every plugin, in one pass over the hooks."""
        hooks = self.pm.hook
        found: dict[str, set[str]] = {}
        for hook_name in hook_names:
            for impl in getattr(hooks, hook_name).get_hookimpls():
                found.setdefault(impl.plugin_name, set()).add(hook_name)
        return found

    def has_impls(self, hook_name: str) -> bool:
        return bool(getattr(self.pm.hook, hook_name).get_hookimpls())

    def _path_of(self, impl: pluggy.HookImpl) -> str:
        record = self.records.get(impl.plugin_name)
        return record.path if record else impl.plugin_name

    def _kwargs(self, impl: pluggy.HookImpl, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {k: kwargs[k] for k in impl.argnames if k in kwargs}

    def fails_closed(self, impl: pluggy.HookImpl) -> bool:
        """Whether ``impl`` fails closed: declared ``@fail_closed`` (``when=``: while that says so;
        a ``when`` that raises counts as yes), or every gate is (``hooks.failClosed``)."""
        if self.fail_closed_all:
            return True
        declared = getattr(impl.function, FAIL_CLOSED, False)
        if not callable(declared):
            return bool(declared)
        try:
            return bool(declared())
        except BaseException:  # a predicate that cannot say: closed is the safe answer (faults.py)
            return True

    def has_fail_closed_gate(self, plugin: str) -> bool:
        """Whether ``plugin`` implements a hook that can fail closed with a fail-closed implementation."""
        return any(
            self.fails_closed(impl)
            for hook_name, rule in DISPATCH_RULES.items()
            if rule.on_failure is not None
            for impl in self.impls(hook_name, plugin)
        )

    def not_loaded_gates(self) -> list[PluginRecord]:
        """Failed plugins that stand for a failed fail-closed gate: every one under ``hooks.failClosed``
        (whatever it would have registered, it could not run), else those that declared such a
        gate before their registration failed."""
        return [r for r in self.records.values() if r.status == "failed" and (self.fail_closed_all or r.fail_closed)]

    def call_each(
        self, hook_name: str, plugin: str | None = None, **kwargs: Any
    ) -> Iterator[tuple[str, Any]]:
        """Call each implementation on its own; yield ``(plugin_name, result)`` for those that returned."""
        for impl in self.impls(hook_name, plugin):
            try:
                result = impl.function(**self._kwargs(impl, kwargs))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
                self.report(impl, hook_name, exc)
                continue
            if inspect.isawaitable(result):
                # Sync caller: async implementations of sync-only hooks are a plugin bug.
                result.close() if hasattr(result, "close") else None
                self.on_error(self._path_of(impl), hook_name, "async implementation of a synchronous hook")
                continue
            yield impl.plugin_name, result

    async def aiter_each(
        self, hook_name: str, *, bounded: bool = True, fail_closed: bool = False, **kwargs: Any
    ) -> AsyncIterator[tuple[str, Any]]:
        """Like :meth:`call_each` for async callers: each implementation is called only when the
        previous result was consumed (so a combining rule sees results as they come and can stop
        early), and async ones are awaited within ``hook_timeout_s`` (unless not ``bounded``).

        A failed implementation (raised, exited, timed out) is reported and skipped; with
        ``fail_closed`` (the hook can fail closed) one that :meth:`fails_closed` yields a
        :class:`~atomic_host.plugins.faults.HookFailed` instead."""
        for impl in self.impls(hook_name):
            closed = fail_closed and self.fails_closed(impl)
            try:
                result = impl.function(**self._kwargs(impl, kwargs))
                if inspect.isawaitable(result):
                    result = await (self._bounded(result) if bounded else result)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
                why = self.report(impl, hook_name, exc, closed)
                result = HookFailed(self._path_of(impl), why) if closed else _SKIPPED
            else:
                if result is _TIMED_OUT:
                    why = f"timed out after {round(self.hook_timeout_s * 1000)} ms"
                    self._failed(impl, hook_name, why, closed, skipped=True)
                    result = HookFailed(self._path_of(impl), why) if closed else _SKIPPED
            if result is not _SKIPPED:
                yield impl.plugin_name, result

    async def _bounded(self, awaitable: Any) -> Any:
        """Await one implementation; past the time bound cancel it (``_TIMED_OUT``).

        It runs as its own task, so one that swallows the cancellation is left behind instead of
        holding the host. Time spent while a UI dialog waits for the user does not count.
        """
        timeout = self.hook_timeout_s
        if not timeout or timeout <= 0:
            return await awaitable
        task = asyncio.ensure_future(contained(awaitable))  # a task: an exit escaping it would end the loop
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
                if done:
                    return task.result()
                if not self.waiting_on_user():
                    break
                deadline = loop.time() + timeout
        except asyncio.CancelledError:
            task.cancel()
            raise
        task.cancel()
        return _TIMED_OUT

    def report(self, impl: pluggy.HookImpl, hook_name: str, exc: BaseException, closed: bool = False) -> str:
        """Report an implementation that raised (``extension_error`` naming where, the traceback at
        DEBUG); returns what went wrong. A contribution hook (``register_*``) that raised fails its plugin."""
        why = fault_report(exc, self.roots(self.records.get(impl.plugin_name)))
        debug_traceback(exc)
        if hook_name.startswith("register_"):
            self.failed_in(impl.plugin_name, hook_name, why)
        self._failed(impl, hook_name, why, closed)
        return why

    def _failed(self, impl: pluggy.HookImpl, hook_name: str, why: str, closed: bool, skipped: bool = False) -> None:
        message = f"{why}; fails closed" if closed else f"{why}; skipped" if skipped else why
        plugin_log.warning(f"{impl.plugin_name} failed in {hook_name}: {message}")
        self.on_error(self._path_of(impl), hook_name, message)

    def hook_order(self) -> dict[str, list[str]]:
        """Per hook with implementations: plugin names in call order."""
        order = {}
        for hook_name in sorted(n for n in dir(self.pm.hook) if not n.startswith("_")):
            names = [i.plugin_name for i in self.impls(hook_name)]
            if names:
                order[hook_name] = names
        return order
