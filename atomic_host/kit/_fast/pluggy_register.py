"""pluggy's registration of a module plugin without ``inspect.getattr_static`` per attribute (startup bar).

Every start registers the built-ins (and the hookspecs module): pluggy asks
``inspect.getattr_static`` about every name of every module, a few ms of a start (figures:
docs/performance.md). ``tests/perf/startup_imports/test_si_quick_paths.py`` holds the registrations
equal to pluggy's own. Coupled to pluggy's marker attribute names (``<project>_impl``,
``<project>_spec``): worth offering upstream, as pluggy has taken such speed-ups (PR #466).
"""

from __future__ import annotations

from types import FunctionType, MethodType, ModuleType
from typing import Any

import pluggy

_ABSENT = object()
_BINDABLE = (staticmethod, classmethod, MethodType)


class QuickPluginManager(pluggy.PluginManager):
    """pluggy's manager, with a quicker look at a module plugin's attributes.

    ``register`` asks :meth:`parse_hookimpl_opts` about every name in ``dir(plugin)``; pluggy
    answers with ``inspect.getattr_static``, ~400 calls over the built-ins.
    For a module, a name whose ``__dict__`` value is no function (an import, a class, a constant)
    gets the same answer, None, without it, and a plain function the same answer pluggy reads from
    it (its marker attribute, when that is a dict); anything else goes to pluggy. The same for the
    hookspecs module (``add_hookspecs``)."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._impl_marker = project_name + "_impl"
        self._spec_marker = project_name + "_spec"

    # Both written out, one call per name: a start asks ~600 times.
    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if type(plugin) is ModuleType:
            value = plugin.__dict__.get(name, _ABSENT)
            if type(value) is FunctionType:  # pluggy's reading: the marker attribute, when it is a dict
                opts = getattr(value, self._impl_marker, None)
                return opts if isinstance(opts, dict) else None
            if value is not _ABSENT and not isinstance(value, _BINDABLE):
                return None  # no function at all: an import, a class, a constant
        return super().parse_hookimpl_opts(plugin, name)

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
        if type(module_or_class) is ModuleType:
            value = module_or_class.__dict__.get(name, _ABSENT)
            if type(value) is FunctionType:
                opts = getattr(value, self._spec_marker, None)
                return opts if isinstance(opts, dict) else None
            if value is not _ABSENT and not isinstance(value, _BINDABLE):
                return None
        return super().parse_hookspec_opts(module_or_class, name)
